"""Whole re-encodes of large texts in a child process, so that the event loop never waits for
the GIL behind them.

A worker thread (server/reencode.py) frees the event loop only while the library's native encode
runs. Turning its result into tokens holds the GIL: tokenizers builds a Python tuple for each
token's offsets, 130 ms for the 850,000 tokens of a 1 MB Unigram piece, and a key that arrives
meanwhile waits for all of it. A child process does the whole encode and hands back the tokens'
columns as bytes, which become a run in a few milliseconds (tokenline.core.run_from_bytes).

The child loads each model from its file once, on the first encode that needs it. A model with
no file of its own stays on the thread, and so do SentencePiece's, whose results convert fast.
The child's model must be the server's, and the file may have changed since the server read it:
the ids of a probe text, from both, are compared on every encode, and a model whose child
disagrees stays on the thread from then on. One encode is in the child at a time: one that was
superseded while it waited for its turn is skipped.
"""

from __future__ import annotations

import logging
import multiprocessing
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from tokenline.core import Model, TokenRun, load_model, run_bytes, run_from_bytes, whole_tokens

log = logging.getLogger("tokenline.server")

# Texts shorter than this are encoded on the thread: their conversion is short, and a child
# costs a process start and a second copy of the model.
CHILD_FROM = 1 << 18
# Files whose whole re-encodes go to the child: tokenizer.json, whose library builds a Python
# tuple per token's place. SentencePiece hands back ids alone, and its files' re-encodes stay on
# the thread, where they land 50 ms sooner at 1 MB (no text and tokens carried across).
CHILD_SUFFIXES = (".json",)
PROBE = "Tokenline's probe: Héllo, wörld! 12345 東京\n\tx  y"

# The child's models, by file (a child process's own state: it has no server object).
_LOADED: dict[str, Model] = {}


def _encode(path: str, normalized: str) -> tuple[bytes, bytes, bytes, list[int]]:
    """In the child: the tokens of `normalized` with the model of file `path`, and its ids of
    PROBE."""
    model = _LOADED.get(path)
    if model is None:
        model = _LOADED[path] = load_model(path)
    ids, lens, joins = run_bytes(whole_tokens(model, normalized))
    return ids, lens, joins, model.encode(PROBE)


class ChildEncoder:
    """One child process (started on first use) and the models it may encode for."""

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()
        # Held by the worker thread whose encode is in the child: one at a time, so that an
        # encode superseded while it waited for its turn is skipped, not run before the newest.
        self._turn = threading.Lock()
        # Model files the child cannot encode for (it failed, or its model is not the server's).
        self._refused: set[str] = set()

    def encode(
        self, model: Model, normalized: str, newest: Callable[[], bool]
    ) -> tuple[bool, TokenRun | None]:
        """Called on a worker thread, which waits: (True, the tokens of `normalized` encoded
        by the child), (True, None) when `newest()` says the text was superseded before its
        turn came, (False, None) when the thread must encode it instead."""
        path = model.path
        if len(normalized) < CHILD_FROM or not self._reloadable(path):
            return False, None
        with self._turn:
            if not newest():
                return True, None
            try:
                ids, lens, joins, probe = self._start().submit(_encode, path, normalized).result()
            except Exception:
                log.exception("the child process failed to encode with %s; encoding here", path)
                self._refused.add(path)
                return False, None
        if probe != model.encode(PROBE):
            log.warning("the child's model of %s is not the server's; encoding here", path)
            self._refused.add(path)
            return False, None
        return True, run_from_bytes(ids, lens, joins)

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    def _reloadable(self, path: str) -> bool:
        return path not in self._refused and path.endswith(CHILD_SUFFIXES) and Path(path).is_file()

    def _start(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                # spawn, not fork: the server has threads, and a forked copy of a lock one of
                # them held would never be released in the child.
                context = multiprocessing.get_context("spawn")
                self._pool = ProcessPoolExecutor(1, mp_context=context)
            return self._pool
