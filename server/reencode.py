"""Whole re-encodes on a worker thread, so that the event loop answers keystrokes meanwhile.

A model that re-encodes whole (server/catchup.py) spends a tenth of a second or more on a 1 MB
text, most of it in the library's encode, which releases the GIL (sentencepiece's and
tokenizers' native code): on a thread, that time is no keystroke's wait. The core's part
(`whole_tokens`) reads only the model, which no edit changes, and the text to encode is a
snapshot; the Document itself is touched on the event loop alone (Document.edit_text before,
take_tokens after). Two workers: an encode of a text superseded while it runs cannot be stopped,
and the newest one must not queue behind it. A job whose text was superseded before it began is
skipped. A large text is encoded in a child process instead (server/childencode.py), which the
worker waits for: turning a library's result into tokens holds the GIL, and would hold the event
loop with it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from concurrent.futures import Executor, ThreadPoolExecutor

from tokenline.core import Model, TokenRun, whole_tokens
from tokenline.server.childencode import ChildEncoder
from tokenline.server.priority import yield_to_the_loop

log = logging.getLogger("tokenline.server")

WORKERS = 2

# What a worker hands back: the tokens (None when skipped or failed), the seconds the encode
# took, and what it raised.
Landed = Callable[[TokenRun | None, float, BaseException | None], None]


class Reencoder:
    """The worker threads (made on first use) and the encodes under way."""

    def __init__(self, pool: Executor | None = None, child: ChildEncoder | None = None) -> None:
        """pool: where encodes run (made on first use: WORKERS threads); child: where large
        texts are encoded, the thread waiting (made here when not given)."""
        self._pool = pool
        self._child = child or ChildEncoder()

    def encode(
        self, model: Model, normalized: str, newest: Callable[[], bool], landed: Landed
    ) -> None:
        """Encodes `normalized` whole on a worker, unless `newest()` (asked on the worker, as
        the encode starts) says its text was superseded; `landed` is called on the event loop
        (at once, without one: a direct call)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            landed(*_work(model, normalized, newest, None))
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(
                WORKERS, thread_name_prefix="tokenline-reencode", initializer=yield_to_the_loop
            )
        future = loop.run_in_executor(self._pool, _work, model, normalized, newest, self._child)
        future.add_done_callback(lambda done: _land(done, landed))

    def close(self) -> None:
        """Stops the child process, if one was started."""
        self._child.close()


def _work(
    model: Model, normalized: str, newest: Callable[[], bool], child: ChildEncoder | None
) -> tuple[TokenRun | None, float, BaseException | None]:
    if not newest():
        return None, 0.0, None
    start = time.perf_counter()
    try:
        if child is not None:
            handled, run = child.encode(model, normalized, newest)
            if handled:  # by the child, or superseded while it waited for its turn
                return run, time.perf_counter() - start, None
        run = whole_tokens(model, normalized)
    except Exception as error:  # the caller rebuilds the document on the event loop
        return None, time.perf_counter() - start, error
    return run, time.perf_counter() - start, None


def _land(
    done: asyncio.Future[tuple[TokenRun | None, float, BaseException | None]], landed: Landed
) -> None:
    if done.cancelled():
        return
    error = done.exception()
    if error is not None:
        landed(None, 0.0, error)
        return
    landed(*done.result())
