"""Window edges of families that pre-tokenize: a regex cuts the text into pre-tokens, then each is
encoded alone (tiktoken's encodings, Tekken, byte-level tokenizer.json files).

Tokens record whether they start a pre-token (JOIN_EDGE clear). A window edge at a pre-token start
holds when the new text still cuts there, which needs no token comparison: the old cut survives
when everything the scan read to decide it lies before the edit (`reach_after`), and the window's
end is a cut when the scan, read on past it, cuts there too; past that cut the old and new texts
are equal, so the scans are. Inside a long pre-token (pretokenflags.inner_edges), an edge
between tokens (JOIN_INNER) is Algorithm 3's, once the pre-token is shown to keep its start and end.

Lazy cuts (`lazy_cuts`: pre-token starts found late) are tokenline.core.lazycuts'.

Added tokens (matched by the library before it pre-tokenizes): windows are kept only when no added
token's text lies near what they read and no old added token lay there; otherwise the whole text
is encoded (an edit) or the selection alone.
"""

from __future__ import annotations

from mypy_extensions import i64

from tokenline.core.lazycuts import EDIT_KNOW, KNOW_MARGIN, LazyCuts
from tokenline.core.normalization import Normalization
from tokenline.core.pretokenfamily import FIRST_INSIDE, LAST_INSIDE, PreTokenRules
from tokenline.core.pretokenflags import (
    KeptText,
    in_pretoken,
    keeps_run,
    kept_right,
    next_pretoken,
    one_pretoken,
    pretoken_start,
    seed_known,
    short_now,
)
from tokenline.core.runcuts import run_places
from tokenline.core.tokens import JOIN_INNER, TokenRun, TokenStore, to_vec
from tokenline.core.window import (
    BY_LOOP,
    ENCODE_WHOLE,
    NO_EDIT,
    SETTLED,
    Edges,
    Neighborhood,
    Stats,
    Window,
)


class PreTokenEdges(LazyCuts):
    """Pre-token cuts prove window edges; for one document."""

    # The edit being settled lies inside a long pre-token that stays one (see _keeps_run).
    keeps_run: bool
    # Where the edit being settled left the text alone (for seed_known).
    kept: KeptText
    # Normalized characters from the start known to hold no added token's text (nor a character
    # the guard of newer ones watches): scanned in idle slices after the lazy cuts, kept in step
    # by edits; `added_seen` once some was found. A text known whole to hold none needs no guard
    # (its scan read 150 characters of a Japanese window per edit, 2 µs).
    added_upto: i64
    added_seen: bool

    def __init__(
        self, family: PreTokenRules, norm: Normalization, toks: TokenStore, stats: Stats
    ) -> None:
        super().__init__(family, norm, toks, stats)
        self.keeps_run = False
        self.kept = KeptText(0, 0, 0, 0)
        self.added_upto = 0
        self.added_seen = False

    # -- opening -----------------------------------------------------------------------------

    def opening(self, text: str) -> TokenRun | None:
        fam = self.family
        self.known_upto = 0
        self.added_upto = 0
        self.added_seen = False
        if not fam.lazy_cuts:
            return None
        self.stats.encoded(len(text))
        ids = fam.encode(text)
        lens, _ = fam.vocab.fixed_lengths(ids)
        return TokenRun(to_vec(ids), lens, fam.opening_joins(ids))

    def segmentable(self, text: str) -> bool:
        return self.family.clean(text)

    def reloaded(self) -> None:
        super().reloaded()
        self.added_upto = 0
        self.added_seen = False

    def prepare(self, budget: i64) -> bool:
        if super().prepare(budget):
            return True
        return self._scan_added(budget)

    def _scan_added(self, budget: i64) -> bool:
        """Reads about `budget` more characters for added tokens' text; True while more remain."""
        total: i64 = self.norm.length()
        if self.family.added_longest == 0 or self.added_seen or self.added_upto >= total:
            return False
        hi: i64 = min(total, self.added_upto + budget)
        lo: i64 = max(0, self.added_upto - self._added_context())
        if not self.family.clean(self.norm.slice(lo, hi)):
            self.added_seen = True
            return False
        self.added_upto = hi
        return hi < total

    def _added_context(self) -> i64:
        """Characters of the text on either side of a stretch that an added token in it may
        take (none for the guard of newer characters, which are single characters)."""
        fam = self.family
        return fam.added_longest - 1 if fam.added_ids else 0

    def _none_added(self) -> bool:
        """Whether the whole text is known to hold no added token's text."""
        return not self.added_seen and self.added_upto >= self.norm.length()

    def edited(self, ns: i64, ne_old: i64, ne_new: i64) -> None:
        super().edited(ns, ne_old, ne_new)
        if self.family.added_longest == 0 or self.added_seen:
            return
        context: i64 = self._added_context()
        if ne_new > ns or context > 0:
            lo: i64 = max(0, ns - context)
            text = self.norm.slice(lo, min(self.norm.length(), ne_new + context))
            if not self.family.clean(text):
                self.added_seen = True
                return
        # The new text was read just now: what lay scanned past the edit stays so (a scan that
        # stopped inside the old text goes on from the edit's start).
        if self.added_upto >= ne_old:
            self.added_upto += ne_new - ne_old
        else:
            self.added_upto = min(self.added_upto, ns)

    # -- edits -------------------------------------------------------------------------------

    def direct(self, ns: i64, ne_old: i64, ne_new: i64) -> i64:
        """An edit between sure cuts found before it (lazycuts.near_cuts): the new text
        from one to the other is cut and encoded alone, once, and its tokens replace the old
        ones there, their pre-token starts known from that scan (direct_edit)."""
        if self.untrusted and not self.family.added_ids:
            ok: bool = library_between(self, self.edit_lo, self.edit_hi, ne_new - ne_old)
            return SETTLED if ok else ENCODE_WHOLE
        if self.direct_lo < 0:
            return BY_LOOP
        return direct_edit(self, ne_new - ne_old)

    def guard_passes(self, lo: i64, hi: i64) -> bool:
        """Whether no added token's text (nor newer character) lies near new [lo, hi)."""
        fam = self.family
        return fam.added_longest == 0 or self._none_added() or not self._near_added(lo, hi)

    def bounded(self, w: Window) -> bool:
        """A window refused for a character only the library decides near it (no added token:
        sure cuts hold for the library too): the library encodes the new text between the
        nearest sure cuts either side of the edit, decided by characters it left alone."""
        fam = self.family
        if fam.added_ids or not fam.lazy_cuts or self.lo_inside or self.hi_inside:
            return False
        s: i64 = self._sync(w.ns - 1, True, 0, EDIT_KNOW)
        e: i64 = self._sync(w.ne_old + 1, False, w.delta, EDIT_KNOW)
        return library_between(self, s, e, w.delta)

    def begin(self, w: Window, near: Neighborhood, ne_new: i64) -> None:
        self.keeps_run = keeps_run(self.family, self.norm, near, w.ns, w.ne_old, ne_new)
        self.kept = KeptText(w.ns, w.ne_old, w.delta, 0)

    def accepts(self, w: Window, near: Neighborhood) -> bool:
        fam = self.family
        if fam.added_longest == 0 or self._none_added():
            return True
        if self._near_added(w.read_lo, w.read_hi):
            return False
        return not (fam.added_ids and old_added(fam, near, w.read_lo, w.read_hi - w.delta))

    def before_range(self, a: i64, b: i64) -> None:
        self.know(a - KNOW_MARGIN, a + KNOW_MARGIN)
        self.know(b - KNOW_MARGIN, b + KNOW_MARGIN)

    def accepts_range(self, left: Window, right: Window) -> bool:
        if self.family.added_longest == 0 or self._none_added():
            return True
        return not (
            self._near_added(left.read_lo, left.read_hi)
            or self._near_added(right.read_lo, right.read_hi)
        )

    def _near_added(self, lo: i64, hi: i64) -> bool:
        """Whether an added token's text may overlap normalized [lo, hi) of the current text.

        Pre-tokens are exact where none does: the library's added-token matches
        (leftmost-longest) away from it are the same in the old and new text, and the stretch it
        lies in is pre-tokenized as one string that reaches past all that the window read."""
        reach: i64 = self.family.added_longest - 1
        lo = max(0, lo - reach)
        hi = min(self.norm.length(), hi + reach)
        return lo < hi and not self.family.clean(self.norm.slice(lo, hi))

    # -- one try -----------------------------------------------------------------------------

    def attempt(
        self, w: Window, near: Neighborhood, wl: i64, wr: i64, a: i64, b: i64
    ) -> tuple[TokenRun | None, bool, bool]:
        """An edge at an old cut holds if the new text still cuts there: the left if what
        decided the cut lies before the edit, the right if the window, read on into the text
        after it, cuts at its end. An edge inside a long pre-token (JOIN_INNER) holds if the
        pre-token keeps its start and end and the window's edge symbol is the old one there
        (Algorithm 3 within it); the window is then cut from the pre-token's start."""
        ntok: i64 = self.toks.size()
        inner_l: bool = w.move_left and wl > 0 and (near.flag(wl) & JOIN_INNER) != 0
        inner_r: bool = w.move_right and wr < ntok and (near.flag(wr) & JOIN_INNER) != 0
        if w.ns == NO_EDIT and (inner_l or inner_r):
            return None, not inner_l, not inner_r  # selections widen to cuts
        one: bool = inner_l and inner_r and w.ns != NO_EDIT and self.keeps_run
        if one and one_pretoken(near, wl, wr):
            # Inside a pre-token that keeps its start and end: Algorithm 3's edges alone.
            part = self.family.inner_part(self.norm.slice(a, b))
            self.stats.encoded(b - a)
            w.read_lo = a
            w.read_hi = b
            return part, near.left_edge_holds(part, wl), near.right_edge_holds(part, wr)
        # Whole pre-tokens the edit left alone at the window's ends keep their old tokens.
        kl: i64 = self._kept_left(w, near, wl) if inner_l else -1
        kr: i64 = kept_right(near, w, wr, max(wl, kl)) if inner_r else -1
        wl2: i64 = kl if kl >= 0 else wl
        wr2: i64 = kr if kr >= 0 else wr
        a2: i64 = near.start(kl) if kl >= 0 else a
        b2: i64 = near.start(kr) + w.delta if kr >= 0 else b
        il: bool = kl < 0 and inner_l
        found, ok_l, ok_r = self._cut_window(w, near, wl2, wr2, a2, b2, il, kr < 0 and inner_r)
        if kr >= 0 and found is None:
            # The old cut before the right pre-token moved: try Algorithm 3's edge inside it.
            found, ok_l, ok_r = self._cut_window(w, near, wl2, wr, a2, b, il, True)
            wr2 = wr
        if found is not None and ok_l and ok_r and (wl2 != wl or wr2 != wr):
            found = near.around(wl, wl2, found, wr2, wr)
        return found, ok_l, ok_r

    def _kept_left(self, w: Window, near: Neighborhood, wl: i64) -> i64:
        """The first token after the pre-token holding old token wl, when that pre-token ends
        before the edit and its end stays a cut (so all before it does: what decided those cuts
        lies before the edit too); -1 otherwise. The window starts there instead, old tokens
        [wl, it) kept: no BPE of a part of the pre-token, no scan of it."""
        stop: i64 = min(w.kl, self.toks.size() - 1)
        k: i64 = wl + 1
        while k <= stop and in_pretoken(near, k):
            k += 1  # up to the edit's first token at most: a long pre-token is not walked
        if k > stop or near.flag(k) != 0:
            return -1
        c: i64 = near.start(k)
        return k if c < w.ns and self._cut_before(w, c) else -1

    def _cut_window(
        self,
        w: Window,
        near: Neighborhood,
        wl: i64,
        wr: i64,
        a: i64,
        b: i64,
        inner_l: bool,
        inner_r: bool,
    ) -> tuple[TokenRun | None, bool, bool]:
        """One try of the window [wl, wr) (normalized [a, b)) from the pre-token cuts its scan
        proves, Algorithm 3's edges inside a long pre-token where `inner_l` / `inner_r`: its
        scan starts at the pre-token's start, or at a place inside it that tokenline.core.runcuts
        proves, and reads to its end, or to such a place."""
        p, q = run_places(self.family, self.norm, near, w, wl, wr, a, b, inner_l, inner_r)
        # A run's end not yet known (an edit right after opening) is found when read from.
        self._leave_run(w, near, inner_l and p < 0, inner_r and q < 0)
        start: i64 = near.start(pretoken_start(near, wl)) if inner_l and p < 0 else a
        start = p if p >= 0 else start
        ok_l: bool = not w.move_left or wl == 0 or p >= 0 or self._cut_before(w, start)
        if not ok_l:  # known before encoding: widen the left alone, try the right with it
            return None, False, True
        limit: i64 = w.limit if w.limit >= 0 else self.norm.length()
        if not w.move_right:
            limit = b  # a selection's end: its text ends there
        end: i64 = b
        pretoken_end: i64 = -1
        if q >= 0:
            end = q
            pretoken_end = q - start
        elif inner_r:
            pretoken_end = near.start(next_pretoken(near, wr)) + w.delta
            end = min(limit, pretoken_end + self.family.ahead_chars)
            pretoken_end -= start
        elif w.move_right and wr < self.toks.size():
            end = min(limit, b + self.family.ahead_chars)
        self.stats.encoded(b - a)
        self.stats.scanned_chars += end - start
        w.read_lo = start
        w.read_hi = end
        # A selection's right window ends where the selection's text does.
        final: bool = end >= limit or not w.move_right
        text = self.norm.slice(start, b)
        if w.ns != NO_EDIT and not self.family.added_ids:
            self.kept.base = start
            seed_known(self.family.cache, near, wl, wr, self.kept, text)
        after = self._after(b, end, final or inner_r)
        inside: i64 = (FIRST_INSIDE if p >= 0 else 0) | (LAST_INSIDE if q >= 0 else 0)
        found = self.family.window(text, a - start, after, final, pretoken_end, inside)
        if found is None:
            return None, not inner_l, False
        if inner_l:
            ok_l = near.left_edge_holds(found, wl)
        ok_r: bool = not inner_r or near.right_edge_holds(found, wr)
        if (inner_l and not ok_l) or (inner_r and not ok_r):
            stop: i64 = pretoken_end + start if inner_r else b
            short_now(w, near, wl, wr, stop - start, inner_l, inner_r)
        return found, ok_l, ok_r

    def _after(self, b: i64, end: i64, whole: bool) -> str:
        """The text after a window, [b, end), that its scan reads: unless `whole` (the text's
        end, or the rest of a long pre-token), no further than what decides whether the window's
        end is a cut (a scan of fewer pre-tokens)."""
        after = self.norm.slice(b, end)
        if whole:
            return after
        reach: i64 = self.family.reach_after(after, char_before(self.norm, b))
        return after[:reach] if reach < len(after) else after

    def _cut_before(self, w: Window, a: i64) -> bool:
        """An old cut stays a cut while what decided it lies before the changed text (the edit,
        or the end of a selection encoded alone)."""
        limit: i64 = w.ns if w.move_right else w.b_fixed
        ahead: str = self.norm.slice(a, min(limit, a + self.family.ahead_chars))
        return a + self.family.reach_after(ahead, char_before(self.norm, a)) <= limit


def char_before(norm: Normalization, at: i64) -> str:
    """The character before normalized offset `at` ("" at the start), for reach_after."""
    return norm.slice(at - 1, at) if at > 0 else ""


def old_added(fam: PreTokenRules, near: Neighborhood, lo: i64, hi: i64) -> bool:
    """Whether an old token overlapping [lo, hi) (old offsets) is an added token: the old
    text matched one there, which may now be gone."""
    toks = near.toks
    n: i64 = toks.size()
    k: i64 = toks.at(lo)
    while k < n and near.start(k) < hi:
        if fam.added_id(near.id(k)):
            return True
        k += 1
    return False


def direct_edit(edges: PreTokenEdges, delta: i64) -> i64:
    """PreTokenEdges.direct's encode from sure cut direct_lo to direct_hi (moved by delta)."""
    lo: i64 = edges.direct_lo
    edges.direct_lo = -1
    toks = edges.toks
    norm = edges.norm
    k0: i64 = toks.at(lo)
    k1: i64 = toks.at(edges.direct_hi)
    b: i64 = edges.direct_hi + delta
    total: i64 = norm.length()
    fam = edges.family
    reach: i64 = fam.ahead_chars
    while True:
        end: i64 = min(total, b + reach)
        chunk = norm.slice(lo, end)
        after = chunk[b - lo :]
        read: i64 = fam.reach_after(after, char_before(norm, b))
        if read < len(after):
            after = after[:read]  # what decides the cut at b: a scan of fewer pre-tokens
        found = fam.window(chunk[: b - lo], 0, after, end >= total, -1)
        if found is not None or end >= total:
            break
        reach *= 2  # a run of white space past the cut: read on until it ends
    edges.stats.encoded(b - lo)
    edges.stats.scanned_chars += end - lo
    if found is None or not edges.guard_passes(lo, end):
        found = library_run(fam, edges.stats, chunk, b - lo)
        if found is None:
            return ENCODE_WHOLE
    toks.replace(k0, k1, found.ids, found.lens, found.joins)
    return SETTLED


def library_between(edges: PreTokenEdges, s: i64, e: i64, delta: i64) -> bool:
    """Old tokens from sure cut s to sure cut e, both decided by characters an edit that moved
    the text after it by delta left alone, become the library's of the new text there."""
    b: i64 = e + delta
    norm = edges.norm
    chunk = norm.slice(s, min(norm.length(), b + edges.family.ahead_chars))
    found = library_run(edges.family, edges.stats, chunk, b - s)
    if found is None:
        return False
    toks = edges.toks
    toks.replace(toks.at(s), toks.at(e), found.ids, found.lens, found.joins)
    return True


def library_run(fam: PreTokenRules, stats: Stats, chunk: str, b: i64) -> TokenRun | None:
    """The reference library's tokens of chunk[:b], from its encode of `chunk`: what lies
    between two sure cuts of the text (chunk's start and b, cut whatever comes before it or
    after) when a character that only the library decides lies near (our scan may cut
    elsewhere), instead of the whole text. Pre-token starts unknown, as opening leaves them;
    None if the library's tokens do not end at b (never, for sure cuts)."""
    ids = fam.encode(chunk)
    lens, _ = fam.vocab.fixed_lengths(ids)
    stats.encoded(len(chunk))
    pos: i64 = 0
    m: i64 = 0
    # Tokens of a character's later bytes cover no character: they go with it.
    while m < len(lens) and (pos < b or lens[m] == 0):
        pos += i64(lens[m])
        m += 1
    if pos != b:
        return None
    kept = ids[:m]
    return TokenRun(to_vec(kept), lens[:m], fam.opening_joins(kept))


class PreTokenFamily(PreTokenRules):
    """A family that pre-tokenizes, its window edges proven by PreTokenEdges."""

    def edges(self, norm: Normalization, toks: TokenStore, stats: Stats) -> Edges:
        return PreTokenEdges(self, norm, toks, stats)
