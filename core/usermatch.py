"""Greedy longest-first matching of USER_DEFINED pieces, as SentencePiece's PrefixMatcher does.

SentencePiece cuts text into initial symbols by matching user-defined pieces greedily, longest
first, before any merge. A match can reach past a window's edge, so the engine re-runs this
matcher around each edge to prove the edge is also a symbol boundary of the whole text.
"""

from __future__ import annotations

from mypy_extensions import i64

from tokenline.core.symboledges import CutTest


class UserMatcher(CutTest):
    """Pieces matched greedily, longest first; as a cut test, it reads `longest` past a cut."""

    by_first: dict[str, list[str]]
    longest: i64

    def __init__(self, pieces: list[str]) -> None:
        by_first: dict[str, list[str]] = {}
        longest: i64 = 1
        for p in pieces:
            if not p:
                continue
            by_first.setdefault(p[0], []).append(p)
            if len(p) > longest:
                longest = len(p)
        for key in by_first:
            by_first[key].sort(key=len, reverse=True)
        super().__init__(longest)
        self.by_first = by_first
        self.longest = longest

    def match(self, text: str, pos: i64) -> i64:
        """Length of the longest user piece at text[pos:], or 0."""
        cands = self.by_first.get(text[pos])
        if cands is None:
            return 0
        for p in cands:
            if text.startswith(p, pos):
                return len(p)
        return 0

    def step(self, text: str, pos: i64) -> i64:
        """Length of the initial symbol at text[pos:]: a user piece or one character."""
        m: i64 = self.match(text, pos)
        return m if m > 0 else 1

    def lands_on(self, text: str, start: i64, target: i64) -> bool:
        """True if symbols cut greedily from start (a known symbol boundary) have a boundary at
        target. text must reach at least `longest` characters past target where it can."""
        pos: i64 = start
        while pos < target:
            pos += self.step(text, pos)
        return pos == target
