"""The collector's heap is settled (server/memory.py): young cycles are collected, what survives
is frozen out of later collections' walks, and the frozen heap is never walked again; the heap's
free pages go back to the system on a thread of its own."""

from __future__ import annotations

import gc
import threading
import weakref

import pytest

from tokenline.server import memory
from tokenline.server.memory import Trimmer, settle


class Node:
    """An object in a reference cycle: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


def walked(obj: object) -> bool:
    """Whether a collection of some generation walks obj (frozen objects are in none)."""
    return any(any(o is obj for o in gc.get_objects(g)) for g in range(3))


def test_settle_collects_young_cycles_and_freezes_survivors() -> None:
    # No automatic collection between the settles: one could move the garbage to the oldest
    # generation before it is garbage (other threads of this process allocate too).
    enabled = gc.isenabled()
    gc.disable()
    try:
        settle()
        garbage = Node()
        gone = weakref.ref(garbage)
        del garbage
        kept = Node()
        assert walked(kept)
        settle()
        assert gone() is None  # young garbage: collected
        # What survived is frozen: tracked, but in no generation a collection walks. (By the
        # object, not by gc.get_freeze_count(): another thread that ends meanwhile, an earlier
        # test's, frees frozen objects of its own.)
        assert gc.is_tracked(kept) and not walked(kept)
        settle()
        assert not walked(kept)  # never unfrozen: not walked again
        assert kept.me is kept
    finally:
        gc.unfreeze()
        if enabled:
            gc.enable()


def test_opening_and_closing_documents_leaves_nothing_behind_in_the_protocol() -> None:
    """pygls keeps the Future of each notification its generator handlers answer: the server's
    didOpen/didChange/didClose are plain, so a long session of opening and closing files holds
    nothing for them (the documents themselves are gone from the store)."""
    import asyncio

    from tokenline.server.app import TokenlineServer

    async def session() -> None:
        ls = TokenlineServer()
        protocol = ls.protocol
        sent: list[bytes] = []

        class Writer:
            def write(self, data: bytes) -> None:
                sent.append(data)

            def close(self) -> None:
                pass

        protocol.set_writer(Writer())

        def notify(method: str, params: dict[str, object]) -> None:
            message = {"jsonrpc": "2.0", "method": method, "params": params}
            protocol.handle_message(protocol.structure_message(message))

        for i in range(20):
            doc = {"uri": f"file:///leak{i}.md", "version": 1}
            notify(
                "textDocument/didOpen", {"textDocument": {**doc, "languageId": "md", "text": "a b"}}
            )
            edit = {
                "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
            }
            notify(
                "textDocument/didChange",
                {"textDocument": {**doc, "version": 2}, "contentChanges": [{**edit, "text": "x"}]},
            )
            notify("textDocument/didClose", {"textDocument": {"uri": doc["uri"]}})
            assert ls.store.get(doc["uri"]) is None
        await asyncio.sleep(0)
        assert any(b"tokenline/status" in data for data in sent)
        assert len(protocol._request_futures) == 0

    asyncio.run(session())


def test_the_trimmer_runs_off_the_calling_thread_one_trim_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    release = threading.Event()
    ran: list[str] = []

    def slow_trim() -> bool:
        ran.append(threading.current_thread().name)
        release.wait(10)
        return True

    monkeypatch.setattr(memory, "give_back", slow_trim)
    trimmer = Trimmer()
    assert trimmer.start()
    assert not trimmer.start()  # one is running: not a second
    release.set()
    trimmer.join()
    assert ran == ["malloc_trim"]
    assert trimmer.start()  # done: the next one starts
    trimmer.join()
    assert trimmer.started == 2
