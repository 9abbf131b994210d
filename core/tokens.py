"""A document's tokens: ids, normalized lengths and, for some models, merge-symbol joins.

An edit replaces a short run of tokens and the editor asks for tokens by index and by offset, so
the tokens live in `Columns` chunks: one `i32` column of ids, one of lengths (summed, which maps
normalized offsets to tokens), and an optional `u8` column of joins for models whose window edges
must fall between merge symbols.
"""

from __future__ import annotations

from typing import Final

from librt.vecs import append, vec
from mypy_extensions import i32, i64, u8

from tokenline.core.chunks import Columns

# Tokens a chunk holds: a few hundred keeps the copy an edit makes small and the chunk list short.
TARGET: Final = 256

# Wide columns.
IDS: Final = 0
LENGTHS: Final = 1
# Flag column: 1 where the token continues the merge symbol of the token before it.
JOINS: Final = 0


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
