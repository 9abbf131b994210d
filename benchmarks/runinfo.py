"""What names a benchmark run where its figures are quoted (docs/benchmarks.md, the README): the
script, when it ran, on which commit, compiled or not, and how loaded the shared machine was; and
the clocks the benchmarks time with.

The machine is shared with other work: a long full encode loses the processor to it far more
often than a 10 µs edit does, so wall-clock ratios grow with the load. Work done in this process
is timed in CPU time (`cpu_seconds`), which other processes do not slow; commands in CPU time of
the child processes (`command_seconds`), beside their wall-clock time, which is what a user waits
and depends on the load.
"""

from __future__ import annotations

import datetime
import os
import platform
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import tokenline.core

ROOT = Path(__file__).resolve().parent.parent


# What a run measures: the package's code and the benchmarks themselves (not their results, nor
# the documents that quote them, which change while a series of runs goes on).
MEASURED = ["core", "server", "cli", "setup.py", "pyproject.toml", "benchmarks/*.py"]


def _commit() -> str:
    """The checkout's short commit, with "+uncommitted code" when the code it measures differs."""
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        diff = ["git", "diff", "--quiet", "HEAD", "--", *MEASURED]
        dirty = subprocess.run(diff, cwd=ROOT).returncode != 0
    except OSError:
        return "unknown"
    return (sha or "unknown") + (" + uncommitted code" if dirty else "")


def start() -> dict[str, object]:
    """The run's record, begun before any measurement."""
    return {
        "script": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
        "started": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": _commit(),
        "compiled": bool(tokenline.core.COMPILED),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_before": round(os.getloadavg()[0], 1),
        "_t0": time.perf_counter(),
    }


def finish(run: dict[str, object]) -> dict[str, object]:
    """The record completed after the last measurement: duration and the load then."""
    done = {k: v for k, v in run.items() if not k.startswith("_")}
    done["minutes"] = round((time.perf_counter() - float(str(run["_t0"]))) / 60, 1)
    done["load_after"] = round(os.getloadavg()[0], 1)
    return done


def label(run: dict[str, object]) -> str:
    """`bench_core.py, 2026-11-24 09:10 UTC, commit abc1234, load average 4.8 → 5.1`."""
    return (
        f"{run['script']}, {run['started']}, commit {run['commit']}, "
        f"load average {run['load_before']} → {run['load_after']} on {run['cpus']} cores"
    )


def cpu_seconds(fn: Callable[..., object], *args: object) -> float:
    """The CPU time (user + system, all threads) this process spends in fn(*args)."""
    t0 = time.process_time()
    fn(*args)
    return time.process_time() - t0


def command_seconds(cmd: list[str], **kwargs: object) -> tuple[float, float]:
    """(CPU time of the command and every process it waited for, wall-clock time) of running
    `cmd` to its end; it must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, **kwargs)  # type: ignore[call-overload]
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert done.returncode in (0, 1), done.stderr
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall
