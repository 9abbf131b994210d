"""The server process's heap: what large transient buffers leave behind goes back to the system.

Opening a large document makes large transient buffers (the didOpen message, its text, the
encoder's output). glibc's malloc serves the first such blocks with their own mappings, but each
one freed raises that threshold (up to 32 MiB), so later ones come from the heap, and the heap
keeps their pages once they are freed: a 10 MB document cost the server 26 bytes per token of
resident memory where the core holds 14. `malloc_trim` hands those free pages back. It walks the
heap (about 15 ms after a 10 MB document), so the server calls it after work that took far
longer and is not repeated soon: opening, closing or re-tokenizing a large document. Not after a
whole re-encode: the next one would fault the same pages back in, and run a third slower. For
the same reason the threshold is not fixed (`mallopt`): every large buffer of a whole re-encode
would be mapped anew. Elsewhere than on glibc (macOS, Windows, musl) nothing happens.

The cyclic garbage collector is the other cost a keystroke can meet: a full collection walks
every container the process holds (a model's vocabulary, a document's structures), several
milliseconds in the middle of an edit. After the same rare events, and after a model's first
document, `settle` collects once and freezes what survives (`gc.freeze`), so that later
collections walk only what was made since; it unfreezes first, so that what a closed document
left in cycles is still collected.
"""

from __future__ import annotations

import ctypes
import gc
import logging
import platform

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
    """Collects the heap's cycles once and moves what survives out of the collector's walks."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def freeze() -> None:
    """Moves what the heap holds now out of the collector's walks, without a collection first
    (cheap: a large chat file's records, once all are counted); the next settle() unfreezes it,
    so cycles left in it are still collected then."""
    gc.freeze()
