"""Selection counts: text[start:end] encoded alone, reusing the document's tokens in the middle."""

from __future__ import annotations

from pathlib import Path

import pytest
import sentencepiece as spm
from hypothesis import given
from hypothesis import strategies as st

from tests.core.strategies import texts
from tokenline.core import Document, load_model

MODELS = [
    "mistral-7b-v0.1",
    "llama-2",
    "bpe-default",
    "bpe-suffix",
    "bpe-keep-whitespace",
    "bpe-user-defined",
    "bpe-custom-rules",
    "hand-user",
    "unigram",
]


class Documents(dict[str, tuple[Document, spm.SentencePieceProcessor]]):
    """A long document and its reference per model name, made when a test first asks for it
    (so that a model only ../shared has skips only its own tests)."""

    def __init__(self, paths: dict[str, Path], text: str) -> None:
        super().__init__()
        self.paths = paths
        self.text = text

    def __missing__(self, name: str) -> tuple[Document, spm.SentencePieceProcessor]:
        path = self.paths[name]
        sp = spm.SentencePieceProcessor(model_file=str(path))
        self[name] = (Document(load_model(path), self.text), sp)
        return self[name]


@pytest.fixture(scope="module")
def documents(model_paths: dict[str, Path], botchan: str) -> Documents:
    text = botchan[:30000] + "\n  \u3000 ﬁ ☃☃ 😀 [REF] ab--x y  \n" + botchan[30000:45000] + "   "
    return Documents(model_paths, text)


@pytest.mark.parametrize("name", MODELS)
@given(data=st.data())
def test_long_selection_counts_match_encoding_alone(
    documents: dict[str, tuple[Document, spm.SentencePieceProcessor]],
    name: str,
    data: st.DataObject,
) -> None:
    doc, sp = documents[name]
    n = doc.length()
    start = data.draw(st.integers(0, n - 5000), label="start")
    end = data.draw(st.integers(start + 5000, n), label="end")
    expected = sp.encode(doc.slice(start, end))
    doc.engine.stats.encode_calls = doc.engine.stats.encoded_chars = 0
    assert doc.count(start, end) == len(expected)
    if doc.model.incremental:
        assert (
            doc.engine.stats.encoded_chars < (end - start) // 2
        )  # the middle was reused, not re-encoded
    assert doc.encode_range(start, end) == expected


@pytest.mark.parametrize("name", ["mistral-7b-v0.1", "bpe-default", "hand-user"])
@given(prefix=texts(5), middle=texts(10), suffix=texts(5), data=st.data())
def test_selection_edges_in_odd_places(
    model_paths: dict[str, Path],
    name: str,
    prefix: str,
    middle: str,
    suffix: str,
    data: st.DataObject,
) -> None:
    # Long filler so the windowed path runs, with random text around both edges.
    filler = "The quick brown fox jumps over the lazy dog. " * 150
    text = prefix + middle + filler + middle + suffix
    sp = spm.SentencePieceProcessor(model_file=str(model_paths[name]))
    doc = Document(load_model(model_paths[name]), text)
    start = data.draw(st.integers(0, len(prefix) + len(middle)))
    end = data.draw(st.integers(len(text) - len(middle) - len(suffix), len(text)))
    assert doc.encode_range(start, end) == sp.encode(text[start:end])
