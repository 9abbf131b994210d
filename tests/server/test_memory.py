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
