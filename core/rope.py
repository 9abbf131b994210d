"""The text of a document as chunks, with line and UTF-8/UTF-16 indexes.

Editors address text by line and column in UTF-16 (or UTF-8, UTF-32) code units; the core addresses
it by code point. Per-chunk counts of characters, line breaks and code units, summed by the chunk
block's Fenwick trees, turn one into the other in O(log n + chunk) without rescanning the document.
Line breaks are "\\n", "\\r\\n" and a lone "\\r", as in LSP.
"""

from __future__ import annotations

from typing import Final

from librt.vecs import append, vec
from mypy_extensions import i64

from tokenline.core.chunks import STAGED, Chunks

# Code points a chunk holds: a few thousand keeps an edit's string copy short and the list small.
TARGET: Final = 2048

# The measures of a chunk (CHARS is the block's SIZE: positions count code points).
CHARS: Final = 0
BREAKS: Final = 1
CODE_UNITS_16: Final = 2
CODE_UNITS_8: Final = 3
MEASURES: Final = 4

CR: Final = 0x0D
LF: Final = 0x0A
# The first code points that take two, three and four bytes in UTF-8; from SUPPLEMENTARY on, a
# code point also takes two UTF-16 units (a surrogate pair).
TWO_BYTES: Final = 0x80
THREE_BYTES: Final = 0x800
SUPPLEMENTARY: Final = 0x10000

UTF8: Final = 8
UTF16: Final = 16
UTF32: Final = 32


def check_text(text: str) -> None:
    """Raises ValueError for text that is not valid Unicode (a lone surrogate)."""
    if text.isascii():
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        pos: int = exc.start
        raise ValueError(
            f"text holds a lone surrogate U+{ord(text[pos]):04X} at offset {pos}; "
            "it is not valid Unicode and cannot be tokenized"
        ) from None


def count_breaks(s: str) -> i64:
    n: i64 = s.count("\n")
    if "\r" not in s:
        return n  # the common text, LF alone: one count, not three (the two-character one slow)
    return n + s.count("\r") - s.count("\r\n")


def utf8_width(cp: i64) -> i64:
    """Bytes of code point cp in UTF-8."""
    if cp >= SUPPLEMENTARY:
        return 4
    if cp >= THREE_BYTES:
        return 3
    if cp >= TWO_BYTES:
        return 2
    return 1


def units16(s: str) -> i64:
    if s.isascii():
        return len(s)
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def units8(s: str) -> i64:
    if s.isascii():
        return len(s)
    return len(s.encode("utf-8", "surrogatepass"))


class TextRope(Chunks):
    """The text in `Chunks` of str, measured in code points, line breaks, UTF-16 and UTF-8 units.

    A "\\r\\n" is never cut in two, so every line break lies within one chunk.
    """

    chunks: list[str]
    staged: str

    def __init__(self, text: str, chunk_target: i64 = TARGET) -> None:
        super().__init__(MEASURES, chunk_target, True)
        self.chunks = []
        self.staged = text
        self._commit(0, 0)

    def replace(self, start: i64, end: i64, text: str) -> None:
        """Replaces the code points [start, end) with text (offsets already validated)."""
        if self.chunk_count() > 0 and self._replace_inside(start, end, text):
            return
        self.staged = text
        self._splice(start, end)

    def _replace_inside(self, start: i64, end: i64, text: str) -> bool:
        """The common edit: inside one chunk, away from its first and last characters, leaving
        it within its size bounds. Its measures change by what the edit removed and added, so
        the chunk is not measured again (for non-ASCII text, two encodes of the whole chunk)."""
        c, i0 = self.locate(start)
        chunk = self.chunks[c]
        n: i64 = len(chunk)
        i1: i64 = i0 + end - start
        size: i64 = n - (end - start) + len(text)
        if i0 == 0 or i1 >= n or size < self.minimum or size > self.maximum:
            return False  # a chunk edge (a "\r\n" may join across it) or a resize
        old = chunk[i0:i1]
        new = chunk[:i0] + text + chunk[i1:]
        self.chunks[c] = new
        sums = self.sums
        sums[CHARS].set(c, size)
        # The breaks counted with one unchanged character either side: a "\r\n" formed or
        # split at either end of the edit is counted, and those beyond cancel out.
        breaks: i64 = count_breaks(new[i0 - 1 : i0 + len(text) + 1]) - count_breaks(
            chunk[i0 - 1 : i1 + 1]
        )
        if breaks != 0:
            sums[BREAKS].set(c, sums[BREAKS].value(c) + breaks)
        units: i64 = units16(text) - units16(old)
        if units != 0:
            sums[CODE_UNITS_16].set(c, sums[CODE_UNITS_16].value(c) + units)
        units = units8(text) - units8(old)
        if units != 0:
            sums[CODE_UNITS_8].set(c, sums[CODE_UNITS_8].value(c) + units)
        return True

    # -- the chunk hooks -----------------------------------------------------------------------

    def _staged_size(self) -> i64:
        return len(self.staged)

    def _stage_head(self, c: i64, i: i64) -> None:
        self.staged = self.chunks[c][:i] + self.staged

    def _stage_tail(self, c: i64, i: i64) -> None:
        self.staged = self.staged + self.chunks[c][i:]

    def _place(self, lo: i64, hi: i64, cuts: vec[i64]) -> None:
        run = self.staged
        self.staged = ""
        if len(cuts) == 2 and hi - lo == 1:
            self.chunks[lo] = run  # the common edit: one chunk rewritten
        else:
            self.chunks[lo:hi] = [run[cuts[p - 1] : cuts[p]] for p in range(1, len(cuts))]

    def _measure(self, c: i64, m: i64) -> i64:
        chunk = self.chunks[c]
        if m == CHARS:
            return len(chunk)
        if m == BREAKS:
            return count_breaks(chunk)
        if m == CODE_UNITS_16:
            return units16(chunk)
        return units8(chunk)

    def _element(self, c: i64, i: i64) -> i64:
        return ord(self.staged[i] if c == STAGED else self.chunks[c][i])

    def _keeps_together(self, left: i64, right: i64) -> bool:
        return left == CR and right == LF

    # -- text ----------------------------------------------------------------------------------

    def length(self) -> i64:
        return self.measure_total(CHARS)

    def text(self) -> str:
        return "".join(self.chunks)

    def slice(self, start: i64, end: i64) -> str:
        start = max(start, 0)
        end = min(end, self.length())
        if start >= end:
            return ""
        c0, i0 = self.locate(start)
        c1, i1 = self.locate(end)
        if c0 == c1:
            return self.chunks[c0][i0:i1]
        return "".join([self.chunks[c0][i0:], *self.chunks[c0 + 1 : c1], self.chunks[c1][:i1]])

    # -- lines and code units ------------------------------------------------------------------

    def line_count(self) -> i64:
        return self.measure_total(BREAKS) + 1

    def line_of(self, off: i64) -> i64:
        """Line (0-based) holding code-point offset off."""
        if off <= 0 or not self.chunks:
            return 0
        c, i = self.locate(min(off, self.length()))
        chunk = self.chunks[c]
        if "\r" not in chunk:
            return self.measure_before(BREAKS, c) + chunk.count("\n", 0, i)
        return self.measure_before(BREAKS, c) + count_breaks(chunk[:i])

    def line_start(self, line: i64) -> i64:
        """Offset of the first character of line; the end of text past the last line."""
        if line <= 0:
            return 0
        if line > self.measure_total(BREAKS):
            return self.length()
        # The break that ends line - 1 is the k-th (0-based) of chunk c.
        c, k = self.find(BREAKS, line - 1)
        chunk = self.chunks[c]
        base: i64 = self.measure_before(CHARS, c)
        pos: i64 = 0
        n: i64 = len(chunk)
        if "\r" not in chunk:
            # Only "\n" breaks: str.find skips from one to the next (a loop over every character
            # of a chunk cost 20 µs, the most of an LSP position's conversion).
            at: i64 = chunk.find("\n")
            while at >= 0 and k > 0:
                at = chunk.find("\n", at + 1)
                k -= 1
            return base + at + 1 if at >= 0 else self.length()
        while pos < n:
            ch = chunk[pos]
            if ch == "\n" or ch == "\r":
                crlf: bool = ch == "\r" and pos + 1 < n and chunk[pos + 1] == "\n"
                if k == 0:
                    return base + pos + (2 if crlf else 1)
                k -= 1
                if crlf:
                    pos += 1
            pos += 1
        return self.length()

    def line_end(self, line: i64) -> i64:
        """Offset just before the line break that ends line (or the end of text)."""
        if line + 1 >= self.line_count():
            return self.length()
        nxt: i64 = self.line_start(line + 1)
        if nxt >= 2 and self.slice(nxt - 2, nxt) == "\r\n":
            return nxt - 2
        return nxt - 1

    def units_before(self, off: i64, unit: i64) -> i64:
        """Code units of the given encoding in text[:off]."""
        if unit == UTF32 or not self.chunks:
            return off
        c, i = self.locate(min(off, self.length()))
        head = self.chunks[c][:i]
        if unit == UTF16:
            return self.measure_before(CODE_UNITS_16, c) + units16(head)
        return self.measure_before(CODE_UNITS_8, c) + units8(head)

    def offset_of_units(self, target: i64, unit: i64) -> i64:
        """Code-point offset at code-unit position target (rounded down inside a character)."""
        if target <= 0 or not self.chunks:
            return 0
        if unit == UTF32:
            return min(target, self.length())
        measure: i64 = CODE_UNITS_16 if unit == UTF16 else CODE_UNITS_8
        if target >= self.measure_total(measure):
            return self.length()
        c, rem = self.find(measure, target)
        chunk = self.chunks[c]
        base: i64 = self.measure_before(CHARS, c)
        if chunk.isascii():
            return base + rem
        pos: i64 = 0
        n: i64 = len(chunk)
        while pos < n:
            cp: i64 = ord(chunk[pos])
            w: i64 = (2 if cp >= SUPPLEMENTARY else 1) if unit == UTF16 else utf8_width(cp)
            if rem < w:
                break
            rem -= w
            pos += 1
        return base + pos

    def position(self, off: i64, unit: i64) -> tuple[i64, i64]:
        """(line, column in code units) of offset off."""
        off = min(max(off, 0), self.length())
        line: i64 = self.line_of(off)
        start: i64 = self.line_start(line)
        return line, self.units_before(off, unit) - self.units_before(start, unit)

    def offset(self, line: i64, column: i64, unit: i64) -> i64:
        """Offset of (line, column in code units), clamped to the line as LSP asks."""
        if line < 0:
            return 0
        if line >= self.line_count():
            return self.length()
        start: i64 = self.line_start(line)
        end: i64 = self.line_end(line)
        if column <= 0:
            return start
        off: i64 = self.offset_of_units(self.units_before(start, unit) + column, unit)
        if off > end:
            return end
        return off


class RopeBuilder:
    """A TextRope of a long text made a piece at a time, each piece a bounded amount of work (an
    editor opening a large file in idle time: building the whole rope of 100 MB took 0.23 s in
    one step). The chunks are those TextRope(text) makes, cut at the same places."""

    text: str
    rope: TextRope
    parts: i64
    part: i64
    start: i64
    chunks: list[str]
    measures: list[vec[i64]]

    def __init__(self, text: str, chunk_target: i64 = TARGET) -> None:
        self.text = text
        self.rope = TextRope("", chunk_target)
        n: i64 = len(text)
        # As Chunks._parts cuts a run of n elements that replaces no chunk.
        if n == 0:
            self.parts = 0
        elif n <= self.rope.maximum:
            self.parts = 1
        else:
            self.parts = (n + chunk_target - 1) // chunk_target
        self.part = 1
        self.start = 0
        self.chunks = []
        self.measures = [vec[i64]() for _ in range(MEASURES)]

    def build_some(self, budget: i64) -> bool:
        """Cuts and measures chunks of about `budget` more characters (at least one chunk);
        True while more remain."""
        text = self.text
        n: i64 = len(text)
        done: i64 = 0
        while self.part <= self.parts and (done == 0 or done < budget):
            stop: i64 = (n * self.part) // self.parts
            while 0 < stop < n and ord(text[stop - 1]) == CR and ord(text[stop]) == LF:
                stop += 1  # a "\r\n" stays in one chunk
            self.part += 1
            if stop <= self.start:
                continue
            chunk = text[self.start : stop]
            check_text(chunk)
            self.chunks.append(chunk)
            self.measures[CHARS] = append(self.measures[CHARS], len(chunk))
            self.measures[BREAKS] = append(self.measures[BREAKS], count_breaks(chunk))
            self.measures[CODE_UNITS_16] = append(self.measures[CODE_UNITS_16], units16(chunk))
            self.measures[CODE_UNITS_8] = append(self.measures[CODE_UNITS_8], units8(chunk))
            done += stop - self.start
            self.start = stop
        return self.part <= self.parts

    def built(self) -> TextRope:
        """The rope, once build_some has returned False (its sums made in O(chunks))."""
        rope = self.rope
        rope.chunks = self.chunks
        for m in range(MEASURES):
            rope.sums[m].splice(0, 0, self.measures[m])
        self.text = ""
        self.chunks = []
        return rope
