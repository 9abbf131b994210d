"""Edits at and around long words, for families whose words are each encoded alone and whose
long words are one token whatever their characters: WordPiece's past max_input_chars_per_word
(the unknown token), WordLevel's past its longest vocabulary word (the unknown token too).

Re-encoding such a word is as long as the word (a line of a megabyte without a break is one
word). An edit inside one old token is settled first as before: the family's `LongWords` rule
reads a bounded stretch of the new text around the edit, inside that token, and tells whether it
still holds one word long enough to be one token; that token then replaces the old one, its
length moved by the edit, and the tokens either side stay.

Any other edit near a long token (one that splits a long word with white space or punctuation,
joins two, or adds a short word at one's edge) reads `reach` characters of new text on each side
of the edit, widened to the starts and ends of the short old tokens it meets. Where the read
starts or ends inside a long old token (a whole one, one word), that side is open: the read's
first (or last) word continues through unread old characters to the old token's start (or end),
and the rule must show from the read alone that this word is long enough to be the one token it
is whatever its unread length. The read is encoded by the family, and its outer tokens stretched
over the unread characters; a side that is not open is an old token boundary, which the rule
shows is still a cut of the new text, from old characters the read holds. The old tokens beyond
stay.
"""

from __future__ import annotations

from typing import Final

from librt.vecs import append, vec
from mypy_extensions import i32, i64, u8

from tokenline.core.family import Family
from tokenline.core.normalization import Normalization
from tokenline.core.symboledges import CutTest, SymbolEdges
from tokenline.core.tokens import JOIN_EDGE, TokenRun, TokenStore, continues
from tokenline.core.window import NO_EDIT, Neighborhood, Stats, Window

# What a side of a read stretch is (LongWords.fits): inside a long old token whose word
# continues through unread characters, an old token boundary, or the text's start or end.
OPEN: Final = 0
CUT: Final = 1
EDGE: Final = 2
# Old tokens longer than LONG_READS reaches are read into, not whole; a side whose read would
# reach further than FAR_READS reaches from the edit (a long gap of white space) is not settled
# this way.
LONG_READS: Final = 2
FAR_READS: Final = 4


class LongWords:
    """What a family says of the new text around an edit near long words."""

    # Characters of new text read on each side of the edit.
    reach: i64
    # How far an added token's match may reach (the longest one's length; at least 1).
    added_reach: i64

    def __init__(self, reach: i64, added_reach: i64) -> None:
        self.reach = reach
        self.added_reach = max(1, added_reach)

    def long_word(self, text: str, at: i64, upto: i64, first: bool, last: bool) -> i64:
        """The id of the one token the new word around an edit is, or -1 when that is not
        proven. `text` is the new text read (inside the old token), text[at:upto] what the
        edit put there, with old characters on both sides; `first` and `last`: text starts
        where the token starts, ends where it ends."""
        raise NotImplementedError

    def fits(self, text: str, at: i64, upto: i64, first: i64, last: i64, run: TokenRun) -> bool:
        """Whether `run`, the family's tokens of `text` (new text read around an edit at
        text[at:upto]) is the whole text's there: each side of text is OPEN (its outer token
        then continues through unread old characters of one old token, a long word's), CUT (an
        old token boundary, which must still be a cut) or EDGE (the text's start or end)."""
        raise NotImplementedError

    def clean(self, text: str) -> bool:
        """Whether no added token's text occurs in `text` (new text from added_reach - 1 before
        what was read to as far past it)."""
        raise NotImplementedError

    def flag(self, token_id: i64) -> i64:
        """The join flags of a word's single token."""
        return 0


class LongWordEdges(SymbolEdges):
    """SymbolEdges, with edits near long words settled from a bounded read (LongWords)."""

    rule: LongWords
    # Old tokens [span_lo, span_hi) that the current edit's tokens replace (span_lo < 0: none,
    # the window loop decides), and those tokens.
    span_lo: i64
    span_hi: i64
    span: TokenRun

    def __init__(
        self,
        family: Family,
        norm: Normalization,
        toks: TokenStore,
        stats: Stats,
        cuts: CutTest | None,
        by_cuts: bool,
        rule: LongWords,
    ) -> None:
        super().__init__(family, norm, toks, stats, cuts, by_cuts)
        self.rule = rule
        self.span_lo = -1
        self.span_hi = -1
        self.span = TokenRun(vec[i32](), vec[i32](), vec[u8]())

    def begin(self, w: Window, near: Neighborhood, ne_new: i64) -> None:
        self.span_lo = -1
        if not self._inside(w, near, ne_new):
            self._around(w, ne_new)
        if self.span_lo >= 0:
            # The window's first try covers the span.
            w.reach_l = self.span_lo
            w.reach_r = self.span_hi

    def _inside(self, w: Window, near: Neighborhood, ne_new: i64) -> bool:
        """An edit strictly inside one old token that stays one token (the rule's long_word)."""
        k: i64 = w.kl
        if w.kr != k + 1 or k + 1 > self.toks.size() or near.joined(k):
            return False
        # Strictly inside the token: the characters that decide its two edges are old ones.
        s: i64 = near.start(k)
        e: i64 = near.start(k + 1)
        if not (s < w.ns and w.ne_old < e):
            return False
        rule = self.rule
        end: i64 = e + w.delta
        lo: i64 = max(s, w.ns - rule.reach)
        hi: i64 = min(end, ne_new + rule.reach)
        reach: i64 = rule.added_reach - 1
        around = self.norm.slice(max(0, w.ns - reach), min(self.norm.length(), ne_new + reach))
        self.stats.scanned_chars += hi - lo + len(around)
        if not rule.clean(around):
            return False
        text = self.norm.slice(lo, hi)
        found: i64 = rule.long_word(text, w.ns - lo, ne_new - lo, lo == s, hi == end)
        if found < 0:
            return False
        kept: bool = self.family.keeps_joins
        joins = vec[u8]()
        if kept:
            joins = append(joins, u8(rule.flag(found)))
        ids = append(vec[i32](), i32(found))
        lens = append(vec[i32](), i32(end - s))
        self._take(k, k + 1, TokenRun(ids, lens, joins))
        return True

    def _around(self, w: Window, ne_new: i64) -> None:
        """An edit near a long old token: the read around it, open where it ends inside one."""
        toks = self.toks
        n: i64 = toks.size()
        reach: i64 = self.rule.reach
        if not (self._in_long(w.ns - reach) or self._in_long(w.ne_old + reach)):
            return  # most edits: no long token where the read would end
        lo_k, lo, first = self._left_side(w.ns - reach)
        hi_k, hi, last = self._right_side(w.ne_old + reach)
        if lo_k < 0 or hi_k < 0 or (first != OPEN and last != OPEN):
            return
        if w.ns - lo > FAR_READS * reach or hi - w.ne_old > FAR_READS * reach:
            return
        s: i64 = toks.start(lo_k)
        e: i64 = toks.start(hi_k) if hi_k < n else toks.total_length()
        delta: i64 = w.delta
        margin: i64 = self.rule.added_reach - 1
        total: i64 = self.norm.length()
        around = self.norm.slice(max(0, lo - margin), min(total, hi + delta + margin))
        self.stats.scanned_chars += len(around)
        if not self.rule.clean(around):
            return
        text = self.norm.slice(lo, hi + delta)
        self.stats.encoded(len(text))
        run = self.family.tokens(text, True)
        if run.size() == 0 or run.total() != len(text):
            return
        if not self.rule.fits(text, w.ns - lo, ne_new - lo, first, last, run):
            return
        if first == OPEN:
            run.lens[0] = run.lens[0] + i32(lo - s)
        if last == OPEN:
            last_i: i64 = run.size() - 1
            run.lens[last_i] = run.lens[last_i] + i32(e - hi)
        self._take(lo_k, hi_k, run)

    def _in_long(self, at: i64) -> bool:
        """Whether old normalized offset `at` lies inside a token read into, not whole."""
        toks = self.toks
        if at <= 0 or at >= toks.total_length():
            return False
        k: i64 = toks.at(at)
        return toks.start(k) < at and toks.length(k) > LONG_READS * self.rule.reach

    def _left_side(self, at: i64) -> tuple[i64, i64, i64]:
        """Where a read that should start near normalized offset `at` starts: (the first old
        token it touches, the offset, OPEN / CUT / EDGE), or a negative token when it would
        start inside a long token that is not a word's only one."""
        toks = self.toks
        if at <= 0:
            return 0, 0, EDGE
        k: i64 = toks.at(at)
        _ids, lens, joins, s = toks.window(k, k + 2)
        if s < at and i64(lens[0]) > LONG_READS * self.rule.reach:
            if not self._whole(k, lens, joins):
                return -1, 0, CUT
            # Inside a long token: read at least `reach` of its end.
            return k, min(at, s + i64(lens[0]) - self.rule.reach), OPEN
        k = self._word_down(k)
        return k, toks.start(k), (CUT if k > 0 else EDGE)

    def _right_side(self, at: i64) -> tuple[i64, i64, i64]:
        """Where a read that should end near old normalized offset `at` ends: (the first old
        token after it, the offset, OPEN / CUT / EDGE), or a negative token as _left_side."""
        toks = self.toks
        n: i64 = toks.size()
        total: i64 = toks.total_length()
        if at >= total:
            return n, total, EDGE
        k: i64 = toks.at(at)
        _ids, lens, joins, s = toks.window(k, k + 2)
        if s < at:
            if i64(lens[0]) > LONG_READS * self.rule.reach:
                if not self._whole(k, lens, joins):
                    return -1, 0, CUT
                # Inside a long token: read at least `reach` of its start.
                return k + 1, max(at, s + self.rule.reach), OPEN
            k += 1
        k = self._word_up(k)
        if k >= n:
            return n, total, EDGE
        return k, toks.start(k), CUT

    def _whole(self, k: i64, lens: vec[i32], joins: vec[u8]) -> bool:
        """Old token k (lens and joins from k on) is one word's only token."""
        kept: bool = self.family.keeps_joins and len(joins) > 0
        if k > 0 and continues(kept, i64(joins[0]) if kept else 0, i64(lens[0]), JOIN_EDGE):
            return False
        if len(lens) < 2:
            return True
        return not continues(kept, i64(joins[1]) if kept else 0, i64(lens[1]), JOIN_EDGE)

    def _word_down(self, k: i64) -> i64:
        """k moved down to the first token of its word."""
        toks = self.toks
        kept: bool = self.family.keeps_joins
        while k > 0 and continues(kept, toks.flag(k), toks.length(k), JOIN_EDGE):
            k -= 1
        return k

    def _word_up(self, k: i64) -> i64:
        """k moved up to the first token of a word (size() at the end)."""
        toks = self.toks
        kept: bool = self.family.keeps_joins
        n: i64 = toks.size()
        while k < n and continues(kept, toks.flag(k), toks.length(k), JOIN_EDGE):
            k += 1
        return k

    def _take(self, lo_k: i64, hi_k: i64, run: TokenRun) -> None:
        self.span_lo = lo_k
        self.span_hi = hi_k
        self.span = run

    def attempt(
        self, w: Window, near: Neighborhood, wl: i64, wr: i64, a: i64, b: i64
    ) -> tuple[TokenRun | None, bool, bool]:
        lo_k: i64 = self.span_lo
        hi_k: i64 = self.span_hi
        if w.ns == NO_EDIT or lo_k < wl or hi_k > wr or lo_k < 0:
            return super().attempt(w, near, wl, wr, a, b)
        w.read_lo = a
        w.read_hi = b
        # The old tokens before the span, its new ones, the old tokens after it.
        return near.around(wl, lo_k, self.span, hi_k, wr), True, True
