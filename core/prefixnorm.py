"""The normalized text of a Llama 2 style tokenizer.json, kept in step with the original text.

The normalized text is the original with its spaces escaped (outside added tokens) and markers
inserted before some characters (tokenline.core.stretchlayout): the two map one to one but for
the markers, whose places (original offsets) are all that is stored, with the added tokens
found. An edit re-finds them from a place before it that no match or strip reaches across,
until they fall in step with the old ones again.
"""

from __future__ import annotations

from typing import Final

from librt.vecs import vec
from mypy_extensions import i64

from tokenline.core.addedmatch import FIRST, Matches, is_white
from tokenline.core.normalization import Normalization
from tokenline.core.rope import TextRope
from tokenline.core.stretchlayout import (
    AFTER_FIRST,
    AFTER_SECOND,
    AT_START,
    INSIDE,
    Layout,
    StretchRules,
    copy_matches,
    first_changed_match,
    keep_before,
    lower,
    match_before,
    scan_layout,
    splice,
)

# Characters read past an edit's end at first when finding where the matches fall in step.
RESCAN_MARGIN: Final = 64


class PrefixNorm(Normalization):
    """Original text <-> normalized text: escaped spaces and inserted markers."""

    rules: StretchRules
    marker: str
    # The whole text's layout: markers before inserts[j] (normalized index inserts[j] + j).
    inserts: vec[i64]
    matches: Matches
    # What must be read again around an edit: the longest content, and whether white space
    # a strip takes can reach it.
    reach: i64
    strips: bool

    def __init__(self, orig: TextRope, rules: StretchRules) -> None:
        super().__init__(orig)
        self.rules = rules
        self.marker = rules.marker
        self.reach = rules.added.reach
        self.strips = rules.added.strips()
        whole = Layout()
        scan_layout(rules, orig.text(), 0, AT_START, whole)
        self.inserts = whole.inserts
        self.matches = whole.matches

    # -- offsets -------------------------------------------------------------------------------

    def length(self) -> i64:
        return self.orig.length() + len(self.inserts)

    def to_orig(self, pos: i64) -> i64:
        n: i64 = self.orig.length()
        off: i64 = pos - self._markers_before(pos)
        if off < 0:
            return 0
        return off if off < n else n

    def to_norm(self, off: i64) -> i64:
        if self.orig.length() == 0:
            return 0
        return off + lower(self.inserts, off + 1)

    def _markers_before(self, pos: i64) -> i64:
        """How many inserted markers lie before normalized offset pos."""
        ins = self.inserts
        lo: i64 = 0
        hi: i64 = len(ins)
        while lo < hi:
            mid: i64 = (lo + hi) // 2
            if ins[mid] + mid < pos:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def slice(self, start: i64, end: i64) -> str:
        start = max(start, 0)
        end = min(end, self.length())
        if start >= end:
            return ""
        ins = self.inserts
        j: i64 = self._markers_before(start)
        parts: list[str] = []
        pos: i64 = start
        while pos < end:
            if j < len(ins) and ins[j] + j == pos:
                parts.append(self.marker)
                pos += 1
                j += 1
                continue
            stop: i64 = end
            if j < len(ins):
                stop = min(end, ins[j] + j)
            parts.append(self._escaped(pos - j, stop - j))
            pos = stop
        return "".join(parts)

    def _escaped(self, o0: i64, o1: i64) -> str:
        """Original [o0, o1) with its spaces as the marker, but those added tokens keep."""
        raw = self.orig.slice(o0, o1)
        if " " not in raw:
            return raw
        ms = self.matches
        i: i64 = lower(ms.starts, o0)
        if i > 0 and ms.ends[i - 1] > o0:
            i -= 1
        if i >= ms.size() or ms.starts[i] >= o1:
            return raw.replace(" ", self.marker)
        parts: list[str] = []
        pos: i64 = o0
        while pos < o1:
            s: i64 = o1
            if i < ms.size():
                s = max(pos, min(ms.starts[i], o1))
            parts.append(raw[pos - o0 : s - o0].replace(" ", self.marker))
            if s >= o1:
                break
            e: i64 = min(o1, ms.ends[i])
            kept: str = raw[s - o0 : e - o0]
            parts.append(kept if self._keeps_spaces(i) else kept.replace(" ", self.marker))
            pos = e
            i += 1
        return "".join(parts)

    def _keeps_spaces(self, k: i64) -> bool:
        """Whether added match k keeps its spaces: the first pass's do, and the second's unless
        the normalizer escaped the stretch before they were found."""
        return self.matches.passes[k] == FIRST or not self.rules.replace

    # -- edits ---------------------------------------------------------------------------------

    def apply(self, start: i64, end: i64, text: str) -> tuple[i64, i64, i64]:
        restart: i64 = self._restart(start)
        at: i64 = self._kind_at(restart)
        self.orig.replace(start, end, text)
        delta: i64 = len(text) - (end - start)
        found = Layout()
        sync: i64 = self._rescan(restart, at, start + len(text), delta, found)
        ns: i64 = self._first_change(restart, start, found)
        old_sync: i64 = sync - delta
        ne_old: i64 = old_sync + lower(self.inserts, old_sync + 1)
        self._splice(restart, old_sync, delta, found)
        ne_new: i64 = sync + lower(self.inserts, sync + 1)
        return ns, ne_old, ne_new

    def _first_change(self, restart: i64, start: i64, found: Layout) -> i64:
        """Where the normalized text first changes (the old layout still in place): at the
        edit's start, or before it where a marker or an added match found again differs from
        the old one (so that windows start near the edit, not where finding them restarted)."""
        ins = self.inserts
        new_ins = found.inserts
        i: i64 = lower(ins, restart)
        j: i64 = 0
        d: i64 = start
        marker: bool = False  # whether a marker changes at d (the change is before it)
        while True:
            a: i64 = ins[i] if i < len(ins) and ins[i] <= start else -1
            b: i64 = new_ins[j] if j < len(new_ins) and new_ins[j] <= start else -1
            if a != b:
                d = b if a < 0 or (0 <= b < a) else a
                marker = True
                break
            if a < 0:
                break
            i += 1
            j += 1
        changed: i64 = first_changed_match(
            self.matches, restart, min(d, start), start, found.matches
        )
        if changed < d:
            d = changed
            marker = False
        return d + lower(ins, d if marker else d + 1)

    def _restart(self, start: i64) -> i64:
        """A place before an edit at `start` where finding added tokens may start again: no
        match before it reads past it, none is cut by it, no white space a strip takes runs
        across it."""
        r: i64 = max(0, start - self.reach)
        ms = self.matches
        while True:
            k: i64 = match_before(ms, r)
            if k >= 0 and ms.ends[k] > r:
                r = ms.starts[k]
                continue
            if self.strips and r > 0 and (k < 0 or ms.ends[k] != r):
                back: i64 = self._white_before(r)
                if back < r:
                    r = back
                    continue
            return r

    def _white_before(self, r: i64) -> i64:
        """Where the run of white space that ends at r starts (r when none does)."""
        while r > 0:
            lo: i64 = max(0, r - 64)
            block = self.orig.slice(lo, r)
            i: i64 = len(block)
            while i > 0 and is_white(block[i - 1]):
                i -= 1
            if i > 0:
                return lo + i
            r = lo
        return 0

    def _kind_at(self, r: i64) -> i64:
        if r == 0:
            return AT_START
        ms = self.matches
        k: i64 = match_before(ms, r)
        if k >= 0 and ms.ends[k] == r:
            return AFTER_FIRST if ms.passes[k] == FIRST else AFTER_SECOND
        return INSIDE

    def _rescan(self, restart: i64, at: i64, edit_end: i64, delta: i64, found: Layout) -> i64:
        """Finds the layout again from `restart` (new offsets) until a place past the edit where
        it is the old one's, shifted by delta; fills `found` with what lies before that place
        (markers at it included) and returns it."""
        n: i64 = self.orig.length()
        margin: i64 = 2 * self.reach + 1
        hi: i64 = min(n, edit_end + margin + RESCAN_MARGIN)
        while True:
            chunk = self.orig.slice(restart, hi)
            layout = Layout()
            scan_layout(self.rules, chunk, restart, at, layout)
            final: bool = hi >= n
            limit: i64 = hi if final else hi - margin
            sync: i64 = self._sync(chunk, restart, layout, max(edit_end, restart + 1), delta, limit)
            if sync >= 0:
                keep_before(layout, sync, found)
                return sync
            hi = min(n, hi + 2 * (hi - restart))

    def _sync(self, chunk: str, base: i64, layout: Layout, lo: i64, delta: i64, limit: i64) -> i64:
        """The first place q >= lo where the new layout falls in step with the old: inside no
        match of either, white space on neither side when strips could take it; the text's
        end if the chunk reaches it, else -1 past `limit` (the chunk's end less what deciding
        a place reads)."""
        n: i64 = base + len(chunk)
        final: bool = n == self.orig.length()
        ms = layout.matches
        k: i64 = 0
        q: i64 = lo
        while True:
            if final and q >= n:
                return n
            if q > limit:
                return -1
            while k < ms.size() and ms.ends[k] <= q:
                k += 1
            if k < ms.size() and ms.starts[k] < q:
                q = ms.ends[k]
                continue
            if self.strips and (is_white(chunk[q - 1 - base]) or is_white(chunk[q - base])):
                q += 1
                continue
            old: i64 = match_before(self.matches, q - delta)
            if old >= 0 and self.matches.ends[old] > q - delta:
                q = self.matches.ends[old] + delta
                continue
            return q

    def _splice(self, restart: i64, old_sync: i64, delta: i64, found: Layout) -> None:
        """Replaces the old layout from restart (markers at old_sync included) with `found`,
        shifting what follows by delta; in place when as many are found as there were (most
        edits change no added match), so that an edit does not copy them all."""
        ins = self.inserts
        self.inserts = splice(
            ins, lower(ins, restart), lower(ins, old_sync + 1), found.inserts, delta
        )
        ms = self.matches
        fm = found.matches
        m0: i64 = lower(ms.starts, restart)
        m1: i64 = lower(ms.starts, old_sync)
        if fm.size() != m1 - m0:
            merged = Matches()
            copy_matches(ms, 0, m0, 0, merged)
            copy_matches(fm, 0, fm.size(), 0, merged)
            copy_matches(ms, m1, ms.size(), delta, merged)
            self.matches = merged
            return
        k: i64 = 0
        while k < fm.size():
            ms.ids[m0 + k] = fm.ids[k]
            ms.passes[m0 + k] = fm.passes[k]
            k += 1
        ms.starts = splice(ms.starts, m0, m1, fm.starts, delta)
        ms.ends = splice(ms.ends, m0, m1, fm.ends, delta)

    # -- selections ----------------------------------------------------------------------------

    def split_range(self, start: i64, end: i64) -> tuple[str, i64, i64, str]:
        """The selection alone normalizes as the document does there when no added match is
        near it (within what deciding one reads): its own marker in front, then the
        document's normalized text; unless that marker begins a match (a normalized added
        token's form starts with the marker the normalizer prepends)."""
        ms = self.matches
        k: i64 = match_before(ms, end + self.reach)
        if k >= 0 and ms.ends[k] > start - self.reach:
            return "", -1, -1, ""
        head = self.rules.head(self.orig.slice(start, start + 1))
        q0: i64 = self.to_norm(start)
        if head != "" and self.reach > 0:
            found = Matches()
            probe = head + self.slice(q0, q0 + self.reach)
            self.rules.added.find(probe, 0, len(probe), found)
            if found.size() > 0 and found.starts[0] == 0:
                return "", -1, -1, ""
        return head, q0, self.to_norm(end), ""
