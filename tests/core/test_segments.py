"""Whitespace segments: where they begin, and the cache that holds their tokens."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from librt.vecs import vec
from mypy_extensions import i32, u8

from tokenline.core.segments import CACHED_SEGMENT_CHARS, SegmentCache
from tokenline.core.spsegments import WhitespaceSegmenter
from tokenline.core.tokens import TokenRun

SPACE = "\u2581"
texts = st.text(alphabet=[SPACE, "a", "b", " ", "\n"], max_size=40)


def cuts(seg: WhitespaceSegmenter, text: str) -> list[int]:
    """Every segment start inside text, by the definition."""
    return [i for i in range(1, len(text)) if seg.cut_between(text[i - 1], text[i])]


@given(text=texts, suffix=st.booleans())
def test_split_cuts_exactly_at_segment_starts(text: str, suffix: bool) -> None:
    seg = WhitespaceSegmenter(SPACE, suffix)
    parts = seg.split(text)
    assert "".join(parts) == text
    starts = [sum(len(p) for p in parts[:k]) for k in range(1, len(parts))]
    assert starts == cuts(seg, text)


@given(text=texts, suffix=st.booleans())
def test_last_cut(text: str, suffix: bool) -> None:
    seg = WhitespaceSegmenter(SPACE, suffix)
    found = cuts(seg, text)
    assert seg.last_cut(text) == (found[-1] if found else -1)


def test_cache_is_bounded_and_skips_long_segments() -> None:
    def tokens(n: int) -> TokenRun:
        return TokenRun(vec[i32]([1] * n), vec[i32]([1] * n), vec[u8]())

    cache = SegmentCache(limit_bytes=2000)
    cache.put("x" * (CACHED_SEGMENT_CHARS + 1), tokens(3))
    assert cache.size() == 0
    for k in range(100):
        cache.put(f"{SPACE}word{k}", tokens(2))
    assert 0 < cache.size() < 100
    assert cache.bytes_used <= 2000
    assert cache.get(f"{SPACE}word0") is not None
    assert cache.get(f"{SPACE}word99") is None
    assert (cache.hits, cache.misses) == (1, 1)
