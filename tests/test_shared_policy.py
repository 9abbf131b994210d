"""In CI a missing ../shared file fails the test that needs it; elsewhere it is skipped, and the
run says so in one line at its end (not one per test)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import ROOT

# Two tests that need Llama 2 (only ../shared has it) and one that needs nothing from there.
TARGETS = [
    "tests/cli/test_cli.py::test_count_matches_sentencepiece",
    "tests/cli/test_check.py::test_the_configured_model_is_used",
    "tests/cli/test_cli.py::test_stdin",
]


def run(ci: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, CI=ci, TOKENLINE_SHARED="/nonexistent/shared")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *TARGETS],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_missing_shared_file_fails_in_ci() -> None:
    result = run("true")
    assert result.returncode == 1, result.stdout
    assert "2 failed, 1 passed" in result.stdout
    assert "/nonexistent/shared/models/llama-2.model missing" in result.stdout


def test_missing_shared_file_skips_outside_ci_with_one_line_at_the_end() -> None:
    result = run("")
    assert result.returncode == 0, result.stdout
    lines = result.stdout.splitlines()
    assert lines[-1].startswith("1 passed, 2 skipped")
    mentions = [line for line in lines if "llama-2.model" in line or "../shared" in line]
    assert mentions == [
        "2 skipped without files only ../shared has: models/llama-2.model (missing from "
        "/nonexistent/shared; put ../shared beside the repository or set TOKENLINE_SHARED; with "
        "CI=true they are required)"
    ]
    assert lines[-2] == mentions[0]
