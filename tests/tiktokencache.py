"""tiktoken's encodings offline, for tests: a cache seeded from ../shared, never a download.

`seed(target)` fills a folder the way tiktoken's own cache is laid out (with
../shared/tools/seed-tiktoken-cache, run by this Python), so that a process started with
TIKTOKEN_CACHE_DIR=target loads o200k_base and cl100k_base with no network. `reference(cache,
name)` is tiktoken's own Encoding from that cache, for tests to check the server against.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import tiktoken
import tiktoken.load

from tests.conftest import shared_file

# The encodings seeded from ../shared/models (each needs its .tiktoken file there).
SEEDED = ("o200k_base", "cl100k_base")


def seed(target: Path) -> Path:
    """target, seeded with the encodings in SEEDED (a failure when one cannot be)."""
    for name in SEEDED:
        shared_file("models", f"{name}.tiktoken")
    tool = shared_file("tools", "seed-tiktoken-cache")
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


def _no_network(blobpath: str) -> bytes:
    raise AssertionError(f"tests never download: tiktoken asked for {blobpath}")


def reference(cache: Path, name: str) -> Any:
    """tiktoken's Encoding `name`, read from the seeded cache with the network reader disabled."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIKTOKEN_CACHE_DIR", str(cache))
        mp.setattr(tiktoken.load, "read_file", _no_network)
        return tiktoken.get_encoding(name)
