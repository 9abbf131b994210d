"""Models for the core tests: the shared ones, trained ones and hand-built ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import shared_file
from tests.core import modelkit

SHARED_MODELS = ["mistral-7b-v0.1", "llama-2"]


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="session")
def model_paths(model_dir: Path, botchan: str) -> dict[str, Path]:
    """Every model the differential tests run over, by name."""
    paths: dict[str, Path] = {}
    for name in SHARED_MODELS:
        paths[name] = shared_file("models", f"{name}.model")
    for name in modelkit.TRAINED:
        paths[name] = modelkit.train(name, model_dir, botchan)
    paths.update(modelkit.hand_built(model_dir))
    paths["hand-unused-random-46"] = modelkit.random_unused_model(
        model_dir / "hand-unused-random-46.model", 46
    )
    return paths
