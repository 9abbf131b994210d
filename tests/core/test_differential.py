"""Differential fuzzing: after every edit, Document.ids() equals SentencePiece's full encode.

Runs over the shared models, models trained here in unusual configurations and hand-built model
protos. One mismatch is a bug.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import sentencepiece as spm
from hypothesis import given
from hypothesis import strategies as st

from tests.core import modelkit
from tests.core.conftest import SHARED_MODELS
from tests.core.strategies import edit_ops, texts, unspaced
from tokenline.core import Document, load_model

ALL_MODELS = (
    SHARED_MODELS
    + list(modelkit.TRAINED)
    + [
        "hand-tied",
        "hand-runs",
        "hand-unused-local",
        "hand-unused-global",
        "hand-unknown-merge",
        "hand-user",
        "hand-control-text",
        "hand-unused-random-46",
    ]
)


class Oracle:
    def __init__(self, path: Path) -> None:
        self.sp = spm.SentencePieceProcessor(model_file=str(path))
        self.model = load_model(path)

    def expect(self, text: str) -> list[int]:
        ids: list[int] = self.sp.encode(text)
        return ids


class Oracles(dict[str, Oracle]):
    """An Oracle per model name, made when a test first asks for it (see ModelPaths)."""

    def __init__(self, paths: dict[str, Path]) -> None:
        super().__init__()
        self.paths = paths

    def __missing__(self, name: str) -> Oracle:
        self[name] = Oracle(self.paths[name])
        return self[name]


@pytest.fixture(scope="module")
def oracles(model_paths: dict[str, Path]) -> Oracles:
    return Oracles(model_paths)


def check_sequence(oracle: Oracle, text: str, data: st.DataObject) -> None:
    doc = Document(oracle.model, text)
    assert doc.ids() == oracle.expect(text)
    steps = data.draw(st.integers(1, 25), label="steps")
    for _ in range(steps):
        start, end, new = data.draw(edit_ops(doc.length()), label="edit")
        expected_text = doc.text[:start] + new + doc.text[end:]
        doc.edit(start, end, new)
        assert doc.text == expected_text
        assert doc.ids() == oracle.expect(expected_text), (start, end, new)
        assert len(doc) == len(doc.ids())


@pytest.mark.parametrize("name", ALL_MODELS)
@given(text=texts(), data=st.data())
def test_edits_match_full_encode(
    oracles: dict[str, Oracle], name: str, text: str, data: st.DataObject
) -> None:
    check_sequence(oracles[name], text, data)


@pytest.mark.parametrize("name", ["mistral-7b-v0.1", "bpe-default", "bpe-byte-fallback"])
@given(data=st.data())
def test_edits_on_prose(
    oracles: dict[str, Oracle], botchan: str, name: str, data: st.DataObject
) -> None:
    start = data.draw(st.integers(0, len(botchan) - 3000), label="offset")
    check_sequence(oracles[name], botchan[start : start + 3000], data)


unspaced_runs = unspaced(min_size=20, max_size=120)


@pytest.mark.parametrize("name", ALL_MODELS)
@given(runs=st.lists(unspaced_runs, min_size=1, max_size=4), data=st.data())
def test_long_unspaced_runs_open_and_count_exactly(
    oracles: dict[str, Oracle], name: str, runs: list[str], data: st.DataObject
) -> None:
    # Runs with no space (CJK, emoji, code) are segments far longer than the cache keeps: they
    # are cut finer before characters that always begin a token, one-character pieces taken
    # straight from the vocabulary.
    text = " ".join(runs)
    oracle = oracles[name]
    doc = Document(oracle.model, text)
    assert doc.ids() == oracle.expect(text)
    start = data.draw(st.integers(0, len(text)), label="start")
    end = data.draw(st.integers(start, len(text)), label="end")
    assert doc.encode_range(start, end) == oracle.expect(text[start:end])
