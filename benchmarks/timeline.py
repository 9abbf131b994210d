"""What the server was doing while each key waited: its log (DEBUG) as a timeline.

The server logs, on the monotonic clock (CLOCK_MONOTONIC, which the benchmark's client reads
too), when each message's bytes were read and when its handling started and ended, when each
notification went out, and when each idle step, collection and publish ran (and each trim, on
its own thread), with their CPU time. The client reads, before each key and after its status,
how long the server's main thread and its own reading thread have waited for a core (Linux's
schedstat). A key's wait, from the client's write to its status's arrival, is cut into pieces,
each given to what ran on the server's event loop then, in this order: a collection, an idle
step, another message, the key's own edit, a publish (their time beyond their CPU time is time
the server waited for a core); a trim running on its thread; what is left, to the time the two
processes waited for a core (up to what schedstat says) and then to the pipes and the client.
"""

from __future__ import annotations

import math
import re
import statistics
from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, NamedTuple

MESSAGE = re.compile(
    r"message (\S+)(?: (\S+) v(\d+))?: arrived ([\d.]+), started ([\d.]+), took ([\d.]+) ms, "
    r"cpu ([\d.]+) ms"
)
SENT = re.compile(r"sent (\S+) (\S+) v(\S+): at ([\d.]+), took ([\d.]+) ms")
SLICE = re.compile(r"idle slice (.+?) \S*: ([\d.]+) ms, cpu ([\d.]+) ms, at ([\d.]+)")
COLLECTION = re.compile(r"collection of generation (\d): ([\d.]+) ms, at ([\d.]+)")
TRIM = re.compile(r"malloc_trim: ([\d.]+) ms, at ([\d.]+)")
PUBLISHED = re.compile(r"published \d+: at ([\d.]+), took ([\d.]+) ms, cpu ([\d.]+) ms")

# What a piece of a wait is given to when several ran (lower first); anything else: QUEUED, then
# OUTSIDE.
ORDER = {"gc": 0, "idle": 1, "message": 2, "edit": 3, "publish": 4, "trim": 5}
QUEUED = "waiting for a core"
OUTSIDE = "pipes and client"
STATUS = "tokenline/status"
# Keys slower than this are listed with what they waited for (ms).
SLOW_MS = 2.0


class Key(NamedTuple):
    """A key the client typed: its version, when it was sent and its status arrived (monotonic
    seconds), and how long the server's main thread and the client's reader waited for a core
    between the two (seconds; NaN when unknown)."""

    version: int
    sent: float
    arrived: float
    queued: float


@dataclass(frozen=True)
class Span:
    start: float
    end: float
    group: str  # a key of ORDER
    cause: str  # what a report names: "gc gen 2", "idle prepare", "textDocument/hover", ...
    cpu: float = math.inf  # its CPU seconds (inf: not logged, all of it the cause's)


class Timeline:
    """The spans of a server's log, and each key's message and status."""

    def __init__(self, log: str) -> None:
        self.spans: list[Span] = []
        # (uri, version) -> (arrived, started, ended, CPU seconds) of a didChange
        self.keys: dict[tuple[str, int], tuple[float, float, float, float]] = {}
        # (uri, version) -> when its status's writing ended
        self.statuses: dict[tuple[str, int], float] = {}
        self._read(log)
        self.spans.sort(key=lambda s: s.start)
        self._starts = [s.start for s in self.spans]
        self._longest = max((s.end - s.start for s in self.spans), default=0.0)
        # When the last idle step ended: keys sent before it were typed while idle work remained.
        self.idle_done = max((s.end for s in self.spans if s.group == "idle"), default=0.0)

    def __bool__(self) -> bool:
        return bool(self.keys)

    def _read(self, log: str) -> None:
        for m in MESSAGE.finditer(log):
            start, end = float(m[5]), float(m[5]) + float(m[6]) / 1e3
            if m[2] is not None:
                self.keys[(m[2], int(m[3]))] = (float(m[4]), start, end, float(m[7]) / 1e3)
            else:
                self.spans.append(Span(start, end, "message", m[1], float(m[7]) / 1e3))
        for m in SENT.finditer(log):
            if m[1] == STATUS and m[3].isdigit():
                key = (m[2], int(m[3]))
                ended = float(m[4]) + float(m[5]) / 1e3
                self.statuses[key] = min(self.statuses.get(key, ended), ended)
        for m in SLICE.finditer(log):
            self._add(float(m[4]), float(m[2]), "idle", f"idle {m[1]}", float(m[3]))
        for m in COLLECTION.finditer(log):
            self._add(float(m[3]), float(m[2]), "gc", f"gc gen {m[1]}")
        for m in TRIM.finditer(log):
            self._add(float(m[2]), float(m[1]), "trim", "malloc_trim (its thread)")
        for m in PUBLISHED.finditer(log):
            self._add(float(m[1]), float(m[2]), "publish", "publish", float(m[3]))

    def _add(
        self, start: float, ms: float, group: str, cause: str, cpu_ms: float = math.inf
    ) -> None:
        self.spans.append(Span(start, start + ms / 1e3, group, cause, cpu_ms / 1e3))

    def _during(self, a: float, b: float) -> list[Span]:
        """The spans that overlap [a, b]."""
        first = bisect_left(self._starts, a - self._longest)
        out = []
        for s in self.spans[first:]:
            if s.start >= b:
                break
            if s.end > a:
                out.append(s)
        return out

    def wait(self, uri: str, key: Key) -> dict[str, Any] | None:
        """A key's wait cut into what ran meanwhile (ms by cause), and how long of it an idle
        step ran after the key was written and before its handling started; None when the log
        has no such key (a build that logs no timeline)."""
        found = self.keys.get((uri, key.version))
        if found is None:
            return None
        read, started, ended, cpu = found
        own = Span(started, ended, "edit", "its own edit", cpu)
        causes = split([*self._during(key.sent, key.arrived), own], key.sent, key.arrived)
        left = causes.pop(OUTSIDE, 0.0)
        # What the server spent waiting for a core inside its spans is counted already.
        queued = max(0.0, key.queued * 1e3 - causes.get(QUEUED, 0.0))
        if not math.isnan(queued) and min(queued, left) > 0:
            causes[QUEUED] = causes.get(QUEUED, 0.0) + min(queued, left)
        if left > queued:
            causes[OUTSIDE] = left - queued
        written = self.statuses.get((uri, key.version), math.nan)
        steps = [s for s in self._during(key.sent, started) if s.group == "idle"]
        behind = [overlap(s, key.sent, started) for s in steps]
        return {
            "total_ms": (key.arrived - key.sent) * 1e3,
            # By the clock, and the steps' own work in it (the rest: the server waiting for a core).
            "behind_idle_ms": sum(behind) * 1e3,
            "behind_idle_cpu_ms": sum(b * busy(s) for b, s in zip(behind, steps, strict=True))
            * 1e3,
            "in_server_ms": (written - read) * 1e3,  # read -> its status written
            "causes": causes,
            "while_idle": key.sent < self.idle_done,
        }


def busy(s: Span) -> float:
    """The share of a span's wall time that was its own work (CPU)."""
    return min(1.0, s.cpu / max(s.end - s.start, 1e-9))


def overlap(s: Span, a: float, b: float) -> float:
    return max(0.0, min(s.end, b) - max(s.start, a))


def split(spans: list[Span], a: float, b: float) -> dict[str, float]:
    """[a, b] in ms by cause: each stretch given to the first group (ORDER) that ran then, the
    part of it beyond the span's CPU time to QUEUED; stretches where none ran to OUTSIDE."""
    points = sorted({a, b, *(t for s in spans for t in (s.start, s.end) if a < t < b)})
    out: dict[str, float] = {}
    for lo, hi in pairwise(points):
        mid = (lo + hi) / 2
        running = [s for s in spans if s.start <= mid < s.end]
        ms = (hi - lo) * 1e3
        if not running:
            out[OUTSIDE] = out.get(OUTSIDE, 0.0) + ms
            continue
        span = min(running, key=lambda s: ORDER[s.group])
        share = busy(span)
        out[span.cause] = out.get(span.cause, 0.0) + ms * share
        if share < 1:
            out[QUEUED] = out.get(QUEUED, 0.0) + ms * (1 - share)
    return out


def attributed(timeline: Timeline, uri: str, typed: list[Key]) -> Any:
    """How many keys were typed while idle work remained; how long keys waited behind an idle
    step (median / p99 / max ms by the clock, and of the longest the step's own work); the
    server's part of each key (read -> status written); and the slow keys by cause. None
    without a timeline."""
    waits = [w for key in typed if (w := timeline.wait(uri, key)) is not None]
    if not waits:
        return None
    slow = [w for w in waits if w["total_ms"] > SLOW_MS]
    in_server = [w["in_server_ms"] for w in waits if not math.isnan(w["in_server_ms"])]
    longest = max(waits, key=lambda w: w["behind_idle_ms"])
    return {
        "keys": len(waits),
        "while_idle": sum(1 for w in waits if w["while_idle"]),
        "keys_behind_idle": sum(1 for w in waits if w["behind_idle_ms"] > 0),
        "behind_idle": spread([w["behind_idle_ms"] for w in waits]),
        "behind_idle_cpu_max_ms": round(max(w["behind_idle_cpu_ms"] for w in waits), 3),
        "longest_behind_idle_cpu_ms": round(longest["behind_idle_cpu_ms"], 3),
        "in_server": spread(in_server),
        # The keys over 2 and 5 ms, by what most of each one's wait went to; the slowest ten.
        "over_ms": {f"{ms:g}": main_causes(slow, ms) for ms in (SLOW_MS, 5.0)},
        "slowest": [
            {"total_ms": round(w["total_ms"], 2), **{k: round(v, 2) for k, v in top(w)}}
            for w in sorted(slow, key=lambda w: -w["total_ms"])[:10]
        ],
    }


def main_causes(waits: list[dict[str, Any]], over: float) -> dict[str, int]:
    """How many of the waits over `over` ms went mostly to each cause."""
    keys = [w for w in waits if w["total_ms"] > over]
    return dict(Counter(top(w, 1)[0][0] for w in keys).most_common())


def top(wait: dict[str, Any], n: int = 3) -> list[tuple[str, float]]:
    """A wait's largest causes."""
    return sorted(wait["causes"].items(), key=lambda kv: -kv[1])[:n]


def spread(values: list[float]) -> dict[str, float]:
    s = sorted(values) or [0.0]
    return {
        "median_ms": round(statistics.median(s), 3),
        "p99_ms": round(s[min(len(s) - 1, int(0.99 * len(s)))], 3),
        "max_ms": round(s[-1], 3),
    }


def tail(causes: dict[str, int], over: float) -> str:
    """Keys over `over` ms by what most of each one's wait went to (main_causes): "3 keys > 5
    ms: 2 waiting for a core, 1 gc gen 2"."""
    n = sum(causes.values())
    if not n:
        return f"no key > {over:g} ms"
    named = ", ".join(f"{k} {cause}" for cause, k in sorted(causes.items(), key=lambda c: -c[1]))
    return f"{n} key{'s' if n > 1 else ''} > {over:g} ms: {named}"
