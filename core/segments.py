"""Segments: stretches of normalized text that a model tokenizes independently, and the cache of
their tokens that every document of the model shares.

A family whose text splits into such segments (SentencePiece's whitespace segments, a regex
pre-tokenizer's pre-tokens) supplies a `Segmenter`; the engine opens documents segment by segment
through the cache (prose repeats its words, so most of opening becomes lookups).
"""

from __future__ import annotations

from typing import Final

from librt.vecs import append, extend, vec
from mypy_extensions import i32, i64, u8

from tokenline.core.tokens import TokenRun, empty_run

# Segments longer than this are encoded but not cached (a long line of CJK text, base64).
CACHED_SEGMENT_CHARS: Final = 64
# Memory the cache of one model may take, and what one entry costs beyond its text and tokens
# (its hash, where its key and tokens lie, its share of the table), measured with tracemalloc.
CACHE_LIMIT_BYTES: Final = 64 * 1024 * 1024
ENTRY_OVERHEAD_BYTES: Final = 40
BYTES_PER_CACHED_TOKEN: Final = 9
# Keys are packed into blocks of about this many characters (a key is never split).
KEY_BLOCK: Final = 1 << 13
EMPTY: Final = -1


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

    Packed, not a dict of objects: a dict entry with its key string and a TokenRun of three
    vecs cost about 400 bytes per segment, which opening a 1 MB document (11,569 distinct
    segments) made 17 bytes per token of the server's memory, more than the document's own.
    Here the keys are joined into strings of KEY_BLOCK characters, the tokens lie in columns
    shared by all entries (joins only for a family that keeps them), and an open-addressing
    table of entry numbers finds them: about 110 bytes per segment, growth included.
    """

    # Entry e: its key is blocks[key_block[e]][key_at[e]:][:key_len[e]] (or fresh[...] while
    # its block is being filled), its tokens ids/lens/joins[starts[e]:starts[e + 1]].
    hashes: vec[i64]
    key_block: vec[i32]
    key_at: vec[i32]
    key_len: vec[u8]
    blocks: list[str]
    fresh: list[str]
    fresh_chars: i64
    fresh_first: i64
    starts: vec[i32]
    ids: vec[i32]
    lens: vec[u8]
    joins: vec[u8]
    joined: vec[u8]
    table: vec[i32]
    bytes_used: i64
    limit_bytes: i64
    hits: i64
    misses: i64

    def __init__(self, limit_bytes: i64 = CACHE_LIMIT_BYTES) -> None:
        self.limit_bytes = limit_bytes
        self.clear()

    def _find(self, segment: str) -> i64:
        """The entry of segment, or EMPTY; counted as a hit or a miss."""
        table = self.table
        mask: i64 = len(table) - 1
        h: i64 = hash(segment)
        slot: i64 = h & mask
        n: i64 = len(segment)
        while True:
            e: i64 = i64(table[slot])
            if e == EMPTY:
                self.misses += 1
                return EMPTY
            if self.hashes[e] == h and i64(self.key_len[e]) == n and self._key_is(e, segment):
                self.hits += 1
                return e
            slot = (slot + 1) & mask

    def _key_is(self, e: i64, segment: str) -> bool:
        b: i64 = i64(self.key_block[e])
        if b == len(self.blocks):
            return self.fresh[e - self.fresh_first] == segment
        return self.blocks[b].startswith(segment, i64(self.key_at[e]))

    def add_to(self, segment: str, out: TokenRun) -> i64:
        """Appends segment's cached tokens to out: how many, or -1 when it is not cached."""
        e = self._find(segment)
        if e == EMPTY:
            return -1
        a: i64 = i64(self.starts[e])
        b: i64 = i64(self.starts[e + 1])
        for k in range(a, b):
            out.ids = append(out.ids, self.ids[k])
            out.lens = append(out.lens, i32(self.lens[k]))
        if self.joined[e]:
            for k in range(a, b):
                out.joins = append(out.joins, self.joins[k])
        return b - a

    def count_of(self, segment: str) -> i64:
        """How many tokens segment has, or -1 when it is not cached."""
        e = self._find(segment)
        return EMPTY if e == EMPTY else i64(self.starts[e + 1]) - i64(self.starts[e])

    def holds(self, segment: str) -> bool:
        """Whether segment is cached (a check, not counted as a lookup)."""
        if self._find(segment) == EMPTY:
            self.misses -= 1
            return False
        self.hits -= 1
        return True

    def get(self, segment: str) -> TokenRun | None:
        """segment's cached tokens as a run of their own (None when it is not cached)."""
        out = empty_run()
        return out if self.add_to(segment, out) >= 0 else None

    def put(self, segment: str, tokens: TokenRun) -> None:
        n: i64 = len(segment)
        if n > CACHED_SEGMENT_CHARS:
            return
        cost: i64 = ENTRY_OVERHEAD_BYTES + 2 * n + BYTES_PER_CACHED_TOKEN * len(tokens.ids)
        if self.bytes_used + cost > self.limit_bytes:
            return
        if self._find(segment) != EMPTY:
            self.hits -= 1  # a check, not a lookup
            return
        self.misses -= 1
        e: i64 = len(self.hashes)
        if 4 * (e + 1) > 3 * len(self.table):
            self._grow()
        self._add_key(segment)
        kept: bool = len(tokens.joins) > 0
        if kept and len(self.joins) < len(self.ids):
            # The first entry with joins: the earlier ones' (none) are spelt out from here on.
            for _ in range(len(self.joins), len(self.ids)):
                self.joins = append(self.joins, u8(0))
        self.ids = extend(self.ids, tokens.ids)
        for length in tokens.lens:
            self.lens = append(self.lens, u8(length))  # a cached segment's are at most 64
        if kept:
            self.joins = extend(self.joins, tokens.joins)
        elif len(self.joins) > 0:
            for _ in range(len(tokens.ids)):
                self.joins = append(self.joins, u8(0))
        self.joined = append(self.joined, u8(1 if kept else 0))
        self.starts = append(self.starts, i32(len(self.ids)))
        self._place(e)
        self.bytes_used += cost

    def _add_key(self, segment: str) -> None:
        """Records the key of a new entry (its hash, and where its characters lie)."""
        if self.fresh_chars + len(segment) > KEY_BLOCK:
            self.blocks.append("".join(self.fresh))
            self.fresh = []
            self.fresh_chars = 0
            self.fresh_first = len(self.hashes)
        self.hashes = append(self.hashes, i64(hash(segment)))
        self.key_block = append(self.key_block, i32(len(self.blocks)))
        self.key_at = append(self.key_at, i32(self.fresh_chars))
        self.key_len = append(self.key_len, u8(len(segment)))
        self.fresh.append(segment)
        self.fresh_chars += len(segment)

    def _place(self, e: i64) -> None:
        """Puts entry e in the table, at the first free slot from its hash's."""
        mask: i64 = len(self.table) - 1
        slot: i64 = self.hashes[e] & mask
        while i64(self.table[slot]) != EMPTY:
            slot = (slot + 1) & mask
        self.table[slot] = i32(e)

    def _grow(self) -> None:
        self.table = vec[i32]([EMPTY] * (2 * len(self.table)))
        for e in range(len(self.hashes)):
            self._place(e)

    def size(self) -> i64:
        return len(self.hashes)

    def segments(self) -> list[str]:
        """Every cached segment, in the order they came (for tests and inspection)."""
        out: list[str] = []
        for e in range(len(self.hashes)):
            b: i64 = i64(self.key_block[e])
            if b == len(self.blocks):
                out.append(self.fresh[e - self.fresh_first])
            else:
                at: i64 = i64(self.key_at[e])
                out.append(self.blocks[b][at : at + i64(self.key_len[e])])
        return out

    def compact(self) -> None:
        """Copies each column to its exact size: they grow by doubling, so up to half of what
        they hold is room for entries to come (an editor calls it once an opening is done)."""
        self.hashes = self.hashes[:]
        self.key_block = self.key_block[:]
        self.key_at = self.key_at[:]
        self.key_len = self.key_len[:]
        self.starts = self.starts[:]
        self.ids = self.ids[:]
        self.lens = self.lens[:]
        self.joins = self.joins[:]
        self.joined = self.joined[:]

    def clear(self) -> None:
        self.hashes = vec[i64]()
        self.key_block = vec[i32]()
        self.key_at = vec[i32]()
        self.key_len = vec[u8]()
        self.blocks = []
        self.fresh = []
        self.fresh_chars = 0
        self.fresh_first = 0
        self.starts = vec[i32]([0])
        self.ids = vec[i32]()
        self.lens = vec[u8]()
        self.joins = vec[u8]()
        self.joined = vec[u8]()
        self.table = vec[i32]([EMPTY] * 16)
        self.bytes_used = 0
        self.hits = 0
        self.misses = 0
