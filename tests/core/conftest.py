"""Models for the core tests: the shared ones, trained ones and hand-built ones."""

from __future__ import annotations

import sys
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


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """How much of the generated zoo this run visited: the numbers a fuzzing claim rests on."""
    zoo = sys.modules.get("tests.core.test_zoo")
    if zoo is None or not zoo.STATS:
        return
    s = zoo.STATS
    terminalreporter.write_sep("-", "generated BPE zoo")
    terminalreporter.write_line(
        f"{s['models']} models ({s['models incremental']} incremental), "
        f"{s['sequences']} sequences, {s['edits']} edits, {s['selections']} selection checks "
        f"({s['selections windowed']} through the windowed path)"
    )
    classes = ", ".join(f"{name} {n}" for name, n in sorted(zoo.SEEN_CLASSES.items()))
    terminalreporter.write_line(f"models per class: {classes}")
