"""A sequence kept in chunks, with per-chunk measures summed by Fenwick trees.

The document's text, its tokens and its normalization steps are long sequences edited in small
places. Each is cut into chunks of a few hundred or thousand elements; per-chunk measures (element
count, token lengths, line breaks, code units, ...) summed by Fenwick trees answer "which chunk
holds position x" and "how much comes before chunk c" in O(log chunks), and an edit rewrites only
the chunks it spans: a point update of the sums while the number of chunks stays, a rebuild
(O(chunks), amortized over many edits) when it changes.

`Chunks` is the bookkeeping: locate, splice, rebalancing to TARGET/MINIMUM/MAXIMUM sizes, and a
hook for elements that must never be cut apart ("\\r\\n" in text). A store subclasses it, keeps its
chunks' contents and stages the run an edit writes. `Columns` is such a store for rows of small
integers kept column by column (`vec[i32]` and `vec[u8]` per chunk), with sums over chosen columns.
"""

from __future__ import annotations

from typing import Final

from librt.vecs import append, extend, vec
from mypy_extensions import i32, i64, u8

from tokenline.core.fenwick import Fenwick

# Measure 0 of every store: the elements in a chunk, which positions count.
SIZE: Final = 0
# Chunks hold between target / MINIMUM_DIVISOR and target * MAXIMUM_FACTOR elements (fewer only
# when the whole sequence is that short): slivers are merged, and an edit may grow a chunk to
# twice its target before it is cut again.
MINIMUM_DIVISOR: Final = 4
MAXIMUM_FACTOR: Final = 2
# The chunk index that names the staged run in `_element`.
STAGED: Final = -1


class Chunks:
    """Chunk bookkeeping shared by the stores; the hooks at the end are theirs to fill in."""

    sums: list[Fenwick]  # one per measure, over the chunks
    target: i64
    minimum: i64
    maximum: i64
    # True when some neighbouring elements must stay in one chunk (`_keeps_together`).
    glues: bool

    def __init__(self, measures: i64, target: i64, glues: bool) -> None:
        self.sums = [Fenwick() for _ in range(measures)]
        self.target = target
        self.minimum = target // MINIMUM_DIVISOR
        self.maximum = target * MAXIMUM_FACTOR
        self.glues = glues

    # -- queries -------------------------------------------------------------------------------

    def chunk_count(self) -> i64:
        return self.sums[SIZE].size()

    def measure_total(self, m: i64) -> i64:
        return self.sums[m].total()

    def measure_of(self, m: i64, c: i64) -> i64:
        """Measure m of chunk c."""
        return self.sums[m].value(c)

    def measure_before(self, m: i64, c: i64) -> i64:
        """Measure m summed over chunks [0, c)."""
        return self.sums[m].prefix(c)

    def find(self, m: i64, pos: i64) -> tuple[i64, i64]:
        """The chunk whose measure-m range holds pos, and pos less the measure before it.

        Empty ranges are skipped; pos at or past the total gives the end of the last chunk.
        """
        sums = self.sums[m]
        n: i64 = sums.size()
        if n == 0:
            return 0, 0
        if pos >= sums.total():
            return n - 1, sums.value(n - 1)
        c: i64 = sums.search(pos)
        return c, pos - sums.prefix(c)

    def locate(self, pos: i64) -> tuple[i64, i64]:
        """Chunk and index in it of element pos (the end of the sequence: the last chunk's end)."""
        return self.find(SIZE, pos)

    # -- edits ---------------------------------------------------------------------------------

    def _splice(self, start: i64, end: i64) -> None:
        """Replaces elements [start, end) with the run the store has staged."""
        if self.chunk_count() == 0:
            self._commit(0, 0)
            return
        c0, i0 = self.locate(start)
        c1, i1 = self.locate(end)
        self._stage_head(c0, i0)
        self._stage_tail(c1, i1)
        self._commit(c0, c1 + 1)

    def _commit(self, lo: i64, hi: i64) -> None:
        """Stores the staged run in place of chunks [lo, hi), cut to chunk sizes."""
        n: i64 = self.chunk_count()
        if self._staged_size() < self.minimum and hi - lo < n:
            # Absorb a neighbour so that chunks never shrink to slivers.
            if hi < n:
                self._stage_tail(hi, 0)
                hi += 1
            else:
                lo -= 1
                self._stage_head(lo, self.measure_of(SIZE, lo))
        size: i64 = self._staged_size()
        if self.glues and size > 0:
            if lo > 0 and self._glued(lo - 1, self.measure_of(SIZE, lo - 1) - 1, STAGED, 0):
                lo -= 1
                self._stage_head(lo, self.measure_of(SIZE, lo))
            if hi < n and self._glued(STAGED, size - 1, hi, 0):
                self._stage_tail(hi, 0)
                hi += 1
            size = self._staged_size()
        cuts = self._cuts(size, self._parts(size, hi - lo))
        self._place(lo, hi, cuts)
        self._remeasure(lo, hi, len(cuts) - 1)

    def _parts(self, size: i64, current: i64) -> i64:
        """How many chunks a run of `size` elements that replaces `current` chunks takes."""
        if size == 0:
            return 0
        if current * self.minimum <= size <= current * self.maximum:
            return current  # point updates of the sums, no rebuild
        if size <= self.maximum:
            return 1
        return (size + self.target - 1) // self.target

    def _cuts(self, size: i64, parts: i64) -> vec[i64]:
        """Where to cut the staged run into `parts` nearly equal chunks: 0, ..., size."""
        cuts = append(vec[i64](capacity=parts + 1), 0)
        start: i64 = 0
        p: i64 = 1
        while p < parts:
            stop: i64 = (size * p) // parts
            while (
                self.glues and start < stop < size and self._glued(STAGED, stop - 1, STAGED, stop)
            ):
                stop += 1
            if stop > start:
                cuts = append(cuts, stop)
                start = stop
            p += 1
        if start < size:
            cuts = append(cuts, size)
        return cuts

    def _glued(self, c0: i64, i0: i64, c1: i64, i1: i64) -> bool:
        return self._keeps_together(self._element(c0, i0), self._element(c1, i1))

    def _remeasure(self, lo: i64, hi: i64, count: i64) -> None:
        """Brings the sums in step with chunks [lo, lo + count), which replaced [lo, hi)."""
        measures: i64 = len(self.sums)
        m: i64 = 0
        if count == hi - lo:
            c: i64 = lo
            while c < hi:
                m = 0
                while m < measures:
                    self.sums[m].set(c, self._measure(c, m))
                    m += 1
                c += 1
            return
        while m < measures:
            values = vec[i64](capacity=count)
            j: i64 = 0
            while j < count:
                values = append(values, self._measure(lo + j, m))
                j += 1
            self.sums[m].splice(lo, hi, values)
            m += 1

    # -- hooks ---------------------------------------------------------------------------------

    def _staged_size(self) -> i64:
        """Elements in the staged run."""
        raise NotImplementedError

    def _stage_head(self, c: i64, i: i64) -> None:
        """Puts elements [0, i) of chunk c in front of the staged run."""
        raise NotImplementedError

    def _stage_tail(self, c: i64, i: i64) -> None:
        """Puts elements [i, end) of chunk c behind the staged run."""
        raise NotImplementedError

    def _place(self, lo: i64, hi: i64, cuts: vec[i64]) -> None:
        """Replaces chunks [lo, hi) with the staged run cut at `cuts`; clears the stage."""
        raise NotImplementedError

    def _measure(self, c: i64, m: i64) -> i64:
        """Measure m of chunk c (measure SIZE: its number of elements)."""
        raise NotImplementedError

    def _element(self, c: i64, i: i64) -> i64:
        """Element i of chunk c (c == STAGED: of the staged run), for `_keeps_together`."""
        return 0

    def _keeps_together(self, left: i64, right: i64) -> bool:
        """Never cut between these two neighbouring elements (only asked when `glues`)."""
        return False


class Columns(Chunks):
    """Rows of small integers in chunks, column by column; measure 1 + j sums column summed[j].

    Wide columns hold `i32` values, flag columns `u8` ones; each store names its columns. New
    rows are staged column by column, then loaded or spliced in. The store keeps copies of what
    it is given and hands out fresh vecs, so no buffer is ever shared with a caller.
    """

    wide: list[list[vec[i32]]]  # [column][chunk]
    flags: list[list[vec[u8]]]  # [column][chunk]
    summed: vec[i64]  # the wide column that measure 1 + j sums
    measure_of_column: vec[i64]  # the measure that sums each wide column (SIZE: none)
    staged_wide: vec[vec[i32]]
    staged_flags: vec[vec[u8]]

    def __init__(self, wide: i64, flags: i64, summed: vec[i64], target: i64) -> None:
        super().__init__(1 + len(summed), target, False)
        self.wide = [[] for _ in range(wide)]
        self.flags = [[] for _ in range(flags)]
        self.staged_wide = vec[vec[i32]]([vec[i32]() for _ in range(wide)])
        self.staged_flags = vec[vec[u8]]([vec[u8]() for _ in range(flags)])
        self.summed = summed
        self.measure_of_column = vec[i64]([SIZE] * wide)
        for j in range(len(summed)):
            self.measure_of_column[summed[j]] = 1 + j

    # -- queries -------------------------------------------------------------------------------

    def size(self) -> i64:
        """Number of rows."""
        return self.measure_total(SIZE)

    def column_total(self, col: i64) -> i64:
        """Sum of a summed wide column over all rows."""
        return self.measure_total(self.measure_of_column[col])

    def get(self, col: i64, k: i64) -> i64:
        c, i = self.locate(k)
        return i64(self.wide[col][c][i])

    def flag(self, col: i64, k: i64) -> i64:
        c, i = self.locate(k)
        return i64(self.flags[col][c][i])

    def column_start(self, col: i64, k: i64) -> i64:
        """Sum of a summed wide column over rows [0, k)."""
        if k >= self.size():
            return self.column_total(col)
        c, i = self.locate(k)
        return self.start_at(col, c, i)

    def start_at(self, col: i64, c: i64, i: i64) -> i64:
        """Like column_start, for the row at index i of chunk c."""
        return self.measure_before(self.measure_of_column[col], c) + sum_first(self.wide[col][c], i)

    def row_at(self, col: i64, off: i64) -> i64:
        """The row whose range in a summed wide column holds off (rows of 0 are never returned);
        size() when off >= the column's total."""
        m: i64 = self.measure_of_column[col]
        off = max(off, 0)
        if off >= self.measure_total(m):
            return self.size()
        c, rest = self.find(m, off)
        values = self.wide[col][c]
        j: i64 = 0
        while i64(values[j]) <= rest:
            rest -= i64(values[j])
            j += 1
        return self.measure_before(SIZE, c) + j

    def copy_rows(self, c: i64, i: i64, count: i64) -> tuple[vec[vec[i32]], vec[vec[u8]]]:
        """Every column over `count` rows from the row at index i of chunk c on."""
        wide = vec[vec[i32]]([vec[i32](capacity=count) for _ in range(len(self.wide))])
        flags = vec[vec[u8]]([vec[u8](capacity=count) for _ in range(len(self.flags))])
        while count > 0:
            stop: i64 = min(self.measure_of(SIZE, c), i + count)
            for j in range(len(wide)):
                wide[j] = extend(wide[j], self.wide[j][c][i:stop])
            for j in range(len(flags)):
                flags[j] = extend(flags[j], self.flags[j][c][i:stop])
            count -= stop - i
            c += 1
            i = 0
        return wide, flags

    def set_flags(self, col: i64, k0: i64, values: vec[u8]) -> None:
        """Overwrites a flag column over rows [k0, k0 + len(values)) in place: no measure
        changes, so no splice."""
        n: i64 = len(values)
        if n == 0:
            return
        c, i = self.locate(k0)
        column = self.flags[col]
        j: i64 = 0
        while j < n:
            chunk = column[c]
            stop: i64 = min(i64(len(chunk)), i + n - j)
            while i < stop:
                chunk[i] = values[j]
                i += 1
                j += 1
            c += 1
            i = 0

    def to_list(self, col: i64, k0: i64, k1: i64) -> list[int]:
        """Values of a wide column over rows [k0, k1), clamped to the rows there are."""
        k1 = min(k1, self.size())
        if k0 >= k1:
            return []
        c, i = self.locate(k0)
        return [int(x) for x in self.copy_rows(c, i, k1 - k0)[0][col]]

    # -- edits ---------------------------------------------------------------------------------

    def stage(self, col: i64, values: vec[i32]) -> None:
        """Sets the new rows' values of a wide column, for `load` or `replace`."""
        self.staged_wide[col] = values

    def stage_flags(self, col: i64, values: vec[u8]) -> None:
        """Sets the new rows' values of a flag column, for `load` or `replace`."""
        self.staged_flags[col] = values

    def load(self) -> None:
        """Replaces all rows with the staged ones."""
        self._own_staged()
        self._commit(0, self.chunk_count())

    def replace(self, k0: i64, k1: i64) -> None:
        """Replaces rows [k0, k1) with the staged ones."""
        if self.chunk_count() == 0:
            self.load()
        else:
            self._splice(k0, k1)  # the staged rows are copied behind a chunk's head

    def _own_staged(self) -> None:
        """Copies the staged rows, which will be stored as they are."""
        for j in range(len(self.staged_wide)):
            self.staged_wide[j] = self.staged_wide[j][:]
        for j in range(len(self.staged_flags)):
            self.staged_flags[j] = self.staged_flags[j][:]

    def _staged_size(self) -> i64:
        return len(self.staged_wide[0])

    def _stage_head(self, c: i64, i: i64) -> None:
        for j in range(len(self.wide)):
            self.staged_wide[j] = extend(self.wide[j][c][:i], self.staged_wide[j])
        for j in range(len(self.flags)):
            self.staged_flags[j] = extend(self.flags[j][c][:i], self.staged_flags[j])

    def _stage_tail(self, c: i64, i: i64) -> None:
        for j in range(len(self.wide)):
            self.staged_wide[j] = extend(self.staged_wide[j], self.wide[j][c][i:])
        for j in range(len(self.flags)):
            self.staged_flags[j] = extend(self.staged_flags[j], self.flags[j][c][i:])

    def _place(self, lo: i64, hi: i64, cuts: vec[i64]) -> None:
        for j in range(len(self.wide)):
            _put_wide(self.wide[j], lo, hi, self.staged_wide[j], cuts)
            self.staged_wide[j] = vec[i32]()
        for j in range(len(self.flags)):
            _put_flags(self.flags[j], lo, hi, self.staged_flags[j], cuts)
            self.staged_flags[j] = vec[u8]()

    def _measure(self, c: i64, m: i64) -> i64:
        if m == SIZE:
            return len(self.wide[0][c])
        values = self.wide[self.summed[m - 1]][c]
        return sum_first(values, len(values))


def _put_wide(chunks: list[vec[i32]], lo: i64, hi: i64, run: vec[i32], cuts: vec[i64]) -> None:
    """Chunks [lo, hi) of a column become `run` cut at `cuts` (one chunk: a copy of run)."""
    if len(cuts) == 2 and hi - lo == 1:
        # The common edit. A copy of its exact size: run grew by extends, to up to twice its
        # length, and 100 edits in a 1 MB document kept 480 KB of such slack (2 bytes a token).
        chunks[lo] = run[:]
    else:
        chunks[lo:hi] = [run[cuts[p - 1] : cuts[p]] for p in range(1, len(cuts))]


def _put_flags(chunks: list[vec[u8]], lo: i64, hi: i64, run: vec[u8], cuts: vec[i64]) -> None:
    if len(cuts) == 2 and hi - lo == 1:
        chunks[lo] = run[:]  # of its exact size (see _put_wide)
    else:
        chunks[lo:hi] = [run[cuts[p - 1] : cuts[p]] for p in range(1, len(cuts))]


def sum_first(values: vec[i32], count: i64) -> i64:
    """Sum of the first `count` values."""
    s: i64 = 0
    i: i64 = 0
    while i < count:
        s += i64(values[i])
        i += 1
    return s
