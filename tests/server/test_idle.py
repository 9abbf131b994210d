"""Idle work yields to input (server/idle.py with transport.Inbox): bytes that arrive during a
slice are read before the next slice runs, whether they come from the stdin thread or a TCP
socket; a job with a delay waits for it; replacing or discarding jobs takes effect."""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tokenline.server import idle
from tokenline.server.idle import IdleWork
from tokenline.server.transport import Inbox, _TcpInbox, pump_stdin


class Recorder:
    """A job of `slices` slices that, during slice `arrive_at`, makes input arrive."""

    def __init__(self, log: list[str], slices: int, arrive_at: int, arrive: Callable[[], None]):
        self.log, self.left, self.arrive_at, self.arrive = log, slices, arrive_at, arrive
        self.n = 0

    def __call__(self) -> bool:
        self.n += 1
        self.log.append(f"slice {self.n}")
        if self.n == self.arrive_at:
            self.arrive()
        return self.n < self.left


async def read_all(inbox: Inbox, log: list[str], reads: int) -> None:
    """What the server's reader does: waits on the inbox, and serves what arrives at once."""
    for _ in range(reads):
        data = await inbox.get()
        log.append(f"read {data.decode()}")


def run_with_arrival(make_arrival: Callable[[Inbox], Callable[[], None]]) -> list[str]:
    async def scenario() -> list[str]:
        inbox = Inbox()
        idle = IdleWork()
        idle.attach(inbox)
        log: list[str] = []
        # The reader serves one arrival, then waits again (input idle once more).
        reader = asyncio.create_task(read_all(inbox, log, 2))
        await asyncio.sleep(0)  # the reader waits: input is idle
        idle.add("prepare", "file:///a", Recorder(log, 8, 3, make_arrival(inbox)))
        deadline = time.monotonic() + 10
        while idle.has("prepare", "file:///a") and time.monotonic() < deadline:
            await asyncio.sleep(0.001)
        reader.cancel()
        return log

    return asyncio.run(scenario())


def test_input_from_the_stdin_thread_is_read_before_the_next_slice() -> None:
    def arrival(inbox: Inbox) -> Callable[[], None]:
        loop = asyncio.get_running_loop()

        def from_thread() -> None:
            t = threading.Thread(target=lambda: loop.call_soon_threadsafe(inbox.put, b"key"))
            t.start()
            t.join()  # the bytes are queued before the slice ends

        return from_thread

    log = run_with_arrival(arrival)
    assert log[:4] == ["slice 1", "slice 2", "slice 3", "read key"], log
    assert log[-1] == "slice 8"


def test_input_from_a_stdin_pipe_is_read_on_the_loop_before_the_next_slice() -> None:
    """A pipe (as editors connect) is read by the event loop itself: no thread to wake."""
    read_end, write_end = os.pipe()
    threads: list[str] = []

    def arrival(inbox: Inbox) -> Callable[[], None]:
        pump_stdin(read_end, inbox)
        threads.extend(t.name for t in threading.enumerate())

        def send() -> None:
            os.write(write_end, b"key")

        return send

    try:
        log = run_with_arrival(arrival)
    finally:
        os.close(write_end)
        os.close(read_end)
    assert log[:4] == ["slice 1", "slice 2", "slice 3", "read key"], log
    assert "tokenline-stdin" not in threads


def test_a_file_on_stdin_is_read_to_its_end(tmp_path: Path) -> None:
    """A regular file cannot be polled: a thread reads it, to the end (b"")."""
    path = tmp_path / "input"
    path.write_bytes(b"x" * 100_000)

    async def scenario() -> bytes:
        inbox = Inbox()
        with open(path, "rb") as fh:
            pump_stdin(fh.fileno(), inbox)
            got = b""
            while data := await asyncio.wait_for(inbox.get(), 10):
                got += data
        return got

    assert asyncio.run(scenario()) == b"x" * 100_000


def test_the_end_of_a_stdin_pipe_reaches_the_reader() -> None:
    read_end, write_end = os.pipe()

    async def scenario() -> list[bytes]:
        inbox = Inbox()
        pump_stdin(read_end, inbox)
        os.write(write_end, b"last")
        os.close(write_end)
        got = [await asyncio.wait_for(inbox.get(), 10)]
        got.append(await asyncio.wait_for(inbox.get(), 10))
        return got

    try:
        assert asyncio.run(scenario()) == [b"last", b""]
    finally:
        os.close(read_end)


def test_input_from_a_tcp_socket_is_read_before_the_next_slice() -> None:
    sockets = socket.socketpair()
    connecting: list[asyncio.Task[object]] = []

    def arrival(inbox: Inbox) -> Callable[[], None]:
        loop = asyncio.get_running_loop()
        connecting.append(
            loop.create_task(
                loop.create_connection(
                    lambda: _TcpInbox(inbox, lambda transport: True), sock=sockets[0]
                )
            )
        )

        def send() -> None:
            sockets[1].sendall(b"key")
            time.sleep(0.01)  # the bytes are in the socket before the slice ends

        return send

    try:
        log = run_with_arrival(arrival)
    finally:
        sockets[1].close()
    assert log[:4] == ["slice 1", "slice 2", "slice 3", "read key"], log


def test_no_slice_runs_while_input_is_being_served() -> None:
    async def scenario() -> list[str]:
        inbox = Inbox()
        idle = IdleWork()
        idle.attach(inbox)
        log: list[str] = []
        inbox.put(b"queued")  # bytes wait: the reader has not taken them yet
        idle.add("prepare", "file:///a", Recorder(log, 2, 0, lambda: None))
        await asyncio.sleep(0.01)
        log.append("reader starts")
        await read_all(inbox, log, 1)
        reader = asyncio.create_task(read_all(inbox, log, 1))  # waits: input idle again
        deadline = time.monotonic() + 10
        while idle.has("prepare", "file:///a") and time.monotonic() < deadline:
            await asyncio.sleep(0.001)
        reader.cancel()
        return log

    log = asyncio.run(scenario())
    assert log == ["reader starts", "read queued", "slice 1", "slice 2"]


def test_a_delayed_job_waits_and_a_replaced_one_runs_its_new_step() -> None:
    async def scenario() -> tuple[list[str], float]:
        idle = IdleWork()  # no input state: slices run between turns of the loop
        log: list[str] = []
        start = time.monotonic()
        idle.add("catch-up", "file:///a", lambda: log.append("old") is not None, 0.05)
        idle.add("catch-up", "file:///a", lambda: log.append("new") is not None, 0.05)
        idle.add("prepare", "file:///gone", lambda: log.append("gone") is not None)
        idle.discard("file:///gone")
        while idle.has("catch-up", "file:///a"):
            await asyncio.sleep(0.005)
        return log, time.monotonic() - start

    log, took = asyncio.run(scenario())
    assert log == ["new"]
    assert took >= 0.05


class Asyncio:
    """asyncio as idle.py sees it, but for sleep, which records what it is asked for and only
    yields (the rests of a fake clock take no time)."""

    def __init__(self) -> None:
        self.sleeps: list[float] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(asyncio, name)

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        await asyncio.sleep(0)


def rests_between_steps(monkeypatch: pytest.MonkeyPatch, quiet_for: float | None) -> list[float]:
    """The rests (sleeps) IdleWork takes between steps of 1, 2 and 3 ms on a fake clock, with
    an input state whose bytes came `quiet_for` seconds before (None: no input state)."""
    clock = [1000.0]
    monkeypatch.setattr(
        idle, "time", SimpleNamespace(monotonic=lambda: clock[0], thread_time=time.thread_time)
    )
    fake = Asyncio()
    monkeypatch.setattr(idle, "asyncio", fake)
    steps = iter([0.001, 0.002, 0.003])

    def step() -> bool:
        took = next(steps, None)
        clock[0] += took or 0.0
        return took != 0.003

    async def scenario() -> None:
        work = idle.IdleWork()
        if quiet_for is not None:
            work.attach(Input(clock[0] - quiet_for))
        work.add("prepare", "file:///a", step)
        while work.has("prepare", "file:///a"):
            await asyncio.sleep(0)

    asyncio.run(scenario())
    return [round(s, 6) for s in fake.sleeps if s]


class Input:
    """An input state (transport.Inbox as idle.py sees it): no input queued, bytes last at
    `arrived` on idle.py's clock."""

    def __init__(self, arrived: float) -> None:
        self.idle = asyncio.Event()
        self.idle.set()
        self.arrived = arrived


def test_each_step_is_followed_by_a_rest_as_long_as_it_took_while_work_remains(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Steps back to back made the server a process that never sleeps, which the scheduler of
    a busy machine makes wait for a core, keys and all. On a fake clock: steps of 1, 2 and 3 ms
    rest 1 and 2 ms; none after the last."""
    rested = rests_between_steps(monkeypatch, None)
    assert rested == [idle.REST * 0.001, idle.REST * 0.002]
    assert idle.REST >= 1


@pytest.mark.parametrize(("quiet_for", "rests"), [(0.2, True), (5.0, False)])
def test_steps_rest_only_while_the_client_is_active(
    monkeypatch: pytest.MonkeyPatch, quiet_for: float, rests: bool
) -> None:
    """Rests protect keys that may come; with nothing sent for seconds the slices run back to
    back (a 100 MB chat file's totals took twice as long with a rest after each)."""
    rested = rests_between_steps(monkeypatch, quiet_for)
    assert rested == ([idle.REST * 0.001, idle.REST * 0.002] if rests else [])
