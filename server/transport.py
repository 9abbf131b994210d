"""The LSP byte streams (stdio or TCP), read so that the server knows when no input is waiting.

Bytes from the client land in an `Inbox` as they arrive (a thread reads stdin; a TCP connection's
protocol puts what it receives). The reader takes whatever bytes have arrived and serves the
messages in them one after another without yielding; only when it must wait for more input does
it call `on_idle` first. That is where the server publishes the statuses and diagnostics of the
edits it has just applied: edits that arrive faster than they are processed are coalesced, and
the last version is always reported before the server waits. While the reader waits with nothing
queued, the inbox says so (`Inbox.idle`): the server's idle work runs only then (server/idle.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any

from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from tokenline.server.feature import NotReady
from tokenline.server.quick import QuickChange, decoded

log = logging.getLogger("tokenline.server")

CHUNK = 1 << 20
# A pipe's buffer asked for (Linux's F_SETPIPE_SZ; its default limit for a user): a document's
# text arrives in reads of a megabyte instead of 64 KB, each a turn of the event loop.
PIPE_BYTES = 1 << 20
F_SETPIPE_SZ = 1031
CONTENT_LENGTH = re.compile(rb"^Content-Length: (\d+)\r\n$")
# Exit codes of a server stopped by Ctrl-C (128 + SIGINT) and by a client that went away.
EXIT_INTERRUPTED = 130
EXIT_CLIENT_GONE = 1


class Inbox:
    """The client's bytes as they arrive (b"" at the end), and whether the reader waits for more.

    `idle` is set while the reader waits and no bytes are queued; bytes arriving clear it at
    once, before the reader resumes, so idle work sees them before its next slice. `arrived` is
    when the bytes get() last returned were read (time.monotonic(): the server's log gives each
    message's arrival, which the server benchmark sets beside its client's clock).
    """

    def __init__(self) -> None:
        self._queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()
        self.idle = asyncio.Event()
        self.arrived = 0.0

    def put(self, data: bytes) -> None:
        """Bytes from the client (on the event loop's thread)."""
        self.idle.clear()
        self._queue.put_nowait((time.monotonic(), data))

    async def get(self) -> bytes:
        """The next bytes, waiting (idle) until some arrive."""
        if self._queue.empty():
            self.idle.set()
        try:
            self.arrived, data = await self._queue.get()
            return data
        finally:
            self.idle.clear()


class IdleReader:
    """pygls's AsyncReader over an Inbox, calling on_idle before every wait for input."""

    def __init__(self, inbox: Inbox, on_idle: Callable[[], None]):
        self._inbox = inbox
        self._on_idle = on_idle
        self._buf = bytearray()
        self._pos = 0
        self._eof = False
        # When the bytes last added to the buffer were read (Inbox.arrived): a message whose
        # body is complete arrived then.
        self.arrived = 0.0

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
        data = await self._inbox.get()
        self.arrived = self._inbox.arrived
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
        with memoryview(self._buf) as view:
            out = bytes(view[self._pos : self._pos + n])  # one copy, not two
        self._pos += n
        return out


def pump_stdin(fd: int, inbox: Inbox) -> None:
    """Reads fd into the inbox as bytes arrive: on the event loop when fd can be polled (a pipe,
    as editors connect), so that a keystroke reaches the reader without waking a thread and
    handing the interpreter over; else (a regular file) in a daemon thread."""
    loop = asyncio.get_running_loop()
    _widen_pipe(fd)

    def readable() -> None:
        try:
            data = os.read(fd, CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            loop.remove_reader(fd)
        inbox.put(data)

    try:
        loop.add_reader(fd, readable)
    except (OSError, ValueError, NotImplementedError):
        _pump_in_thread(fd, inbox, loop)


def _widen_pipe(fd: int) -> None:
    """Asks for a larger buffer when fd is a pipe on Linux (elsewhere nothing changes)."""
    if sys.platform == "linux":
        import fcntl

        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, F_SETPIPE_SZ, PIPE_BYTES)


def _pump_in_thread(fd: int, inbox: Inbox, loop: asyncio.AbstractEventLoop) -> None:
    """Reads fd into the inbox in a daemon thread (a blocked read never holds up the exit)."""

    def pump() -> None:
        while True:
            try:
                data = os.read(fd, CHUNK)
            except OSError:
                data = b""
            loop.call_soon_threadsafe(inbox.put, data)
            if not data:
                return

    threading.Thread(target=pump, name="tokenline-stdin", daemon=True).start()


class _TcpInbox(asyncio.Protocol):
    """One TCP connection: what an accepted client sends goes to the inbox as it arrives."""

    def __init__(self, inbox: Inbox, accept: Callable[[asyncio.Transport], bool]) -> None:
        self._inbox = inbox
        self._accept = accept
        self._accepted = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._accepted = self._accept(transport)

    def data_received(self, data: bytes) -> None:
        if self._accepted:
            self._inbox.put(data)

    def eof_received(self) -> bool | None:
        if self._accepted:
            self._inbox.put(b"")
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        if self._accepted:
            self._inbox.put(b"")


async def serve_reader(
    reader: IdleReader,
    protocol: LanguageServerProtocol,
    stop: threading.Event,
    error_handler: Callable[[Exception, type], object],
) -> None:
    """pygls's message loop (pygls.io_.run_async), but for the decoding: a large message is
    read by orjson (quick.decoded), into the objects json would give."""
    content_length = 0
    while not stop.is_set():
        header = await reader.readline()
        if not header:
            break
        if not content_length:
            match = CONTENT_LENGTH.fullmatch(header)
            if match:
                content_length = int(match.group(1))
                # pygls's loop logs this too; bench_vscode times a didOpen's arrival by it.
                log.debug("Content length: %s", content_length)
        if content_length and not header.strip():
            body = await reader.readexactly(content_length)
            if not body:
                break
            timed = log.isEnabledFor(logging.DEBUG)  # no clock reads per key otherwise
            started, cpu = (time.monotonic(), time.thread_time()) if timed else (0.0, 0.0)
            message: Any = None
            try:
                message = decoded(body, protocol.structure_message)
                protocol.handle_message(message)
            except Exception as exc:
                log.exception("Unable to handle message")
                error_handler(exc, JsonRpcException)
            finally:
                content_length = 0
            if timed:
                handled(message, reader.arrived, started, cpu)


def handled(message: Any, arrived: float, started: float, cpu: float) -> None:
    """Logs (DEBUG) when a message's bytes were read, when its handling started, and how long it
    took by the clock and in the thread's CPU time (monotonic seconds: the server benchmark
    places each key's wait among them; a wall time above the CPU time is time the process did
    not run, on a shared machine)."""
    took, cpu = (time.monotonic() - started) * 1e3, (time.thread_time() - cpu) * 1e3
    if isinstance(message, QuickChange):
        name = f"didChange {message.uri} v{message.version}"
    else:
        name = str(getattr(message, "method", None) or "answer")
    log.debug(
        "message %s: arrived %.6f, started %.6f, took %.3f ms, cpu %.3f ms",
        *(name, arrived, started, took, cpu),
    )


class _TransportWriter:
    """pygls's writer interface over an asyncio transport (TCP)."""

    def __init__(self, transport: asyncio.Transport) -> None:
        self._t = transport

    def write(self, data: bytes) -> None:
        self._t.write(data)

    def close(self) -> None:
        self._t.close()


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
    # ... and every error answer at ERROR with a traceback, routine "not now" answers included.
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_not_an_error)


def _not_an_error(record: logging.LogRecord) -> bool:
    """False for pygls's record of a NotReady answer (sent on every keystroke in a large
    document whose colours come by range): an answer the server means, not a failure."""
    return not (record.exc_info and isinstance(record.exc_info[1], NotReady))


def run_stdio(
    ls: LanguageServer,
    on_idle: Callable[[], None],
    on_inbox: Callable[[Inbox], None] | None = None,
) -> int:
    """Serves one client on stdin/stdout; on_idle runs before each wait for input, on_inbox
    learns the inbox (whose `idle` tells when no input waits)."""
    stdin_fd = sys.stdin.fileno()
    stdout_fd = sys.stdout.fileno()
    # Nothing else may write to the protocol stream.
    sys.stdout = sys.stderr
    ls.protocol.set_writer(_FdWriter(stdout_fd))
    stop = threading.Event()

    async def main() -> None:
        inbox = Inbox()
        if on_inbox is not None:
            on_inbox(inbox)
        pump_stdin(stdin_fd, inbox)
        await serve_reader(IdleReader(inbox, on_idle), ls.protocol, stop, ls._report_server_error)

    return _run(main)


def run_tcp(
    ls: LanguageServer,
    on_idle: Callable[[], None],
    host: str,
    port: int,
    on_inbox: Callable[[Inbox], None] | None = None,
) -> int:
    """Serves the first client that connects to host:port (then stops listening); on_idle and
    on_inbox as for run_stdio."""
    stop = threading.Event()

    async def main() -> None:
        inbox = Inbox()
        if on_inbox is not None:
            on_inbox(inbox)
        connected = asyncio.Event()

        def accept(transport: asyncio.Transport) -> bool:
            if connected.is_set():
                transport.close()  # one client only
                return False
            log.info("client connected from %s", transport.get_extra_info("peername"))
            ls.protocol.set_writer(_TransportWriter(transport))
            connected.set()
            return True

        loop = asyncio.get_running_loop()
        server = await loop.create_server(lambda: _TcpInbox(inbox, accept), host, port)
        addrs = ", ".join(str(s.getsockname()) for s in server.sockets)
        log.info("listening on %s", addrs)
        async with server:
            await connected.wait()
            server.close()
            await serve_reader(
                IdleReader(inbox, on_idle), ls.protocol, stop, ls._report_server_error
            )

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
