"""Reading LSP messages so that the server knows when no more input is waiting.

pygls reads stdin one line and one body at a time through a thread pool. This reader takes whatever
bytes have arrived (one `read` call, up to 1 MiB) and serves the messages in them one after
another without yielding; only when it must wait for more input does it call `on_idle` first. That
is where the server publishes the statuses and diagnostics of the edits it has just applied:
edits that arrive faster than they are processed are coalesced, and the last version is always
reported before the server waits.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Awaitable, Callable

from pygls.io_ import run_async

log = logging.getLogger("tokenline.server")

CHUNK = 1 << 20


class IdleReader:
    """pygls's AsyncReader over a byte source, calling on_idle before every wait for input."""

    def __init__(self, source: Callable[[], Awaitable[bytes]], on_idle: Callable[[], None]):
        self._source = source
        self._on_idle = on_idle
        self._buf = bytearray()
        self._pos = 0
        self._eof = False

    async def _fill(self) -> bool:
        if self._eof:
            return False
        if self._pos:
            del self._buf[: self._pos]
            self._pos = 0
        try:
            self._on_idle()
        except Exception:
            log.exception("publishing pending results failed")
        data = await self._source()
        if not data:
            self._eof = True
            return False
        self._buf += data
        return True

    async def readline(self) -> bytes:
        while True:
            i = self._buf.find(b"\n", self._pos)
            if i >= 0:
                line = bytes(self._buf[self._pos : i + 1])
                self._pos = i + 1
                return line
            if not await self._fill():
                rest = bytes(self._buf[self._pos :])
                self._pos = len(self._buf)
                return rest

    async def readexactly(self, n: int) -> bytes:
        while len(self._buf) - self._pos < n:
            if not await self._fill():
                return b""
        out = bytes(self._buf[self._pos : self._pos + n])
        self._pos += n
        return out


def stdin_source(fd: int) -> Callable[[], Awaitable[bytes]]:
    """Reads fd in a daemon thread (a blocked read never holds up the exit)."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes] = asyncio.Queue()

    def pump() -> None:
        while True:
            try:
                data = os.read(fd, CHUNK)
            except OSError:
                data = b""
            loop.call_soon_threadsafe(queue.put_nowait, data)
            if not data:
                return

    threading.Thread(target=pump, name="tokenline-stdin", daemon=True).start()
    return queue.get


async def serve_reader(
    reader: IdleReader,
    protocol: object,
    stop: threading.Event,
    error_handler: Callable[[Exception, type], object],
) -> None:
    await run_async(
        stop_event=stop,
        reader=reader,
        protocol=protocol,  # type: ignore[arg-type]
        logger=log,
        error_handler=error_handler,
    )
