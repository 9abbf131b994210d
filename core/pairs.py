"""Sequences of (a, b) integer pairs in compact chunks, with prefix sums.

A document keeps its tokens as (id, normalized length) pairs and, for normalizers that are not
one-to-one, its normalization units as (original length << 2 | state, normalized length) pairs.
Pairs live in chunks of a few hundred (two `vec[i32]` per chunk); Fenwick trees over the chunk
totals answer "which pair holds offset x" and "where does pair k start" in O(log n + chunk), and
replacing a run of pairs touches only the chunks it spans.
"""

from __future__ import annotations

from typing import Final

from librt.vecs import append, extend, vec
from mypy_extensions import i32, i64, u8

from tokenline.core.fenwick import Fenwick

TARGET: Final = 256
MAXIMUM: Final = 512
MINIMUM: Final = 64


class PairStore:
    col_a: list[vec[i32]]
    col_b: list[vec[i32]]
    # Optional third column of small flags, kept in step with the pairs (empty when unused).
    col_c: list[vec[u8]]
    has_c: bool
    chunk_count: list[i64]
    chunk_b: list[i64]
    chunk_a: list[i64]
    counts: Fenwick
    sums_b: Fenwick
    sums_a: Fenwick
    # When >= 0, column a is summed too, after shifting each value right by this many bits.
    a_shift: i64
    n: i64
    total_b: i64
    total_a: i64

    def __init__(self, a_shift: i64 = -1, has_c: bool = False) -> None:
        self.a_shift = a_shift
        self.has_c = has_c
        self.col_a = []
        self.col_b = []
        self.col_c = []
        self.chunk_count = []
        self.chunk_b = []
        self.chunk_a = []
        self.counts = Fenwick([])
        self.sums_b = Fenwick([])
        self.sums_a = Fenwick([])
        self.n = 0
        self.total_b = 0
        self.total_a = 0

    def load(self, a: vec[i32], b: vec[i32], c: vec[u8] | None = None) -> None:
        """Replaces the whole sequence (c: the flags column, zeros when None)."""
        self.col_a = []
        self.col_b = []
        self.col_c = []
        self.chunk_count = []
        self.chunk_b = []
        self.chunk_a = []
        n: i64 = len(a)
        flags = self._flags(c, n)
        start: i64 = 0
        while start < n:
            stop: i64 = min(n, start + TARGET)
            self._append_chunk(a[start:stop], b[start:stop], flags[start:stop])
            start = stop
        self._reindex()

    def _flags(self, c: vec[u8] | None, n: i64) -> vec[u8]:
        """The flags column for n new pairs: c, or zeros; empty when the store keeps none."""
        if not self.has_c:
            return vec[u8]()
        if c is not None:
            return c
        out = vec[u8](capacity=n)
        i: i64 = 0
        while i < n:
            out = append(out, 0)
            i += 1
        return out

    def _append_chunk(self, a: vec[i32], b: vec[i32], c: vec[u8]) -> None:
        self.col_a.append(a)
        self.col_b.append(b)
        if self.has_c:
            self.col_c.append(c)
        self.chunk_count.append(len(a))
        self.chunk_b.append(_sum(b, 0))
        self.chunk_a.append(_sum(a, self.a_shift) if self.a_shift >= 0 else 0)

    def _reindex(self) -> None:
        self.counts.rebuild(self.chunk_count)
        self.sums_b.rebuild(self.chunk_b)
        self.n = self.counts.total()
        self.total_b = self.sums_b.total()
        if self.a_shift >= 0:
            self.sums_a.rebuild(self.chunk_a)
            self.total_a = self.sums_a.total()

    # -- queries -------------------------------------------------------------------------------

    def size(self) -> i64:
        return self.n

    def _locate(self, k: i64) -> tuple[i64, i64]:
        """Chunk and position in it of pair k (k == size() gives the end of the last chunk)."""
        nchunks: i64 = len(self.col_a)
        if nchunks == 0:
            return 0, 0
        if k >= self.n:
            return nchunks - 1, self.chunk_count[nchunks - 1]
        c: i64 = self.counts.search(k)
        return c, k - self.counts.prefix(c)

    def get_a(self, k: i64) -> i64:
        c, i = self._locate(k)
        return i64(self.col_a[c][i])

    def get_b(self, k: i64) -> i64:
        c, i = self._locate(k)
        return i64(self.col_b[c][i])

    def start_b(self, k: i64) -> i64:
        """Sum of column b over pairs [0, k)."""
        if k >= self.n:
            return self.total_b
        return self._start(k, self.sums_b, self.col_b, 0)

    def start_a(self, k: i64) -> i64:
        """Sum of column a (shifted) over pairs [0, k)."""
        if k >= self.n:
            return self.total_a
        return self._start(k, self.sums_a, self.col_a, self.a_shift)

    def _start(self, k: i64, sums: Fenwick, cols: list[vec[i32]], shift: i64) -> i64:
        c, i = self._locate(k)
        return sums.prefix(c) + _sum(cols[c], shift, i)

    def at_b(self, off: i64) -> i64:
        """Index of the pair whose b-range holds off (pairs with b == 0 are never returned);
        size() when off >= the total of b."""
        return self._at(off, self.total_b, self.sums_b, self.col_b, 0)

    def at_a(self, off: i64) -> i64:
        """Like at_b, on column a (shifted)."""
        return self._at(off, self.total_a, self.sums_a, self.col_a, self.a_shift)

    def _at(self, off: i64, total: i64, sums: Fenwick, cols: list[vec[i32]], shift: i64) -> i64:
        if off < 0:
            off = 0
        if off >= total:
            return self.n
        c: i64 = sums.search(off)
        base: i64 = sums.prefix(c)
        col = cols[c]
        j: i64 = 0
        while True:
            w: i64 = i64(col[j]) >> shift
            if base + w > off:
                break
            base += w
            j += 1
        return self.counts.prefix(c) + j

    def window(self, k0: i64, k1: i64) -> tuple[vec[i32], vec[i32], vec[u8], i64]:
        """Pairs [k0, k1) as (a values, b values, flags, sum of b before k0), with one lookup."""
        if k1 > self.n:
            k1 = self.n
        if k0 < 0:
            k0 = 0
        out_a = vec[i32](capacity=max(0, k1 - k0))
        out_b = vec[i32](capacity=max(0, k1 - k0))
        out_c = vec[u8]()
        if k0 >= k1:
            return out_a, out_b, out_c, self.start_b(k0)
        c, i = self._locate(k0)
        base: i64 = self.sums_b.prefix(c) + _sum(self.col_b[c], 0, i)
        k: i64 = k0
        while k < k1:
            ca = self.col_a[c]
            cb = self.col_b[c]
            m: i64 = len(ca)
            j: i64 = i
            while i < m and k < k1:
                out_a = append(out_a, ca[i])
                out_b = append(out_b, cb[i])
                i += 1
                k += 1
            if self.has_c:
                out_c = extend(out_c, self.col_c[c][j:i])
            c += 1
            i = 0
        return out_a, out_b, out_c, base

    def slice_a(self, k0: i64, k1: i64) -> list[int]:
        out: list[int] = []
        self._slice_into(self.col_a, k0, k1, out)
        return out

    def slice_b(self, k0: i64, k1: i64) -> list[int]:
        out: list[int] = []
        self._slice_into(self.col_b, k0, k1, out)
        return out

    def _slice_into(self, cols: list[vec[i32]], k0: i64, k1: i64, out: list[int]) -> None:
        if k1 > self.n:
            k1 = self.n
        if k0 >= k1:
            return
        c, i = self._locate(k0)
        k: i64 = k0
        while k < k1:
            col = cols[c]
            m: i64 = len(col)
            while i < m and k < k1:
                out.append(int(col[i]))
                i += 1
                k += 1
            c += 1
            i = 0

    # -- the token store's names (until it is a store of its own) ------------------------------

    def id(self, k: i64) -> i64:
        return self.get_a(k)

    def length(self, k: i64) -> i64:
        return self.get_b(k)

    def start(self, k: i64) -> i64:
        return self.start_b(k)

    def at(self, off: i64) -> i64:
        return self.at_b(off)

    def total_length(self) -> i64:
        return self.total_b

    def ids(self, k0: i64, k1: i64) -> list[int]:
        return self.slice_a(k0, k1)

    def lengths(self, k0: i64, k1: i64) -> list[int]:
        return self.slice_b(k0, k1)

    # -- edits ---------------------------------------------------------------------------------

    def replace(
        self, k0: i64, k1: i64, new_a: vec[i32], new_b: vec[i32], new_c: vec[u8] | None = None
    ) -> None:
        """Replaces pairs [k0, k1) with the given ones (new_c: their flags, zeros when None)."""
        nchunks: i64 = len(self.col_a)
        if nchunks == 0:
            self.load(new_a, new_b, new_c)
            return
        c0, i0 = self._locate(k0)
        c1, i1 = self._locate(k1)
        a = extend(extend(self.col_a[c0][:i0], new_a), self.col_a[c1][i1:])
        b = extend(extend(self.col_b[c0][:i0], new_b), self.col_b[c1][i1:])
        flags = self._flags(new_c, len(new_a))
        if self.has_c:
            flags = extend(extend(self.col_c[c0][:i0], flags), self.col_c[c1][i1:])
        m: i64 = len(a)
        lo: i64 = c0
        hi: i64 = c1 + 1
        if m < MINIMUM and hi - lo < nchunks:
            # Absorb a neighbour so that chunks never shrink to slivers.
            if hi < nchunks:
                a = extend(a, self.col_a[hi])
                b = extend(b, self.col_b[hi])
                if self.has_c:
                    flags = extend(flags, self.col_c[hi])
                hi += 1
            else:
                lo -= 1
                a = extend(self.col_a[lo][:], a)
                b = extend(self.col_b[lo][:], b)
                if self.has_c:
                    flags = extend(self.col_c[lo][:], flags)
            m = len(a)
        parts_a: list[vec[i32]] = []
        parts_b: list[vec[i32]] = []
        parts_c: list[vec[u8]] = []
        if m > 0:
            parts: i64 = hi - lo
            if not (parts * MINIMUM <= m <= parts * MAXIMUM):
                # The chunk count must change (an O(chunks) re-index, amortized over many edits).
                parts = 1 if m <= MAXIMUM else (m + TARGET - 1) // TARGET
            start: i64 = 0
            p: i64 = 0
            while p < parts:
                stop: i64 = (m * (p + 1)) // parts
                parts_a.append(a[start:stop])
                parts_b.append(b[start:stop])
                parts_c.append(flags[start:stop] if self.has_c else flags)
                start = stop
                p += 1
        if len(parts_a) == hi - lo:
            # Same number of chunks: point updates keep the edit O(log n).
            j: i64 = 0
            while j < len(parts_a):
                self._set_chunk(lo + j, parts_a[j], parts_b[j])
                if self.has_c:
                    self.col_c[lo + j] = parts_c[j]
                j += 1
            return
        self.col_a[lo:hi] = parts_a
        self.col_b[lo:hi] = parts_b
        if self.has_c:
            self.col_c[lo:hi] = parts_c
        counts: list[i64] = []
        sb: list[i64] = []
        sa: list[i64] = []
        j = 0
        while j < len(parts_a):
            counts.append(len(parts_a[j]))
            sb.append(_sum(parts_b[j], 0))
            sa.append(_sum(parts_a[j], self.a_shift) if self.a_shift >= 0 else 0)
            j += 1
        self.chunk_count[lo:hi] = counts
        self.chunk_b[lo:hi] = sb
        self.chunk_a[lo:hi] = sa
        self._reindex()

    def _set_chunk(self, c: i64, a: vec[i32], b: vec[i32]) -> None:
        count: i64 = len(a)
        sb: i64 = _sum(b, 0)
        dc: i64 = count - self.chunk_count[c]
        db: i64 = sb - self.chunk_b[c]
        self.col_a[c] = a
        self.col_b[c] = b
        self.chunk_count[c] = count
        self.chunk_b[c] = sb
        self.counts.add(c, dc)
        self.sums_b.add(c, db)
        self.n += dc
        self.total_b += db
        if self.a_shift >= 0:
            sa: i64 = _sum(a, self.a_shift)
            self.sums_a.add(c, sa - self.chunk_a[c])
            self.total_a += sa - self.chunk_a[c]
            self.chunk_a[c] = sa


def _sum(v: vec[i32], shift: i64, count: i64 = -1) -> i64:
    """Sum of the first `count` values (all when negative), each shifted right by `shift`."""
    s: i64 = 0
    n: i64 = len(v) if count < 0 else count
    i: i64 = 0
    if shift <= 0:
        while i < n:
            s += i64(v[i])
            i += 1
        return s
    while i < n:
        s += i64(v[i]) >> shift
        i += 1
    return s
