"""The LSP byte streams (stdio or TCP), read so that the server knows when no input is waiting.

pygls reads stdin one line and one body at a time through a thread pool. This reader takes whatever
bytes have arrived (one `read` call, up to 1 MiB) and serves the messages in them one after
another without yielding; only when it must wait for more input does it call `on_idle` first. That
is where the server publishes the statuses and diagnostics of the edits it has just applied:
edits that arrive faster than they are processed are coalesced, and the last version is always
reported before the server waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from pygls.io_ import run_async
from pygls.lsp.server import LanguageServer

log = logging.getLogger("tokenline.server")

CHUNK = 1 << 20
# Exit codes of a server stopped by Ctrl-C (128 + SIGINT) and by a client that went away.
EXIT_INTERRUPTED = 130
EXIT_CLIENT_GONE = 1


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


class _StreamWriter:
    """pygls's writer interface over an asyncio StreamWriter (TCP)."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._w = writer

    def write(self, data: bytes) -> None:
        self._w.write(data)

    def close(self) -> None:
        self._w.close()


class _FdWriter:
    def __init__(self, fd: int) -> None:
        self._f = os.fdopen(fd, "wb", buffering=0, closefd=False)

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            n = self._f.write(view)
            if n is None:
                continue
            view = view[n:]

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._f.close()


def setup_logging() -> None:
    """Logs to stderr (stdout carries the protocol), at the level $TOKENLINE_LOG names."""
    level = os.environ.get("TOKENLINE_LOG", "WARNING").upper()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    logging.getLogger("tokenline").setLevel(getattr(logging, level, logging.INFO))
    # pygls logs every message body at INFO: far too much for megabyte documents.
    logging.getLogger("pygls").setLevel(logging.WARNING)


def run_stdio(ls: LanguageServer, on_idle: Callable[[], None]) -> int:
    """Serves one client on stdin/stdout; on_idle runs before each wait for input."""
    stdin_fd = sys.stdin.fileno()
    stdout_fd = sys.stdout.fileno()
    # Nothing else may write to the protocol stream.
    sys.stdout = sys.stderr
    ls.protocol.set_writer(_FdWriter(stdout_fd))
    stop = threading.Event()

    async def main() -> None:
        reader = IdleReader(stdin_source(stdin_fd), on_idle)
        await serve_reader(reader, ls.protocol, stop, ls._report_server_error)

    return _run(main)


def run_tcp(ls: LanguageServer, on_idle: Callable[[], None], host: str, port: int) -> int:
    """Serves one client that connects to host:port; on_idle runs before each wait for input."""
    stop = threading.Event()

    async def main() -> None:
        done = asyncio.Event()

        async def connection(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            log.info("client connected from %s", w.get_extra_info("peername"))
            ls.protocol.set_writer(_StreamWriter(w))

            async def source() -> bytes:
                return await r.read(CHUNK)

            try:
                await serve_reader(
                    IdleReader(source, on_idle), ls.protocol, stop, ls._report_server_error
                )
            finally:
                done.set()

        server = await asyncio.start_server(connection, host, port)
        addrs = ", ".join(str(s.getsockname()) for s in server.sockets)
        log.info("listening on %s", addrs)
        async with server:
            await done.wait()

    return _run(main)


def _run(main: Callable[[], Coroutine[Any, Any, None]]) -> int:
    """Runs main to its end; the process exit code."""
    try:
        asyncio.run(main())
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else 0
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        log.error("the client closed the connection")
        return EXIT_CLIENT_GONE
    return 0
