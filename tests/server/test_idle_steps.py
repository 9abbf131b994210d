"""Idle work comes in bounded steps (the contract: no call on the event loop takes longer than
5 ms because of it). Bounded by counting the work a step does, not by timing it: a deferred
opening builds its rope ROPE_PIECE characters a step, and the heap's trim runs on a thread of
its own, not in the step that starts it."""

from __future__ import annotations

import gc
import os
import sys
import threading
from types import SimpleNamespace

import pytest
import sentencepiece as spm

from tests.conftest import read_botchan
from tokenline.core import Document, bundled_model_path, load_model
from tokenline.core.rope import MEASURES, TARGET
from tokenline.server import memory, store
from tokenline.server.app import TokenlineServer
from tokenline.server.catchup import ROPE_PIECE, Loading
from tokenline.server.priority import WORKER_NICENESS

MODEL = "mistral-7b-v0.1"


def test_a_deferred_opening_builds_its_rope_a_bounded_piece_a_step() -> None:
    text = (read_botchan() * 4)[: 3 * ROPE_PIECE + 12_345] + "\r\nend"
    loading = Loading(load_model(MODEL), text)
    rope_steps = 0
    while loading.rope is not None:
        before = loading.rope.start
        assert loading.step()
        rope_steps += 1
        built = len(text) if loading.rope is None else loading.rope.start
        # The budget, then at most one chunk more (2 * TARGET, a "\r\n" glued on).
        assert built - before < ROPE_PIECE + 2 * TARGET + 2
    assert rope_steps >= len(text) // (ROPE_PIECE + 2 * TARGET + 1)
    while loading.step():
        pass
    assert loading.doc is not None
    sp = spm.SentencePieceProcessor(model_file=str(bundled_model_path(MODEL)))
    assert loading.doc.ids() == sp.encode(text)
    whole = Document(load_model(MODEL), text)
    for m in range(MEASURES):
        assert loading.doc.rope.measure_total(m) == whole.rope.measure_total(m)
    assert loading.doc.rope.chunks == whole.rope.chunks


def test_the_give_back_step_trims_the_heap_on_another_thread_below_the_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    trimmed_on: list[str] = []
    niceness: list[int] = []

    def trim() -> bool:
        trimmed_on.append(threading.current_thread().name)
        if sys.platform.startswith("linux"):
            niceness.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        return True

    monkeypatch.setattr(memory, "give_back", trim)
    server = TokenlineServer()
    try:
        assert server._give_back() is False  # one step
        server.trimmer.join()
    finally:
        gc.unfreeze()
    assert trimmed_on == ["malloc_trim"]
    assert threading.current_thread().name != "malloc_trim"
    if sys.platform.startswith("linux"):
        # Below the event loop's priority: on a busy machine the trim takes a core of two.
        loop_niceness = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        assert niceness == [min(19, loop_niceness + WORKER_NICENESS)]


class Clockwork:
    """A document whose prepare() advances a fake clock by what its characters cost: `cheap`
    seconds each in its first `switch` steps, `costly` after (prose, then base64)."""

    def __init__(self, chars: int, switch: int, cheap: float, costly: float) -> None:
        self.now, self.done, self.chars = 0.0, 0, chars
        self.switch, self.cheap, self.costly = switch, cheap, costly
        self.steps: list[float] = []

    def prepare(self, budget: int) -> bool:
        upto = min(self.chars, self.done + budget)
        cost = self.cheap if len(self.steps) < self.switch else self.costly
        self.steps.append((upto - self.done) * cost)
        self.now += self.steps[-1]
        self.done = upto
        return upto < self.chars


def test_a_prepare_step_whose_text_costs_three_times_the_last_ones_stays_under_5_ms(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Steps are sized from the last one's time: where the text gets costlier (base64 after
    prose), one step runs over by as much. Three times the cost per character stays within the
    5 ms a keystroke may wait behind a step (the clock is the document's own)."""
    doc = Clockwork(chars=3_000_000, switch=20, cheap=40e-9, costly=120e-9)
    st = SimpleNamespace(uri="file:///a", doc=doc)
    docs = SimpleNamespace(get=lambda uri: st)
    monkeypatch.setattr(store, "time", SimpleNamespace(perf_counter=lambda: doc.now))
    step = store.Preparation(st, docs)  # type: ignore[arg-type]
    while step():
        pass
    assert doc.done == doc.chars
    assert len(doc.steps) > doc.switch + 5
    # The step where the cost rose took three times the one before it.
    assert doc.steps[doc.switch] > 2.9 * doc.steps[doc.switch - 1]
    assert max(doc.steps) <= 0.005
