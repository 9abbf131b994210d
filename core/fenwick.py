"""Integer values with prefix sums, so offset and index lookups over chunks cost O(log chunks)."""

from __future__ import annotations

from librt.vecs import append, extend, vec
from mypy_extensions import i64


class Fenwick:
    """A binary indexed tree over a list of integers it keeps, with a lower-bound search.

    Point changes cost O(log n); splices that change the number of values rebuild in O(n).
    """

    values: vec[i64]
    tree: vec[i64]
    # Largest power of two <= the number of values: where the search starts.
    top: i64
    sum_all: i64

    def __init__(self) -> None:
        self.values = vec[i64]()
        self.tree = vec[i64]([0])
        self.top = 1
        self.sum_all = 0

    def size(self) -> i64:
        return len(self.values)

    def value(self, index: i64) -> i64:
        return self.values[index]

    def total(self) -> i64:
        return self.sum_all

    def set(self, index: i64, value: i64) -> None:
        """Sets value `index` (0-based) in O(log n)."""
        delta: i64 = value - self.values[index]
        if delta == 0:
            return
        self.values[index] = value
        self.sum_all += delta
        i: i64 = index + 1
        n: i64 = len(self.values)
        tree = self.tree
        while i <= n:
            tree[i] += delta
            i += i & -i

    def splice(self, lo: i64, hi: i64, values: vec[i64]) -> None:
        """Replaces values [lo, hi) with `values` and rebuilds the tree."""
        self.values = extend(extend(self.values[:lo], values), self.values[hi:])
        self._rebuild()

    def _rebuild(self) -> None:
        values = self.values
        n: i64 = len(values)
        tree = vec[i64](capacity=n + 1)
        tree = append(tree, 0)
        tree = extend(tree, values)
        i: i64 = 1
        while i <= n:
            j: i64 = i + (i & -i)
            if j <= n:
                tree[j] += tree[i]
            i += 1
        self.tree = tree
        top: i64 = 1
        while top * 2 <= n:
            top *= 2
        self.top = top
        self.sum_all = self.prefix(n)

    def prefix(self, count: i64) -> i64:
        """Sum of the first `count` values."""
        s: i64 = 0
        i: i64 = count
        tree = self.tree
        while i > 0:
            s += tree[i]
            i -= i & -i
        return s

    def search(self, target: i64) -> i64:
        """The value whose range holds position `target`.

        For non-negative values, value k (0-based) covers [prefix(k), prefix(k+1)); the answer
        is the k whose range holds target, skipping empty values, or size() when target >= total.
        """
        pos: i64 = 0
        rem: i64 = target
        step: i64 = self.top
        tree = self.tree
        n: i64 = len(self.values)
        while step > 0:
            nxt: i64 = pos + step
            if nxt <= n and tree[nxt] <= rem:
                pos = nxt
                rem -= tree[nxt]
            step //= 2
        return pos
