"""Shared test setup: the files tests read, hypothesis profiles, and what a run without ../shared
skipped.

What may be kept in the repository is (tests/data/README.md): Botchan in tests/data/, Tekken from
mistral-common's package data, the bundled Mistral model. Files only ../shared has (Llama 2's
tokenizer, OpenAI's .tiktoken rank files, the tool that seeds a tiktoken cache) are looked up
there, or in TOKENLINE_SHARED. Without them a test is skipped, and the run ends with one line
naming what was missing; in CI (CI=true) a missing file is a failure, never a skip: a skip there
would hide that the suite did not test what it claims.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
BOTCHAN = DATA / "botchan.txt"
SHARED = Path(os.environ.get("TOKENLINE_SHARED", ROOT.parent / "shared"))
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
# The reason every skip for a missing ../shared file gives: one reason, so that the summary can
# gather them into the one line `pytest_terminal_summary` writes.
SHARED_SKIP = "needs files only ../shared has (named at the end of the run)"
# What those skips were missing, relative to SHARED.
MISSING: set[str] = set()

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


def shared_files(*names: str) -> list[Path]:
    """Files from ../shared (names relative to it, with '/'); when any is missing the test fails
    in CI and is skipped elsewhere, all the missing ones noted for the summary."""
    paths = [SHARED.joinpath(*name.split("/")) for name in names]
    missing = [name for name, path in zip(names, paths, strict=True) if not path.is_file()]
    if missing:
        if IN_CI:
            pytest.fail(
                f"{', '.join(str(SHARED / m) for m in missing)} missing (tests expect ../shared "
                "beside the project, or TOKENLINE_SHARED)",
                pytrace=False,
            )
        MISSING.update(missing)
        pytest.skip(SHARED_SKIP)
    return paths


def shared_file(*parts: str) -> Path:
    """One file from ../shared (see shared_files)."""
    return shared_files("/".join(parts))[0]


def tekken_path() -> Path:
    """Mistral's Tekken tokenizer (tekken_240911.json), from mistral-common's package data."""
    spec = importlib.util.find_spec("mistral_common")
    assert spec is not None and spec.origin, "mistral-common (a test dependency) is not installed"
    path = Path(spec.origin).parent / "data" / "tekken_240911.json"
    assert path.is_file(), f"mistral-common no longer ships {path.name} in its package data"
    return path


def read_botchan() -> str:
    """Botchan as Python reads the file (its BOM kept, line ends made \\n)."""
    return BOTCHAN.read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def tiktoken_cache() -> Path:
    """A tiktoken cache seeded from ../shared, once per run (see tests.tiktokencache)."""
    from tests import tiktokencache

    return tiktokencache.session_cache()


@pytest.fixture(scope="session")
def o200k_encoding(tiktoken_cache: Path) -> Any:
    """tiktoken's own o200k_base, from that cache: the reference the tests check against."""
    from tests import tiktokencache

    return tiktokencache.reference(tiktoken_cache, "o200k_base")


@pytest.fixture(scope="session")
def botchan() -> str:
    return read_botchan()


def _shared_skip(report: pytest.TestReport) -> bool:
    longrepr = report.longrepr
    return isinstance(longrepr, tuple) and str(longrepr[2]).endswith(SHARED_SKIP)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter,
) -> Generator[None, None, None]:
    """The skips for missing ../shared files as one line at the end, instead of pytest's line
    per skip reason (its short summary, `-ra`, lists the other skips as usual)."""
    stats = terminalreporter.stats
    skipped = stats.get("skipped", [])
    shared = [r for r in skipped if _shared_skip(r)]
    if shared:
        stats["skipped"] = [r for r in skipped if not _shared_skip(r)]
    try:
        return (yield)
    finally:
        if shared:
            stats["skipped"] = skipped  # the closing count still counts them
            terminalreporter.write_line(
                f"{len(shared)} skipped without files only ../shared has: "
                f"{', '.join(sorted(MISSING))} (missing from {SHARED}; put ../shared beside "
                "the repository or set TOKENLINE_SHARED; with CI=true they are required)",
                yellow=True,
            )
