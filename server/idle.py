"""Work the server does while no input waits: a slice at a time, never in a keystroke's way.

Finishing a large document's opening (`Document.prepare`) and re-encoding the newest text of a
model that re-encodes whole are jobs here. A job runs one slice at a time, and only while the
reader waits with no bytes queued (`transport.Inbox.idle`); after each slice the runner yields
to the event loop (its first turn polls the input), so a message that arrives during a slice
waits for that slice alone, and is served, and its status published, before the next one. Then
it rests as long as the slice took (REST) before the next while the client is active: slices
back to back made the server a process that never sleeps, which the kernel's scheduler makes
wait for a core like any such process, and a key that came then waited with it (8-10 ms behind
1 ms steps at 10 MB, on a machine where keys after the idle work waited 2-6 ms). A job may
wait for a time of its own (`not_before`): a whole re-encode waits until typing pauses.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

log = logging.getLogger("tokenline.server")

# What one slice of work should take: well under the 5 ms a keystroke may wait behind it. A slice
# is sized from the last one's time, so one whose characters cost more than the last one's runs
# over (base64 after prose: 2.2 times in a 10 MB run); and on a shared machine a slice may lose
# its core midway, its key waiting longer still. 1 ms leaves room for both at a cost of twice the
# slices, not twice the work (Document.prepare of 10 MB in 1 ms slices: 362-807 ms of CPU in
# all, 391-834 ms in 2 ms ones).
SLICE_SECONDS = 0.001
# After a slice the runner sleeps this many times as long as it took (by the clock) while more
# work remains and the client sent something in the last ACTIVE_SECONDS: the server then takes at
# most half a core for idle work, and the input is served during the rest as soon as it comes.
# With no input that recent the slices run back to back: a 100 MB chat file's totals took twice
# as long with a rest after every slice, and the raw count four times as long.
REST = 1.0
ACTIVE_SECONDS = 1.0


class InputState(Protocol):
    """Whether the reader waits for input with none queued, and when bytes last came
    (transport.Inbox; time.monotonic())."""

    @property
    def idle(self) -> asyncio.Event: ...

    @property
    def arrived(self) -> float: ...


@dataclass
class Job:
    """One piece of idle work: `step` does a slice and says whether more remains."""

    step: Callable[[], bool]
    not_before: float = 0.0
    # Runs only while no other job's time has come (a large document's first encode, which
    # takes one long step, waits for the work that answers the user sooner).
    low: bool = False


class IdleWork:
    """The server's idle work, by (kind, uri), run in slices while no input waits."""

    def __init__(self) -> None:
        self._jobs: dict[tuple[str, str], Job] = {}
        self._input: InputState | None = None
        self._added: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None

    def attach(self, state: InputState) -> None:
        """The transport's input state (no input state: slices run between turns of the loop)."""
        self._input = state

    def add(
        self, kind: str, uri: str, step: Callable[[], bool], delay: float = 0.0, low: bool = False
    ) -> None:
        """Runs `step` in idle time, from `delay` seconds on, until it returns False; replaces
        the job of the same kind for the document. A `low` job waits while others are ready."""
        self._jobs[(kind, uri)] = Job(step, time.monotonic() + delay, low)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no event loop (a direct call): the work waits for one
        if self._added is None:
            self._added = asyncio.Event()
        self._added.set()
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._run())

    def has(self, kind: str, uri: str) -> bool:
        return (kind, uri) in self._jobs

    def discard(self, uri: str) -> None:
        """Drops every job of a document (closed)."""
        for key in [k for k in self._jobs if k[1] == uri]:
            del self._jobs[key]

    async def _run(self) -> None:
        while self._jobs:
            key, wait = self._next()
            if key is None:
                await self._sleep(wait)
                continue
            if self._input is not None and not self._input.idle.is_set():
                await self._input.idle.wait()
                continue
            job = self._jobs[key]
            started, cpu = time.monotonic(), time.thread_time()
            try:
                more = job.step()
            except Exception:
                log.exception("idle work %s for %s failed", *key)
                more = False
            wall, cpu = time.monotonic() - started, time.thread_time() - cpu
            # When it started (monotonic seconds): the server benchmark finds the keys behind it.
            log.debug(
                "idle slice %s %s: %.3f ms, cpu %.3f ms, at %.6f",
                *key,
                wall * 1e3,
                cpu * 1e3,
                started,
            )
            if not more and self._jobs.get(key) is job:
                del self._jobs[key]
            await asyncio.sleep(0)
            await asyncio.sleep(wall * REST if self._jobs and self._active() else 0)

    def _active(self) -> bool:
        """Whether the client sent something lately (so keys may come); without an input state
        (slices between turns of the loop), always."""
        if self._input is None:
            return True
        return time.monotonic() - self._input.arrived < ACTIVE_SECONDS

    def _next(self) -> tuple[tuple[str, str] | None, float]:
        """The first job whose time has come (low ones last), else None and how long until one's
        does."""
        now = time.monotonic()
        soonest = float("inf")
        waiting: tuple[str, str] | None = None
        for key, job in self._jobs.items():
            if job.not_before <= now:
                if not job.low:
                    return key, 0.0
                waiting = waiting or key
            else:
                soonest = min(soonest, job.not_before - now)
        return (waiting, 0.0) if waiting is not None else (None, soonest)

    async def _sleep(self, seconds: float) -> None:
        """Waits `seconds`, or less when a job is added."""
        assert self._added is not None
        self._added.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._added.wait(), seconds)
