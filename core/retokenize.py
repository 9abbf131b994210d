"""The engine: keeps a document's tokens equal to a full encode, re-encoding only windows.

The algorithm is Algorithm 3 of Hellsten (2024): re-tokenize the edited text with the tokens on
either side of it, and widen the window until its first and last tokens are the old tokens at the
same places. Why that is exact, for BPE (merges by score, leftmost first): if the window's first
token equals the old token there, every merge that could cross the window's left edge sees the
same symbols, in the same order, as in the old run, where none crossed; the same holds at the
right edge. What the comparison must include to make that true:

- position and length, not the id alone (the window starts and ends at old token boundaries);
- whole merge symbols: all byte-fallback tokens of one character together, and all parts of an
  UNUSED piece that SentencePiece merged and re-split at the end (a window edge never sits inside
  a symbol, where the tokens are not boundaries of the merges);
- the family's cut before merging (greedy USER_DEFINED pieces), which can reach past a window's
  edge: it is re-run across each edge to prove the edge is a cut of the whole text.

The window widens geometrically (1, 2, 4, ... tokens per side), so a change that really ripples
through a long stretch costs a small multiple of one encode of that stretch. A selection count
is the same loop run at the selection's two ends, reusing the document's tokens in between.
Families whose tokens are not local re-encode the whole normalized text instead, which is exact
by definition.
"""

from __future__ import annotations

from typing import Final

from librt.vecs import append, extend, vec
from mypy_extensions import i32, i64, u8

from tokenline.core.family import JOIN_EDGE, JOIN_INNER, JOIN_UNKNOWN, Encoded, Family
from tokenline.core.normalizer import Normalization
from tokenline.core.pretokens import READ_PAST
from tokenline.core.segments import CACHED_SEGMENT_CHARS, CachedTokens, Segmenter
from tokenline.core.tokens import TokenStore

# Old tokens fetched on each side of an edit before the loop starts (most windows fit in them).
EDIT_MARGIN: Final = 8
# Old tokens fetched inside each end of a long selection.
RANGE_MARGIN: Final = 16
# A window's first widening step, in tokens per side; each failed edge doubles its side's step.
FIRST_STEP: Final = 1
# Old tokens fetched at least when the window outgrows its copy of them.
REFETCH: Final = 16
NO_EDIT: Final = -1
# Characters on each side of an edit or a selection end whose piece starts are found before the
# window loop runs (lazy_cuts), and read past the last sure cut when finding them.
KNOW_MARGIN: Final = 1024
KNOW_AHEAD: Final = 64
# Normalized characters cut into segments at a time when a document opens (doubled while a
# block holds no segment start), so that no list of all its segments is ever built.
LOAD_BLOCK: Final = 1 << 16


class Window:
    """A stretch of old tokens to re-encode, and which of its sides may move.

    An edit moves both sides. A selection count runs two windows: the first keeps the
    selection's start and moves right, the second keeps its end and moves left.
    """

    kl: i64  # the left edge starts one step below this token
    kr: i64  # the right edge starts one step above this token
    move_left: bool
    move_right: bool
    a_fixed: i64  # normalized start when the left side stays (a selection's start)
    b_fixed: i64  # normalized end when the right side stays (a selection's end)
    head: str  # text the window gets in front (a selection's own dummy prefix)
    tail: str
    delta: i64  # how far the edit moved the text after it
    ns: i64  # normalized start of the edit, or NO_EDIT
    floor: i64  # the left edge must stay above this token
    ceiling: i64  # the right edge must stay below this token
    limit: i64  # where the text the window is cut from ends (-1: the document's end)
    # The normalized text the last try of a pre-tokenizing family read (new offsets).
    read_lo: i64
    read_hi: i64
    # The edit lies inside a long piece that stays one piece (see Retokenizer._keeps_piece).
    keeps_piece: bool
    # The answer: old tokens [wl, wr) and what replaces them.
    wl: i64
    wr: i64
    out: Encoded

    def __init__(self, kl: i64, kr: i64, move_left: bool, move_right: bool) -> None:
        self.kl = kl
        self.kr = kr
        self.move_left = move_left
        self.move_right = move_right
        self.a_fixed = 0
        self.b_fixed = 0
        self.head = ""
        self.tail = ""
        self.delta = 0
        self.ns = NO_EDIT
        self.floor = -1
        self.ceiling = 1 << 62
        self.limit = -1
        self.read_lo = 0
        self.read_hi = 0
        self.keeps_piece = False
        self.wl = kl
        self.wr = kr
        self.out = Encoded([], vec[i32](), vec[u8]())


class TokenRun:
    """Tokens gathered segment by segment, in the token store's columns."""

    ids: vec[i32]
    lens: vec[i32]
    joins: vec[u8]
    keeps_joins: bool

    def __init__(self, keeps_joins: bool) -> None:
        self.ids = vec[i32]()
        self.lens = vec[i32]()
        self.joins = vec[u8]()
        self.keeps_joins = keeps_joins

    def add_one(self, token_id: i64) -> None:
        """A token of one character that starts a merge symbol."""
        self.ids = append(self.ids, i32(token_id))
        self.lens = append(self.lens, 1)
        if self.keeps_joins:
            self.joins = append(self.joins, 0)

    def add(self, tokens: CachedTokens) -> None:
        self.ids = extend(self.ids, tokens.ids)
        self.lens = extend(self.lens, tokens.lens)
        self.joins = extend(self.joins, tokens.joins)


class Retokenizer:
    """Owns a document's tokens and the window loop that keeps them exact."""

    family: Family
    norm: Normalization
    toks: TokenStore
    # Counters for benchmarks and tests: encoder calls and characters sent to them.
    encode_calls: i64
    encoded_chars: i64
    # Characters a pre-tokenizing family's windows scanned for their pieces (tests, benchmarks).
    scanned_chars: i64
    # Normalized offset up to which piece starts have been found ahead of edits (lazy_cuts).
    known_upto: i64

    def __init__(self, family: Family, norm: Normalization) -> None:
        self.family = family
        self.norm = norm
        self.toks = TokenStore(keeps_joins=family.keeps_joins)
        self.encode_calls = 0
        self.encoded_chars = 0
        self.scanned_chars = 0
        self.known_upto = 0

    # -- whole texts ---------------------------------------------------------------------------

    def load_original(self, text: str) -> None:
        """Tokens of the whole original text (opening a document, replacing its text)."""
        seg = self.family.segmenter
        self.known_upto = 0
        if self.family.lazy_cuts:
            ids = self.encode_original(text)
            lens, _ = self.family.vocab.fixed_lengths(ids)
            self.toks.load(_to_vec(ids), lens, self.family.opening_joins(ids))
        elif seg is not None and self.family.clean(text):
            self._load_segments(seg)
        else:
            enc = self._tokens(text, False)
            self.toks.load(_to_vec(enc.ids), enc.lens, enc.joins)
        # No token at all is a family dropping the whole text (a tokenizer.json model given
        # only white space); tokens that cover part of it are the normalizer disagreeing.
        if self.toks.size() > 0 and self.toks.total_length() != self.norm.length():
            raise AssertionError(
                f"tokens cover {self.toks.total_length()} normalized characters but the "
                f"normalized text has {self.norm.length()}: the normalizer disagrees with the "
                "tokenizer"
            )

    def _load_segments(self, seg: Segmenter) -> None:
        """Tokens of the normalized text, segment by segment, a block at a time."""
        run = TokenRun(self.family.keeps_joins)
        total: i64 = self.norm.length()
        pos: i64 = 0
        size: i64 = LOAD_BLOCK
        while pos < total:
            end: i64 = min(total, pos + size)
            pieces = seg.take(self.norm.slice(pos, end), end >= total)
            if len(pieces) == 0:
                size *= 2
                continue
            pos += self._add_pieces(seg, pieces, run)
            size = LOAD_BLOCK
        self.toks.load(run.ids, run.lens, run.joins)

    def encode_segments(self, text: str) -> list[int]:
        """Ids of normalized text that begins at a segment start, from the segment cache (a
        short selection's count). The family must have a segmenter."""
        seg = self.family.segmenter
        assert seg is not None
        if not self.family.clean(text):
            # Added tokens are matched before pre-tokenizing (such families do not normalize).
            return self.encode_original(text)
        run = TokenRun(self.family.keeps_joins)
        self._add_segments(seg, text, run)
        out: list[int] = []
        for x in run.ids:
            out.append(int(x))
        return out

    def _add_segments(self, seg: Segmenter, text: str, run: TokenRun) -> None:
        self._add_pieces(seg, seg.split(text), run)

    def _add_pieces(self, seg: Segmenter, segments: list[str], run: TokenRun) -> i64:
        """Appends the tokens of segments to run: from the model's cache where it has them,
        encoding (and caching) only the segments it lacks. Returns their length."""
        total: i64 = 0
        for segment in segments:
            total += len(segment)
            if len(segment) <= CACHED_SEGMENT_CHARS:
                run.add(self._segment_tokens(segment))
            else:
                self._add_long_segment(seg, segment, run)
        return total

    def _add_long_segment(self, seg: Segmenter, segment: str, run: TokenRun) -> None:
        """A long segment cut finer where a character starts every token it is in; the pieces
        go through the cache like segments (the characters of CJK text repeat)."""
        n: i64 = len(segment)
        start: i64 = 0
        i: i64 = 1
        while i <= n:
            if i == n or seg.cut_before(ord(segment[i])):
                piece: i64 = seg.piece_of(ord(segment[start])) if i - start == 1 else -1
                if piece >= 0:
                    run.add_one(piece)
                else:
                    run.add(self._segment_tokens(segment[start:i]))
                start = i
            i += 1

    def _segment_tokens(self, segment: str) -> CachedTokens:
        """The tokens of one segment: the cache's, or encoded (and cached)."""
        cache = self.family.cache
        # Long segments are never cached: do not even hash them.
        found = cache.get(segment) if len(segment) <= CACHED_SEGMENT_CHARS else None
        if found is None:
            enc = self._tokens(segment, True)
            found = CachedTokens(_to_vec(enc.ids), enc.lens, enc.joins)
            cache.put(segment, found)
        return found

    def encode_original(self, text: str) -> list[int]:
        """Ids of original text encoded alone."""
        self.encode_calls += 1
        self.encoded_chars += len(text)
        return self.family.encode(text)

    # -- piece starts found late ----------------------------------------------------------------

    def know(self, lo: i64, hi: i64) -> None:
        """Finds which tokens start a piece between normalized offsets lo and hi (tokens a
        document opened with are JOIN_UNKNOWN), scanning from a cut before lo that needs no
        context to a cut after hi. Call it while the tokens match the text (before an edit)."""
        if not self.family.lazy_cuts or hi <= self.known_upto:
            return
        total: i64 = self.norm.length()
        if self._all_known(max(0, lo), min(total, hi)):
            return  # found before (a window's tokens, an earlier edit's stretch)
        s: i64 = self._sync(max(0, lo), True)
        e: i64 = self._sync(min(total, hi), False)
        toks = self.toks
        k0: i64 = toks.at(s)
        k1: i64 = toks.at(e)
        if k0 >= k1:
            return
        ids, lens, joins, _ = toks.window(k0, k1)
        unknown: bool = False
        for j in joins:
            if (j & JOIN_UNKNOWN) != 0:
                unknown = True
                break
        if unknown:
            # Reading READ_AHEAD past e: cuts up to e depend on at most a few characters there.
            text = self.norm.slice(s, min(total, e + KNOW_AHEAD))
            toks.replace(k0, k1, ids, lens, self.family.piece_joins(text, lens, joins))

    def know_next(self, budget: i64) -> bool:
        """Finds piece starts in the next `budget` characters not yet looked at (work for idle
        time after opening); False once the whole text has been."""
        total: i64 = self.norm.length()
        if not self.family.lazy_cuts or self.known_upto >= total:
            return False
        start: i64 = self.known_upto
        self.know(start, start + budget)
        self.known_upto = self._sync(min(total, start + budget), False)
        return self.known_upto < total

    def _all_known(self, lo: i64, hi: i64) -> bool:
        """Whether every token over normalized [lo, hi) knows if it starts a piece."""
        toks = self.toks
        _, _, joins, _ = toks.window(toks.at(lo), toks.at(hi) + 1)
        i: i64 = 0
        while i < len(joins):
            if (joins[i] & JOIN_UNKNOWN) != 0:
                return False
            i += 1
        return True

    def before_edit(self, start: i64, end: i64) -> None:
        """Piece starts around an edit of original [start, end), while the text is the old."""
        if self.family.lazy_cuts:
            self.know(self.norm.to_norm(start) - KNOW_MARGIN, self.norm.to_norm(end) + KNOW_MARGIN)

    def _sync(self, pos: i64, down: bool) -> i64:
        """A surely-cut offset at or before pos (down) or at or after it, else 0 or the end."""
        total: i64 = self.norm.length()
        span: i64 = KNOW_MARGIN
        while True:
            if down:
                if pos <= 0:
                    return 0
                a: i64 = max(0, pos - span)
                found: i64 = self.family.sync_in(self.norm.slice(a, pos + 1), True)
                if found >= 0:
                    return a + found
                if a == 0:
                    return 0
            else:
                if pos >= total:
                    return total
                b: i64 = min(total, pos + span)
                found = self.family.sync_in(self.norm.slice(pos - 1 if pos > 0 else 0, b), False)
                if found >= 0:
                    return (pos - 1 if pos > 0 else 0) + found
                if b == total:
                    return total
            span *= 2

    # -- edits ---------------------------------------------------------------------------------

    def after_edit(self, ns: i64, ne_old: i64, ne_new: i64) -> None:
        """Brings the tokens in step with an edit of the normalized text: [ns, ne_old) became
        [ns, ne_new)."""
        if ns < self.known_upto:
            self.known_upto = max(ns, self.known_upto + ne_new - ne_old)
        toks = self.toks
        ntok: i64 = toks.size()
        if not self.family.incremental or ntok == 0:
            self._reload()
            return
        # Tokens [0, kl) end at or before ns; tokens [kr, ntok) start at or after ne_old.
        kl: i64 = toks.at(ns)
        t: i64 = toks.at(ne_old)
        near = Neighborhood(toks, kl - EDIT_MARGIN, t + EDIT_MARGIN + 1)
        kr: i64 = t
        if t < ntok and near.start(t) < ne_old:
            kr = t + 1
        kr = max(kl, near.boundary_up(kr))
        w = Window(kl, kr, True, True)
        w.delta = ne_new - ne_old
        w.ns = ns
        w.keeps_piece = self._keeps_piece(near, ns, ne_old, ne_new)
        self.settle(w, near)
        if self.family.added_longest > 0 and (
            self._near_added(w.read_lo, w.read_hi)
            or (self.family.added_ids and self._old_added(near, w.read_lo, w.read_hi - w.delta))
        ):
            self._reload()
            return
        toks.replace(w.wl, w.wr, _to_vec(w.out.ids), w.out.lens, w.out.joins)

    def _keeps_piece(self, near: Neighborhood, ns: i64, ne_old: i64, ne_new: i64) -> bool:
        """Whether the edit lies inside one long letter piece (from READ_PAST characters before
        it to the character after it) that stays one piece, as long as any token could be, so
        windows inside it need not scan it for its start and end."""
        fam = self.family
        total: i64 = self.norm.length()
        if fam.run_kind == 0 or ns < READ_PAST or ne_new >= total:
            return False
        toks = self.toks
        k0: i64 = toks.at(ns - READ_PAST)
        k1: i64 = toks.at(ne_old)
        inner: bool = False
        k: i64 = k0 + 1
        while k <= k1:
            if not near.in_known_piece(k):
                return False
            inner = inner or near.inner(k)
            k += 1
        if not inner:
            return False
        # Long enough that the library cannot take the new piece as one token.
        enough: i64 = fam.longest_token + max(0, ne_old - ne_new)
        span: i64 = near.piece_span(k0, k1, enough) + ne_new - ne_old
        if span <= fam.longest_token:
            return False
        text = self.norm.slice(ns - 1, ne_new + 1)
        return fam.run_continues(text[:1], text[1:-1], text[-1:])

    def _reload(self) -> None:
        """Encodes the whole normalized text again (exact by definition)."""
        enc = self._tokens(self.norm.slice(0, self.norm.length()), True)
        self.toks.load(_to_vec(enc.ids), enc.lens, enc.joins)
        self.known_upto = 0  # a lazy family's tokens come back with piece starts unknown

    def _near_added(self, lo: i64, hi: i64) -> bool:
        """Whether an added token's text may overlap normalized [lo, hi) of the current text.

        Pieces are exact where none does: the library's added-token matches (leftmost-longest)
        away from it are the same in the old and new text, and the stretch it lies in is
        pre-tokenized as one string that reaches past all that the window read."""
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

    # -- selections ----------------------------------------------------------------------------

    def encode_range(
        self, head: str, a: i64, b: i64, tail: str
    ) -> tuple[list[int], i64, i64, list[int]]:
        """head + norm[a:b] + tail encoded alone, as (ids, document tokens [k0, k1), ids), or
        k0 < 0 when no stretch of document tokens can be reused."""
        self.know(a - KNOW_MARGIN, a + KNOW_MARGIN)
        self.know(b - KNOW_MARGIN, b + KNOW_MARGIN)
        toks = self.toks
        ntok: i64 = toks.size()
        # First document token entirely after a, last one entirely before b.
        ka: i64 = toks.at(a)
        if ka < ntok and toks.start(ka) < a:
            ka += 1
        kb: i64 = toks.at(b)
        left = Window(ka, ka, False, True)
        left.a_fixed = a
        left.head = head
        left.ceiling = kb
        left.limit = b
        if not self.settle(left, Neighborhood(toks, ka, ka + RANGE_MARGIN)):
            return [], -1, -1, []
        right = Window(kb, kb, True, False)
        right.b_fixed = b
        right.tail = tail
        right.floor = left.wr
        if not self.settle(right, Neighborhood(toks, kb - RANGE_MARGIN, kb + 1)):
            return [], -1, -1, []
        if self.family.added_longest > 0 and (
            self._near_added(left.read_lo, left.read_hi)
            or self._near_added(right.read_lo, right.read_hi)
        ):
            return [], -1, -1, []
        return left.out.ids, left.wr, right.wl, right.out.ids

    # -- the window loop -----------------------------------------------------------------------

    def settle(self, w: Window, near: Neighborhood) -> bool:
        """Widens w until both its moving edges hold; False when it would cross its bounds."""
        ntok: i64 = self.toks.size()
        step_l: i64 = FIRST_STEP
        step_r: i64 = FIRST_STEP
        while True:
            wl: i64 = near.boundary_down(w.kl - step_l) if w.move_left else w.kl
            wr: i64 = near.boundary_up(w.kr + step_r) if w.move_right else w.kr
            if wl <= w.floor or wr >= w.ceiling:
                return False
            a: i64 = near.start(wl) if w.move_left else w.a_fixed
            b: i64 = near.start(wr) + w.delta if w.move_right else w.b_fixed
            found: Encoded | None = None
            ok_l: bool = not w.move_left or wl == 0
            ok_r: bool = not w.move_right or wr >= ntok
            if self.family.pretokens:
                found, ok_l, ok_r = self._piece_window(w, near, wl, wr, a, b)
            else:
                text = w.head + self.norm.slice(a, b) + w.tail
                found = self._tokens(text, True)
                # A window of white space only that a normalizer strips has no token to give it
                # to: cut earlier, where the whole text's last token holds it.
                by_cuts: bool = self.family.cut_edges and (found.size() > 0 or a == b)
                ok_l = ok_l or (
                    (by_cuts or near.left_edge_holds(found, wl)) and self._cut_before(w, a)
                )
                ok_r = ok_r or (
                    (by_cuts or near.right_edge_holds(found, wr))
                    and self._cut_after(text, b, found)
                )
            if ok_l and ok_r and found is not None:
                w.wl = wl
                w.wr = wr
                w.out = found
                return True
            if (not ok_l and not w.move_left) or (not ok_r and not w.move_right):
                return False  # a side that may not move fails: widening cannot help
            if not ok_l:
                step_l *= 2
            if not ok_r:
                step_r *= 2

    def _tokens(self, text: str, normalized: bool) -> Encoded:
        self.encode_calls += 1
        self.encoded_chars += len(text)
        return self.family.tokens(text, normalized)

    def _piece_window(
        self, w: Window, near: Neighborhood, wl: i64, wr: i64, a: i64, b: i64
    ) -> tuple[Encoded | None, bool, bool]:
        """A pre-tokenizing family's try at window [a, b): (tokens, left holds, right holds).

        An edge at an old cut holds if the new text still cuts there: the left if what decided
        the cut lies before the edit, the right if the window, read on into the text after it,
        cuts at its end. An edge inside a long piece (JOIN_INNER) holds if the piece keeps its
        start and end and the window's edge symbol is the old one there (Algorithm 3 within the
        piece); the window is then cut from the piece's start.
        """
        ntok: i64 = self.toks.size()
        inner_l: bool = w.move_left and wl > 0 and near.inner(wl)
        inner_r: bool = w.move_right and wr < ntok and near.inner(wr)
        if w.ns == NO_EDIT and (inner_l or inner_r):
            return None, not inner_l, not inner_r  # selections widen to cuts
        if w.keeps_piece and inner_l and inner_r and near.one_piece(wl, wr):
            # Inside a piece that keeps its start and end: Algorithm 3's edges alone.
            part = self.family.inner_part(self.norm.slice(a, b))
            self.encode_calls += 1
            self.encoded_chars += b - a
            w.read_lo = a
            w.read_hi = b
            return part, near.left_edge_holds(part, wl), near.right_edge_holds(part, wr)
        start: i64 = near.start(near.piece_start(wl)) if inner_l else a
        limit: i64 = w.limit if w.limit >= 0 else self.norm.length()
        if not w.move_right:
            limit = b  # a selection's end: its text ends there
        end: i64 = b
        piece_end: i64 = -1
        if inner_r:
            piece_end = near.start(near.piece_end(wr)) + w.delta
            end = min(limit, piece_end + self.family.ahead_chars)
            piece_end -= start
        elif w.move_right and wr < ntok:
            end = min(limit, b + self.family.ahead_chars)
        self.encode_calls += 1
        self.encoded_chars += b - a
        self.scanned_chars += end - start
        w.read_lo = start
        w.read_hi = end
        # A selection's right window ends where the selection's text does.
        final: bool = end >= limit or not w.move_right
        found = self.family.window(
            self.norm.slice(start, b), a - start, self.norm.slice(b, end), final, piece_end
        )
        ok_l: bool = not w.move_left or wl == 0 or self._cut_before(w, start)
        if found is None:
            return None, ok_l and not inner_l, False
        if inner_l:
            ok_l = ok_l and near.left_edge_holds(found, wl)
        ok_r: bool = not inner_r or near.right_edge_holds(found, wr)
        return found, ok_l, ok_r

    def _cut_before(self, w: Window, a: i64) -> bool:
        """Normalized offset a, an old token boundary, is also a cut of the new text."""
        if self.family.pretokens:
            # An old cut stays a cut while what decided it lies before the changed text (the
            # edit, or the end of a selection encoded alone).
            limit: i64 = w.ns if w.move_right else w.b_fixed
            ahead: str = self.norm.slice(a, min(limit, a + self.family.ahead_chars))
            return a + self.family.reach_after(ahead) <= limit
        reach: i64 = self.family.edge_reach
        if reach == 0:
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
        return self.family.lands_on(text, 0, a - start)

    def _cut_after(self, text: str, end_norm: i64, enc: Encoded) -> bool:
        """The window's end (normalized offset end_norm) is a cut of the whole text: cut again
        from the window's last token boundary at least `edge_reach` before its end, reading the
        text that follows the window."""
        reach: i64 = self.family.edge_reach
        if reach == 0:
            return True
        end: i64 = len(text)
        p: i64 = 0
        lens = enc.lens
        i: i64 = 0
        while i < len(lens) and p + i64(lens[i]) <= end - reach:
            p += i64(lens[i])
            i += 1
        probe = text[p:end] + self.norm.slice(end_norm, end_norm + reach)
        return self.family.lands_on(probe, 0, end - p)


def _to_vec(ids: list[int]) -> vec[i32]:
    out = vec[i32](capacity=len(ids))
    for x in ids:
        out = append(out, i32(x))
    return out


class Neighborhood:
    """A copy of the old tokens around an edit, so the window loop does not go back to the
    token store (and its Fenwick trees) for every index and offset it looks at."""

    toks: TokenStore
    k0: i64
    k1: i64
    ids: vec[i32]
    lens: vec[i32]
    joins: vec[u8]  # empty when the store keeps no symbol flags
    starts: vec[i64]  # normalized start of tokens k0..k1 (k1 included)

    def __init__(self, toks: TokenStore, k0: i64, k1: i64) -> None:
        self.toks = toks
        self.k0 = 0
        self.k1 = 0
        self.ids = vec[i32]()
        self.lens = vec[i32]()
        self.joins = vec[u8]()
        self.starts = vec[i64]()
        self._fetch(k0, k1)

    def _fetch(self, k0: i64, k1: i64) -> None:
        n: i64 = self.toks.size()
        k0 = max(0, k0)
        k1 = min(n, max(k1, k0))
        ids, lens, joins, base = self.toks.window(k0, k1)
        starts = vec[i64](capacity=len(lens) + 1)
        pos: i64 = base
        i: i64 = 0
        m: i64 = len(lens)
        while i < m:
            starts = append(starts, pos)
            pos += i64(lens[i])
            i += 1
        starts = append(starts, pos)
        self.k0 = k0
        self.k1 = k1
        self.ids = ids
        self.lens = lens
        self.joins = joins
        self.starts = starts

    def _cover(self, k: i64) -> None:
        """Widens the copy (geometrically) until it holds index k (k == size() allowed)."""
        if self.k0 <= k <= self.k1:
            return
        width: i64 = max(REFETCH, 2 * (self.k1 - self.k0))
        lo: i64 = self.k0
        hi: i64 = self.k1
        if k < lo:
            lo = min(k, lo - width)
        if k > hi:
            hi = max(k, hi + width)
        self._fetch(lo, hi)

    def start(self, k: i64) -> i64:
        self._cover(k)
        return self.starts[k - self.k0]

    def id(self, k: i64) -> i64:
        self._cover(k + 1)
        self._cover(k)
        return i64(self.ids[k - self.k0])

    def length(self, k: i64) -> i64:
        self._cover(k + 1)
        self._cover(k)
        return i64(self.lens[k - self.k0])

    def joined(self, k: i64) -> bool:
        """Old token k continues the merge symbol of token k - 1 (no window edge before it)."""
        self._cover(k + 1)
        self._cover(k)
        if len(self.joins) > 0:
            return (self.joins[k - self.k0] & JOIN_EDGE) != 0
        return self.lens[k - self.k0] == 0

    def inner(self, k: i64) -> bool:
        """Old token k starts no piece but may carry a window edge (inside a long piece)."""
        self._cover(k + 1)
        self._cover(k)
        return len(self.joins) > 0 and (self.joins[k - self.k0] & JOIN_INNER) != 0

    def in_known_piece(self, k: i64) -> bool:
        """Old token k continues a piece (starts none), and that is known."""
        self._cover(k + 1)
        self._cover(k)
        if len(self.joins) == 0:
            return False
        j: i64 = i64(self.joins[k - self.k0])
        return (j & (JOIN_EDGE | JOIN_INNER)) != 0 and (j & JOIN_UNKNOWN) == 0

    def one_piece(self, k0: i64, k1: i64) -> bool:
        """Old tokens k0 + 1 .. k1 all continue the piece of token k0."""
        k: i64 = k0 + 1
        while k <= k1:
            if not self.in_known_piece(k):
                return False
            k += 1
        return True

    def piece_span(self, k0: i64, k1: i64, enough: i64) -> i64:
        """Characters of the piece holding old tokens k0..k1 (one piece), counted outward from
        them until there are more than `enough` or the piece ends."""
        n: i64 = self.toks.size()
        lo: i64 = k0
        while lo > 0 and self.in_known_piece(lo) and self.start(k1 + 1) - self.start(lo) <= enough:
            lo -= 1
        hi: i64 = k1 + 1
        while hi < n and self.in_known_piece(hi) and self.start(hi) - self.start(lo) <= enough:
            hi += 1
        return self.start(hi) - self.start(lo)

    def _in_piece(self, k: i64) -> bool:
        self._cover(k + 1)
        self._cover(k)
        return (self.joins[k - self.k0] & (JOIN_EDGE | JOIN_INNER)) != 0

    def piece_start(self, k: i64) -> i64:
        """The first token of the piece that holds old token k."""
        while k > 0 and self._in_piece(k):
            k -= 1
        return k

    def piece_end(self, k: i64) -> i64:
        """The first token of the next piece after old token k's (size() at the end)."""
        n: i64 = self.toks.size()
        k += 1
        while k < n and self._in_piece(k):
            k += 1
        return k

    def boundary_down(self, k: i64) -> i64:
        """k moved down until a merge symbol starts at token k (no character or symbol split)."""
        if k <= 0:
            return 0
        n: i64 = self.toks.size()
        if k >= n:
            return n
        while k > 0 and self.joined(k):
            k -= 1
        return k

    def boundary_up(self, k: i64) -> i64:
        n: i64 = self.toks.size()
        if k >= n:
            return n
        if k < 0:
            k = 0
        while k < n and self.joined(k):
            k += 1
        return k

    def left_edge_holds(self, enc: Encoded, k: i64) -> bool:
        """The window's first merge symbol equals the old one starting at token k."""
        n: i64 = enc.size()
        if n == 0:
            return False
        g: i64 = 1
        while g < n and enc.joined(g):
            g += 1
        return self.same_symbol(enc, 0, k, g)

    def right_edge_holds(self, enc: Encoded, k: i64) -> bool:
        """The window's last merge symbol equals the old one ending before token k."""
        n: i64 = enc.size()
        if n == 0:
            return False
        g: i64 = 1
        while g < n and enc.joined(n - g):
            g += 1
        return self.same_symbol(enc, n - g, k - g, g)

    def same_symbol(self, enc: Encoded, first: i64, k: i64, g: i64) -> bool:
        """New tokens first..first+g-1 (one symbol) have the ids and lengths of old tokens
        k..k+g-1, and those old tokens are one symbol too (a symbol starts at k and at k+g)."""
        n: i64 = self.toks.size()
        if k < 0 or k + g > n:
            return False
        if self.joined(k) or (k + g < n and self.joined(k + g)):
            return False
        i: i64 = 0
        while i < g:
            if self.id(k + i) != enc.ids[first + i] or self.length(k + i) != enc.lens[first + i]:
                return False
            if i > 0 and not self.joined(k + i):
                return False
            i += 1
        return True
