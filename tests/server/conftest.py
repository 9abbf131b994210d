from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Session


@pytest.fixture(scope="module")
def session() -> Iterator[Session]:
    """One server for a module's tests (each test uses its own document URIs)."""
    s = Session(init={"contextWindow": 8192})
    try:
        yield s
    finally:
        s.close()


def examples(dev: int, ci: int) -> int:
    """Hypothesis example counts: fewer (and derandomized) in CI; TOKENLINE_DEEP=N for deep runs."""
    deep = os.environ.get("TOKENLINE_DEEP")
    if deep:
        return int(deep)
    return ci if os.environ.get("CI", "").lower() in ("1", "true", "yes") else dev
