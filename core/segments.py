"""Segments: stretches of normalized text that a model tokenizes independently, and the cache of
their tokens that every document of the model shares.

A family whose text splits into such segments (SentencePiece's whitespace segments, a regex
pre-tokenizer's pre-tokens) supplies a `Segmenter`; the engine opens documents segment by segment
through the cache (prose repeats its words, so most of opening becomes lookups).
"""

from __future__ import annotations

from typing import Final

from mypy_extensions import i64

from tokenline.core.tokens import TokenRun

# Segments longer than this are encoded but not cached (a long line of CJK text, base64).
CACHED_SEGMENT_CHARS: Final = 64
# Memory the cache of one model may take, and what one entry costs beyond its text and tokens
# (the key, the entry object, three arrays, the dict slot), measured with tracemalloc.
CACHE_LIMIT_BYTES: Final = 64 * 1024 * 1024
ENTRY_OVERHEAD_BYTES: Final = 360
BYTES_PER_CACHED_TOKEN: Final = 9


class Segmenter:
    """Where a family's normalized text splits into independently tokenized segments."""

    def split(self, text: str) -> list[str]:
        """text cut into segments (text must begin at a segment start)."""
        raise NotImplementedError

    def take(self, block: str, final: bool) -> list[str]:
        """The segments of a prefix of block (which begins at a segment start) that ends where
        a segment surely begins, whatever follows block; all of it when `final` (block runs to
        the end of the text). Empty when block holds no such place."""
        raise NotImplementedError

    def cut_before(self, cp: i64) -> bool:
        """Whether a token boundary lies before every occurrence of code point cp (finer cuts
        inside a long segment)."""
        return False

    def single_token(self, cp: i64) -> i64:
        """The id of the token that is exactly code point cp wherever such a cut isolates it,
        or -1."""
        return -1


class SegmentCache:
    """Segment -> tokens, shared by every document of one model, bounded in memory.

    Once full it stops taking new segments (as the tokenizers library's cache does): what it
    holds is what documents repeat most, since it fills with the first documents' words.
    """

    entries: dict[str, TokenRun]
    bytes_used: i64
    limit_bytes: i64
    hits: i64
    misses: i64

    def __init__(self, limit_bytes: i64 = CACHE_LIMIT_BYTES) -> None:
        self.entries = {}
        self.bytes_used = 0
        self.limit_bytes = limit_bytes
        self.hits = 0
        self.misses = 0

    def get(self, segment: str) -> TokenRun | None:
        found = self.entries.get(segment)
        if found is None:
            self.misses += 1
        else:
            self.hits += 1
        return found

    def put(self, segment: str, tokens: TokenRun) -> None:
        if len(segment) > CACHED_SEGMENT_CHARS or segment in self.entries:
            return
        cost: i64 = ENTRY_OVERHEAD_BYTES + len(segment) + BYTES_PER_CACHED_TOKEN * len(tokens.ids)
        if self.bytes_used + cost > self.limit_bytes:
            return
        self.entries[segment] = tokens
        self.bytes_used += cost

    def size(self) -> i64:
        return len(self.entries)

    def clear(self) -> None:
        self.entries = {}
        self.bytes_used = 0
