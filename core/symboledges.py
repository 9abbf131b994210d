"""Window edges proven by Algorithm 3: the edge's merge symbol is the old one there, and the
family's cut before merging (user-defined pieces, added tokens, a segmentation) has a boundary
there too.

Why comparing symbols is exact, for BPE (merges by score, leftmost first): if the window's first
symbol equals the old one at the same place, every merge that could cross the window's left edge
sees the same symbols, in the same order, as in the old run, where none crossed; the same holds at
the right edge. The comparison covers position and length (the window starts and ends at old
token boundaries) and whole merge symbols (a window edge never sits inside one). The cut before
merging can reach past an edge, so it is run again across each edge.

Families whose text encodes as its stretches between cuts, each alone (windows cut before plain
spaces), prove an edge by the cut alone (`by_cuts`): no symbol comparison, so a long stretch is
encoded once rather than until a window reaches past its neighbours.
"""

from __future__ import annotations

from mypy_extensions import i64

from tokenline.core.family import Family
from tokenline.core.normalization import Normalization
from tokenline.core.tokens import TokenRun, TokenStore
from tokenline.core.window import LONG_STRETCH, NO_EDIT, Edges, Neighborhood, Stats, Window


class CutTest:
    """A family's cut before merging: whether text cut from a known cut has a cut at a place,
    reading at most `reach` characters past it."""

    reach: i64

    def __init__(self, reach: i64) -> None:
        self.reach = reach

    def lands_on(self, text: str, start: i64, target: i64) -> bool:
        """Whether the cuts of `text`, made from `start` (a known cut), include `target`; text
        reaches `reach` characters past target where it can."""
        raise NotImplementedError


class SymbolEdges(Edges):
    """Algorithm 3's edges, with the family's cut test (None: every token boundary is a cut)."""

    family: Family
    norm: Normalization
    toks: TokenStore
    stats: Stats
    cuts: CutTest | None
    reach: i64
    by_cuts: bool

    def __init__(
        self,
        family: Family,
        norm: Normalization,
        toks: TokenStore,
        stats: Stats,
        cuts: CutTest | None,
        by_cuts: bool,
    ) -> None:
        self.family = family
        self.norm = norm
        self.toks = toks
        self.stats = stats
        self.cuts = cuts
        self.reach = 0 if cuts is None else cuts.reach
        self.by_cuts = by_cuts

    def attempt(
        self, w: Window, near: Neighborhood, wl: i64, wr: i64, a: i64, b: i64
    ) -> tuple[TokenRun | None, bool, bool]:
        text = w.head + self.norm.slice(a, b) + w.tail
        self.stats.encoded(len(text))
        found = self.family.tokens(text, True)
        w.read_lo = a
        w.read_hi = b
        # A window of white space only that a normalizer strips has no token to give it to:
        # cut earlier, where the whole text's last token holds it.
        by_cuts: bool = self.by_cuts and (found.size() > 0 or a == b)
        ok_l: bool = not w.move_left or wl == 0
        ok_r: bool = not w.move_right or wr >= self.toks.size()
        ok_l = ok_l or ((by_cuts or near.left_edge_holds(found, wl)) and self._cut_before(w, a))
        ok_r = ok_r or (
            (by_cuts or near.right_edge_holds(found, wr)) and self._cut_after(text, b, found)
        )
        return found, ok_l, ok_r

    def encodes_long(self, ns: i64, ne: i64, new: str) -> bool:
        """Edges proven by cuts alone encode the whole stretch between the cuts around an edit:
        long when that stretch, with the new text's words at its ends, or a word of the new text
        is over LONG_STRETCH characters (old tokens walked at most that far each way)."""
        if not self.by_cuts:
            return False
        head, tail, widest = words_at_ends(new)
        toks = self.toks
        n: i64 = toks.size()
        if n == 0:
            return widest > LONG_STRETCH
        k: i64 = min(toks.at(ns), n - 1)
        k1: i64 = min(toks.at(ne) + 1, n)
        near = Neighborhood(toks, k, k1)
        while k > 0 and near.joined(k) and ns - near.start(k) <= LONG_STRETCH:
            k -= 1
        left: i64 = ns - near.start(k)
        k = k1
        while k < n and near.joined(k) and near.start(k) - ne <= LONG_STRETCH:
            k += 1
        right: i64 = near.start(k) - ne
        if head == len(new):  # no white space in it: one stretch from cut to cut
            return left + head + right > LONG_STRETCH
        return left + head > LONG_STRETCH or tail + right > LONG_STRETCH or widest > LONG_STRETCH

    def _cut_before(self, w: Window, a: i64) -> bool:
        """Normalized offset a, an old token boundary, is also a cut of the new text."""
        reach: i64 = self.reach
        cuts = self.cuts
        if cuts is None or reach == 0:
            return True
        if not w.move_right:
            # Document tokens from a on are reused for a selection ending at b_fixed: no cut
            # there may depend on text past the selection's end.
            return a + reach - 1 <= w.b_fixed
        if w.ns != NO_EDIT and a + reach - 1 <= w.ns:
            return True
        # Cut again from a token boundary far enough before a that no cut before it reaches a.
        base_pos: i64 = a - reach
        start: i64 = 0
        if base_pos > 0:
            start = self.toks.start(self.toks.at(base_pos))
        text = self.norm.slice(start, a + reach)
        return cuts.lands_on(text, 0, a - start)

    def _cut_after(self, text: str, end_norm: i64, run: TokenRun) -> bool:
        """The window's end (normalized offset end_norm) is a cut of the whole text: cut again
        from the window's last token boundary at least `reach` before its end, reading the text
        that follows the window."""
        reach: i64 = self.reach
        cuts = self.cuts
        if cuts is None or reach == 0:
            return True
        end: i64 = len(text)
        p: i64 = 0
        lens = run.lens
        i: i64 = 0
        while i < len(lens) and p + i64(lens[i]) <= end - reach:
            p += i64(lens[i])
            i += 1
        probe = text[p:end] + self.norm.slice(end_norm, end_norm + reach)
        return cuts.lands_on(probe, 0, end - p)


def words_at_ends(text: str) -> tuple[i64, i64, i64]:
    """Characters of text's first and last runs without white space (0 where it starts or ends
    with white space) and of its longest: all len(text) when it has none."""
    words = text.split()
    if not words:
        return 0, 0, 0
    head: i64 = 0 if text[0].isspace() else len(words[0])
    tail: i64 = 0 if text[-1].isspace() else len(words[-1])
    widest: i64 = 0
    for word in words:
        widest = max(widest, len(word))
    return head, tail, widest
