"""Edits that would encode a long stretch at once (Document.encodes_long): a piece of a
Metaspace-splitting file longer than LONG_STRETCH, which Unigram encodes whole. The server takes
such an edit with edit_text and encodes the text whole on a worker; for an incremental model
that split must give the library's tokens, and the edits after it go in place again.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.core.test_hf_family import Judge, check_document
from tokenline.core import Document, load_model, whole_tokens
from tokenline.core.window import LONG_STRETCH

DATA = Path(__file__).resolve().parents[1] / "data" / "tokenizers"
# Files whose edits are all bounded (pre-token edges, WordPiece's long words), and the
# Metaspace-splitting ones whose long pieces are not.
BOUNDED = ["gpt2", "bert-base-uncased", "qwen2.5"]
SPLITTING = ["t5-small"]


def word(n: int, seed: int = 1) -> str:
    r = random.Random(seed)
    return "".join(r.choice("abcdefghij") for _ in range(n))


@pytest.fixture(scope="module")
def files() -> dict[str, Judge]:
    return {name: Judge(name, DATA / name / "tokenizer.json") for name in BOUNDED + SPLITTING}


def test_an_edit_inside_a_long_unigram_piece_encodes_long(files: dict[str, Judge]) -> None:
    long = word(3 * LONG_STRETCH)
    text = "hello world " + long + " the end\n"
    doc = Document(files["t5-small"].model, text)
    inside = 12 + len(long) // 2
    assert doc.encodes_long(inside, inside)
    assert doc.encodes_long(inside, inside + 5)
    # Near one end of the piece, the other end is still far: the whole piece is encoded.
    assert doc.encodes_long(14, 14)
    assert doc.encodes_long(12 + len(long) - 3, 12 + len(long) - 3)
    for at in (0, 3, 8, len(text) - 4, len(text)):
        assert not doc.encodes_long(at, at), at
    # Out-of-range edits are clamped, not refused: the question comes before edit()'s checks.
    assert not doc.encodes_long(-5, 2)
    assert not doc.encodes_long(len(text) + 9, len(text) + 20)


def test_a_piece_within_the_limit_does_not(files: dict[str, Judge]) -> None:
    short = word(LONG_STRETCH // 2)
    doc = Document(files["t5-small"].model, "hello " + short + " end")
    assert not doc.encodes_long(6 + len(short) // 2, 6 + len(short) // 2)


def test_a_paste_that_makes_a_long_piece_encodes_long(files: dict[str, Judge]) -> None:
    prose = "the cat sat on the mat. " * 40
    doc = Document(files["t5-small"].model, prose)
    at = 100  # inside a word
    assert doc.encodes_long(at, at, word(2 * LONG_STRETCH))
    # Words of the pasted text, with spaces between: each is encoded alone.
    assert not doc.encodes_long(at, at, (word(LONG_STRETCH // 4) + " ") * 12)
    # One long word among them, or at either end, where it joins the old word it lands in.
    assert doc.encodes_long(at, at, "a b " + word(LONG_STRETCH + 10) + " c d")
    # "cat" lies at [100, 103), after a space: the paste's first word joins the space, its last
    # word joins "cat".
    assert doc.encodes_long(at, at, word(LONG_STRETCH) + " tail")
    assert not doc.encodes_long(at, at, word(LONG_STRETCH - 2) + " tail")
    assert doc.encodes_long(at, at, "head " + word(LONG_STRETCH - 2))
    assert not doc.encodes_long(at, at, "head " + word(LONG_STRETCH - 4))
    assert not doc.encodes_long(at, at, " " + word(LONG_STRETCH - 2) + " ")
    # Half a piece pasted next to an old half: the stretch from cut to cut is long.
    half = word(LONG_STRETCH // 2 + 100, 3)
    doc = Document(files["t5-small"].model, "hello " + half + " end")
    assert not doc.encodes_long(6, 6, "")
    assert doc.encodes_long(6, 6, word(LONG_STRETCH // 2 + 100, 5))
    assert Document(files["t5-small"].model, "").encodes_long(0, 0, word(LONG_STRETCH + 1))


@pytest.mark.parametrize("name", BOUNDED)
def test_bounded_files_never_encode_long(files: dict[str, Judge], name: str) -> None:
    long = word(3 * LONG_STRETCH)
    doc = Document(files[name].model, "x = " + long + "\n")
    for at in (5, len(long) // 2, len(long)):
        assert not doc.encodes_long(at, at + 1), at
    assert not doc.encodes_long(5, 5, word(2 * LONG_STRETCH))


def test_bundled_model_never_encodes_long() -> None:
    long = word(3 * LONG_STRETCH)
    doc = Document(load_model(), long)
    assert not doc.encodes_long(len(long) // 2, len(long) // 2)


@pytest.mark.parametrize("name", BOUNDED + SPLITTING)
@given(data=st.data())
def test_edits_taken_apart_then_in_place(
    files: dict[str, Judge], name: str, data: st.DataObject
) -> None:
    """Edits go to the text alone (edit_text) and one whole encode of the newest text goes in,
    as the server does for an edit that encodes long; the edits after it go in place."""
    judge = files[name]
    pieces = st.sampled_from(["q", " ", "", "ab", ",", "\n", "é", " the", "Hello", word(300, 7)])
    text = "hello world " + word(LONG_STRETCH + 500) + " the end.\n"
    doc = Document(judge.model, text)
    for _ in range(data.draw(st.integers(1, 3), label="rounds")):
        normalized = ""
        for _ in range(data.draw(st.integers(1, 3), label="edits")):
            a = data.draw(st.integers(0, len(text)), label="a")
            b = data.draw(st.integers(a, min(len(text), a + 4)), label="b")
            new = data.draw(pieces, label="new")
            text = text[:a] + new + text[b:]
            normalized = doc.edit_text(a, b, new)
        assert doc.text == text
        doc.take_tokens(whole_tokens(judge.model, normalized))
        check_document(judge, doc, text)
        while doc.prepare(1 << 12):
            pass
        a = data.draw(st.integers(0, len(text)), label="in place")
        new = data.draw(pieces, label="new in place")
        doc.edit(a, a, new)
        text = text[:a] + new + text[a:]
        check_document(judge, doc, text)
