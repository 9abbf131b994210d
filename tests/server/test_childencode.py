"""Whole re-encodes of large texts in a child process (server/childencode.py): the child's
tokens are those the server's own model gives, and a child whose model is not the server's (its
file changed since the server read it) is refused, the thread encoding instead."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tokenline.core import load_model, whole_tokens
from tokenline.server.childencode import CHILD_FROM, ChildEncoder

DATA = Path(__file__).resolve().parents[1] / "data" / "tokenizers"


@pytest.fixture
def child() -> Iterator[ChildEncoder]:
    c = ChildEncoder()
    try:
        yield c
    finally:
        c.close()


def large(botchan: str) -> str:
    return (botchan * (CHILD_FROM // len(botchan) + 1))[: CHILD_FROM + 1000]


def test_the_child_gives_the_servers_tokens(child: ChildEncoder, botchan: str) -> None:
    model = load_model(DATA / "t5-small" / "tokenizer.json")
    text = large(botchan)
    handled, run = child.encode(model, text, lambda: True)
    assert handled and run is not None
    mine = whole_tokens(model, text)
    assert list(run.ids) == list(mine.ids)
    assert list(run.lens) == list(mine.lens)
    assert list(run.joins) == list(mine.joins)
    # A short text stays on the thread; a superseded one is not encoded.
    assert child.encode(model, text[:1000], lambda: True) == (False, None)
    assert child.encode(model, text, lambda: False) == (True, None)


def test_a_model_file_changed_since_it_was_read_is_refused(
    child: ChildEncoder, botchan: str, tmp_path: Path
) -> None:
    path = tmp_path / "tokenizer.json"
    shutil.copy(DATA / "t5-small" / "tokenizer.json", path)
    model = load_model(path)
    shutil.copy(DATA / "gpt2" / "tokenizer.json", path)  # what the child will read
    assert child.encode(model, large(botchan), lambda: True) == (False, None)
    shutil.copy(DATA / "t5-small" / "tokenizer.json", path)
    # Refused for good: the server's model and its file cannot be trusted to agree.
    assert child.encode(model, large(botchan), lambda: True) == (False, None)


def test_a_model_without_a_file_stays_on_the_thread(child: ChildEncoder, botchan: str) -> None:
    model = load_model(DATA / "t5-small" / "tokenizer.json")
    model.path = "<bytes>"
    assert child.encode(model, large(botchan), lambda: True) == (False, None)
