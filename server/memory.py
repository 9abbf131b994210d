"""The server process's heap: large blocks go back to the system when freed.

Opening a large document makes large transient buffers (the didOpen message, its text, the
encoder's output). glibc's malloc serves blocks of 128 KiB and more with their own mappings, but
each such block freed raises that threshold (up to 32 MiB), so the next ones come from the heap,
and the heap keeps their pages after they are freed: a 10 MB document then cost the server twice
what it holds. Fixing the threshold (`mallopt(M_MMAP_THRESHOLD)`, which turns the adjustment
off) gives those pages back as soon as the buffers go. Elsewhere (macOS, Windows, musl) nothing
is changed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import platform

log = logging.getLogger("tokenline.server")

# glibc's mallopt parameter, and its default value (blocks at least this large get a mapping).
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 128 * 1024


def keep_heap_small() -> bool:
    """Fixes glibc's mmap threshold; True when it did (a glibc system)."""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        done = bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))
    except (OSError, AttributeError):
        done = False
    if not done:
        log.info("could not fix malloc's mmap threshold; freed memory may stay with the process")
    return done
