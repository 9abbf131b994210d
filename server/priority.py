"""The scheduling priority of the server's own threads (workers and the heap's trim): below the
event loop's, so that on a busy machine a key's turn on the loop comes first."""

from __future__ import annotations

import contextlib
import os
import sys
import threading

# How many nice levels a background thread sits above the event loop's.
WORKER_NICENESS = 5


def yield_to_the_loop() -> None:
    """On Linux, where a thread has a nice value of its own: the calling thread's becomes
    WORKER_NICENESS above the server's (elsewhere the priority is the process's: unchanged)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError):
            tid = threading.get_native_id()
            os.setpriority(
                os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + WORKER_NICENESS
            )
