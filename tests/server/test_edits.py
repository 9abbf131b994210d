"""Random edit sequences over emoji, CJK and CRLF text, in UTF-16 positions, against a real server
subprocess: the status count and the semantic tokens (full and delta) must equal sentencepiece's
tokenization of the text the edits produce."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import BOTCHAN

from .harness import (
    LLAMA,
    Session,
    apply_semantic_edits,
    bundled_model_path,
    check_semantic,
    position,
    rng,
    shared_file,
    sp_count,
)

FRAGMENTS = [
    "a",
    "x",
    "The",
    " world",
    "hello",
    " ",
    "  ",
    "\t",
    "\n",
    "\n\n",
    "\r\n",
    "\r",
    "😀",
    "🧿",
    "👍🏽",
    "中文",
    "日本語",
    "𠀀",
    "é",
    "ü",
    "—",
    "'s",
    "123",
    "<s>",
    "▁",
]
text_st = st.lists(st.sampled_from(FRAGMENTS), max_size=30).map("".join)
small_text_st = st.lists(st.sampled_from(FRAGMENTS), max_size=4).map("".join)
# (where, how many characters to replace, new text)
edit_st = st.tuples(st.floats(0, 1), st.integers(0, 6), small_text_st)
# Each didChange carries 1-3 content changes, applied in order.
batches_st = st.lists(st.lists(edit_st, min_size=1, max_size=3), min_size=1, max_size=12)

_uris = itertools.count()


def _not_inside_crlf(text: str, off: int) -> int:
    # LSP positions cannot address the point between "\r" and "\n".
    if 0 < off < len(text) and text[off - 1] == "\r" and text[off] == "\n":
        return off - 1
    return off


def run_edits(
    s: Session, model: Path, text: str, batches: list[list[tuple[float, int, str]]]
) -> None:
    uri = f"file:///random/{next(_uris)}.md"
    s.open(uri, text)
    first = s.semantic_full(uri)
    assert first is not None
    check_semantic(model, text, first.data)
    mirror = text
    for batch in batches:
        changes = []
        for frac, n, new in batch:
            a = _not_inside_crlf(mirror, int(frac * len(mirror)))
            b = _not_inside_crlf(mirror, min(len(mirror), a + n))
            changes.append((rng(position(mirror, a), position(mirror, b)), new))
            mirror = mirror[:a] + new + mirror[b:]
        s.change(uri, changes)
    status = s.status(uri)
    assert status["tokens"] == sp_count(model, mirror), repr(mirror)
    delta = s.semantic_delta(uri, first.result_id)
    assert hasattr(delta, "edits"), delta
    patched = apply_semantic_edits(first.data, delta.edits)
    check_semantic(model, mirror, patched)
    again = s.semantic_full(uri)
    assert again is not None
    assert list(again.data) == patched
    s.close_doc(uri)


@pytest.fixture(scope="module")
def llama_session() -> Iterator[Session]:
    s = Session(init={"model": str(shared_file(LLAMA))})
    try:
        yield s
    finally:
        s.close()


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(text=text_st, batches=batches_st)
def test_random_edits_bundled_model(session: Session, text: str, batches: list) -> None:
    run_edits(session, bundled_model_path(), text, batches)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(text=text_st, batches=batches_st)
def test_random_edits_llama(llama_session: Session, text: str, batches: list) -> None:
    run_edits(llama_session, LLAMA, text, batches)


def test_edits_in_botchan(session: Session) -> None:
    """Edits in a real text, with a delta after each one."""
    model = bundled_model_path()
    mirror = BOTCHAN.read_text(encoding="utf-8")[:60_000]
    uri = "file:///botchan.txt"
    s = session
    s.open(uri, mirror, language="plaintext")
    prev = s.semantic_full(uri)
    assert prev is not None
    data = list(prev.data)
    result_id = prev.result_id
    for i, (at, n, new) in enumerate(
        [(1000, 0, "x"), (5000, 3, ""), (20000, 0, "\n"), (30000, 10, "中文 😀"), (59000, 1, " ")]
    ):
        s.change(uri, [(rng(position(mirror, at), position(mirror, at + n)), new)])
        mirror = mirror[:at] + new + mirror[at + n :]
        d = s.semantic_delta(uri, result_id)
        assert sum(5 + len(e.data) for e in d.edits) < 400, f"edit {i}: delta too large"
        data = apply_semantic_edits(data, d.edits)
        result_id = d.result_id
    assert s.status(uri)["tokens"] == sp_count(model, mirror)
    check_semantic(model, mirror, data)
    s.close_doc(uri)
