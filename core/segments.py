"""Whitespace segments: stretches of normalized text that a model tokenizes independently.

When no piece of a vocabulary holds the space symbol right after another character (its trainer
split at white space), no BPE merge and no unigram path crosses the place before a space symbol
that follows another character. The text splits there into segments whose ids, concatenated, are
the ids of the whole text. Prose repeats its words, so a cache from segment to tokens, shared by
every document of a model, turns most of opening a document into lookups.
"""

from __future__ import annotations

import re
from typing import Final

from librt.vecs import vec
from mypy_extensions import i32, i64, u8

# Segments longer than this are encoded but not cached (a long line of CJK text, base64).
CACHED_SEGMENT_CHARS: Final = 64
# Memory the cache of one model may take, and what one entry costs beyond its text and tokens
# (the key, the entry object, three arrays, the dict slot), measured with tracemalloc.
CACHE_LIMIT_BYTES: Final = 64 * 1024 * 1024
ENTRY_OVERHEAD_BYTES: Final = 360
BYTES_PER_CACHED_TOKEN: Final = 9


class Segmenter:
    """Where a model's whitespace segments begin, for the space symbol it uses.

    Space as prefix (the default): a segment begins at a space symbol that follows another
    character. Space as suffix (treat_whitespace_as_suffix): it begins at a character that
    follows a space symbol.
    """

    space: str
    suffix: bool
    pattern: re.Pattern[str]
    # Finer cuts inside long segments (CJK text has no spaces): before every character that no
    # piece holds after its first character, no token can begin earlier and reach it. joined[cp]
    # is 1 for the code points where a token may run on (those, and unknown characters of a
    # model without byte fallback, whose <unk> tokens merge); past its end, cut_beyond says.
    joined: vec[u8]
    cut_beyond: bool
    # The id of the piece that is exactly code point cp (-1: none), so that a one-character
    # stretch between two such cuts needs no encoder and no cache.
    single_id: vec[i32]

    def __init__(self, space: str, suffix: bool) -> None:
        self.space = space
        self.suffix = suffix
        self.joined = vec[u8]()
        self.cut_beyond = False
        self.single_id = vec[i32]()
        s = re.escape(space)
        if suffix:
            self.pattern = re.compile(f"[^{s}]*{s}+|[^{s}]+")
        else:
            self.pattern = re.compile(f"{s}*[^{s}]+|{s}+")

    def split(self, text: str) -> list[str]:
        """text cut into segments (text must begin at a segment start)."""
        return self.pattern.findall(text)

    def take(self, block: str, final: bool) -> list[str]:
        """The segments of a prefix of block (which begins at a segment start) that ends where
        a segment surely begins, whatever follows block; all of it when `final` (block runs to
        the end of the text). Empty when block holds no such place."""
        if final:
            return self.split(block)
        cut: i64 = self.last_cut(block)
        if cut <= 0:
            return []
        return self.split(block[:cut])

    def cut_between(self, before: str, after: str) -> bool:
        """Whether a segment begins between characters `before` and `after`."""
        if self.suffix:
            return before == self.space and after != self.space
        return before != self.space and after == self.space

    def use_character_cuts(self, joined: vec[u8], cut_beyond: bool, single_id: vec[i32]) -> None:
        self.joined = joined
        self.cut_beyond = cut_beyond
        self.single_id = single_id

    def piece_of(self, cp: i64) -> i64:
        """The id of the piece that is exactly code point cp, or -1."""
        if cp >= len(self.single_id):
            return -1
        return i64(self.single_id[cp])

    def cut_before(self, cp: i64) -> bool:
        """Whether a token boundary lies before every occurrence of code point cp."""
        if cp >= len(self.joined):
            return self.cut_beyond
        return self.joined[cp] == 0

    def last_cut(self, text: str) -> i64:
        """Offset of the last segment start inside text (after its first character), or -1.
        Searches for the space symbol at C speed: text without one is passed over at once."""
        space = self.space
        i: i64 = text.rfind(space)
        while i >= 0:
            if self.suffix:
                if i + 1 < len(text) and text[i + 1] != space:
                    return i + 1
            elif i >= 1 and text[i - 1] != space:
                return i
            i = text.rfind(space, 0, i)
        return -1


class CachedTokens:
    """The tokens of one segment, as the token store keeps them."""

    ids: vec[i32]
    lens: vec[i32]
    joins: vec[u8]

    def __init__(self, ids: vec[i32], lens: vec[i32], joins: vec[u8]) -> None:
        self.ids = ids
        self.lens = lens
        self.joins = joins


class SegmentCache:
    """Segment -> tokens, shared by every document of one model, bounded in memory.

    Once full it stops taking new segments (as the tokenizers library's cache does): what it
    holds is what documents repeat most, since it fills with the first documents' words.
    """

    entries: dict[str, CachedTokens]
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

    def get(self, segment: str) -> CachedTokens | None:
        found = self.entries.get(segment)
        if found is None:
            self.misses += 1
        else:
            self.hits += 1
        return found

    def put(self, segment: str, tokens: CachedTokens) -> None:
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
