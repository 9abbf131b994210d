"""A large JSONL chat file counted the way the server counts it (server/chat.py), driven hook by
hook with the idle work in the test's hands: hints for a range come from that range's lines
before any total is made; each idle slice counts a bounded stretch of lines (bounded in
characters, not in time); edits while the totals are pending are counted as the text they
leave; the totals, once done, are the sum of every conversation's reference count.

The bundled Mistral model has no chat template: a conversation's count is its contents' tokens,
sentencepiece's encode of each message (the reference)."""

from __future__ import annotations

import gc
import json
import random
from collections.abc import Callable
from typing import Any

import pytest
import sentencepiece as spm
from lsprotocol import types

from tests.conftest import read_botchan
from tokenline.core import Document, bundled_model_path, load_model
from tokenline.server import chat as chat_unit
from tokenline.server.catchup import CATCH_UP, LOAD_BUDGETS, Backlog, CatchUp
from tokenline.server.chat import SLICE_CHARS, ChatFeature
from tokenline.server.feature import Change, DocState
from tokenline.server.idle import IdleWork
from tokenline.server.settings import Settings

URI = "file:///chat/large.jsonl"
MODEL = "mistral-7b-v0.1"


class FakeHost:
    """The server as the chat feature sees it: a text, idle jobs kept for the test to run."""

    unit = 16

    def __init__(self, text: str) -> None:
        self.backlog = Backlog(text)
        self.jobs: dict[tuple[str, str], Callable[[], bool]] = {}
        self.marked = 0

    def text(self, uri: str) -> Backlog:
        return self.backlog

    def later(self, kind: str, uri: str, step: Callable[[], bool]) -> None:
        self.jobs[(kind, uri)] = step

    def mark(self, uri: str) -> None:
        self.marked += 1

    def slice(self) -> bool:
        """Runs one slice of the pending job; whether more remains."""
        key, step = next(iter(self.jobs.items()))
        if not step():
            del self.jobs[key]
        return bool(self.jobs)


def conversations(n: int, seed: int) -> list[dict[str, Any]]:
    words = read_botchan().split()
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        messages = [{"role": "system", "content": "You read Botchan."}]
        for _turn in range(rng.randint(1, 3)):
            for role in ("user", "assistant"):
                a = rng.randrange(0, len(words) - 80)
                messages.append({"role": role, "content": " ".join(words[a : a + 40])})
        out.append({"messages": messages})
    return out


@pytest.fixture(scope="module")
def sp() -> spm.SentencePieceProcessor:
    return spm.SentencePieceProcessor(model_file=str(bundled_model_path(MODEL)))


def billed(sp: spm.SentencePieceProcessor, record: dict[str, Any]) -> int:
    return sum(len(sp.encode(m["content"])) for m in record["messages"])


def opened(records: list[dict[str, Any]]) -> tuple[FakeHost, ChatFeature, DocState]:
    text = "".join(json.dumps(r) + "\n" for r in records)
    assert len(text) > 100_000  # past EAGER_OPEN_CHARS: counted in idle time
    host = FakeHost(text)
    feature = ChatFeature(host)  # type: ignore[arg-type]
    st = DocState(URI, "jsonl", 1, Document(load_model(MODEL), ""), Settings())
    assert feature.opening(URI, text) == "jsonl"
    feature.document_opened(st)
    return host, feature, st


def hint_labels(feature: ChatFeature, first: int, last: int) -> dict[int, list[str]]:
    rng = types.Range(types.Position(first, 0), types.Position(last, 0))
    params = types.InlayHintParams(types.TextDocumentIdentifier(URI), rng)
    out: dict[int, list[str]] = {}
    for h in feature.inlay_hint(params) or []:
        out.setdefault(h.position.line, []).append(str(h.label))
    return out


def chat(feature: ChatFeature, st: DocState) -> dict[str, Any]:
    status = feature.chat_status(st)
    assert status is not None
    return status


def test_hints_of_a_range_come_before_the_totals(sp: spm.SentencePieceProcessor) -> None:
    records = conversations(400, 1)
    _host, feature, st = opened(records)
    got = hint_labels(feature, 200, 210)
    assert sorted(got) == list(range(200, 211))
    for line, labels in got.items():
        msgs = records[line]["messages"]
        assert labels[:-1] == [f"{len(sp.encode(m['content'])):,} tok" for m in msgs]
        assert labels[-1] == f"{billed(sp, records[line]):,} tok (contents only)"
    status = chat(feature, st)
    assert status["pending"]
    assert status["conversations"] == 11  # the range's, no more: the rest waits for idle time


def test_each_idle_slice_counts_a_bounded_stretch(sp: spm.SentencePieceProcessor) -> None:
    records = conversations(600, 2)
    host, feature, st = opened(records)
    lengths = [len(json.dumps(r)) + 1 for r in records]
    longest = max(lengths)
    slices = 0
    done = 0
    while host.slice():
        slices += 1
        now = chat(feature, st)["conversations"]
        assert 0 < sum(lengths[done:now]) <= SLICE_CHARS + longest
        done = now
    assert slices >= sum(lengths) // (SLICE_CHARS + longest)
    status = chat(feature, st)
    assert not status["pending"]
    assert status["total"] == sum(billed(sp, r) for r in records)
    assert status["conversations"] == len(records)
    assert status["largest"] == max(billed(sp, r) for r in records)


def edit(host: FakeHost, feature: ChatFeature, st: DocState, line: int, col: int, new: str) -> None:
    """Inserts `new` at (line, col) as a didChange does (the text, then the hook)."""
    text = host.backlog
    at = text.line_start(line) + col
    lines = text.line_count()
    text.edit(at, at, new)
    feature.text_changed(st, Change(line, lines - 1 - line))


def test_edits_while_totals_are_pending_are_counted(sp: spm.SentencePieceProcessor) -> None:
    records = conversations(500, 3)
    host, feature, st = opened(records)
    for _ in range(3):
        host.slice()
    counted = chat(feature, st)["conversations"]
    assert 0 < counted < len(records)
    # One message edited among the lines counted, one among those waiting; a line inserted.
    for line in (counted // 2, counted + 50):
        record = records[line]
        body = json.dumps(record)
        col = body.index('"content": "', 60) + len('"content": "') + 2
        edit(host, feature, st, line, col, "wholly new words ")
        records[line] = json.loads(body[:col] + "wholly new words " + body[col:])
    inserted = conversations(1, 9)[0]
    edit(host, feature, st, 10, 0, json.dumps(inserted) + "\n")
    records.insert(10, inserted)
    assert chat(feature, st)["pending"]
    while host.slice():
        pass
    status = chat(feature, st)
    assert status["conversations"] == len(records)
    assert status["total"] == sum(billed(sp, r) for r in records)
    got = hint_labels(feature, counted // 2 + 1, counted // 2 + 1)
    assert (
        got[counted // 2 + 1][-1]
        == f"{billed(sp, records[counted // 2 + 1]):,} tok (contents only)"
    )


def test_the_deferred_encode_loads_in_slices_and_takes_the_edits_made_meanwhile(
    sp: spm.SentencePieceProcessor,
) -> None:
    """A large chat file's own tokens (catchup.py): read a slice per idle step of the text as
    opened; an edit made meanwhile goes in once they are read; then they are the reference's."""
    idle = IdleWork()
    told: list[Change] = []
    catchup = CatchUp(idle, lambda st, change: told.append(change))
    text = "".join(json.dumps(r) + "\n" for r in conversations(300, 4))
    st = DocState(URI, "jsonl", 1, Document(load_model(MODEL), ""), Settings())
    catchup.defer(st, text)

    def step() -> bool:
        return idle._jobs[(CATCH_UP, URI)].step()

    assert step() and step() and st.pending
    backlog = catchup.backlog(st)
    assert backlog is not None
    backlog.edit(7, 7, "wholly new words ")
    catchup.edited(st, Change(0, backlog.line_count() - 1))
    slices = 2
    while step():
        slices += 1
        assert st.pending and not told
    assert slices >= len(text) // LOAD_BUDGETS[1] // 2
    assert not st.pending and told
    assert st.doc.ids() == sp.encode(text[:7] + "wholly new words " + text[7:])


def test_a_large_files_records_leave_the_collectors_walks_as_they_are_counted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each idle slice's records of a large file are frozen (memory.freeze): a full collection
    walking them all would land in the middle of a keystroke, or of a later slice."""
    monkeypatch.setattr(chat_unit, "FROZEN_LINES", 100)
    gc.unfreeze()
    try:
        host, feature, _st = opened(conversations(150, 5))
        table = feature._docs[URI].table
        assert table is not None
        slices = 0
        while host.slice():
            slices += 1
            counted = {id(r) for r in table.records if r is not None}
            assert counted
            assert not any(id(o) in counted for o in gc.get_objects())
        assert slices >= 2
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
