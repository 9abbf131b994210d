from __future__ import annotations

from collections.abc import Iterator

import pytest

from .harness import Session


@pytest.fixture(scope="module")
def session() -> Iterator[Session]:
    """One server for a module's tests (each test uses its own document URIs)."""
    s = Session(init={"contextWindow": 8192})
    try:
        yield s
    finally:
        s.close()
