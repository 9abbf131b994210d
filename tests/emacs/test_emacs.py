"""Emacs 28 + lsp-mode 8 (Debian: emacs-nox elpa-lsp-mode) in batch mode, with the client
configuration of docs/editors.md: status notifications, diagnostics and semantic tokens (full,
then full/delta) checked against sentencepiece. Skipped where Emacs or lsp-mode is not installed,
unless TOKENLINE_REQUIRE_EMACS=1 makes that a failure."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.server.harness import bundled_model_path, decode_semantic, expected_segments, sp_count

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "tokenline-test.el"
LSP_MODE = Path("/usr/share/emacs/site-lisp/elpa")


def _prerequisites() -> str:
    emacs = shutil.which("emacs")
    if emacs and any(LSP_MODE.glob("lsp-mode-*")) and any(LSP_MODE.glob("markdown-mode-*")):
        return emacs
    msg = "Emacs with lsp-mode not installed (apt-get install emacs-nox elpa-lsp-mode)"
    if os.environ.get("TOKENLINE_REQUIRE_EMACS") == "1":
        pytest.fail(msg, pytrace=False)
    pytest.skip(msg)


def test_emacs_lsp_mode(tmp_path: Path) -> None:
    emacs = _prerequisites()
    out = tmp_path / "record.json"
    (tmp_path / "home").mkdir()
    env = dict(os.environ)
    env.update(
        TOKENLINE_SERVER_CMD=json.dumps([sys.executable, "-m", "tokenline", "serve"]),
        TOKENLINE_EMACS_OUT=str(out),
        TOKENLINE_EMACS_ROOT=str(tmp_path),
        HOME=str(tmp_path / "home"),
    )
    proc = subprocess.run(
        [emacs, "--batch", "-l", str(SCRIPT)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert out.is_file(), f"no record; emacs said:\n{proc.stdout}\n{proc.stderr}"
    record = json.loads(out.read_text(encoding="utf-8"))
    assert record["ok"] is True, f"{record['error']}\n{proc.stderr[-3000:]}"
    model = bundled_model_path()
    for name, severity in (("open", 2), ("edited", 1)):
        step = record[name]
        text = step["text"]
        n = sp_count(model, text)
        assert step["status"]["tokens"] == n
        assert step["status"]["version"] == step["version"]
        assert step["modeline"] == f"{n}/40 tok"
        [d] = step["diagnostics"]
        assert d["severity"] == severity
        if severity == 1:
            assert d["message"] == f"Beyond the 40-token context window: {n} tokens, {n - 40} over"
        else:
            assert d["message"].startswith(f"{n} of 40 tokens")
        got = [t[:3] for t in decode_semantic(step["semantic"])]
        assert got == [w[:3] for w in expected_segments(model, text, "utf-16")]
