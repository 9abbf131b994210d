"""A document opened in slices (Document(whole=False), then load() until it says False: an editor
opening a large file in idle time) has the tokens of one full encode, whatever the slices'
budget, and each slice reads a bounded stretch of the text."""

from __future__ import annotations

import random

import pytest
import sentencepiece as spm
import tokenizers

from tests.conftest import DATA, read_botchan
from tokenline.core import Document, bundled_model_path, load_model


def text_of_lines(n: int, seed: int) -> str:
    rng = random.Random(seed)
    words = read_botchan().split()
    lines = []
    for _ in range(n):
        a = rng.randrange(0, len(words) - 60)
        lines.append('{"content": "' + " ".join(words[a : a + rng.randrange(0, 60)]) + '"}')
    return "\r\n".join(lines[: n // 2]) + "\n" + "\n".join(lines[n // 2 :]) + "\n"


@pytest.mark.parametrize("budget", [1, 37, 4096, 1 << 16])
def test_a_document_loaded_in_slices_has_the_references_tokens(budget: int) -> None:
    model = load_model("mistral-7b-v0.1")
    sp = spm.SentencePieceProcessor(model_file=str(bundled_model_path("mistral-7b-v0.1")))
    text = text_of_lines(400, budget) + "x" * 5_000 + " tail"
    doc = Document(model, text, whole=False)
    assert doc.loading()
    while doc.load(budget):
        assert doc.loading()
    assert not doc.loading()
    assert doc.ids() == sp.encode(text)
    doc.edit(3, 3, "edited ")
    assert doc.ids() == sp.encode(text[:3] + "edited " + text[3:])


def test_each_slice_reads_about_its_budget() -> None:
    model = load_model("mistral-7b-v0.1")
    text = text_of_lines(300, 9)
    doc = Document(model, text, whole=False)
    load = doc.engine.loading
    assert load is not None
    before = 0
    while doc.load(1000):
        assert 0 < load.pos - before <= 2000
        before = load.pos


def test_a_loading_document_takes_no_edit() -> None:
    doc = Document(load_model("mistral-7b-v0.1"), "some words " * 100, whole=False)
    with pytest.raises(RuntimeError, match="still loading"):
        doc.edit(0, 0, "x")
    while doc.load(64):
        pass
    doc.edit(0, 0, "x")
    assert doc.text.startswith("xsome")


@pytest.mark.parametrize(
    ("name", "tail", "sliced"),
    [("gpt2", "", True), ("gpt2", " <|endoftext|> and on", False), ("roberta-base", "", None)],
)
def test_byte_level_files_load_as_they_open(name: str, tail: str, sliced: bool | None) -> None:
    """GPT-2's tokenizer.json opens segment by segment, in slices, unless the text holds an
    added token (then by one library encode, at once). Each has the library's tokens."""
    path = DATA / "tokenizers" / name / "tokenizer.json"
    text = read_botchan()[:20_000] + tail
    doc = Document(load_model(path), text, whole=False)
    if sliced is not None:
        assert doc.loading() == sliced
    while doc.load(500):
        pass
    hf = tokenizers.Tokenizer.from_file(str(path))
    assert doc.ids() == hf.encode(text, add_special_tokens=False).ids
