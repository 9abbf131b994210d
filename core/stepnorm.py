"""A document's text normalized by a tokenizer.json file's Unicode normalizer, kept in step with
its edits (tokenline.core.unicodesteps cuts the normalizer into steps).

The normalized text and its steps are stored (rows of original and normalized lengths, runs of
steps that keep their length merged into one aligned row, whose offsets map one to one). An edit
re-normalizes from the last step boundary before it to the first one after it, both at least
`margin` characters away, so that no added token matched before normalizing reaches from outside
that stretch into the edit; the normalized edit reported is only what changed.

Most documents normalize character by character, each to one character: to itself (NFC of text
typed in NFC), or to another (capitals under Lowercase). While that lasts nothing is stored, the
normalized text is read through the original (`derived`), and the first edit that breaks it
builds the store.
"""

from __future__ import annotations

from typing import Final

from mypy_extensions import i64

from tokenline.core.normalization import Normalization
from tokenline.core.rope import TextRope
from tokenline.core.steps import StepStore
from tokenline.core.unicodesteps import ALIGNED, Stretch, UnicodeSteps

# Characters read around a place when looking for a step boundary near it (grown while none).
LOOK: Final = 64


class StepNorm(Normalization):
    """Original text <-> its normalized text, step by step."""

    rules: UnicodeSteps
    steps: StepStore
    norm: TextRope
    # Whether each character normalizes alone, to one character (then steps and norm are empty
    # and the normalized text is read through the original).
    derived: bool
    # How far the step boundaries around an edit stay from it (an added token matched before
    # normalizing that holds a boundary then lies on one side of the edit).
    margin: i64

    def __init__(self, orig: TextRope, rules: UnicodeSteps) -> None:
        super().__init__(orig)
        self.rules = rules
        self.steps = StepStore()
        self.norm = TextRope("")
        self.margin = max(1, rules.raw_longest - 1)
        text = orig.slice(0, orig.length())
        found = rules.normalize(text)
        normalized = found.text()
        self.derived = rules.by_characters(text, normalized)
        if not self.derived:
            self._store(found, normalized)

    def _store(self, found: Stretch, normalized: str) -> None:
        self.derived = False
        self.steps.replace(0, 0, found.orig_lens, found.norm_lens, found.flags)
        self.norm = TextRope(normalized)

    def length(self) -> i64:
        if self.derived:
            return self.orig.length()
        return self.norm.length()

    def slice(self, start: i64, end: i64) -> str:
        if start >= end:
            return ""
        if self.derived:
            return self.rules.characters(self.orig.slice(start, end))
        return self.norm.slice(start, end)

    def to_orig(self, pos: i64) -> i64:
        if pos <= 0:
            return 0
        if self.derived:
            return min(pos, self.orig.length())
        if pos >= self.norm.length():
            return self.orig.length()
        steps = self.steps
        k: i64 = steps.at_norm(pos)
        o: i64 = steps.orig_start(k)
        if steps.state(k) == ALIGNED:
            return o + pos - steps.norm_start(k)
        return o

    def to_norm(self, off: i64) -> i64:
        if off <= 0:
            return 0
        if self.derived:
            return min(off, self.orig.length())
        if off >= self.orig.length():
            return self.norm.length()
        steps = self.steps
        k: i64 = steps.at_orig(off)
        q: i64 = steps.norm_start(k)
        if steps.state(k) == ALIGNED:
            return q + off - steps.orig_start(k)
        return q

    def split_range(self, start: i64, end: i64) -> tuple[str, i64, i64, str]:
        """The selection normalizes alone as the document does there when it begins and ends at
        step boundaries that no added token matched before normalizing holds; otherwise it is
        encoded alone from its original text (-1)."""
        if self._clean(start) and self._clean(end):
            return "", self.to_norm(start), self.to_norm(end), ""
        return "", -1, -1, ""

    def _clean(self, p: i64) -> bool:
        n: i64 = self.orig.length()
        if p <= 0 or p >= n:
            return True
        reach: i64 = max(1, self.rules.raw_longest)
        lo: i64 = max(0, p - reach)
        return self._boundary_at(self.orig.slice(lo, min(n, p + reach)), p - lo)

    def _boundary_at(self, text: str, i: i64) -> bool:
        """Whether a step begins at text[i], a place with raw_longest characters around it (where
        the text has them)."""
        rules = self.rules
        if not rules.boundary(text, i):
            return False
        if rules.raw_rx is None:
            return True
        lo: i64 = max(0, i - rules.raw_longest + 1)
        return not rules.inside_raw(text[lo : i + rules.raw_longest - 1], i - lo)

    # -- edits -------------------------------------------------------------------------------

    def apply(self, start: i64, end: i64, text: str) -> tuple[i64, i64, i64]:
        steps = self.steps
        old_n: i64 = self.orig.length()
        self.orig.replace(start, end, text)
        delta: i64 = self.orig.length() - old_n
        if self.derived and text.isascii() and self._ascii_steps(start, start + len(text)):
            return start, end, start + len(text)
        b0: i64 = self._boundary_down(start - self.margin)
        b1: i64 = self._boundary_up(start + len(text) + self.margin)
        if self.derived:
            return self._apply_derived(start, end, start + len(text), b0, b1)
        size: i64 = steps.size()
        # Old rows [k0, k_end) hold the stretch; `head` aligned characters of row k0 stay before
        # it and `tail` of row k_end - 1 after it.
        k0: i64 = steps.at_orig(b0)
        o0: i64 = steps.orig_start(k0)
        if o0 < b0 and steps.state(k0) != ALIGNED:
            b0 = o0  # not expected: a boundary inside a step; begin at the step
        head: i64 = b0 - o0
        b1_old: i64 = b1 - delta
        k_end: i64 = steps.at_orig(b1_old)
        tail: i64 = 0
        if k_end < size and steps.orig_start(k_end) < b1_old:
            row_end: i64 = steps.orig_start(k_end) + steps.orig_length(k_end)
            if steps.state(k_end) == ALIGNED:
                tail = row_end - b1_old
            else:
                b1 += row_end - b1_old
            k_end += 1
        n0: i64 = steps.norm_start(k0) + head
        n1: i64 = steps.norm_start(k_end) - tail
        found = self.rules.normalize(self.orig.slice(b0, b1))
        rows = _rows(head, found, tail)
        steps.replace(k0, k_end, rows.orig_lens, rows.norm_lens, rows.flags)
        return self._replace_text(n0, n1, found.text())

    def _ascii_steps(self, start: i64, new_end: i64) -> bool:
        """Whether ASCII text written over [start, new_end) is steps of its own characters (a
        step begins at each end of it, and no added token matched before normalizing is near),
        so that the text still normalizes character by character."""
        rules = self.rules
        reach: i64 = max(1, rules.raw_longest)
        lo: i64 = max(0, start - reach)
        around = self.orig.slice(lo, min(self.orig.length(), new_end + reach))
        i: i64 = start - lo
        j: i64 = new_end - lo
        n: i64 = len(around)
        if (0 < i < n and not rules.boundary(around, i)) or (
            0 < j < n and not rules.boundary(around, j)
        ):
            return False
        return rules.raw_rx is None or rules.raw_rx.search(around) is None

    def _apply_derived(
        self, start: i64, end: i64, new_end: i64, b0: i64, b1: i64
    ) -> tuple[i64, i64, i64]:
        """An edit while each character normalizes alone: if the stretch around it still does,
        the normalized edit is the edit; otherwise the store of steps begins."""
        rules = self.rules
        stretch = self.orig.slice(b0, b1)
        found = rules.normalize(stretch)
        normalized = found.text()
        if rules.by_characters(stretch, normalized):
            return start, end, new_end
        n: i64 = self.orig.length()
        head = rules.characters(self.orig.slice(0, b0))
        tail = rules.characters(self.orig.slice(b1, n))
        self._store(_rows(b0, found, n - b1), head + normalized + tail)
        return b0, b1 - (new_end - end), b0 + len(normalized)

    def _replace_text(self, n0: i64, n1: i64, new: str) -> tuple[i64, i64, i64]:
        """Normalized [n0, n1) becomes new; returns the change without what it leaves as it was."""
        old = self.norm.slice(n0, n1) if n1 > n0 else ""
        m: i64 = min(len(old), len(new))
        p: i64 = 0
        while p < m and old[p] == new[p]:
            p += 1
        s: i64 = 0
        while s < m - p and old[len(old) - 1 - s] == new[len(new) - 1 - s]:
            s += 1
        self.norm.replace(n0 + p, n1 - s, new[p : len(new) - s])
        return n0 + p, n1 - s, n0 + len(new) - s

    def _boundary_down(self, p: i64) -> i64:
        """The last step boundary at or before p (0 at the latest)."""
        if p <= 0:
            return 0
        n: i64 = self.orig.length()
        reach: i64 = max(1, self.rules.raw_longest)
        span: i64 = LOOK
        while True:
            lo: i64 = max(0, p - span)
            text = self.orig.slice(lo, min(n, p + reach))
            i: i64 = p - lo
            while i > 0:
                if self._boundary_at(text, i):
                    return lo + i
                i -= 1
            if lo == 0:
                return 0
            span *= 4

    def _boundary_up(self, p: i64) -> i64:
        """The first step boundary at or after p (the text's end at the latest)."""
        n: i64 = self.orig.length()
        if p >= n:
            return n
        reach: i64 = max(1, self.rules.raw_longest)
        span: i64 = LOOK
        while True:
            lo: i64 = max(0, p - reach)
            hi: i64 = min(n, p + span)
            text = self.orig.slice(lo, min(n, hi + reach))
            i: i64 = p - lo
            while i < hi - lo:
                if self._boundary_at(text, i):
                    return lo + i
                i += 1
            if hi == n:
                return n
            span *= 4


def _rows(head: i64, found: Stretch, tail: i64) -> Stretch:
    """found's steps between `head` and `tail` aligned characters (their text left out)."""
    rows = Stretch()
    rows.row(head, head)
    i: i64 = 0
    while i < len(found.flags):
        rows.row(i64(found.orig_lens[i]), i64(found.norm_lens[i]))
        i += 1
    rows.row(tail, tail)
    return rows
