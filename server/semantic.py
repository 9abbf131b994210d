"""Token boundaries as LSP semantic tokens: the legend, and full, delta and range results.

One semantic token per LLM token per line it touches, covering the token's characters on that line;
line breaks are never covered. Byte-fallback tokens of one character are one semantic token: the
core gives the character to the first (lead) byte token and makes the rest zero-width, and
zero-width tokens get no semantic token. Types alternate tokenlineA, tokenlineB, ... along each
line, starting with tokenlineA at the line's first semantic token, so touching neighbours differ.

Deltas: the server remembers the last full result of each document (its data, where each line's
semantic tokens start, and which lines begin inside a token). Edits record how many lines at the
start and at the end of the text they left alone; a delta recomputes only the lines between, after
checking that the LLM tokens did not change across the edge of that region (both the old and the
new tokenization have a token boundary at its first and last line start; then, by the locality of
BPE, every token outside it is unchanged). The edit sent is trimmed to the semantic tokens that
differ, so one typed character costs a few of them, not the document.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from dataclasses import dataclass

from lsprotocol import types

from tokenline.core import UTF16, UTF32, Document
from tokenline.core.model import FLAG_BYTE, FLAG_SPECIAL, FLAG_UNKNOWN, FLAG_WHITESPACE

TOKEN_TYPES = ["tokenlineA", "tokenlineB"]
TOKEN_MODIFIERS = ["whitespace", "bytes", "special", "unknown"]
MOD_WHITESPACE = 1
MOD_BYTES = 2
MOD_SPECIAL = 4
MOD_UNKNOWN = 8

LEGEND = types.SemanticTokensLegend(token_types=TOKEN_TYPES, token_modifiers=TOKEN_MODIFIERS)

# Documents longer than this (code points) are served by range only.
FULL_LIMIT = 2_000_000
# A range inside a line longer than this is coloured from the range's start, not the line's.
LONG_LINE = 1_000_000

_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass
class Lines:
    """Semantic tokens of a run of whole lines, relative-encoded after a given previous line."""

    data: list[int]
    counts: list[int]  # semantic tokens per line
    cont: bytearray  # 1 where the line starts inside an LLM token (no boundary at its start)
    last_line: int  # line of the last semantic token (the previous line when there is none)


@dataclass
class SemanticCache:
    """The last full (or delta-updated) result of a document."""

    result_id: str
    data: array[int]
    line_first: array[int]  # line_first[L]: semantic tokens on lines before L; len = lines + 1
    cont: bytearray
    n_lines: int


def encode_lines(
    doc: Document,
    first_line: int,
    last_line: int,
    unit: int,
    prev_line: int = 0,
    prev_col: int = 0,
    start_offset: int | None = None,
    end_offset: int | None = None,
) -> Lines:
    """Semantic tokens of lines [first_line, last_line), relative to (prev_line, prev_col).

    start_offset/end_offset narrow the text inside those lines (for ranges in very long lines);
    colours then restart at start_offset.
    """
    n_lines = int(doc.line_count())
    first_line = max(0, min(first_line, n_lines))
    last_line = max(first_line, min(last_line, n_lines))
    counts = [0] * (last_line - first_line)
    cont = bytearray(last_line - first_line)
    data: list[int] = []
    if first_line >= last_line:
        return Lines(data, counts, cont, prev_line)
    length = int(doc.length())
    a = int(doc.line_start(first_line))
    b = int(doc.line_start(last_line)) if last_line < n_lines else length
    if start_offset is not None:
        a = max(a, start_offset)
    if end_offset is not None:
        b = min(b, end_offset)
    text = doc.slice(a, b)
    # Line starts and content ends, relative to a; line j of the run is first_line + j.
    starts = [0]
    ends: list[int] = []
    for m in _BREAK.finditer(text):
        ends.append(m.start())
        starts.append(m.end())
    ends.append(len(text))
    if start_offset is not None and start_offset > int(doc.line_start(first_line)):
        # The run starts mid-line: columns are measured from the real line start.
        head = doc.slice(int(doc.line_start(first_line)), a)
        col_base = _units(head, unit)
    else:
        col_base = 0
    if b <= a:
        return Lines(data, counts, cont, prev_line)
    ntok = len(doc)
    k0 = int(doc.token_at(a))
    k1 = int(doc.token_at(b - 1)) + 1
    if k1 > ntok:
        k1 = ntok
    spans = doc.spans(k0, k1)
    ids = doc.ids_between(k0, k1)
    flags = doc.model.flags
    ascii_text = unit == UTF32 or text.isascii()
    line_units: list[int] | None = None  # per-character column table of a non-ASCII line
    line_units_for = -1

    nlines = len(starts)
    j = 0  # line (of the run) where the current token starts
    parity = 0
    parity_line = -1
    pl = prev_line
    pc = prev_col
    for t in range(k1 - k0):
        s = spans[2 * t] - a
        e = spans[2 * t + 1] - a
        if e <= s:
            continue  # zero-width: a byte-fallback continuation or a lone dummy prefix
        if s < 0:
            s = 0
        if e > len(text):
            e = len(text)
        while j + 1 < nlines and starts[j + 1] <= s:
            j += 1
        f = flags[ids[t]]
        mods = 0
        if f & FLAG_BYTE:
            mods = MOD_BYTES
            if text[s:e].isspace():
                mods |= MOD_WHITESPACE
        elif f & FLAG_WHITESPACE:
            mods = MOD_WHITESPACE
        if f & FLAG_SPECIAL:
            mods |= MOD_SPECIAL
        if f & FLAG_UNKNOWN:
            mods |= MOD_UNKNOWN
        while True:
            ls = starts[j]
            le = ends[j]
            ss = s if s > ls else ls
            ee = e if e < le else le
            if ee > ss:
                if ascii_text:
                    col = ss - ls
                    ln = ee - ss
                else:
                    if line_units_for != j:
                        line_units = _column_table(text[ls:le], unit)
                        line_units_for = j
                    assert line_units is not None
                    col = line_units[ss - ls]
                    ln = line_units[ee - ls] - col
                if j == 0:
                    col += col_base
                line = first_line + j
                if parity_line != line:
                    parity = 0
                    parity_line = line
                if line == pl:
                    data.extend((0, col - pc, ln, parity, mods))
                else:
                    data.extend((line - pl, col, ln, parity, mods))
                parity ^= 1
                pl = line
                pc = col
                counts[j] += 1
            if j + 1 < nlines and e > starts[j + 1]:
                j += 1
                cont[j] = 1  # this token began on an earlier line
                continue
            break
    if k0 < ntok and int(doc.token_start(k0)) < a and first_line > 0:
        cont[0] = 1
    return Lines(data, counts, cont, pl)


def _units(s: str, unit: int) -> int:
    if unit == UTF32 or s.isascii():
        return len(s)
    if unit == UTF16:
        return len(s.encode("utf-16-le", "surrogatepass")) // 2
    return len(s.encode("utf-8", "surrogatepass"))


def _column_table(line: str, unit: int) -> list[int]:
    """cols[i] = code units of line[:i], for i in 0..len(line)."""
    out = [0] * (len(line) + 1)
    acc = 0
    if unit == UTF16:
        for i, ch in enumerate(line):
            acc += 2 if ord(ch) > 0xFFFF else 1
            out[i + 1] = acc
    else:
        for i, ch in enumerate(line):
            c = ord(ch)
            acc += 1 if c < 0x80 else 2 if c < 0x800 else 3 if c < 0x10000 else 4
            out[i + 1] = acc
    return out


def full(doc: Document, unit: int, result_id: str) -> SemanticCache:
    """The semantic tokens of the whole document."""
    n_lines = int(doc.line_count())
    lines = encode_lines(doc, 0, n_lines, unit)
    line_first = array("q", [0]) * (n_lines + 1)
    acc = 0
    for i, c in enumerate(lines.counts):
        line_first[i] = acc
        acc += c
    line_first[n_lines] = acc
    return SemanticCache(result_id, array("I", lines.data), line_first, lines.cont, n_lines)


def _boundary(doc: Document, off: int) -> bool:
    """True when a token of the document starts exactly at off (or off is the end)."""
    k = int(doc.token_at(off))
    if k >= len(doc):
        return True
    return int(doc.token_start(k)) == off


def delta(
    doc: Document,
    unit: int,
    old: SemanticCache,
    clean_head: int,
    clean_tail: int,
    result_id: str,
) -> tuple[SemanticCache, list[types.SemanticTokensEdit]]:
    """Updates `old` in place to the document's semantic tokens and returns the edits that do it.

    clean_head/clean_tail: lines at the start/end of the text that no change touched since `old`.
    """
    n_old = old.n_lines
    n_new = int(doc.line_count())
    head = max(0, min(clean_head, n_old - 1, n_new - 1))
    tail = max(0, min(clean_tail, n_old - head, n_new - head))
    # Widen the region until both tokenizations have a boundary at its edges.
    while head > 0 and (old.cont[head] or not _boundary(doc, int(doc.line_start(head)))):
        head -= 1
    while tail > 0 and (
        old.cont[n_old - tail] or not _boundary(doc, int(doc.line_start(n_new - tail)))
    ):
        tail -= 1
    lf = old.line_first
    i0 = lf[head]
    i1 = lf[n_old - tail]
    total_old = lf[n_old]
    prev_line = bisect_right(lf, i0 - 1) - 1 if i0 > 0 else 0
    lines = encode_lines(doc, head, n_new - tail, unit, prev_line, 0)
    mid = lines.data
    repl: list[int] = list(mid)
    del_end = i1
    if i1 < total_old:
        # The first semantic token after the region: only its line delta can change.
        old_line = bisect_right(lf, i1) - 1
        new_line = old_line + (n_new - n_old)
        d = old.data
        repl.extend(
            (new_line - lines.last_line, d[5 * i1 + 1], d[5 * i1 + 2], d[5 * i1 + 3], d[5 * i1 + 4])
        )
        del_end = i1 + 1
    # Trim what did not change, in whole semantic tokens.
    d = old.data
    start = 5 * i0
    stop = 5 * del_end
    r0 = 0
    r1 = len(repl)
    while r0 < r1 and start < stop and d[start : start + 5].tolist() == repl[r0 : r0 + 5]:
        start += 5
        r0 += 5
    while r1 > r0 and stop > start and d[stop - 5 : stop].tolist() == repl[r1 - 5 : r1]:
        stop -= 5
        r1 -= 5
    edits: list[types.SemanticTokensEdit] = []
    if stop > start or r1 > r0:
        edits.append(
            types.SemanticTokensEdit(start=start, delete_count=stop - start, data=repl[r0:r1])
        )
    # Update the cache.
    d[5 * i0 : 5 * del_end] = array("I", repl)
    added = sum(lines.counts) - (i1 - i0)
    new_lf = lf[: head + 1]
    acc = i0
    for c in lines.counts:
        acc += c
        new_lf.append(acc)
    if added:
        new_lf.extend(array("q", [x + added for x in lf[n_old - tail + 1 :]]))
    else:
        new_lf.extend(lf[n_old - tail + 1 :])
    old.line_first = new_lf
    old.cont[head : n_old - tail] = lines.cont
    old.n_lines = n_new
    old.result_id = result_id
    return old, edits


def range_tokens(doc: Document, rng: types.Range, unit: int) -> list[int]:
    """Semantic tokens of the lines a range touches (whole lines, so colours match full)."""
    n_lines = int(doc.line_count())
    l0 = max(0, rng.start.line)
    l1 = min(n_lines, rng.end.line + 1)
    if l0 >= l1:
        return []
    a = int(doc.line_start(l0))
    b = int(doc.line_end(l1 - 1))
    if b - a > LONG_LINE:
        start = int(doc.offset(rng.start.line, rng.start.character, unit))
        end = int(doc.offset(rng.end.line, rng.end.character, unit))
        k0 = int(doc.token_at(start))
        if k0 < len(doc):
            start = min(start, int(doc.token_start(k0)))
        return encode_lines(doc, l0, l1, unit, 0, 0, start, end).data
    return encode_lines(doc, l0, l1, unit).data
