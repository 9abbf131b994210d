"""Counting many files on a worker process per core, each worker with its own segment cache.

`check` of a repository spends its time reading and counting files, one at a time. The command
still walks, finds configurations and reports in order in its own process, so that its output and
exit code are the serial path's; only reading and counting go to the workers, whose results are
taken in the order the files come. The pool is forked once every model the files need is loaded,
so that the workers start at once with the models (and what the segment caches hold so far). Where
fork is not available, or the files are few or small enough that starting workers costs more than
it saves, counting stays in the command's process.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from collections.abc import Iterator, Sequence
from multiprocessing.pool import Pool
from pathlib import Path

from tokenline.config import ConfigError
from tokenline.core import Model, ModelError
from tokenline.measure import Measurer, count_file
from tokenline.walk import Found, InputError

# Below this much work the serial count (a few hundred ms per MB of prose) is not worth forking
# workers, each of which fills its own segment cache again.
MIN_FILES = 16
MIN_BYTES = 1 << 20
# Prose counted here before the workers fork: most of its words are then in the cache they share.
WARM_BYTES = 1 << 18

# The worker's models, by their index in the command's table (set when the pool forks).
_MODELS: list[Model] = []

Job = tuple[str, list[int]]
Counted = tuple[int, list[int]] | str


def _start(models: list[Model]) -> None:
    global _MODELS
    _MODELS = models


def _count(job: Job) -> Counted:
    """A worker's count of one file, or the InputError's message."""
    path, which = job
    return _count_here(path, [_MODELS[i] for i in which])


def _count_here(path: str, models: list[Model]) -> Counted:
    try:
        return count_file(path, models)
    except InputError as exc:
        return str(exc)


def _to_warm(planned: list[tuple[str, list[Model]]]) -> int:
    """How many of the first files to count before forking: WARM_BYTES of them, at most a
    quarter of the files."""
    size = 0
    for k in range(len(planned) // 4):
        if size >= WARM_BYTES:
            return k
        with contextlib.suppress(OSError):
            size += os.path.getsize(planned[k][0])
    return len(planned) // 4


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class Workers:
    """Counts planned files in a pool; `count` answers for them in the order they come and
    counts any other file itself."""

    def __init__(self, planned: list[tuple[str, list[Model]]], processes: int) -> None:
        table: list[Model] = []
        jobs: list[Job] = []
        for path, models in planned:
            which = []
            for m in models:
                at = next((i for i, known in enumerate(table) if known is m), -1)
                if at < 0:
                    at = len(table)
                    table.append(m)
                which.append(at)
            jobs.append((path, which))
        self.waiting = [(path, [id(m) for m in models]) for path, models in planned]
        self.next = 0
        self.early: dict[int, Counted] = {}
        # The first files are counted here, so that the workers fork with the words they
        # share in the segment cache (each would encode them again).
        warmed = _to_warm(planned)
        for k in range(warmed):
            self.early[k] = _count_here(*planned[k])
        self.received = warmed
        self.pool: Pool = multiprocessing.get_context("fork").Pool(processes, _start, (table,))
        chunk = max(1, (len(jobs) - warmed) // (processes * 16))
        self.results: Iterator[Counted] = self.pool.imap(_count, jobs[warmed:], chunk)

    def count(self, path: str, models: list[Model]) -> tuple[int, list[int]]:
        key = (path, [id(m) for m in models])
        for k in range(self.next, len(self.waiting)):
            if self.waiting[k] == key:
                self.next = k + 1
                return _unpack(self._result(k))
        return count_file(path, models)

    def _result(self, k: int) -> Counted:
        """Planned file k's count, keeping those that came before it and were not asked for."""
        while self.received <= k:
            self.early[self.received] = next(self.results)
            self.received += 1
        return self.early.pop(k)

    def close(self) -> None:
        self.pool.terminate()
        self.pool.join()


def _unpack(result: Counted) -> tuple[int, list[int]]:
    if isinstance(result, str):
        raise InputError(result)
    return result


def plan(measurer: Measurer, found: Sequence[Found]) -> list[tuple[str, list[Model]]]:
    """The files the command will count, with their models; a file whose configuration or model
    fails is left to the command, which reports it in its place."""
    planned: list[tuple[str, list[Model]]] = []
    for f in found:
        if f.path == "-":
            continue
        try:
            config = measurer.config_for(f.path)
            if config is None or not config.excludes(Path(f.path)):
                planned.append((f.path, measurer.models_of(f.path, config)))
        except (ConfigError, ModelError):
            continue
    return planned


def _size(planned: list[tuple[str, list[Model]]]) -> int:
    total = 0
    for path, _ in planned:
        with contextlib.suppress(OSError):
            total += os.path.getsize(path)
    return total


def start(measurer: Measurer, found: Sequence[Found], jobs: int | None) -> Workers | None:
    """A pool counting `found` for `measurer` (and set as its counter), or None to count here:
    `jobs` workers (None: one per core, when the files are many and large enough to gain)."""
    if jobs == 1 or "fork" not in multiprocessing.get_all_start_methods():
        return None
    processes = jobs or cores()
    if processes < 2:
        return None
    planned = plan(measurer, found)
    if len(planned) < 2:
        return None
    if jobs is None and (len(planned) < MIN_FILES or _size(planned) < MIN_BYTES):
        return None
    # Hugging Face tokenizers warns in a forked worker unless told it runs alone there.
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    workers = Workers(planned, min(processes, len(planned)))
    measurer.counter = workers.count
    return workers
