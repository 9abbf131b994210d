"""The server process's heap: what large transient buffers leave behind goes back to the system.

Opening a large document makes large transient buffers (the didOpen message, its text, the
encoder's output). glibc's malloc serves the first such blocks with their own mappings, but each
one freed raises that threshold (up to 32 MiB), so later ones come from the heap, and the heap
keeps their pages once they are freed: a 10 MB document cost the server 26 bytes per token of
resident memory where the core holds 14. `malloc_trim` hands those free pages back. It walks the
heap (6.5 ms after a 1 MB document of Japanese, about 15 ms after a 10 MB one), longer than a
keystroke may wait, so it runs on a thread of its own (`Trimmer`; ctypes lets go of the GIL
during the call), after work that took far longer and is not repeated soon: opening, closing or
re-tokenizing a large document. Not after a whole re-encode: the next one would fault the same
pages back in, and run a third slower. For the same reason the threshold is not fixed
(`mallopt`): every large buffer of a whole re-encode would be mapped anew. Elsewhere than on
glibc (macOS, Windows, musl) nothing happens.

The cyclic garbage collector is the other cost a keystroke can meet: a full collection walks
every container the process holds (a model's vocabulary, a document's structures), several
milliseconds in the middle of an edit. After the same rare events, and after a model's first
document, `settle` collects the young generations and freezes what survives (`gc.freeze`), so
that later collections walk only what was made since. It never walks the frozen heap again (an
unfreeze and full collection took 22-25 ms with o200k_base loaded): a closed document's frozen
objects are freed by their reference counts, as a Document leaves no reference cycles
(tests/core/test_document_cycles.py).
"""

from __future__ import annotations

import ctypes
import gc
import logging
import platform
import threading
import time
from typing import Any

from tokenline.server.priority import yield_to_the_loop

log = logging.getLogger("tokenline.server")

# Documents at least this long (characters) leave enough behind to be worth a walk of the heap.
LARGE = 1_000_000


def give_back() -> bool:
    """Returns the heap's free pages to the system (glibc only); True when it did."""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        return bool(ctypes.CDLL("libc.so.6").malloc_trim(0))
    except (OSError, AttributeError):
        log.debug("malloc_trim is not available")
        return False


def settle() -> None:
    """Collects the young generations' cycles and moves what survives out of the collector's
    walks (both cost what was made since the last settle, not the whole heap)."""
    gc.collect(1)
    gc.freeze()


def freeze() -> None:
    """Moves what the heap holds now out of the collector's walks, without a collection first
    (cheap: a large chat file's records, once all are counted)."""
    gc.freeze()


def _timed_trim() -> None:
    """give_back() at a lower priority than the event loop's (ctypes lets go of the GIL, but the
    trim takes a core: 5-10 ms of it after a 10 MB document, in which a key once waited 9 ms
    for the other one), logged (DEBUG) with when it ran: the server benchmark sets it beside
    the keys."""
    yield_to_the_loop()
    started = time.monotonic()
    give_back()
    took = (time.monotonic() - started) * 1e3
    log.debug("malloc_trim: %.3f ms, at %.6f", took, started)


class Trimmer:
    """Runs give_back() on a thread of its own, one at a time: the event loop goes on."""

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self.started = 0

    def start(self) -> bool:
        """Starts a trim unless one is running; True when it started one."""
        if self._thread is not None and self._thread.is_alive():
            return False
        self._thread = threading.Thread(target=_timed_trim, name="malloc_trim", daemon=True)
        self._thread.start()
        self.started += 1
        return True

    def join(self) -> None:
        """Waits for the running trim, if any (tests)."""
        if self._thread is not None:
            self._thread.join()


class CollectionLog:
    """Logs each run of the cyclic collector and how long it took (at DEBUG: the server
    benchmark reads them beside the idle slices, to tell a collection's pause from a slice's)."""

    def __init__(self) -> None:
        self._start = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._start = time.monotonic()
        else:
            took = (time.monotonic() - self._start) * 1e3
            log.debug(
                "collection of generation %d: %.3f ms, at %.6f",
                info["generation"],
                took,
                self._start,
            )

    def install(self) -> None:
        """Watches the collector while the log is at DEBUG."""
        if log.isEnabledFor(logging.DEBUG):
            gc.callbacks.append(self)
