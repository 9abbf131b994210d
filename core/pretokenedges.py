"""Window edges of families that pre-tokenize: a regex cuts the text into pre-tokens, then each is
encoded alone (tiktoken's encodings, Tekken, byte-level tokenizer.json files).

Tokens record whether they start a pre-token (JOIN_EDGE clear). A window edge at a pre-token start
holds when the new text still cuts there, which needs no token comparison: the old cut survives
when everything the scan read to decide it lies before the edit (`reach_after`), and the window's
end is a cut when the scan, read on past it, cuts there too; past that cut the old and new texts
are equal, so the scans are. Inside a pre-token longer than the cache keeps, an edge between tokens
(JOIN_INNER) is Algorithm 3's, once the pre-token is shown to keep its start and end.

Lazy cuts (`lazy_cuts`): a document opens from one encode by the reference library, every token
JOIN_UNKNOWN; `know` finds the pre-token starts of a stretch by scanning from a place that is a
cut whatever precedes it (`sync_in`), around each edit and selection end, and `prepare` walks the
rest in slices. A window that reaches tokens still unknown widens past them.

Added tokens (matched by the library before it pre-tokenizes): windows are kept only when no added
token's text lies near what they read and no old added token lay there; otherwise the whole text
is encoded (an edit) or the selection alone.
"""

from __future__ import annotations

from typing import Final

from librt.vecs import vec
from mypy_extensions import i32, i64, u8

from tokenline.core.family import Family
from tokenline.core.normalization import Normalization
from tokenline.core.tokens import (
    JOIN_EDGE,
    JOIN_INNER,
    JOIN_UNKNOWN,
    TokenRun,
    TokenStore,
    to_vec,
)
from tokenline.core.vocab import Vocabulary
from tokenline.core.window import NO_EDIT, Edges, Neighborhood, Stats, Window

# Characters on each side of a selection end whose pre-token starts are found before the window
# loop runs (lazy_cuts), and read past the last sure cut when finding them.
KNOW_MARGIN: Final = 1024
KNOW_AHEAD: Final = 64
# The same on each side of an edit: most windows fit; one that reaches past learns more
# (`before_widen`), so the first edit in an untouched part scans about what its window reads.
EDIT_KNOW: Final = 64
ALL_KNOWN: Final = 1 << 62


class PreTokenFamily(Family):
    """A family that pre-tokenizes: what its edges strategy asks of it."""

    # Characters of the text after a window read to prove its end is a cut (more if that fails).
    ahead_chars: i64
    # Documents open from one full encode, their pre-token starts found later (`sync_in`).
    lazy_cuts: bool
    # The length of the longest added token (0: none); whether some ids are added tokens.
    added_longest: i64
    added_ids: bool
    # How a long letter pre-token runs on (pretokens.run_class; 0: the family cannot tell), and the
    # most characters any token covers (a longer pre-token is never one token).
    run_class: i64
    longest_token: i64
    # Characters past its end a pre-token's scan may read beside a run of white space.
    read_past: i64

    def __init__(self, vocab: Vocabulary) -> None:
        super().__init__(vocab)
        self.ahead_chars = 0
        self.lazy_cuts = False
        self.added_longest = 0
        self.added_ids = False
        self.run_class = 0
        self.longest_token = 0
        self.read_past = 0

    def edges(self, norm: Normalization, toks: TokenStore, stats: Stats) -> Edges:
        return PreTokenEdges(self, norm, toks, stats)

    def window(
        self, text: str, skip: i64, ahead: str, final: bool, pretoken_end: i64
    ) -> TokenRun | None:
        """The tokens of text[skip:], a window of normalized text cut from text's start (a cut),
        given the text after it (`final`: ahead runs to the end). The window's end must be a
        cut, or, when pretoken_end >= 0, lie inside a pre-token that ends exactly there. None
        when it is neither, or when text cuts at or before skip > 0."""
        raise NotImplementedError

    def opening_joins(self, ids: list[int]) -> vec[u8]:
        """Join flags of a document's tokens from a full encode, pre-token starts unknown."""
        raise NotImplementedError

    def sync_in(self, text: str, last: bool) -> i64:
        """The last (or first) offset in text, after its start, that is a cut whatever comes
        before it; -1 when there is none."""
        raise NotImplementedError

    def pretoken_joins(self, text: str, lens: vec[i32], joins: vec[u8]) -> vec[u8]:
        """The join flags of tokens (lengths `lens`, old flags `joins`) that start at text's
        start, a cut, and end where text ends or earlier, from text's pre-tokens."""
        raise NotImplementedError

    def run_continues(self, before: str, new: str, after: str) -> bool:
        """Whether a long letter pre-token holding the characters either side of an edit stays
        one pre-token with `new` between them."""
        return False

    def inner_part(self, text: str) -> TokenRun:
        """The tokens of text, a stretch inside a long pre-token, starting between its tokens."""
        raise NotImplementedError

    def reach_after(self, text: str) -> i64:
        """How far past a cut, followed by `text`, the scan may read to decide it (more than
        len(text) when text does not settle it)."""
        raise NotImplementedError

    def clean(self, text: str) -> bool:
        """Whether text holds no added token's text (always, for families without them)."""
        return True

    def added_id(self, token_id: i64) -> bool:
        """Whether the token is an added token (matched before pre-tokenizing)."""
        return False


class PreTokenEdges(Edges):
    """Pre-token cuts prove window edges; for one document."""

    family: PreTokenFamily
    norm: Normalization
    toks: TokenStore
    stats: Stats
    # Normalized offset up to which pre-token starts have been found ahead of edits (lazy_cuts).
    known_upto: i64
    # The edit being settled lies inside a long pre-token that stays one (see _keeps_run).
    keeps_run: bool
    # Around the edit being settled, old tokens [edit_k0, edit_k1] (normalized old offsets
    # [edit_lo, edit_hi], both sure cuts) know whether they start a pre-token (±ALL_KNOWN: all).
    edit_k0: i64
    edit_k1: i64
    edit_lo: i64
    edit_hi: i64

    def __init__(
        self, family: PreTokenFamily, norm: Normalization, toks: TokenStore, stats: Stats
    ) -> None:
        self.family = family
        self.norm = norm
        self.toks = toks
        self.stats = stats
        self.known_upto = 0
        self.keeps_run = False
        self.edit_k0 = 0
        self.edit_k1 = 0
        self.edit_lo = 0
        self.edit_hi = 0

    # -- opening -----------------------------------------------------------------------------

    def opening(self, text: str) -> TokenRun | None:
        fam = self.family
        self.known_upto = 0
        if not fam.lazy_cuts:
            return None
        self.stats.encoded(len(text))
        ids = fam.encode(text)
        lens, _ = fam.vocab.fixed_lengths(ids)
        return TokenRun(to_vec(ids), lens, fam.opening_joins(ids))

    def segmentable(self, text: str) -> bool:
        return self.family.clean(text)

    def reloaded(self) -> None:
        self.known_upto = 0  # a lazy family's tokens come back with pre-token starts unknown

    # -- pre-token starts found late ---------------------------------------------------------

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
        self._learn(s, e, 0, total)

    def _learn(self, s: i64, e: i64, shift: i64, limit: i64) -> None:
        """Finds which old tokens from sure cut s to sure cut e (old normalized offsets; the
        token at e included) start a pre-token. Their text is the current text at offsets
        `shift` further on, read up to `limit` at most (past e: what an edit left as it was)."""
        toks = self.toks
        k0: i64 = toks.at(s)
        k1: i64 = toks.at(e)
        if k1 < toks.size():
            k1 += 1  # e is a cut: the token starting there starts a pre-token
        if k0 >= k1:
            return
        ids, lens, joins, _ = toks.window(k0, k1)
        unknown: bool = False
        for j in joins:
            if (j & JOIN_UNKNOWN) != 0:
                unknown = True
                break
        if unknown:
            # Reading KNOW_AHEAD past e: cuts up to e depend on at most a few characters there.
            text = self.norm.slice(s + shift, min(limit, e + shift + KNOW_AHEAD))
            toks.replace(k0, k1, ids, lens, self.family.pretoken_joins(text, lens, joins))

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

    # -- edits -------------------------------------------------------------------------------

    def before_edit(self, start: i64, end: i64) -> None:
        toks = self.toks
        self.edit_k0 = -ALL_KNOWN
        self.edit_k1 = ALL_KNOWN
        if not self.family.lazy_cuts:
            return
        norm = self.norm
        total: i64 = norm.length()
        if self.known_upto >= total:
            return  # every token knows (prepared)
        ns: i64 = norm.to_norm(start)
        s: i64 = self._sync(max(0, ns - EDIT_KNOW), True, 0, 2 * EDIT_KNOW)
        e: i64 = self._sync(min(total, norm.to_norm(end) + EDIT_KNOW), False, 0, 2 * EDIT_KNOW)
        self._learn(s, e, 0, total)
        self.edit_lo = s
        self.edit_hi = e
        self.edit_k0 = toks.at(s)
        self.edit_k1 = toks.at(e)

    def before_widen(self, w: Window, near: Neighborhood, lo_k: i64, hi_k: i64) -> None:
        """Before a window's edges move to old tokens lo_k and hi_k: the tokens out to there
        learn whether they start a pre-token (an edge never stops at one still unknown), in
        stretches twice as long each time, from text the edit left as it was."""
        if w.ns == NO_EDIT or (lo_k >= self.edit_k0 and hi_k <= self.edit_k1):
            return
        toks = self.toks
        learned: bool = False
        while w.move_left and lo_k < self.edit_k0 and self.edit_lo > 0:
            span: i64 = max(2 * EDIT_KNOW, 2 * (w.ns - self.edit_lo))
            s: i64 = self._sync(max(0, self.edit_lo - span), True, 0, span)
            self._learn(s, self.edit_lo, 0, w.ns)
            self.edit_lo = s
            self.edit_k0 = toks.at(s)
            learned = True
        old_total: i64 = self.norm.length() - w.delta
        while w.move_right and hi_k > self.edit_k1 and self.edit_hi < old_total:
            span = max(2 * EDIT_KNOW, 2 * (self.edit_hi - w.ne_old))
            e: i64 = self._sync(min(old_total, self.edit_hi + span), False, w.delta, span)
            self._learn(self.edit_hi, e, w.delta, self.norm.length())
            self.edit_hi = e
            self.edit_k1 = toks.at(e)
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

    def begin(self, w: Window, near: Neighborhood, ne_new: i64) -> None:
        self.keeps_run = self._keeps_run(near, w.ns, w.ne_old, ne_new)

    def _keeps_run(self, near: Neighborhood, ns: i64, ne_old: i64, ne_new: i64) -> bool:
        """Whether the edit lies inside one long letter pre-token (from `read_past` characters
        before it to the character after it) that stays one, as long as any token could be, so
        windows inside it need not scan it for its start and end."""
        fam = self.family
        total: i64 = self.norm.length()
        if fam.run_class == 0 or ns < fam.read_past or ne_new >= total:
            return False
        toks = self.toks
        k0: i64 = toks.at(ns - fam.read_past)
        k1: i64 = toks.at(ne_old)
        inner: bool = False
        k: i64 = k0 + 1
        while k <= k1:
            if not _in_known_pretoken(near, k):
                return False
            inner = inner or (near.flag(k) & JOIN_INNER) != 0
            k += 1
        if not inner:
            return False
        # Long enough that the library cannot take the new pre-token as one token.
        enough: i64 = fam.longest_token + max(0, ne_old - ne_new)
        span: i64 = _pretoken_span(near, k0, k1, enough) + ne_new - ne_old
        if span <= fam.longest_token:
            return False
        text = self.norm.slice(ns - 1, ne_new + 1)
        return fam.run_continues(text[:1], text[1:-1], text[-1:])

    def accepts(self, w: Window, near: Neighborhood) -> bool:
        fam = self.family
        if fam.added_longest == 0:
            return True
        if self._near_added(w.read_lo, w.read_hi):
            return False
        return not (fam.added_ids and self._old_added(near, w.read_lo, w.read_hi - w.delta))

    def before_range(self, a: i64, b: i64) -> None:
        self.know(a - KNOW_MARGIN, a + KNOW_MARGIN)
        self.know(b - KNOW_MARGIN, b + KNOW_MARGIN)

    def accepts_range(self, left: Window, right: Window) -> bool:
        if self.family.added_longest == 0:
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

    def _old_added(self, near: Neighborhood, lo: i64, hi: i64) -> bool:
        """Whether an old token overlapping [lo, hi) (old offsets) is an added token: the old
        text matched one there, which may now be gone."""
        n: i64 = self.toks.size()
        k: i64 = self.toks.at(lo)
        while k < n and near.start(k) < hi:
            if self.family.added_id(near.id(k)):
                return True
            k += 1
        return False

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
        if one and _one_pretoken(near, wl, wr):
            # Inside a pre-token that keeps its start and end: Algorithm 3's edges alone.
            part = self.family.inner_part(self.norm.slice(a, b))
            self.stats.encoded(b - a)
            w.read_lo = a
            w.read_hi = b
            return part, near.left_edge_holds(part, wl), near.right_edge_holds(part, wr)
        start: i64 = near.start(_pretoken_start(near, wl)) if inner_l else a
        limit: i64 = w.limit if w.limit >= 0 else self.norm.length()
        if not w.move_right:
            limit = b  # a selection's end: its text ends there
        end: i64 = b
        pretoken_end: i64 = -1
        if inner_r:
            pretoken_end = near.start(_pretoken_end(near, wr)) + w.delta
            end = min(limit, pretoken_end + self.family.ahead_chars)
            pretoken_end -= start
        elif w.move_right and wr < ntok:
            end = min(limit, b + self.family.ahead_chars)
        self.stats.encoded(b - a)
        self.stats.scanned_chars += end - start
        w.read_lo = start
        w.read_hi = end
        # A selection's right window ends where the selection's text does.
        final: bool = end >= limit or not w.move_right
        found = self.family.window(
            self.norm.slice(start, b), a - start, self.norm.slice(b, end), final, pretoken_end
        )
        ok_l: bool = not w.move_left or wl == 0 or self._cut_before(w, start)
        if found is None:
            return None, ok_l and not inner_l, False
        if inner_l:
            ok_l = ok_l and near.left_edge_holds(found, wl)
        ok_r: bool = not inner_r or near.right_edge_holds(found, wr)
        return found, ok_l, ok_r

    def _cut_before(self, w: Window, a: i64) -> bool:
        """An old cut stays a cut while what decided it lies before the changed text (the edit,
        or the end of a selection encoded alone)."""
        limit: i64 = w.ns if w.move_right else w.b_fixed
        ahead: str = self.norm.slice(a, min(limit, a + self.family.ahead_chars))
        return a + self.family.reach_after(ahead) <= limit


def sure_cut(
    family: PreTokenFamily, norm: Normalization, pos: i64, down: bool, shift: i64, span: i64
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


# -- the old tokens' pre-tokens, from their join flags ----------------------------------------


def _in_pretoken(near: Neighborhood, k: i64) -> bool:
    return (near.flag(k) & (JOIN_EDGE | JOIN_INNER)) != 0


def _in_known_pretoken(near: Neighborhood, k: i64) -> bool:
    """Old token k continues a pre-token (starts none), and that is known."""
    j: i64 = near.flag(k)
    return (j & (JOIN_EDGE | JOIN_INNER)) != 0 and (j & JOIN_UNKNOWN) == 0


def _one_pretoken(near: Neighborhood, k0: i64, k1: i64) -> bool:
    """Old tokens k0 + 1 .. k1 all continue the pre-token of token k0."""
    k: i64 = k0 + 1
    while k <= k1:
        if not _in_known_pretoken(near, k):
            return False
        k += 1
    return True


def _pretoken_span(near: Neighborhood, k0: i64, k1: i64, enough: i64) -> i64:
    """Characters of the pre-token holding old tokens k0..k1 (one pre-token), counted outward
    from them until there are more than `enough` or the pre-token ends."""
    n: i64 = near.toks.size()
    lo: i64 = k0
    while lo > 0 and _in_known_pretoken(near, lo) and near.start(k1 + 1) - near.start(lo) <= enough:
        lo -= 1
    hi: i64 = k1 + 1
    while hi < n and _in_known_pretoken(near, hi) and near.start(hi) - near.start(lo) <= enough:
        hi += 1
    return near.start(hi) - near.start(lo)


def _pretoken_start(near: Neighborhood, k: i64) -> i64:
    """The first token of the pre-token that holds old token k."""
    while k > 0 and _in_pretoken(near, k):
        k -= 1
    return k


def _pretoken_end(near: Neighborhood, k: i64) -> i64:
    """The first token of the next pre-token after old token k's (size() at the end)."""
    n: i64 = near.toks.size()
    k += 1
    while k < n and _in_pretoken(near, k):
        k += 1
    return k
