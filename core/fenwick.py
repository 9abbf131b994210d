"""Prefix sums over chunk totals, so offset and index lookups cost O(log chunks)."""

from __future__ import annotations

from librt.vecs import append, vec
from mypy_extensions import i64


class Fenwick:
    """A binary indexed tree of integer sums with a lower-bound search."""

    n: i64
    tree: vec[i64]
    top: i64

    def __init__(self, values: list[i64]) -> None:
        self.n = 0
        self.tree = vec[i64]([0])
        self.top = 1
        self.rebuild(values)

    def rebuild(self, values: list[i64]) -> None:
        n: i64 = len(values)
        tree = vec[i64](capacity=n + 1)
        tree = append(tree, 0)
        i: i64 = 0
        while i < n:
            tree = append(tree, values[i])
            i += 1
        i = 1
        while i <= n:
            j: i64 = i + (i & -i)
            if j <= n:
                tree[j] += tree[i]
            i += 1
        self.n = n
        self.tree = tree
        top: i64 = 1
        while top * 2 <= n:
            top *= 2
        self.top = top

    def add(self, index: i64, delta: i64) -> None:
        """Adds delta to element `index` (0-based)."""
        if delta == 0:
            return
        i: i64 = index + 1
        n: i64 = self.n
        tree = self.tree
        while i <= n:
            tree[i] += delta
            i += i & -i

    def prefix(self, count: i64) -> i64:
        """Sum of the first `count` elements."""
        s: i64 = 0
        i: i64 = count
        tree = self.tree
        while i > 0:
            s += tree[i]
            i -= i & -i
        return s

    def total(self) -> i64:
        return self.prefix(self.n)

    def search(self, target: i64) -> i64:
        """The element whose range holds position `target`.

        For non-negative elements, element k (0-based) covers [prefix(k), prefix(k+1)); the answer
        is the k whose range holds target, skipping empty elements, or n when target >= total.
        """
        pos: i64 = 0
        rem: i64 = target
        step: i64 = self.top
        tree = self.tree
        n: i64 = self.n
        while step > 0:
            nxt: i64 = pos + step
            if nxt <= n and tree[nxt] <= rem:
                pos = nxt
                rem -= tree[nxt]
            step //= 2
        return pos
