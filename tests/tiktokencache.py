"""tiktoken's encodings offline, for tests: a cache seeded from ../shared, never a download.

`seed(target)` fills a folder the way tiktoken's own cache is laid out (with
../shared/tools/seed-tiktoken-cache, run by this Python), so that a process started with
TIKTOKEN_CACHE_DIR=target loads o200k_base and cl100k_base with no network; `session_cache()` is
one such folder for the whole run, seeded when a test first asks for it (the `tiktoken_cache`
fixture). `reference(cache, name)` is tiktoken's own Encoding from that cache, for tests to check
the server against.
"""

from __future__ import annotations

import atexit
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
import tiktoken
import tiktoken.load

from tests.conftest import shared_files

# The encodings seeded from ../shared/models (each needs its .tiktoken file there).
SEEDED = ("o200k_base", "cl100k_base")


def seed(target: Path) -> Path:
    """target, seeded with the encodings in SEEDED (a failure when one cannot be)."""
    *_, tool = shared_files(
        *(f"models/{name}.tiktoken" for name in SEEDED), "tools/seed-tiktoken-cache"
    )
    result = subprocess.run(
        [sys.executable, str(tool), str(target)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    ready = next(line for line in result.stdout.splitlines() if "encodings ready offline" in line)
    for name in SEEDED:
        assert name in ready, result.stdout
    return target


_SESSION: list[Path] = []


def session_cache() -> Path:
    """The run's seeded cache, seeded on the first call (a skip, or in CI a failure, when
    ../shared lacks what it needs)."""
    if not _SESSION:
        target = Path(tempfile.mkdtemp(prefix="tokenline-tiktoken-cache-"))
        atexit.register(shutil.rmtree, target, ignore_errors=True)
        try:
            seed(target)
        except BaseException:
            shutil.rmtree(target, ignore_errors=True)
            raise
        _SESSION.append(target)
    return _SESSION[0]


def _no_network(blobpath: str) -> bytes:
    raise AssertionError(f"tests never download: tiktoken asked for {blobpath}")


def reference(cache: Path, name: str) -> Any:
    """tiktoken's Encoding `name`, read from the seeded cache with the network reader disabled."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIKTOKEN_CACHE_DIR", str(cache))
        mp.setattr(tiktoken.load, "read_file", _no_network)
        return tiktoken.get_encoding(name)
