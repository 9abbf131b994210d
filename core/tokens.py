"""A document's tokens: ids, normalized lengths and, for some models, join flags.

An edit replaces a short run of tokens and the editor asks for tokens by index and by offset, so
the tokens live in `Columns` chunks: one `i32` column of ids, one of lengths (summed, which maps
normalized offsets to tokens), and an optional `u8` column of joins for models whose window edges
must fall between merge symbols.
"""

from __future__ import annotations

from array import array
from typing import Final

from librt.vecs import append, extend, vec
from mypy_extensions import i32, i64, u8

from tokenline.core.chunks import Columns

# Tokens a chunk holds: a few hundred keeps the copy an edit makes small and the chunk list short.
TARGET: Final = 256

# Wide columns.
IDS: Final = 0
LENGTHS: Final = 1
# Flag column: the token's join bits (JOIN_* below).
JOINS: Final = 0

# Bits of a token's join flags. EDGE: no window edge may sit before the token (it continues a merge
# symbol, or a pre-token). CHARACTER: it continues a character split over several tokens (editors
# show such tokens as one group).
JOIN_EDGE: Final = 1
JOIN_CHARACTER: Final = 2
# A window edge may sit before the token, but it is inside a long pre-token, not at a cut: it is
# checked as a BPE edge there (Algorithm 3 within the pre-token).
JOIN_INNER: Final = 4
# Not yet known whether the token starts a pre-token (a document opened from one full encode);
# such a token also carries JOIN_EDGE, so no window edge sits before it.
JOIN_UNKNOWN: Final = 8


def continues(kept: bool, join: i64, length: i64, bit: i64) -> bool:
    """Whether a token continues the one before it, for the join `bit` asked about (JOIN_EDGE:
    the merge symbol; JOIN_CHARACTER: the character). Where a family keeps no join flags, the
    only tokens that continue are those of no length: byte-fallback bytes after a character's
    first, which continue both its character and its merge symbol."""
    if kept:
        return (join & bit) != 0
    return length == 0


class TokenRun:
    """Tokens in the store's columns, gathered before they go into it: a window's tokens, a
    segment's (cached), a document's when it opens. `joins` is empty when the family keeps no
    join flags."""

    ids: vec[i32]
    lens: vec[i32]
    joins: vec[u8]

    def __init__(self, ids: vec[i32], lens: vec[i32], joins: vec[u8]) -> None:
        self.ids = ids
        self.lens = lens
        self.joins = joins

    def size(self) -> i64:
        return len(self.ids)

    def total(self) -> i64:
        """Characters the tokens cover."""
        lens = self.lens
        n: i64 = len(lens)
        out: i64 = 0
        i: i64 = 0
        while i < n:
            out += i64(lens[i])
            i += 1
        return out

    def joined(self, i: i64) -> bool:
        """Token i continues the merge symbol of the token before it."""
        kept: bool = len(self.joins) > 0
        return continues(kept, i64(self.joins[i]) if kept else 0, i64(self.lens[i]), JOIN_EDGE)

    def add(self, more: TokenRun) -> None:
        self.ids = extend(self.ids, more.ids)
        self.lens = extend(self.lens, more.lens)
        self.joins = extend(self.joins, more.joins)

    def add_token(self, token_id: i64, length: i64, join: i64, kept: bool) -> None:
        self.ids = append(self.ids, i32(token_id))
        self.lens = append(self.lens, i32(length))
        if kept:
            self.joins = append(self.joins, u8(join))

    def id_list(self) -> list[int]:
        out: list[int] = []
        for x in self.ids:
            out.append(int(x))
        return out


def empty_run() -> TokenRun:
    return TokenRun(vec[i32](), vec[i32](), vec[u8]())


def run_bytes(run: TokenRun) -> tuple[bytes, bytes, bytes]:
    """A run's columns as bytes (this machine's order), to hand it to another process."""
    return array("i", run.ids).tobytes(), array("i", run.lens).tobytes(), bytes(run.joins)


def run_from_bytes(ids: bytes, lens: bytes, joins: bytes) -> TokenRun:
    """The run run_bytes gave (a few milliseconds for a million tokens, no object per token)."""
    return TokenRun(
        vec[i32](memoryview(ids).cast("i")), vec[i32](memoryview(lens).cast("i")), vec[u8](joins)
    )


def to_vec(ids: list[int]) -> vec[i32]:
    """Ids from a reference library, in the store's column type."""
    out = vec[i32](capacity=len(ids))
    for x in ids:
        out = append(out, i32(x))
    return out


class TokenStore:
    """Token ids and normalized lengths by index, and token lookup by normalized offset."""

    rows: Columns
    keeps_joins: bool

    def __init__(self, keeps_joins: bool = False) -> None:
        self.keeps_joins = keeps_joins
        self.rows = Columns(2, 1 if keeps_joins else 0, vec[i64]([LENGTHS]), TARGET)

    def size(self) -> i64:
        """Number of tokens."""
        return self.rows.size()

    def total_length(self) -> i64:
        """Sum of the tokens' lengths (normalized code points)."""
        return self.rows.column_total(LENGTHS)

    def id(self, k: i64) -> i64:
        return self.rows.get(IDS, k)

    def length(self, k: i64) -> i64:
        """Normalized length of token k."""
        return self.rows.get(LENGTHS, k)

    def flag(self, k: i64) -> i64:
        """Token k's join flags (0 when the store keeps none)."""
        if not self.keeps_joins:
            return 0
        return self.rows.flag(JOINS, k)

    def start(self, k: i64) -> i64:
        """Normalized offset where token k starts (total_length() for k >= size())."""
        return self.rows.column_start(LENGTHS, k)

    def at(self, off: i64) -> i64:
        """Index of the token whose range holds normalized offset off (zero-length tokens are
        never returned); size() when off >= total_length()."""
        return self.rows.row_at(LENGTHS, off)

    def window(self, k0: i64, k1: i64) -> tuple[vec[i32], vec[i32], vec[u8], i64]:
        """Tokens [k0, k1) as (ids, lengths, joins, start of k0), with one lookup; joins is
        empty when the store keeps none."""
        k0 = max(k0, 0)
        k1 = min(k1, self.size())
        if k0 >= k1:
            return vec[i32](), vec[i32](), vec[u8](), self.start(k0)
        c, i = self.rows.locate(k0)
        wide, flags = self.rows.copy_rows(c, i, k1 - k0)
        joins = flags[JOINS] if self.keeps_joins else vec[u8]()
        return wide[IDS], wide[LENGTHS], joins, self.rows.start_at(LENGTHS, c, i)

    def ids(self, k0: i64, k1: i64) -> list[int]:
        return self.rows.to_list(IDS, k0, k1)

    def lengths(self, k0: i64, k1: i64) -> list[int]:
        return self.rows.to_list(LENGTHS, k0, k1)

    def load(self, ids: vec[i32], lengths: vec[i32], joins: vec[u8] | None = None) -> None:
        """Replaces all tokens (joins: zeros when None)."""
        self._stage(ids, lengths, joins)
        self.rows.load()

    def replace(
        self, k0: i64, k1: i64, ids: vec[i32], lengths: vec[i32], joins: vec[u8] | None = None
    ) -> None:
        """Replaces tokens [k0, k1) with the given ones (joins: zeros when None)."""
        self._stage(ids, lengths, joins)
        self.rows.replace(k0, k1)

    def set_joins(self, k0: i64, joins: vec[u8]) -> None:
        """Tokens [k0, k0 + len(joins)) get these join flags (ids and lengths stay)."""
        if self.keeps_joins:
            self.rows.set_flags(JOINS, k0, joins)

    def _stage(self, ids: vec[i32], lengths: vec[i32], joins: vec[u8] | None) -> None:
        self.rows.stage(IDS, ids)
        self.rows.stage(LENGTHS, lengths)
        if not self.keeps_joins:
            return
        if joins is None:
            joins = vec[u8](capacity=len(ids))
            for _ in range(len(ids)):
                joins = append(joins, 0)
        self.rows.stage_flags(JOINS, joins)
