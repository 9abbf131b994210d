"""The `tokenline` command as a user runs it: a real subprocess, its output and exit codes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import sentencepiece as spm

from tests.conftest import ROOT, shared_file
from tokenline.core import load_model

PROMPT = ROOT / "examples" / "prompt.md"


def tokenline(
    *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, NO_COLOR="1", **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "tokenline", *args],
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=ROOT.parent,
    )


def sp_count(path: Path, model: Path | None = None) -> int:
    sp = spm.SentencePieceProcessor(model_file=str(model or load_model().path))
    return len(sp.encode(path.read_text(encoding="utf-8")))


def test_count_matches_sentencepiece() -> None:
    llama = shared_file("models", "llama-2.model")
    result = tokenline("count", str(PROMPT))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [f"{sp_count(PROMPT):,}", str(PROMPT)]
    result = tokenline("count", "--model", str(llama), str(PROMPT))
    assert result.stdout.split()[0] == f"{sp_count(PROMPT, llama):,}"


def test_count_several_files_prints_a_total(tmp_path: Path) -> None:
    other = tmp_path / "b.txt"
    other.write_text("Hello there, world.\n", encoding="utf-8")
    result = tokenline("count", str(PROMPT), str(other))
    lines = result.stdout.splitlines()
    total = sp_count(PROMPT) + sp_count(other)
    assert lines[-1].split() == [f"{total:,}", "total"]


def test_show_marks_every_boundary_and_closes_with_the_budget() -> None:
    result = tokenline("show", "--color", "never", "--context-window", "100", str(PROMPT))
    assert result.returncode == 0, result.stderr
    body, summary = result.stdout.rstrip("\n").rsplit("\n", 1)
    text = PROMPT.read_text(encoding="utf-8")
    assert body.replace("|", "") == text.rstrip("\n") or body.replace("|", "") == text
    n = sp_count(PROMPT)
    assert (
        summary
        == f"{n:,} tokens · mistral-7b-v0.1 · {100 * n / 100:.1f}% of the 100-token context window"
    )


def test_show_in_colour_alternates_backgrounds() -> None:
    result = tokenline("show", "--color", "always", str(PROMPT))
    assert result.returncode == 0
    assert "\x1b[48;5;24m" in result.stdout and "\x1b[48;5;94m" in result.stdout
    assert "% of the 8,192-token context window" in result.stdout


@pytest.mark.parametrize(
    "args,code,message",
    [
        (["count", "/no/such/file.md"], 1, "/no/such/file.md: no such file"),
        (["count", "--model", "/no/such.model", "README.md"], 3, "/no/such.model: no such file"),
        (["show", "README.md", "--context-window", "0"], 2, "--context-window must be"),
        (["frobnicate"], 2, "invalid choice"),
    ],
)
def test_errors_say_what_is_wrong(args: list[str], code: int, message: str) -> None:
    result = tokenline(*[a.replace("README.md", str(ROOT / "README.md")) for a in args])
    assert result.returncode == code
    assert message in result.stderr


def test_binary_and_non_utf8_input(tmp_path: Path) -> None:
    binary = tmp_path / "image.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    latin = tmp_path / "latin1.txt"
    latin.write_bytes("café".encode("latin-1"))
    result = tokenline("count", str(binary), str(latin), str(PROMPT))
    assert result.returncode == 1
    assert "binary file" in result.stderr and "not UTF-8 text" in result.stderr
    assert str(PROMPT) in result.stdout  # the good file is still counted


def test_bad_model_file(tmp_path: Path) -> None:
    bad = tmp_path / "broken.model"
    bad.write_bytes(b"this is not a model")
    result = tokenline("show", "--model", str(bad), str(PROMPT))
    assert result.returncode == 3
    assert str(bad) in result.stderr and "not a SentencePiece model" in result.stderr


def test_stdin() -> None:
    text = "Hello world, from standard input."
    sp = spm.SentencePieceProcessor(model_file=load_model().path)
    result = tokenline("count", "-", stdin=text.encode())
    assert result.stdout.split() == [str(len(sp.encode(text))), "-"]


def fake_hub(root: Path, repo_id: str, model: Path) -> Path:
    """A Hugging Face cache under root holding model as repo_id's tokenizer.model."""
    repo = root / "hub" / ("models--" + repo_id.replace("/", "--"))
    (repo / "snapshots" / "abc123").mkdir(parents=True)
    (repo / "snapshots" / "abc123" / "tokenizer.model").write_bytes(model.read_bytes())
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("abc123")
    return root


def test_model_from_the_hugging_face_cache(tmp_path: Path) -> None:
    bundled = Path(load_model().path)
    hf_home = {"HF_HOME": str(fake_hub(tmp_path, "acme/tiny-llm", bundled))}
    result = tokenline("count", "--model", "acme/tiny-llm", str(PROMPT), env=hf_home)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[0] == f"{sp_count(PROMPT, bundled):,}"
    result = tokenline(
        "show", "--color", "never", "--model", "acme/tiny-llm", "-", stdin=b"hi", env=hf_home
    )
    assert result.returncode == 0, result.stderr
    assert "· acme/tiny-llm ·" in result.stdout.splitlines()[-1]


def test_a_repo_id_missing_from_the_cache_is_a_model_error(tmp_path: Path) -> None:
    result = tokenline(
        "count", "--model", "acme/absent", str(PROMPT), env={"HF_HOME": str(tmp_path)}
    )
    assert result.returncode == 3
    assert "acme/absent" in result.stderr and "not in the local Hugging Face cache" in result.stderr
    assert "never downloads" in result.stderr


def test_bundled_model_by_name() -> None:
    result = tokenline("count", "--model", "mistral-7b-v0.1", str(PROMPT))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[0] == f"{sp_count(PROMPT):,}"
