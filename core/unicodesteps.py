"""The tokenizers library's Unicode normalizers (NFC, NFD, NFKC, NFKD, Lowercase, or a Sequence
of them with at most one of the four forms), cut into steps so that a stretch of text can be
normalized on its own.

Such a normalizer maps a text step by step: a step begins at a character that nothing before it
joins (its decomposition begins with a starter that no composition takes as its second part) and
runs up to the next one, so a stretch that begins and ends at step boundaries normalizes alone as
it does inside the whole text. Lowercase maps each character alone (Rust's `to_lowercase`, no
final sigma), so it adds no boundary condition. Which characters begin a step is read from
Python's Unicode tables; each step's normalized text is the library's own (a cache of them).

The two sides' tables may be of different Unicode versions. By Unicode's normalization stability
they agree on every character both know; a character Python does not know (category Cn) never
begins a step and lets no step begin right after it (a newer table could join it to either
neighbour), so every boundary used is one to both.

Added tokens the library matches in the original text, before normalizing (normalized: false),
stand for one character of the normalized text each: a sentinel, a lone surrogate, which no
document holds. Text around them is normalized apart, as the library does, and text that only
normalizes to such a token's content is not taken for it. Their occurrences never overlap (the
loader checks that no content's end begins another), so they are found wherever a stretch holds
them whole.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Final

from librt.vecs import append, vec
from mypy_extensions import i32, i64, u8

# Added token k matched before normalizing stands as chr(SENTINEL + k); at most MAX_RAW of them.
SENTINEL: Final = 0xD800
MAX_RAW: Final = 0x800
# The sentinels as a regular expression class (mypyc takes no surrogate in a literal).
SENTINELS: Final = "[" + chr(0xD800) + "-" + chr(0xDFFF) + "]"
# A step's normalized text has as many characters as its original text (offsets inside map one
# to one): the flag of such steps in the step store.
ALIGNED: Final = 1
# Per code point, what is known of it (0: not yet looked at).
STARTS_STEP: Final = 1  # nothing before it joins it
KNOWN: Final = 2  # Python's tables know it
SELF: Final = 4  # a step of it alone normalizes to itself
LOOKED: Final = 8
# Characters of category other than M that compositions take as their second part (Unicode's
# NFC_Quick_Check=Maybe starters), besides the Hangul vowel and trailing jamo; later versions'
# ones are unknown to older tables, so never begin steps anyway. tests/core/test_unicode_steps.py
# checks this against Python's tables.
MAYBE_STARTERS: Final = frozenset(
    chr(c)
    for c in (
        0x09BE, 0x09D7, 0x0B3E, 0x0B56, 0x0B57, 0x0BBE, 0x0BD7, 0x0CC2, 0x0CD5, 0x0CD6,
        0x0D3E, 0x0D57, 0x0DCF, 0x0DDF, 0x0FB5, 0x0FB7, 0x102E, 0x1B35, 0x11127, 0x1133E,
        0x11357, 0x114B0, 0x114BA, 0x114BD, 0x115AF, 0x11930,
    )
)  # fmt: skip
# Steps whose normalized text is kept, per model: short ones, up to a bound (text repeats its
# characters; a text of endless new mark sequences should not grow the cache without end).
CACHED_STEP_CHARS: Final = 16
CACHED_STEPS: Final = 1 << 16
COMPOSING: Final = frozenset({"NFC", "NFKC"})
NON_ASCII: Final = re.compile(r"[^\x00-\x7f]")
FORMS: Final = frozenset({"NFC", "NFD", "NFKC", "NFKD"})


def maybe_starter(ch: str) -> bool:
    """Whether a composition may take ch, a starter, as its second part."""
    cp: i64 = ord(ch)
    return 0x1161 <= cp <= 0x1175 or 0x11A8 <= cp <= 0x11C2 or ch in MAYBE_STARTERS


class Stretch:
    """A stretch of original text normalized: its normalized text and its steps (original and
    normalized lengths, ALIGNED flags), aligned steps side by side merged into one."""

    parts: list[str]
    orig_lens: vec[i32]
    norm_lens: vec[i32]
    flags: vec[u8]

    def __init__(self) -> None:
        self.parts = []
        self.orig_lens = vec[i32]()
        self.norm_lens = vec[i32]()
        self.flags = vec[u8]()

    def add(self, orig: i64, out: str) -> None:
        """One step (or several aligned ones) of `orig` original characters that gave `out`."""
        self.row(orig, len(out))
        self.parts.append(out)

    def row(self, orig: i64, norm: i64) -> None:
        """A step of `orig` original characters and `norm` normalized ones (text kept apart)."""
        if orig == 0 and norm == 0:
            return
        aligned: bool = norm == orig
        m: i64 = len(self.flags)
        if aligned and m > 0 and self.flags[m - 1] == ALIGNED:
            self.orig_lens[m - 1] = self.orig_lens[m - 1] + i32(orig)
            self.norm_lens[m - 1] = self.norm_lens[m - 1] + i32(norm)
        else:
            self.orig_lens = append(self.orig_lens, i32(orig))
            self.norm_lens = append(self.norm_lens, i32(norm))
            self.flags = append(self.flags, u8(ALIGNED if aligned else 0))

    def text(self) -> str:
        return "".join(self.parts)


class UnicodeSteps:
    """One file's normalizer, cut into steps: where steps begin, each step's normalized text, and
    its added tokens matched before normalizing (shared by every document of the model)."""

    # The library's normalizer (None: the file has none) and its stages, each with its form
    # ("NFC", "NFD", "NFKC", "NFKD" or "Lowercase").
    normalizer: Any
    stages: list[Any]
    forms: list[str]
    # Whether ASCII text normalizes to itself (no Lowercase stage).
    ascii_same: bool
    marks: bytearray
    outputs: dict[str, str]
    # Characters looked at that a step of them alone changes, and what it makes of them.
    alone: dict[int, str]
    # Contents of the added tokens matched before normalizing, their pattern (longest first,
    # None: there are none), and the longest one's length.
    raw: list[str]
    raw_index: dict[str, int]
    raw_rx: Any
    raw_longest: i64

    def __init__(
        self, normalizer: Any, stages: list[Any], forms: list[str], raw: list[str]
    ) -> None:
        if len(raw) > MAX_RAW:
            raise ValueError(f"more than {MAX_RAW} added tokens matched before normalizing")
        self.normalizer = normalizer
        self.stages = stages
        self.forms = forms
        self.ascii_same = "Lowercase" not in forms
        self.marks = bytearray(0x110000)
        self.outputs = {}
        self.alone = {}
        if not self.ascii_same:
            for cp in range(ord("A"), ord("Z") + 1):
                self.alone[cp] = chr(cp).lower()
        self.raw = raw
        self.raw_index = {}
        for content in raw:
            self.raw_index[content] = len(self.raw_index)
        longest: i64 = 0
        escaped: list[str] = []
        for content in sorted(raw, key=len, reverse=True):
            longest = max(longest, len(content))
            escaped.append(re.escape(content))
        self.raw_longest = longest
        self.raw_rx = re.compile("|".join(escaped)) if raw else None

    # -- characters ------------------------------------------------------------------------------

    def mark(self, ch: str) -> i64:
        """What is known of ch (STARTS_STEP, KNOWN, SELF bits), looked up once."""
        cp: i64 = ord(ch)
        m: i64 = self.marks[cp]
        if m == 0:
            m = self._look(ch)
            self.marks[cp] = m
        return m

    def _look(self, ch: str) -> i64:
        if self.normalizer is None:
            return LOOKED | STARTS_STEP | KNOWN | SELF
        known: bool = ord(ch) < 128 or unicodedata.category(ch) != "Cn"
        out: i64 = LOOKED | (KNOWN if known else 0)
        if known and self._starts_step(ch):
            out |= STARTS_STEP
        alone = self.step_text(ch)
        if alone == ch:
            out |= SELF
        else:
            self.alone[ord(ch)] = alone
        return out

    def _starts_step(self, ch: str) -> bool:
        """Whether no stage joins ch to what precedes it: at each Unicode form, the first
        character that the stages before it make of ch decomposes to a starter that no
        composition takes second."""
        c = ch
        i: i64 = 0
        while i < len(self.forms):
            form = self.forms[i]
            if form in FORMS:
                if ord(c) >= 128 and unicodedata.category(c) == "Cn":
                    return False
                first = unicodedata.normalize("NFD" if form in ("NFC", "NFD") else "NFKD", c)[:1]
                if not first or unicodedata.combining(first) != 0:
                    return False
                if form in COMPOSING and maybe_starter(first):
                    return False
            made: str = self.stages[i].normalize_str(c)
            if not made:
                return False
            c = made[0]
            i += 1
        return True

    def step_text(self, step: str) -> str:
        """The library's normalized text of one step (or of text that begins and ends at step
        boundaries and holds no added token matched before normalizing)."""
        if self.normalizer is None:
            return step
        if step.isascii():
            return step if self.ascii_same else step.lower()
        found = self.outputs.get(step)
        if found is None:
            found = str(self.normalizer.normalize_str(step))
            if len(step) <= CACHED_STEP_CHARS and len(self.outputs) < CACHED_STEPS:
                self.outputs[step] = found
        return found

    def characters(self, text: str) -> str:
        """text with each character normalized alone (by_characters says when that is its
        normalized text)."""
        if self.normalizer is None:
            return text
        if text.isascii():
            return text if self.ascii_same else text.lower()
        marks = self.marks
        for ch in text:
            if marks[ord(ch)] == 0:
                self.mark(ch)
        return text.translate(self.alone)

    def by_characters(self, text: str, normalized: str) -> bool:
        """Whether `normalized`, the normalized text of text, is each of its characters
        normalized alone to one character."""
        if len(normalized) != len(text):
            return False
        return self.characters(text) == normalized

    def boundary(self, text: str, p: i64) -> bool:
        """Whether a step may begin at text[p] (0 < p < len(text)), judging by text[p - 1] and
        text[p] alone (added tokens aside)."""
        return (self.mark(text[p]) & STARTS_STEP) != 0 and (self.mark(text[p - 1]) & KNOWN) != 0

    # -- added tokens matched before normalizing ---------------------------------------------

    def raw_spans(self, text: str) -> list[tuple[int, int, int]]:
        """(start, end, index) of every added token matched before normalizing in text."""
        rx = self.raw_rx
        if rx is None:
            return []
        out: list[tuple[int, int, int]] = []
        for m in rx.finditer(text):
            out.append((m.start(), m.end(), self.raw_index[m.group()]))
        return out

    def inside_raw(self, text: str, p: i64) -> bool:
        """Whether text[p] lies inside an added token matched before normalizing that begins
        before it (text holds raw_longest - 1 characters on each side of p where it can)."""
        if self.raw_rx is None:
            return False
        return any(s < p < e for s, e, _ in self.raw_spans(text))

    # -- stretches -------------------------------------------------------------------------------

    def normalize(self, text: str) -> Stretch:
        """The normalized text and steps of text, which begins and ends at step boundaries (or
        at the document's ends) and cuts no added token matched before normalizing."""
        out = Stretch()
        pos: i64 = 0
        for s, e, k in self.raw_spans(text):
            if s > pos:
                self._plain(text[pos:s], out)
            out.add(e - s, chr(SENTINEL + k))
            pos = e
        if pos < len(text):
            self._plain(text[pos:], out)
        return out

    def normalize_text(self, text: str) -> str:
        """The normalized text of a whole original text, sentinels for added tokens."""
        if self.normalizer is None and self.raw_rx is None:
            return text
        return self.normalize(text).text()

    def _plain(self, text: str, out: Stretch) -> None:
        """Steps of text that holds no added token matched before normalizing: ASCII runs and
        runs of characters that are steps of themselves go in whole."""
        n: i64 = len(text)
        if text.isascii() or self.normalizer is None:
            out.add(n, self.step_text(text))
            return
        same: i64 = 0  # where the current run of steps of themselves began
        i: i64 = 0  # always a step boundary
        while i < n:
            if ord(text[i]) < 128:
                found = NON_ASCII.search(text, i)
                j: i64 = n if found is None else found.start()
                # The last ASCII character's step holds what follows when that is no boundary.
                end: i64 = j if j == n or self.boundary(text, j) else j - 1
                if end > i:
                    if self.ascii_same:
                        i = end
                        continue
                    self._flush(text, same, i, out)
                    out.add(end - i, self.step_text(text[i:end]))
                    i = end
                    same = i
                    continue
            j = i + 1
            while j < n and not self.boundary(text, j):
                j += 1
            if j > i + 1 or (self.mark(text[i]) & SELF) == 0:
                self._flush(text, same, i, out)
                out.add(j - i, self.step_text(text[i:j]))
                same = j
            i = j
        self._flush(text, same, n, out)

    def _flush(self, text: str, start: i64, end: i64, out: Stretch) -> None:
        """Characters [start, end), each a step of itself."""
        if end > start:
            out.add(end - start, text[start:end])
