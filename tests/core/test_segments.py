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


def run_of(ids: list[int], lens: list[int], joins: list[int]) -> TokenRun:
    return TokenRun(vec[i32](ids), vec[i32](lens), vec[u8](joins))


def columns(run: TokenRun) -> tuple[list[int], list[int], list[int]]:
    return [int(x) for x in run.ids], [int(x) for x in run.lens], [int(x) for x in run.joins]


@given(
    entries=st.dictionaries(
        st.text(alphabet=[SPACE, "a", "b", "é", "語", "\n"], min_size=1, max_size=12),
        st.lists(st.tuples(st.integers(0, 300_000), st.integers(0, 64)), min_size=1, max_size=5),
        max_size=300,
    ),
    joined=st.booleans(),
)
def test_the_packed_cache_gives_back_each_entrys_exact_tokens(
    entries: dict[str, list[tuple[int, int]]], joined: bool
) -> None:
    """Keys packed into blocks, tokens into shared columns, an open-addressing table (grown as it
    fills): every entry's own tokens come back, appended after what a run already holds; a key
    that was never put (a prefix, a neighbour in its block) is a miss."""
    cache = SegmentCache()
    expected: dict[str, tuple[list[int], list[int], list[int]]] = {}
    for k, (key, tokens) in enumerate(entries.items()):
        ids = [i for i, _ in tokens]
        lens = [n for _, n in tokens]
        joins = [(k + j) % 16 for j in range(len(tokens))] if joined else []
        cache.put(key, run_of(ids, lens, joins))
        expected[key] = (ids, lens, joins)
    assert cache.size() == len(entries)
    for key, (ids, lens, joins) in expected.items():
        out = run_of([7], [1], [3] if joined else [])
        assert cache.add_to(key, out) == len(ids)
        assert columns(out) == ([7, *ids], [1, *lens], [3, *joins] if joined else [])
        assert cache.count_of(key) == len(ids)
        for other in (key + "a", key[:-1], "x" + key[1:]):
            if other and other not in expected:
                assert cache.add_to(other, out) == -1 and cache.count_of(other) == -1
    cache.compact()  # exact-size copies of the columns: the same entries, and room for more
    cache.put("\u3042new", run_of([9], [1], [1] if joined else []))
    expected["\u3042new"] = ([9], [1], [1] if joined else [])
    for key, (ids, lens, joins) in expected.items():
        found = cache.get(key)
        assert found is not None and columns(found) == (ids, lens, joins)
    cache.clear()
    assert cache.size() == 0 and all(cache.get(key) is None for key in expected)


def test_a_family_that_starts_keeping_joins_keeps_them_aligned() -> None:
    """Entries without joins, then one with: each gives back what it was put with."""
    cache = SegmentCache()
    cache.put("a", run_of([1, 2], [1, 0], []))
    cache.put("b", run_of([3], [1], [5]))
    cache.put("c", run_of([4], [1], []))
    got = {key: cache.get(key) for key in "abc"}
    assert {k: columns(v) for k, v in got.items() if v is not None} == {
        "a": ([1, 2], [1, 0], []),
        "b": ([3], [1], [5]),
        "c": ([4], [1], []),
    }


def test_a_cache_full_of_segments_stays_compact() -> None:
    """The point of packing: 20,000 segments of two tokens take under 100 bytes each, growth
    included (tracemalloc), where a dict of TokenRuns took about 400."""
    import tracemalloc

    entries = [(f"{SPACE}w{k}", run_of([k, k + 1], [3, 4], [])) for k in range(20_000)]
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        cache = SegmentCache()
        for key, tokens in entries:
            cache.put(key, tokens)
        del entries  # the keys, which the cache copied into its blocks
        held = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert cache.size() == 20_000
    assert held / 20_000 < 100
