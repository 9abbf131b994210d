"""In CI a missing ../shared file fails the test that needs it; elsewhere it is skipped."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import ROOT

TARGET = "tests/cli/test_cli.py::test_count_matches_sentencepiece"


def run(ci: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, CI=ci, TOKENLINE_SHARED="/nonexistent/shared")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", TARGET],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_missing_shared_file_fails_in_ci() -> None:
    result = run("true")
    assert result.returncode == 1, result.stdout
    assert "1 failed" in result.stdout and "is missing" in result.stdout


def test_missing_shared_file_skips_outside_ci() -> None:
    result = run("")
    assert result.returncode == 0, result.stdout
    assert "1 skipped" in result.stdout
