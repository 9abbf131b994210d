"""What the window loop works on: a window, the old tokens around it, and the strategy that proves
its edges.

The loop itself (tokenline.core.retokenize) widens a window until both its moving edges hold. How
an edge is proven differs between families, so each family supplies an `Edges` strategy per
document: Algorithm 3's comparison of merge symbols with a cut test (tokenline.core.symboledges),
or pre-token cuts (tokenline.core.pieceedges). `Neighborhood` is the copy of the old tokens the
strategies compare against.
"""

from __future__ import annotations

from typing import Final

from librt.vecs import append, vec
from mypy_extensions import i32, i64, u8

from tokenline.core.tokens import JOIN_EDGE, TokenRun, TokenStore, continues, empty_run

NO_EDIT: Final = -1
# What Edges.direct did with an edit: nothing (the window loop settles it), settled it, or found
# that the whole text must be encoded again.
BY_LOOP: Final = 0
SETTLED: Final = 1
ENCODE_WHOLE: Final = 2
# Old tokens fetched at least when the window outgrows its copy of them.
REFETCH: Final = 16
# Characters an edit may encode at once before Edges.encodes_long calls it long (a few
# milliseconds of a Unigram Viterbi).
LONG_STRETCH: Final = 8192


class Stats:
    """Counters for benchmarks and tests: encoder calls, characters sent to them, and characters
    a pre-tokenizing family scanned for their pre-tokens (its windows, and the pre-token starts
    of tokens it found late)."""

    encode_calls: i64
    encoded_chars: i64
    scanned_chars: i64

    def __init__(self) -> None:
        self.encode_calls = 0
        self.encoded_chars = 0
        self.scanned_chars = 0

    def encoded(self, chars: i64) -> None:
        self.encode_calls += 1
        self.encoded_chars += chars


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
    ne_old: i64  # its old end (normalized), when ns is not NO_EDIT
    floor: i64  # the left edge must stay above this token
    ceiling: i64  # the right edge must stay below this token
    limit: i64  # where the text the window is cut from ends (-1: the document's end)
    # Old tokens the next try's edges must reach at least, set by a strategy that knows its edge
    # cannot hold nearer (a pre-token an edit made short has no edges inside it).
    reach_l: i64
    reach_r: i64
    # The normalized text the last try read (new offsets).
    read_lo: i64
    read_hi: i64
    # The answer: old tokens [wl, wr) and what replaces them.
    wl: i64
    wr: i64
    out: TokenRun

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
        self.ne_old = NO_EDIT
        self.floor = -1
        self.ceiling = 1 << 62
        self.limit = -1
        self.reach_l = 1 << 62
        self.reach_r = -1
        self.read_lo = 0
        self.read_hi = 0
        self.wl = kl
        self.wr = kr
        self.out = empty_run()


class Edges:
    """How one document's window edges are proven, and the work around an edit that needs.

    `attempt` is the loop's one call per try; the other hooks default to doing nothing, for
    strategies that need no state beyond the tokens."""

    def attempt(
        self, w: Window, near: Neighborhood, wl: i64, wr: i64, a: i64, b: i64
    ) -> tuple[TokenRun | None, bool, bool]:
        """Encodes window [a, b) (normalized, new offsets) over old tokens [wl, wr): (its tokens
        or None, whether its left edge holds, whether its right edge holds). A side that does
        not move, or sits at the text's end, holds."""
        raise NotImplementedError

    def opening(self, text: str) -> TokenRun | None:
        """The tokens of a whole original text when the strategy opens documents its own way
        (None: by segments or one encode, as the engine does)."""
        return None

    def segmentable(self, text: str) -> bool:
        """Whether text's tokens are its segments' tokens (the segmenter's premise holds)."""
        return True

    def reloaded(self) -> None:
        """The tokens were encoded whole again."""

    def before_edit(self, start: i64, end: i64) -> None:
        """Original [start, end) is about to change; the tokens still match the text."""

    def edited(self, ns: i64, ne_old: i64, ne_new: i64) -> None:
        """Normalized [ns, ne_old) became [ns, ne_new); the tokens are not yet in step."""

    def direct(self, ns: i64, ne_old: i64, ne_new: i64) -> i64:
        """Settles an edit without the window loop where the strategy knows cuts around it
        that the edit left (BY_LOOP: it does not; SETTLED; ENCODE_WHOLE)."""
        return BY_LOOP

    def encodes_long(self, ns: i64, ne: i64, new: str) -> bool:
        """Whether an edit of normalized [ns, ne) to `new` (as typed: a predictor) would
        encode more than LONG_STRETCH characters at once: a stretch with no place the strategy
        may cut, which its family encodes whole (a Unigram piece: no bounded window reproduces
        a Viterbi path). Asked before the edit, by a caller that must answer quickly and would
        rather encode such a text elsewhere. False where every edit reads a bounded stretch."""
        return False

    def begin(self, w: Window, near: Neighborhood, ne_new: i64) -> None:
        """An edit's window is about to be settled."""

    def before_widen(self, w: Window, near: Neighborhood, lo_k: i64, hi_k: i64) -> None:
        """The window's edges are about to move to old tokens lo_k and hi_k (or the nearest
        boundaries beyond): what the strategy must learn of the old tokens out to there."""

    def accepts(self, w: Window, near: Neighborhood) -> bool:
        """Whether an edit's settled window may replace the old tokens (else: encode whole)."""
        return True

    def bounded(self, w: Window) -> bool:
        """Settles an edit whose window `accepts` refused some way short of encoding the whole
        text; False when there is none."""
        return False

    def settled(self, w: Window) -> None:
        """An edit's window replaced old tokens [w.wl, w.wr) with w.out."""

    def before_range(self, a: i64, b: i64) -> None:
        """A selection [a, b) (normalized) is about to be encoded; tokens match the text."""

    def accepts_range(self, left: Window, right: Window) -> bool:
        """Whether a selection's two settled windows may be used (else: encode it alone)."""
        return True

    def prepare(self, budget: i64) -> bool:
        """Work deferred when the document opened, `budget` characters of it; True while some
        remains."""
        return False


class Neighborhood:
    """A copy of the old tokens around an edit, so the window loop does not go back to the
    token store (and its Fenwick trees) for every index and offset it looks at."""

    toks: TokenStore
    k0: i64
    k1: i64
    ids: vec[i32]
    lens: vec[i32]
    joins: vec[u8]  # empty when the store keeps no join flags
    starts: vec[i64]  # normalized start of tokens k0..k1 (k1 included)
    # The lowest and highest index asked for beyond the first copy (its ends if none was).
    asked_lo: i64
    asked_hi: i64

    def __init__(self, toks: TokenStore, k0: i64, k1: i64) -> None:
        self.toks = toks
        self.k0 = 0
        self.k1 = 0
        self.ids = vec[i32]()
        self.lens = vec[i32]()
        self.joins = vec[u8]()
        self.starts = vec[i64]()
        self._fetch(k0, k1)
        self.asked_lo = self.k0
        self.asked_hi = self.k1

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

    def refresh(self) -> None:
        """Copies the same tokens again (the store changed their flags)."""
        self._fetch(self.k0, self.k1)

    def _cover(self, k: i64) -> None:
        """Widens the copy (geometrically) until it holds index k (k == size() allowed)."""
        if self.k0 <= k <= self.k1:
            return
        self.asked_lo = min(self.asked_lo, k)
        self.asked_hi = max(self.asked_hi, k)
        width: i64 = max(REFETCH, 2 * (self.k1 - self.k0))
        lo: i64 = self.k0
        hi: i64 = self.k1
        if k < lo:
            lo = min(k, lo - width)
        if k > hi:
            hi = max(k, hi + width)
        self._fetch(lo, hi)

    def run(self, k0: i64, k1: i64) -> TokenRun:
        """Old tokens [k0, k1) as a run of their own."""
        self._cover(k0)
        self._cover(k1)
        i: i64 = k0 - self.k0
        j: i64 = k1 - self.k0
        joins = self.joins[i:j] if len(self.joins) > 0 else vec[u8]()
        return TokenRun(self.ids[i:j], self.lens[i:j], joins)

    def around(self, k0: i64, k1: i64, run: TokenRun, k2: i64, k3: i64) -> TokenRun:
        """Old tokens [k0, k1), then run, then old tokens [k2, k3): a window's tokens with the
        old ones at its ends that it kept as they were."""
        out = self.run(k0, k1)
        out.add(run)
        out.add(self.run(k2, k3))
        return out

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

    def flag(self, k: i64) -> i64:
        """Old token k's join flags (0 when the store keeps none)."""
        self._cover(k + 1)
        self._cover(k)
        if len(self.joins) == 0:
            return 0
        return i64(self.joins[k - self.k0])

    def joined(self, k: i64) -> bool:
        """Old token k continues the merge symbol of token k - 1 (no window edge before it)."""
        self._cover(k + 1)
        self._cover(k)
        kept: bool = len(self.joins) > 0
        join: i64 = i64(self.joins[k - self.k0]) if kept else 0
        return continues(kept, join, i64(self.lens[k - self.k0]), JOIN_EDGE)

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

    def left_edge_holds(self, run: TokenRun, k: i64) -> bool:
        """The window's first merge symbol equals the old one starting at token k."""
        n: i64 = run.size()
        if n == 0:
            return False
        g: i64 = 1
        while g < n and run.joined(g):
            g += 1
        return self.same_symbol(run, 0, k, g)

    def right_edge_holds(self, run: TokenRun, k: i64) -> bool:
        """The window's last merge symbol equals the old one ending before token k."""
        n: i64 = run.size()
        if n == 0:
            return False
        g: i64 = 1
        while g < n and run.joined(n - g):
            g += 1
        return self.same_symbol(run, n - g, k - g, g)

    def same_symbol(self, run: TokenRun, first: i64, k: i64, g: i64) -> bool:
        """New tokens first..first+g-1 (one symbol) have the ids and lengths of old tokens
        k..k+g-1, and those old tokens are one symbol too (a symbol starts at k and at k+g)."""
        n: i64 = self.toks.size()
        if k < 0 or k + g > n:
            return False
        if self.joined(k) or (k + g < n and self.joined(k + g)):
            return False
        i: i64 = 0
        while i < g:
            if self.id(k + i) != run.ids[first + i] or self.length(k + i) != run.lens[first + i]:
                return False
            if i > 0 and not self.joined(k + i):
                return False
            i += 1
        return True
