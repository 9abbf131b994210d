"""The engine: keeps a document's tokens equal to a full encode, re-encoding only windows.

The algorithm is Algorithm 3 of Hellsten (2024): re-tokenize the edited text with the tokens on
either side of it, and widen the window until both its edges hold. What makes an edge hold is the
family's (`Edges`, tokenline.core.window): for BPE, the edge's merge symbol is the old one at the
same place and the family's cut before merging has a boundary there (tokenline.core.symboledges);
for pre-tokenizing families, the new text still cuts there (tokenline.core.pretokenedges).

The window widens geometrically (1, 2, 4, ... tokens per side), so a change that really ripples
through a long stretch costs a small multiple of one encode of that stretch. A selection count
is the same loop run at the selection's two ends, reusing the document's tokens in between.
Families whose tokens are not local re-encode the whole normalized text instead, which is exact
by definition.
"""

from __future__ import annotations

from typing import Final

from mypy_extensions import i64

from tokenline.core.family import Family
from tokenline.core.normalization import Normalization
from tokenline.core.opening import SegmentLoad, SegmentReader
from tokenline.core.tokens import TokenRun, TokenStore, empty_run
from tokenline.core.window import BY_LOOP, ENCODE_WHOLE, Edges, Neighborhood, Stats, Window

# Old tokens fetched on each side of an edit before the loop starts (most windows fit in them),
# at least; a document whose windows reach further (Japanese pre-tokens run to the punctuation)
# fetches as far as the last one that did, less a little each edit that did not (MARGIN_DECAY).
EDIT_MARGIN: Final = 8
MAX_MARGIN: Final = 256
MARGIN_DECAY: Final = 8
# Old tokens fetched inside each end of a long selection.
RANGE_MARGIN: Final = 16
# A window's first widening step, in tokens per side; each failed edge doubles its side's step.
FIRST_STEP: Final = 1
# A load_some budget that reads the whole text.
LOAD_ALL: Final = 1 << 62


class Retokenizer:
    """Owns a document's tokens and the window loop that keeps them exact."""

    family: Family
    norm: Normalization
    toks: TokenStore
    stats: Stats
    edges: Edges
    segments: SegmentReader
    # Old tokens an edit fetches on each side first (see EDIT_MARGIN).
    margin: i64
    # An opening read in slices, until it is done (begin_load).
    loading: SegmentLoad | None

    def __init__(self, family: Family, norm: Normalization) -> None:
        self.family = family
        self.norm = norm
        self.toks = TokenStore(keeps_joins=family.keeps_joins)
        self.stats = Stats()
        self.edges = family.edges(norm, self.toks, self.stats)
        self.segments = SegmentReader(family, self.stats)
        self.margin = EDIT_MARGIN
        self.loading = None

    # -- whole texts ---------------------------------------------------------------------------

    def load_original(self, text: str) -> None:
        """Tokens of the whole original text (opening a document, replacing its text)."""
        if self.begin_load(text):
            while self.load_some(LOAD_ALL):
                pass

    def begin_load(self, text: str) -> bool:
        """Starts the tokens of the whole original text: read in slices by load_some where the
        family opens segment by segment through its cache, else made now (one library
        encode). True while slices remain; the tokens are the text's once it is False."""
        self.loading = None
        run = self.edges.opening(text)
        if run is None:
            seg = self.family.segmenter
            if seg is not None and self.edges.segmentable(text):
                self._install(empty_run())
                self.loading = SegmentLoad()
                return True
            run = self._tokens(text, False)
        self._install(run)
        return False

    def load_some(self, budget: i64) -> bool:
        """Reads about `budget` more normalized characters of a load begun by begin_load (at
        most twice that, unless a stretch holds no segment start); True while more remains."""
        load = self.loading
        if load is None:
            return False
        seg = self.family.segmenter
        assert seg is not None
        more = self.segments.read_some(seg, self.norm, load, budget)
        # Each slice's tokens go into the store at once: one load of them all at the end would
        # be a step as long as the text.
        run = load.run
        if run.size() > 0:
            end: i64 = self.toks.size()
            self.toks.replace(end, end, run.ids, run.lens, run.joins)
            load.run = empty_run()
        if more:
            return True
        self.loading = None
        self._check_cover()
        return False

    def _install(self, run: TokenRun) -> None:
        self.toks.load(run.ids, run.lens, run.joins)
        self._check_cover()

    def _check_cover(self) -> None:
        # No token at all is a family dropping the whole text (a tokenizer.json model given
        # only white space); tokens that cover part of it are the normalizer disagreeing.
        if self.toks.size() > 0 and self.toks.total_length() != self.norm.length():
            raise AssertionError(
                f"tokens cover {self.toks.total_length()} normalized characters but the "
                f"normalized text has {self.norm.length()}: the normalizer disagrees with the "
                "tokenizer"
            )

    def encode_segments(self, text: str) -> list[int]:
        """Ids of normalized text that begins at a segment start, from the segment cache (a
        short selection's count). The family must have a segmenter."""
        seg = self.family.segmenter
        assert seg is not None
        if not self.edges.segmentable(text):
            # Added tokens are matched before pre-tokenizing (such families do not normalize).
            return self.encode_original(text)
        return self.segments.encode(seg, text).id_list()

    def encode_original(self, text: str) -> list[int]:
        """Ids of original text encoded alone."""
        self.stats.encoded(len(text))
        return self.family.encode(text)

    def prepare(self, budget: i64) -> bool:
        """Up to `budget` characters of the work opening deferred; True while work remains."""
        return self.edges.prepare(budget)

    def _tokens(self, text: str, normalized: bool) -> TokenRun:
        self.stats.encoded(len(text))
        return self.family.tokens(text, normalized)

    def _reload(self) -> None:
        """Encodes the whole normalized text again (exact by definition)."""
        self.reload_with(self._tokens(self.norm.slice(0, self.norm.length()), True))

    def reload_with(self, run: TokenRun) -> None:
        """The tokens of the whole normalized text, encoded elsewhere (family.tokens of
        norm.slice(0, norm.length()), normalized)."""
        self.toks.load(run.ids, run.lens, run.joins)
        self.edges.reloaded()

    # -- edits ---------------------------------------------------------------------------------

    def before_edit(self, start: i64, end: i64) -> None:
        """Original [start, end) is about to change (the text is still the old one)."""
        self.edges.before_edit(start, end)

    def after_edit(self, ns: i64, ne_old: i64, ne_new: i64) -> None:
        """Brings the tokens in step with an edit of the normalized text: [ns, ne_old) became
        [ns, ne_new)."""
        self.edges.edited(ns, ne_old, ne_new)
        toks = self.toks
        ntok: i64 = toks.size()
        if not self.family.incremental or ntok == 0:
            self._reload()
            return
        how: i64 = self.edges.direct(ns, ne_old, ne_new)
        if how != BY_LOOP:
            if how == ENCODE_WHOLE:
                self._reload()
            return
        # Tokens [0, kl) end at or before ns; tokens [kr, ntok) start at or after ne_old.
        kl: i64 = toks.at(ns)
        t: i64 = toks.at(ne_old)
        near = Neighborhood(toks, kl - self.margin, t + self.margin + 1)
        kr: i64 = t
        if t < ntok and near.start(t) < ne_old:
            kr = t + 1
        kr = max(kl, near.boundary_up(kr))
        w = Window(kl, kr, True, True)
        w.delta = ne_new - ne_old
        w.ns = ns
        w.ne_old = ne_old
        self.edges.begin(w, near, ne_new)
        self.settle(w, near)
        self._adapt_margin(near, kl, t)
        if not self.edges.accepts(w, near):
            if not self.edges.bounded(w):
                self._reload()
            return
        toks.replace(w.wl, w.wr, w.out.ids, w.out.lens, w.out.joins)
        self.edges.settled(w)

    def _adapt_margin(self, near: Neighborhood, kl: i64, t: i64) -> None:
        """The next edit fetches as far as this one needed when that was further than it
        fetched (each further fetch copies the tokens again), else a little less than before."""
        need: i64 = max(kl - near.asked_lo, near.asked_hi - t - 1)
        if need > self.margin:
            self.margin = min(MAX_MARGIN, need + need // 4)
        else:
            self.margin = max(EDIT_MARGIN, self.margin - self.margin // MARGIN_DECAY)

    # -- selections ----------------------------------------------------------------------------

    def encode_range(
        self, head: str, a: i64, b: i64, tail: str
    ) -> tuple[list[int], i64, i64, list[int]]:
        """head + norm[a:b] + tail encoded alone, as (ids, document tokens [k0, k1), ids), or
        k0 < 0 when no stretch of document tokens can be reused."""
        self.edges.before_range(a, b)
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
        if not self.edges.accepts_range(left, right):
            return [], -1, -1, []
        return left.out.id_list(), left.wr, right.wl, right.out.id_list()

    # -- the window loop -----------------------------------------------------------------------

    def settle(self, w: Window, near: Neighborhood) -> bool:
        """Widens w until both its moving edges hold; False when it would cross its bounds."""
        step_l: i64 = FIRST_STEP
        step_r: i64 = FIRST_STEP
        edges = self.edges
        ntok: i64 = self.toks.size()
        # The last try's edges, and which of them failed (none yet).
        last_l: i64 = -1
        last_r: i64 = -1
        redo_l: bool = False
        redo_r: bool = False
        while True:
            lo_k: i64 = min(w.kl - step_l, w.reach_l)
            hi_k: i64 = max(w.kr + step_r, w.reach_r)
            edges.before_widen(w, near, lo_k, hi_k)
            wl: i64 = near.boundary_down(lo_k) if w.move_left else w.kl
            wr: i64 = near.boundary_up(hi_k) if w.move_right else w.kr
            if wl <= w.floor or wr >= w.ceiling:
                return False
            if wl == last_l and wr == last_r and (redo_l or redo_r):
                # The doubled steps fell on the same boundaries (a symbol or pre-token longer
                # than the step): the same try would fail the same way. Double again.
                step_l = 2 * step_l if redo_l else step_l
                step_r = 2 * step_r if redo_r else step_r
                continue
            a: i64 = near.start(wl) if w.move_left else w.a_fixed
            b: i64 = near.start(wr) + w.delta if w.move_right else w.b_fixed
            found, ok_l, ok_r = edges.attempt(w, near, wl, wr, a, b)
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
            last_l = wl
            last_r = wr
            redo_l = not ok_l and wl > 0
            redo_r = not ok_r and wr < ntok
