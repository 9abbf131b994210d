"""What names a benchmark run where its figures are quoted (docs/benchmarks.md, the README): the
script, when it ran, on which commit, compiled or not, and how loaded the shared machine was."""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import tokenline.core

ROOT = Path(__file__).resolve().parent.parent


def _commit() -> str:
    """The checkout's short commit, with "+changes" when its tracked files differ from it."""
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD"], cwd=ROOT).returncode != 0
    except OSError:
        return "unknown"
    return (sha or "unknown") + ("+changes" if dirty else "")


def start() -> dict[str, object]:
    """The run's record, begun before any measurement."""
    return {
        "script": Path(sys.argv[0]).name,
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
