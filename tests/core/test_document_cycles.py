"""A Document leaves no reference cycles: once the last reference goes, reference counting frees
it all. The server freezes what survives an opening out of the collector's walks and never walks
the frozen heap again (server/memory.py), so a closed document's objects are freed this way or
not at all."""

from __future__ import annotations

import gc

import pytest

from tests.conftest import read_botchan, tekken_path
from tokenline.core import Document, load_model


@pytest.mark.parametrize("spec", ["mistral-7b-v0.1", "tekken"])
def test_a_closed_document_leaves_nothing_for_the_collector(spec: str) -> None:
    """SentencePiece and a byte-level model (Tekken: opened from one full encode, with the
    work deferred to prepare)."""
    model = load_model(tekken_path() if spec == "tekken" else spec)
    text = read_botchan()[:60_000] + "\r\n日本語のテキスト。\n"
    gc.collect()
    doc = Document(model, text)
    doc.edit(100, 105, "edited text")
    while doc.prepare(4096):
        pass
    doc.count(0, 50_000)
    gc.collect()
    del doc
    assert gc.collect() == 0
