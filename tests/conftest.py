"""Shared test setup: where the shared models live, and hypothesis profiles.

In CI (CI=true) a missing file from ../shared is a failure, never a skip: a skip there would hide
that the suite did not test what it claims.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("TOKENLINE_SHARED", ROOT.parent / "shared"))
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")

# "ci": bounded and reproducible (the same examples every run); "deep": for long local runs.
for _name, _examples in (("ci", 25), ("dev", 60), ("deep", 2000)):
    settings.register_profile(
        _name,
        max_examples=_examples,
        derandomize=_name == "ci",
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        print_blob=True,
    )
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if IN_CI else "dev"))


def shared_file(*parts: str) -> Path:
    """A file from ../shared; fails the test in CI when it is missing, skips it elsewhere."""
    path = SHARED.joinpath(*parts)
    if not path.is_file():
        message = f"{path} is missing (tests expect ../shared beside the project)"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def tiktoken_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiktoken cache seeded from ../shared, once per run (see tests.tiktokencache)."""
    from tests import tiktokencache

    return tiktokencache.seed(tmp_path_factory.mktemp("tiktoken-cache"))


@pytest.fixture(scope="session")
def o200k_encoding(tiktoken_cache: Path) -> Any:
    """tiktoken's own o200k_base, from that cache: the reference the tests check against."""
    from tests import tiktokencache

    return tiktokencache.reference(tiktoken_cache, "o200k_base")


@pytest.fixture(scope="session")
def botchan() -> str:
    return shared_file("corpora", "botchan.txt").read_text(encoding="utf-8")
