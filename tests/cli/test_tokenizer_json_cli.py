"""`tokenline count/show --model path/to/tokenizer.json`: a Hugging Face WordPiece file (trained
here with the `tokenizers` trainer, nothing downloaded), a folder holding one, and what a model
spec that names no usable file is told."""

from __future__ import annotations

from pathlib import Path

import pytest
from tokenizers import Tokenizer

from tests.core import hfkit

from .test_cli import PROMPT, tokenline

TEXT = "The schoolmaster was walking quickly; nobody answered ☃.\n  Unbelievably!\n"


@pytest.fixture(scope="module")
def wp_path(tmp_path_factory: pytest.TempPathFactory, botchan: str) -> Path:
    return hfkit.small_bert(tmp_path_factory.mktemp("wordpiece"), botchan, "bert-wp")


@pytest.fixture(scope="module")
def ref(wp_path: Path) -> Tokenizer:
    return Tokenizer.from_file(str(wp_path))


def count(ref: Tokenizer, text: str) -> int:
    return len(ref.encode(text, add_special_tokens=False).ids)


def test_count_with_a_tokenizer_json(wp_path: Path, ref: Tokenizer, tmp_path: Path) -> None:
    path = tmp_path / "prompt.md"
    path.write_text(TEXT, encoding="utf-8")
    prompt = PROMPT.read_text(encoding="utf-8")
    result = tokenline("count", "--model", str(wp_path), str(path), str(PROMPT))
    assert result.returncode == 0, result.stderr
    lines = [line.split() for line in result.stdout.splitlines()]
    assert lines[0] == [f"{count(ref, TEXT):,}", str(path)]
    assert lines[1] == [f"{count(ref, prompt):,}", str(PROMPT)]
    # The folder holding it is the same model, named after the folder.
    result = tokenline("count", "--json", "--model", str(wp_path.parent), str(path))
    assert result.returncode == 0, result.stderr
    assert f'"tokens": {count(ref, TEXT)},' in result.stdout
    assert '"model": "bert-wp"' in result.stdout


def test_show_cuts_at_continuations(wp_path: Path, ref: Tokenizer, tmp_path: Path) -> None:
    path = tmp_path / "prompt.md"
    path.write_text(TEXT, encoding="utf-8")
    result = tokenline("show", "--color", "never", "--model", str(wp_path), str(path))
    assert result.returncode == 0, result.stderr
    body, summary = result.stdout.rstrip("\n").rsplit("\n", 1)
    assert body.replace("|", "") == TEXT
    # A bar after each token's last character, at the reference's end offsets; no "##" shown.
    enc = ref.encode(TEXT, add_special_tokens=False)
    ends = [end for _, end in enc.offsets[:-1]] + [len(TEXT)]
    bars = [i - k for k, i in enumerate(i for i, ch in enumerate(body) if ch == "|")]
    assert bars == ends
    assert "##" not in body
    assert summary.startswith(f"{count(ref, TEXT):,} tokens · bert-wp · ")


def test_show_keeps_text_without_tokens(wp_path: Path, ref: Tokenizer, tmp_path: Path) -> None:
    path = tmp_path / "blank.md"
    blank = "   \n\t\n"
    path.write_text(blank, encoding="utf-8")
    assert count(ref, blank) == 0
    result = tokenline("show", "--color", "never", "--model", str(wp_path), str(path))
    assert result.returncode == 0, result.stderr
    assert result.stdout == blank + "0 tokens · bert-wp · 0.0% of the 8,192-token context window\n"


@pytest.mark.parametrize(
    "spec,message",
    [
        ("tok.json", "no such file: {cwd}/tok.json (read as a Hugging Face tokenizer.json)"),
        ("models/tekken_v3.json", "(read as a Mistral Tekken file)"),
        ("missing.model", "(read as a SentencePiece .model file)"),
        ("no-such-folder/", "no such file or folder: {cwd}/no-such-folder"),
        (
            "{empty}",
            "the folder {empty} holds no tokenizer file (tokenizer.json, tekken*.json, "
            "tokenizer.model",
        ),
        ("o200k_bas", "a tokenizer file (tokenizer.json, tekken*.json, .model), a folder"),
    ],
)
def test_a_model_spec_that_names_nothing_says_what_it_was_read_as(
    spec: str, message: str, tmp_path: Path
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    cwd = PROMPT.parents[2]  # tokenline() runs in the repository's parent folder
    spec = spec.format(empty=empty)
    result = tokenline("count", "--model", spec, str(PROMPT))
    assert result.returncode == 3, result.stderr
    assert f"cannot load tokenizer model {spec}: " in result.stderr
    assert message.format(cwd=cwd, empty=empty) in result.stderr, result.stderr


def test_help_names_every_kind_of_model() -> None:
    for command in ("count", "check", "show"):
        result = tokenline(command, "--help")
        assert result.returncode == 0
        text = " ".join(result.stdout.split())
        for kind in ("o200k_base", "tokenizer.json", "tekken*.json", ".model", "folder", "repo id"):
            assert kind in text, (command, kind)
