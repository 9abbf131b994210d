"""An edit inside a long word, for families whose words are each encoded alone and whose long
words are one token whatever their characters: WordPiece's past max_input_chars_per_word (the
unknown token), WordLevel's past its longest vocabulary word (the unknown token too).

Re-encoding such a word is as long as the word (a line of a megabyte without a break is one
word). The family's `LongWords` rule reads a bounded stretch of the new text around the edit,
inside the one old token the edit lies in, and tells whether the new text there still holds one
word that is long enough to be one token; that token then replaces the old one, its length moved
by the edit, and the tokens either side stay (their edges are the old word's, decided by
characters the edit did not touch).
"""

from __future__ import annotations

from librt.vecs import append, vec
from mypy_extensions import i32, i64, u8

from tokenline.core.family import Family
from tokenline.core.normalization import Normalization
from tokenline.core.symboledges import CutTest, SymbolEdges
from tokenline.core.tokens import TokenRun, TokenStore
from tokenline.core.window import NO_EDIT, Neighborhood, Stats, Window


class LongWords:
    """What a family says of the new text around an edit inside one old token, a whole word
    (the token starts a word and the next token starts the next one)."""

    # Characters of new text read on each side of the edit, inside the old token.
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

    def clean(self, text: str) -> bool:
        """Whether no added token's text occurs in `text` (new text from added_reach - 1 before
        the edit to as far past it)."""
        raise NotImplementedError

    def flag(self, token_id: i64) -> i64:
        """The join flags of a word's single token."""
        return 0


class LongWordEdges(SymbolEdges):
    """SymbolEdges, with an edit inside a long word settled from a bounded read (LongWords)."""

    rule: LongWords
    # The old token the current edit lies inside that stays one token (-1: none), its new id
    # and length.
    word_k: i64
    word_id: i64
    word_len: i64

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
        self.word_k = -1
        self.word_id = 0
        self.word_len = 0

    def begin(self, w: Window, near: Neighborhood, ne_new: i64) -> None:
        self.word_k = -1
        k: i64 = w.kl
        if w.kr != k + 1 or k + 1 > self.toks.size() or near.joined(k):
            return
        # Strictly inside the token: the characters that decide its two edges are old ones.
        s: i64 = near.start(k)
        e: i64 = near.start(k + 1)
        if not (s < w.ns and w.ne_old < e):
            return
        rule = self.rule
        end: i64 = e + w.delta
        lo: i64 = max(s, w.ns - rule.reach)
        hi: i64 = min(end, ne_new + rule.reach)
        reach: i64 = rule.added_reach - 1
        around = self.norm.slice(max(0, w.ns - reach), min(self.norm.length(), ne_new + reach))
        self.stats.scanned_chars += hi - lo + len(around)
        if not rule.clean(around):
            return
        text = self.norm.slice(lo, hi)
        found: i64 = rule.long_word(text, w.ns - lo, ne_new - lo, lo == s, hi == end)
        if found >= 0:
            self.word_k = k
            self.word_id = found
            self.word_len = end - s

    def attempt(
        self, w: Window, near: Neighborhood, wl: i64, wr: i64, a: i64, b: i64
    ) -> tuple[TokenRun | None, bool, bool]:
        k: i64 = self.word_k
        if w.ns == NO_EDIT or k < wl or k >= wr:
            return super().attempt(w, near, wl, wr, a, b)
        # The old tokens either side, then the word's one token.
        kept: bool = self.family.keeps_joins
        ids = vec[i32](capacity=wr - wl)
        lens = vec[i32](capacity=wr - wl)
        joins = vec[u8]()
        i: i64 = wl
        while i < wr:
            same: bool = i != k
            ids = append(ids, i32(near.id(i) if same else self.word_id))
            lens = append(lens, i32(near.length(i) if same else self.word_len))
            if kept:
                joins = append(joins, u8(near.flag(i) if same else self.rule.flag(self.word_id)))
            i += 1
        w.read_lo = a
        w.read_hi = b
        return TokenRun(ids, lens, joins), True, True
