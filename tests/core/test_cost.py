"""How much text an edit re-encodes: counted, not timed (timings live in benchmarks/)."""

from __future__ import annotations

import base64
import math
import random

import sentencepiece as spm

from tokenline.core import Document, load_model

MODEL = load_model()
SP = spm.SentencePieceProcessor(model_file=MODEL.path)


def encoded_by(doc: Document, start: int, end: int, new: str) -> tuple[int, int]:
    doc.engine.stats.encode_calls = 0
    doc.engine.stats.encoded_chars = 0
    doc.edit(start, end, new)
    return doc.engine.stats.encode_calls, doc.engine.stats.encoded_chars


def test_local_edits_encode_a_few_tokens(botchan: str) -> None:
    doc = Document(MODEL, botchan * 4)
    rng = random.Random(7)
    worst = 0
    for _ in range(300):
        at = rng.randrange(doc.length())
        _calls, chars = encoded_by(doc, at, at + 1, rng.choice("aeiou "))
        worst = max(worst, chars)
    assert worst < 400  # a few tokens of context, never the document (1.1 M characters)
    assert doc.ids() == SP.encode(doc.text)


def test_one_letter_before_a_long_run_widens_geometrically() -> None:
    # One "a" inserted before 200 000 "a"s re-pairs the whole run: the window must grow
    # geometrically, so the work stays a small multiple of one encode of the run.
    n = 200_000
    doc = Document(MODEL, "a" * n)
    calls, chars = encoded_by(doc, 0, 0, "a")
    assert doc.ids() == SP.encode("a" * (n + 1))
    assert chars <= 4 * (n + 1)
    assert calls <= 2 * math.ceil(math.log2(n)) + 4


def test_long_base64_line() -> None:
    payload = base64.b64encode(random.Random(3).randbytes(60_000)).decode()
    text = "data: " + payload + "\nnext line\n"
    doc = Document(MODEL, text)
    _, chars = encoded_by(doc, 10, 11, "Z")
    assert doc.ids() == SP.encode(doc.text)
    assert chars <= 4 * len(text)
    _calls, chars = encoded_by(doc, len(text) - 3, len(text) - 3, "!")
    assert chars < 200
