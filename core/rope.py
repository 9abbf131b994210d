"""The text of a document as chunks, with line and UTF-8/UTF-16 indexes.

Editors address text by line and column in UTF-16 (or UTF-8, UTF-32) code units; the core addresses
it by code point. Per-chunk counts of characters, line breaks and code units, summed by Fenwick
trees, turn one into the other in O(log n + chunk) without rescanning the document.
Line breaks are "\\n", "\\r\\n" and a lone "\\r", as in LSP.
"""

from __future__ import annotations

from typing import Final

from mypy_extensions import i64

from tokenline.core.fenwick import Fenwick

TARGET: Final = 2048
MAXIMUM: Final = 4096
MINIMUM: Final = 512

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
    return s.count("\n") + s.count("\r") - s.count("\r\n")


def utf8_width(cp: i64) -> i64:
    """Bytes of code point cp in UTF-8."""
    if cp >= 0x10000:
        return 4
    if cp >= 0x800:
        return 3
    if cp >= 0x80:
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


class TextRope:
    chunks: list[str]
    n_chars: list[i64]
    n_breaks: list[i64]
    n_u16: list[i64]
    n_u8: list[i64]
    f_chars: Fenwick
    f_breaks: Fenwick
    f_u16: Fenwick
    f_u8: Fenwick
    total: i64

    def __init__(self, text: str) -> None:
        self.f_chars = Fenwick([])
        self.f_breaks = Fenwick([])
        self.f_u16 = Fenwick([])
        self.f_u8 = Fenwick([])
        self.chunks = []
        self.n_chars = []
        self.n_breaks = []
        self.n_u16 = []
        self.n_u8 = []
        self.total = 0
        pieces = _split(text)
        self._set_range(0, 0, pieces)

    # -- storage -------------------------------------------------------------------------------

    def _set_range(self, c0: i64, c1: i64, pieces: list[str]) -> None:
        """Replaces chunks [c0, c1) with pieces."""
        chars: list[i64] = []
        breaks: list[i64] = []
        u16: list[i64] = []
        u8: list[i64] = []
        for p in pieces:
            chars.append(len(p))
            breaks.append(count_breaks(p))
            u16.append(units16(p))
            u8.append(units8(p))
        if len(pieces) == c1 - c0:
            j: i64 = 0
            while j < len(pieces):
                c: i64 = c0 + j
                self.total += chars[j] - self.n_chars[c]
                self.f_chars.add(c, chars[j] - self.n_chars[c])
                self.f_breaks.add(c, breaks[j] - self.n_breaks[c])
                self.f_u16.add(c, u16[j] - self.n_u16[c])
                self.f_u8.add(c, u8[j] - self.n_u8[c])
                self.chunks[c] = pieces[j]
                self.n_chars[c] = chars[j]
                self.n_breaks[c] = breaks[j]
                self.n_u16[c] = u16[j]
                self.n_u8[c] = u8[j]
                j += 1
            return
        self.chunks[c0:c1] = pieces
        self.n_chars[c0:c1] = chars
        self.n_breaks[c0:c1] = breaks
        self.n_u16[c0:c1] = u16
        self.n_u8[c0:c1] = u8
        self.f_chars.rebuild(self.n_chars)
        self.f_breaks.rebuild(self.n_breaks)
        self.f_u16.rebuild(self.n_u16)
        self.f_u8.rebuild(self.n_u8)
        self.total = self.f_chars.total()

    def _locate(self, off: i64) -> tuple[i64, i64]:
        """Chunk holding offset off and the position in it; the end of text maps to the end of
        the last chunk."""
        n: i64 = len(self.chunks)
        if n == 0:
            return 0, 0
        if off >= self.total:
            return n - 1, self.n_chars[n - 1]
        c: i64 = self.f_chars.search(off)
        return c, off - self.f_chars.prefix(c)

    def replace(self, start: i64, end: i64, text: str) -> None:
        """Replaces the code points [start, end) with text (offsets already validated)."""
        n: i64 = len(self.chunks)
        if n == 0:
            self._set_range(0, 0, _split(text))
            return
        c0, i0 = self._locate(start)
        c1, i1 = self._locate(end)
        combined = self.chunks[c0][:i0] + text + self.chunks[c1][i1:]
        lo: i64 = c0
        hi: i64 = c1 + 1
        # Never leave "\r" and "\n" of one line break in two chunks, nor a sliver of a chunk.
        if lo > 0 and (
            len(combined) < MINIMUM
            or (combined.startswith("\n") and self.chunks[lo - 1].endswith("\r"))
        ):
            lo -= 1
            combined = self.chunks[lo] + combined
        if hi < n and (
            len(combined) < MINIMUM
            or (combined.endswith("\r") and self.chunks[hi].startswith("\n"))
        ):
            combined = combined + self.chunks[hi]
            hi += 1
        size: i64 = len(combined)
        parts: i64 = hi - lo
        if size == 0:
            pieces: list[str] = []
        elif parts * MINIMUM <= size <= parts * MAXIMUM or (size <= MAXIMUM and parts == n):
            # Keep the number of chunks: point updates, no re-index.
            pieces = _split_into(combined, parts if size >= parts else 1)
        else:
            pieces = _split(combined)
        self._set_range(lo, hi, pieces)

    # -- text ----------------------------------------------------------------------------------

    def length(self) -> i64:
        return self.total

    def text(self) -> str:
        return "".join(self.chunks)

    def slice(self, start: i64, end: i64) -> str:
        if start < 0:
            start = 0
        if end > self.total:
            end = self.total
        if start >= end:
            return ""
        c0, i0 = self._locate(start)
        c1, i1 = self._locate(end)
        if c0 == c1:
            return self.chunks[c0][i0:i1]
        parts: list[str] = [self.chunks[c0][i0:]]
        c: i64 = c0 + 1
        while c < c1:
            parts.append(self.chunks[c])
            c += 1
        parts.append(self.chunks[c1][:i1])
        return "".join(parts)

    # -- lines and code units ------------------------------------------------------------------

    def line_count(self) -> i64:
        return self.f_breaks.total() + 1

    def line_of(self, off: i64) -> i64:
        """Line (0-based) holding code-point offset off."""
        if off <= 0 or not self.chunks:
            return 0
        if off > self.total:
            off = self.total
        c, i = self._locate(off)
        return self.f_breaks.prefix(c) + count_breaks(self.chunks[c][:i])

    def line_start(self, line: i64) -> i64:
        """Offset of the first character of line; the end of text past the last line."""
        if line <= 0:
            return 0
        total_breaks: i64 = self.f_breaks.total()
        if line > total_breaks:
            return self.total
        target: i64 = line - 1  # 0-based index of the break that ends line - 1
        c: i64 = self.f_breaks.search(target)
        k: i64 = target - self.f_breaks.prefix(c)
        chunk = self.chunks[c]
        base: i64 = self.f_chars.prefix(c)
        pos: i64 = 0
        n: i64 = len(chunk)
        while pos < n:
            ch = chunk[pos]
            if ch == "\n" or ch == "\r":
                if k == 0:
                    if ch == "\r" and pos + 1 < n and chunk[pos + 1] == "\n":
                        return base + pos + 2
                    return base + pos + 1
                k -= 1
                if ch == "\r" and pos + 1 < n and chunk[pos + 1] == "\n":
                    pos += 1
            pos += 1
        return self.total

    def line_end(self, line: i64) -> i64:
        """Offset just before the line break that ends line (or the end of text)."""
        if line + 1 >= self.line_count():
            return self.total
        nxt: i64 = self.line_start(line + 1)
        if nxt >= 2 and self.slice(nxt - 2, nxt) == "\r\n":
            return nxt - 2
        return nxt - 1

    def units_before(self, off: i64, unit: i64) -> i64:
        """Code units of the given encoding in text[:off]."""
        if unit == UTF32 or not self.chunks:
            return off
        if off > self.total:
            off = self.total
        c, i = self._locate(off)
        head = self.chunks[c][:i]
        if unit == UTF16:
            return self.f_u16.prefix(c) + units16(head)
        return self.f_u8.prefix(c) + units8(head)

    def offset_of_units(self, target: i64, unit: i64) -> i64:
        """Code-point offset at code-unit position target (rounded down inside a character)."""
        if target <= 0 or not self.chunks:
            return 0
        if unit == UTF32:
            return min(target, self.total)
        fw = self.f_u16 if unit == UTF16 else self.f_u8
        if target >= fw.total():
            return self.total
        c: i64 = fw.search(target)
        rem: i64 = target - fw.prefix(c)
        chunk = self.chunks[c]
        base: i64 = self.f_chars.prefix(c)
        if chunk.isascii():
            return base + rem
        pos: i64 = 0
        n: i64 = len(chunk)
        while pos < n:
            cp: i64 = ord(chunk[pos])
            w: i64 = (2 if cp >= 0x10000 else 1) if unit == UTF16 else utf8_width(cp)
            if rem < w:
                break
            rem -= w
            pos += 1
        return base + pos

    def position(self, off: i64, unit: i64) -> tuple[i64, i64]:
        """(line, column in code units) of offset off."""
        if off < 0:
            off = 0
        if off > self.total:
            off = self.total
        line: i64 = self.line_of(off)
        start: i64 = self.line_start(line)
        return line, self.units_before(off, unit) - self.units_before(start, unit)

    def offset(self, line: i64, column: i64, unit: i64) -> i64:
        """Offset of (line, column in code units), clamped to the line as LSP asks."""
        if line < 0:
            return 0
        if line >= self.line_count():
            return self.total
        start: i64 = self.line_start(line)
        end: i64 = self.line_end(line)
        if column <= 0:
            return start
        off: i64 = self.offset_of_units(self.units_before(start, unit) + column, unit)
        if off > end:
            return end
        return off


def _split(text: str) -> list[str]:
    """Cuts text into chunks near TARGET code points, never inside a "\\r\\n"."""
    n: i64 = len(text)
    if n == 0:
        return []
    if n <= MAXIMUM:
        return [text]
    return _split_into(text, (n + TARGET - 1) // TARGET)


def _split_into(text: str, parts: i64) -> list[str]:
    """Cuts text into `parts` nearly equal chunks, never inside a "\\r\\n"."""
    n: i64 = len(text)
    if parts <= 1:
        return [text]
    out: list[str] = []
    start: i64 = 0
    p: i64 = 1
    while p <= parts:
        stop: i64 = (n * p) // parts
        if stop < n and stop > start + 1 and text[stop - 1] == "\r" and text[stop] == "\n":
            stop += 1
        if stop > start:
            out.append(text[start:stop])
            start = stop
        p += 1
    if start < n:
        out.append(text[start:])
    return out
