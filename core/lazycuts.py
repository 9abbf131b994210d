"""Lazy cuts (`lazy_cuts`): a document of a pre-tokenizing family opens from one encode by the
reference library, every token JOIN_UNKNOWN; `know` finds the pre-token starts of a stretch by
scanning from a place that is a cut whatever precedes it (`sync_in`), around each edit and
selection end, and `prepare` walks the rest in slices. An edit with sure cuts near it on both
sides needs none of that: the new text from one to the other is encoded alone
(PreTokenEdges.direct), whose scan finds the new tokens' pre-token starts. A window that reaches
tokens still unknown widens past them (`before_widen`). Inside a long run of letters an edit marks
its neighbours without a scan (tokenline.core.pretokenflags.mark_run), or learns them by a scan
from inside the run (tokenline.core.runcuts), never from the run's start.
"""

from __future__ import annotations

from typing import Final

from mypy_extensions import i64

from tokenline.core.normalization import Normalization
from tokenline.core.pretokenfamily import PreTokenRules
from tokenline.core.pretokenflags import (
    INNER_PRETOKEN_CHARS,
    RUN_KNOW,
    continue_first,
    forget_marks,
    mark_run,
)
from tokenline.core.runcuts import RUN_FAR
from tokenline.core.segments import CACHED_SEGMENT_CHARS
from tokenline.core.tokens import JOIN_UNKNOWN, TokenStore
from tokenline.core.window import NO_EDIT, Edges, Neighborhood, Stats, Window

# Characters on each side of a selection end whose pre-token starts are found before the window
# loop runs (lazy_cuts); and read past the last sure cut when finding them: the cut is one
# whatever follows its first character, and the pre-token that starts there needs one more
# character to show it starts there (more only scanned and thrown away: 64 cost a cold edit
# 2 µs).
KNOW_MARGIN: Final = 1024
KNOW_AHEAD: Final = 8
# The same on each side of an edit: most windows fit (an English word or two); one that reaches
# past learns more (`before_widen`), so the first edit in an untouched part scans about what its
# window reads (64 scanned three times what most windows read: a cold edit cost 2x a prepared one).
EDIT_KNOW: Final = 16
ALL_KNOWN: Final = 1 << 62
# Characters searched on each side of an edit in text not yet prepared for a sure cut: with one
# on each side, the edit is settled from one to the other in one encode (PreTokenEdges.direct),
# learning nothing first (learning, then a window, scanned the same text twice: a cold edit cost
# 1.7x a prepared one).
DIRECT_REACH: Final = 128
# Kept characters (beside the edit, out to the sure cuts) up to which an edit in text not all
# ASCII is still settled that way: a Japanese clause is one pre-token, which the direct encode
# gives the library's BPE whole (about 3 bytes a character, quadratic), where the window loop
# uses the edges inside it (INNER_WIDE_CHARS) and encodes a few characters.
DIRECT_WIDE_CHARS: Final = 32
# The most old characters an edit inside a run of letters replaces whose tokens are learned by a
# scan from inside the run (_know_inside_run).
RUN_EDIT_CHARS: Final = 1024
# A side of such an edit inside the run, or neither inside it nor near a sure cut.
INSIDE: Final = -1
NO_SIDE: Final = -2


def lower_letters(text: str) -> bool:
    """Whether text is lower-case ASCII letters (no pattern cuts inside a run of them)."""
    return text.isascii() and text.isalpha() and text.islower()


class LazyCuts(Edges):
    """Which old tokens start a pre-token, found late (lazy_cuts) around edits and selection
    ends and in idle slices; for one document. PreTokenEdges proves window edges on top."""

    family: PreTokenRules
    norm: Normalization
    toks: TokenStore
    stats: Stats
    # Normalized offset up to which pre-token starts have been found ahead of edits (lazy_cuts).
    known_upto: i64
    # Around the edit being settled, old tokens [edit_k0, edit_k1] (normalized old offsets
    # [edit_lo, edit_hi], both sure cuts) know whether they start a pre-token (±ALL_KNOWN: all).
    edit_k0: i64
    edit_k1: i64
    edit_lo: i64
    edit_hi: i64
    # Whether edit_lo / edit_hi are token starts inside a long run of letters (_know_inside_run)
    # rather than sure cuts.
    lo_inside: bool
    hi_inside: bool
    # Sure cuts (old normalized offsets) either side of the edit being made, from which the
    # edit is settled at once (`direct`); -1: none, the window loop settles it.
    direct_lo: i64
    direct_hi: i64
    # Whether the stretch learned around the edit being made kept some tokens unknown.
    untrusted: bool

    def __init__(
        self, family: PreTokenRules, norm: Normalization, toks: TokenStore, stats: Stats
    ) -> None:
        self.family = family
        self.norm = norm
        self.toks = toks
        self.stats = stats
        self.known_upto = 0
        self.edit_k0 = 0
        self.edit_k1 = 0
        self.edit_lo = 0
        self.edit_hi = 0
        self.lo_inside = False
        self.hi_inside = False
        self.direct_lo = -1
        self.direct_hi = -1
        self.untrusted = False

    def reloaded(self) -> None:
        self.known_upto = 0  # a lazy family's tokens come back with pre-token starts unknown

    def know(self, lo: i64, hi: i64) -> None:
        """Finds which tokens start a pre-token between normalized offsets lo and hi, scanning
        from a cut before lo that needs no context to a cut after hi. Call it while the tokens
        match the text (before an edit)."""
        if not self.family.lazy_cuts or hi <= self.known_upto:
            return
        total: i64 = self.norm.length()
        if self._all_known(max(0, lo), min(total, hi)):
            return  # found before (a window's tokens, an earlier edit's stretch)
        s: i64 = self._sync(max(0, lo), True, 0)
        e: i64 = self._sync(min(total, hi), False, 0)
        self._learn(s, e, 0, total, False)

    def _learn(
        self, s: i64, e: i64, shift: i64, limit: i64, inside: bool, ahead: i64 = KNOW_AHEAD
    ) -> bool:
        """Finds which old tokens from sure cut s to sure cut e (old normalized offsets; the
        token at e included) start a pre-token. Their text is the current text at offsets
        `shift` further on, read up to `limit` at most (past e: what an edit left as it was).
        `inside`: s is no cut but a token start inside a run of letters (_know_inside_run),
        where the pattern cuts as from the run's start, but its first pre-token continues a
        long one. True when the scan left some unknown (near a character newer than our
        tables, which only the library decides)."""
        toks = self.toks
        k0: i64 = toks.at(s)
        k1: i64 = toks.at(e)
        if k1 < toks.size():
            k1 += 1  # e is a cut: the token starting there starts a pre-token
        if k0 >= k1:
            return False
        _, lens, joins, _ = toks.window(k0, k1)
        unknown: bool = False
        for j in joins:
            if (j & JOIN_UNKNOWN) != 0:
                unknown = True
                break
        if unknown:
            # Reading `ahead` past e: cuts up to e depend on at most a few characters there.
            text = self.norm.slice(s + shift, min(limit, e + shift + ahead))
            self.stats.scanned_chars += len(text)
            found = self.family.pretoken_joins(text, lens, joins)
            if inside:
                continue_first(found)
            toks.set_joins(k0, found)
            for j in found:
                if (j & JOIN_UNKNOWN) != 0:
                    return True
        return False

    def prepare(self, budget: i64) -> bool:
        total: i64 = self.norm.length()
        if not self.family.lazy_cuts or self.known_upto >= total:
            return False
        start: i64 = self.known_upto
        self.know(start, start + budget)
        self.known_upto = self._sync(min(total, start + budget), False, 0)
        return self.known_upto < total

    def _all_known(self, lo: i64, hi: i64) -> bool:
        """Whether every token over normalized [lo, hi) knows if it starts a pre-token."""
        toks = self.toks
        _, _, joins, _ = toks.window(toks.at(lo), toks.at(hi) + 1)
        i: i64 = 0
        while i < len(joins):
            if (joins[i] & JOIN_UNKNOWN) != 0:
                return False
            i += 1
        return True

    def _sync(self, pos: i64, down: bool, shift: i64, span: i64 = KNOW_MARGIN) -> i64:
        return sure_cut(self.family, self.norm, pos, down, shift, span)

    def before_edit(self, start: i64, end: i64) -> None:
        toks = self.toks
        self.edit_k0 = -ALL_KNOWN
        self.edit_k1 = ALL_KNOWN
        self.lo_inside = False
        self.hi_inside = False
        self.direct_lo = -1
        self.untrusted = False
        if not self.family.lazy_cuts:
            return
        norm = self.norm
        total: i64 = norm.length()
        if self.known_upto >= total:
            return  # every token knows (prepared)
        ns: i64 = norm.to_norm(start)
        ne: i64 = norm.to_norm(end)
        s, e, ascii_kept = near_cuts(self.family, norm, ns, ne)
        kept: i64 = (ns - s) + (e - ne)
        if (
            s >= 0
            and e >= 0
            and kept <= CACHED_SEGMENT_CHARS
            and (kept <= DIRECT_WIDE_CHARS or ascii_kept)
        ):
            self.direct_lo = s
            self.direct_hi = e
            return
        if s < 0 or e < 0:
            if self._know_inside_run(ns, ne, s, e):
                return
            s = self._sync(max(0, ns - EDIT_KNOW), True, 0, 2 * EDIT_KNOW)
            e = self._sync(min(total, ne + EDIT_KNOW), False, 0, 2 * EDIT_KNOW)
        # A pre-token longer than the cache keeps, or no sure cut near: the window loop settles
        # the edit (within a long pre-token, a window of a part of it), its old tokens learned.
        # Tokens left unknown near the edit: no window edge there, nor in the text not yet
        # learned beyond; the stretch is the library's to encode (PreTokenEdges.direct).
        self.untrusted = self._learn(s, e, 0, total, False)
        self.edit_lo = s
        self.edit_hi = e
        self.edit_k0 = toks.at(s)
        self.edit_k1 = toks.at(e)

    def _know_inside_run(self, ns: i64, ne: i64, s: i64, e: i64) -> bool:
        """An edit in text not yet prepared with a side far inside a run of lower-case ASCII
        letters (old [ns, ne) aside), the other side too or a sure cut near (s, e: those
        near_cuts found, -1 for none): its tokens are marked as continuing a long pre-token
        without a scan back to the run's start (pretokenflags.mark_run; the first edit inside a
        1 MB run took 27 ms), or, when the text it replaces is not such letters (a space typed
        there before) or a side has a cut, learned by a scan from inside the run (or the cut) to
        inside the run after it (or the cut): it cuts there as the whole text's scan does
        (tokenline.core.runcuts)."""
        fam = self.family
        if fam.run_class == 0 or fam.added_ids or ne - ns > RUN_EDIT_CHARS:
            return False  # added tokens may cut letter runs
        reach: i64 = RUN_KNOW + fam.longest_token
        s = self._run_side(ns, s, reach, True)
        e = self._run_side(ne, e, reach, False)
        if s == NO_SIDE or e == NO_SIDE or (s >= 0 and e >= 0):
            return False
        toks = self.toks
        norm = self.norm
        if s < 0 and e < 0 and (ns == ne or lower_letters(norm.slice(ns, ne))):
            self.edit_k0, self.edit_k1 = mark_run(toks, ns - reach, ne + reach)
        else:
            # A side inside a run from a token start RUN_FAR into it (on the right, what _learn
            # reads past it too).
            self.edit_k0 = toks.at(ns - reach + RUN_FAR) + 1 if s < 0 else toks.at(s)
            self.edit_k1 = toks.at(ne + reach - RUN_FAR - KNOW_AHEAD) if e < 0 else toks.at(e)
            first: i64 = toks.start(self.edit_k0)
            self._learn(first, toks.start(self.edit_k1), 0, norm.length(), s < 0)
        self.edit_lo = toks.start(self.edit_k0)
        self.edit_hi = toks.start(self.edit_k1)
        self.lo_inside = s < 0
        self.hi_inside = e < 0
        return True

    def _run_side(self, at: i64, cut: i64, reach: i64, left: bool) -> i64:
        """One side of an edit at `at` (its start, or its old end): `cut` if that is a sure cut,
        INSIDE when the side's `reach` characters are lower-case ASCII letters (in text not
        known yet), else a sure cut within them, else NO_SIDE."""
        if cut >= 0:
            return cut
        norm = self.norm
        total: i64 = norm.length()
        if left:
            lo: i64 = at - reach
            # Each side's next character is asked first: most edits are not in such a run.
            inside: bool = lo > self.known_upto and lower_letters(norm.slice(at - 1, at))
            if inside and lower_letters(norm.slice(lo, at)):
                return INSIDE
            lo = max(0, lo)
            found: i64 = self.family.near_sync(norm.slice(lo, at), True)
            return lo + found if found >= 0 else (0 if lo == 0 else NO_SIDE)
        hi: i64 = at + reach
        if (
            hi < total
            and lower_letters(norm.slice(at, at + 1))
            and lower_letters(norm.slice(at, hi))
        ):
            return INSIDE
        hi = min(total, hi)
        found = self.family.near_sync(norm.slice(at, hi), False)
        return at + found if found >= 0 else (total if hi == total else NO_SIDE)

    def _leave_run(self, w: Window, near: Neighborhood, left: bool, right: bool) -> None:
        """Finds the true start (`left`) or end (`right`) of a marked run's pre-token, for a
        window that reads from or to it."""
        learned: bool = False
        while left and self.lo_inside:
            self._learn_left(w)
            learned = True
        while right and self.hi_inside:
            self._learn_right(w)
            learned = True
        if learned:
            near.refresh()

    def _learn_left(self, w: Window) -> None:
        """Old tokens twice as far left learn whether they start a pre-token (from text the edit
        left as it was); edit_lo becomes a sure cut."""
        span: i64 = max(2 * EDIT_KNOW, 2 * (w.ns - self.edit_lo))
        s: i64 = self._sync(max(0, self.edit_lo - span), True, 0, span)
        # Inside a run, edit_lo lies RUN_KNOW letters before the edit: scanned so far, its token
        # continues a pre-token longer than INNER_PRETOKEN_CHARS (ASCII letters), as it does.
        ahead: i64 = INNER_PRETOKEN_CHARS if self.lo_inside else KNOW_AHEAD
        self._learn(s, self.edit_lo, 0, w.ns, False, ahead)
        self.edit_lo = s
        self.edit_k0 = self.toks.at(s)
        self.lo_inside = False

    def _learn_right(self, w: Window) -> None:
        old_total: i64 = self.norm.length() - w.delta
        span: i64 = max(2 * EDIT_KNOW, 2 * (self.edit_hi - w.ne_old))
        e: i64 = self._sync(min(old_total, self.edit_hi + span), False, w.delta, span)
        self._learn(self.edit_hi, e, w.delta, self.norm.length(), self.hi_inside)
        self.edit_hi = e
        self.edit_k1 = self.toks.at(e)
        self.hi_inside = False

    def settled(self, w: Window) -> None:
        """After an edit inside a run: its marks, which stand on no sure cut, are forgotten."""
        if not (self.lo_inside or self.hi_inside):
            return
        toks = self.toks
        grown: i64 = w.out.size() - (w.wr - w.wl)
        k0: i64 = min(self.edit_k0, w.wl)
        # Tokens before known_upto keep what they know (one side may have been learned to there).
        first: i64 = toks.at(self.known_upto)
        if first < toks.size() and toks.start(first) < self.known_upto:
            first += 1
        k1: i64 = max(self.edit_k1 + 1, w.wr) + grown
        if max(k0, first) < k1:
            forget_marks(toks, max(k0, first), k1)

    def before_widen(self, w: Window, near: Neighborhood, lo_k: i64, hi_k: i64) -> None:
        """Before a window's edges move to old tokens lo_k and hi_k: the tokens out to there
        learn whether they start a pre-token (an edge never stops at one still unknown), in
        stretches twice as long each time, from text the edit left as it was."""
        if w.ns == NO_EDIT or (lo_k >= self.edit_k0 and hi_k <= self.edit_k1):
            return
        learned: bool = False
        while w.move_left and lo_k < self.edit_k0 and self.edit_lo > 0:
            self._learn_left(w)
            learned = True
        old_total: i64 = self.norm.length() - w.delta
        while w.move_right and hi_k > self.edit_k1 and self.edit_hi < old_total:
            self._learn_right(w)
            learned = True
        if learned:
            near.refresh()

    def edited(self, ns: i64, ne_old: i64, ne_new: i64) -> None:
        total: i64 = self.norm.length()
        if self.known_upto >= total - (ne_new - ne_old):
            # Every token knew, and the window's new ones do: so does text typed at the end.
            self.known_upto = total
        elif ns < self.known_upto:
            self.known_upto = max(ns, self.known_upto + ne_new - ne_old)


def near_cuts(fam: PreTokenRules, norm: Normalization, ns: i64, ne: i64) -> tuple[i64, i64, bool]:
    """Sure cuts within DIRECT_REACH before and after old [ns, ne), each decided by characters
    the edit leaves as they are (the two either side of it: near_sync), so that they stay cuts
    in the new text; -1 for one that lies further. And whether the text from them to the edit
    is all ASCII."""
    if fam.added_ids:
        return -1, -1, True  # added tokens are matched before the pattern cuts
    total: i64 = norm.length()
    lo: i64 = max(0, ns - DIRECT_REACH)
    hi: i64 = min(total, ne + DIRECT_REACH)
    left = norm.slice(lo, ns)
    before: i64 = fam.near_sync(left, True)
    s: i64 = lo + before if before >= 0 else (0 if lo == 0 else -1)
    right = norm.slice(ne, hi)
    after: i64 = fam.near_sync(right, False)
    e: i64 = ne + after if after >= 0 else (total if hi == total else -1)
    kept_right = right[:after] if after >= 0 else right
    return s, e, left[max(0, before) :].isascii() and kept_right.isascii()


def sure_cut(
    family: PreTokenRules, norm: Normalization, pos: i64, down: bool, shift: i64, span: i64
) -> i64:
    """A surely-cut offset at or before pos (down) or at or after it, else 0 or the end; old
    offsets, whose text is the current text `shift` further on. The search reads `span`
    characters first, twice as many each time that finds none."""
    total: i64 = norm.length() - shift
    while True:
        if down:
            if pos <= 0:
                return 0
            a: i64 = max(0, pos - span)
            found: i64 = family.sync_in(norm.slice(a + shift, pos + 1 + shift), True)
            if found >= 0:
                return a + found
            if a == 0:
                return 0
        else:
            if pos >= total:
                return total
            b: i64 = min(total, pos + span)
            lo: i64 = pos - 1 if pos > 0 else 0
            found = family.sync_in(norm.slice(lo + shift, b + shift), False)
            if found >= 0:
                return lo + found
            if b == total:
                return total
        span *= 2
