"""The extension's unit tests (`npm test` in vscode-extension: node's test runner on the pure
modules), run from pytest so that `pytest tests` covers them. Needs `npm ci` there (setup.sh does
it): without it they are skipped locally and FAIL when CI=true."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

EXT_DIR = Path(__file__).resolve().parent.parent.parent / "vscode-extension"


def test_extension_unit_tests_pass() -> None:
    if not shutil.which("npm") or not (EXT_DIR / "node_modules" / "typescript").is_dir():
        msg = "vscode-extension/node_modules is missing (run: bash tests/vscode/setup.sh)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg, pytrace=False)
        pytest.skip(msg)
    run = subprocess.run(["npm", "test"], cwd=EXT_DIR, capture_output=True, text=True, timeout=300)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-6000:]
    passed = re.search(r"^# pass (\d+)$", out, re.M)
    failed = re.search(r"^# fail (\d+)$", out, re.M)
    assert passed and failed, out[-3000:]
    assert int(failed.group(1)) == 0 and int(passed.group(1)) >= 20, out[-3000:]
