"""The collector's heap is settled (server/memory.py): what survives is frozen out of later
collections' walks, and what a closed document left in cycles is still collected next time."""

from __future__ import annotations

import gc
import weakref

from tokenline.server.memory import settle


class Node:
    """An object in a reference cycle: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


def test_settle_freezes_survivors_and_collects_frozen_cycles_next_time() -> None:
    try:
        node = Node()
        ref = weakref.ref(node)
        settle()
        assert gc.get_freeze_count() > 0
        del node
        gc.collect()
        assert ref() is not None  # frozen: an ordinary collection does not walk it
        settle()
        assert ref() is None  # unfrozen first: the cycle is garbage and goes
    finally:
        gc.unfreeze()


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
