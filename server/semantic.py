"""Token boundaries as LSP semantic tokens: the legend, and full, delta and range results.

One semantic token per LLM token per line it touches, covering the token's characters on that line;
line breaks are never covered. Tokens that share a character are one semantic token, covering
their characters together (the core's `Document.group`): byte-fallback bytes of one character,
and byte-level tokens (tiktoken, Tekken) that split a character's UTF-8 bytes. Only such tokens
are byte tokens (TOKEN_BYTE), so only those are looked up. Zero-width tokens get no semantic
token. Types alternate tokenlineA, tokenlineB, ... along each line, starting with tokenlineA at
the line's first semantic token, so touching neighbours differ.

Deltas: the server remembers the last full result of each document (its data, where each line's
semantic tokens start, and which lines begin inside a token). Edits record how many lines at the
start and at the end of the text they left alone; a delta recomputes only the lines between, after
checking that the LLM tokens did not change across the edge of that region (both the old and the
new tokenization have a token boundary at its first and last line start; then, by the locality of
BPE, every token outside it is unchanged). The edit sent is trimmed to the semantic tokens that
differ, so one typed character costs a few of them, not the document.

Large documents: an editor that takes a full result re-reads all of it on every delta (VS Code
rebuilds its whole token store per edit, which makes typing in a 1 MB document stutter), and the
first full result of a large document is megabytes. A client that asks for ranges and supports
ServerCancelled (VS Code) gets colours of documents over RANGE_ONLY_ABOVE characters by range
only (what is on screen): their full and delta requests get a ServerCancelled answer, which VS
Code takes as "not now" and keeps asking for the visible ranges (a null result would mean "no
colours, and done"). Other clients get full results up to FULL_LIMIT characters, and null above
it (lsp-mode, for one, asks for a range first and then for the full result when idle, and keeps
the full one).
"""

from __future__ import annotations

import contextlib
import itertools
import re
from array import array
from bisect import bisect_right
from dataclasses import dataclass

from lsprotocol import types

from tokenline.core import (
    TOKEN_BYTE,
    TOKEN_SPECIAL,
    TOKEN_UNKNOWN,
    TOKEN_WHITESPACE,
    UTF32,
    Document,
)
from tokenline.server.feature import (
    ALL_LINES,
    Change,
    DocState,
    Feature,
    Handler,
    Host,
    NotReady,
)
from tokenline.server.positions import unit_columns, units

TOKEN_TYPES = ["tokenlineA", "tokenlineB"]
TOKEN_MODIFIERS = ["whitespace", "bytes", "special", "unknown"]
MOD_WHITESPACE = 1
MOD_BYTES = 2
MOD_SPECIAL = 4
MOD_UNKNOWN = 8

LEGEND = types.SemanticTokensLegend(token_types=TOKEN_TYPES, token_modifiers=TOKEN_MODIFIERS)

# Documents longer than this (code points) get colours by range only for a client that asks for
# ranges and supports ServerCancelled: VS Code's work per delta then stays about a millisecond.
RANGE_ONLY_ABOVE = 100_000
# Documents longer than this get no full result at all (null to a client without ranges).
FULL_LIMIT = 2_000_000
# A range inside a line longer than this is coloured from the range's start, not the line's.
LONG_LINE = 1_000_000
# Integers per semantic token in LSP's data: line delta, column delta, length, type, modifiers.
FIELDS = 5

_BREAK = re.compile(r"\r\n|\r|\n")
ALL_KINDS = TOKEN_BYTE | TOKEN_SPECIAL | TOKEN_UNKNOWN | TOKEN_WHITESPACE


def _modifiers_of_kind(kind: int) -> int:
    """The modifiers of a token of this kind (a byte token's whitespace is added per token)."""
    mods = 0
    if kind & TOKEN_BYTE:
        mods = MOD_BYTES
    elif kind & TOKEN_WHITESPACE:
        mods = MOD_WHITESPACE
    if kind & TOKEN_SPECIAL:
        mods |= MOD_SPECIAL
    if kind & TOKEN_UNKNOWN:
        mods |= MOD_UNKNOWN
    return mods


MODIFIERS_OF_KIND = [_modifiers_of_kind(kind) for kind in range(ALL_KINDS + 1)]


@dataclass
class Lines:
    """Semantic tokens of a run of whole lines, relative-encoded after a given previous line."""

    data: array[int]  # "I": five per semantic token, as LSP sends them
    counts: list[int]  # semantic tokens per line
    cont: bytearray  # 1 where the line starts inside an LLM token (no boundary at its start)
    last_line: int  # line of the last semantic token (the previous line when there is none)


@dataclass
class SemanticCache:
    """The last full (or delta-updated) result of a document."""

    result_id: str
    data: array[int]
    line_first: array[int]  # "I": line_first[L]: semantic tokens on lines before L; len = lines + 1
    cont: bytearray
    n_lines: int
    # Lines unchanged at the start and at the end of the text since this result.
    clean_head: int = ALL_LINES
    clean_tail: int = ALL_LINES


@dataclass
class _Run:
    """The text of the lines being encoded, and where its lines start and end within it."""

    first_line: int
    start: int  # code-point offset of text[0] in the document
    text: str
    starts: list[int]  # line starts, relative to start; line j of the run is first_line + j
    ends: list[int]  # line content ends (before the line break), relative to start
    col_base: int  # code units before `start` on its line (a run that starts mid-line)

    @property
    def end(self) -> int:
        return self.start + len(self.text)


def _run(
    doc: Document,
    first_line: int,
    last_line: int,
    unit: int,
    start_offset: int | None,
    end_offset: int | None,
) -> _Run:
    """Lines [first_line, last_line) of doc, narrowed to [start_offset, end_offset) if given."""
    line_start = int(doc.line_start(first_line))
    a = line_start
    b = int(doc.line_start(last_line)) if last_line < doc.line_count() else int(doc.length())
    if start_offset is not None:
        a = max(a, start_offset)
    if end_offset is not None:
        b = min(b, end_offset)
    text = doc.slice(a, b)
    starts = [0]
    ends: list[int] = []
    for m in _BREAK.finditer(text):
        ends.append(m.start())
        starts.append(m.end())
    ends.append(len(text))
    # A run that starts mid-line measures its columns from the real line start.
    col_base = units(doc.slice(line_start, a), unit) if a > line_start else 0
    return _Run(first_line, a, text, starts, ends, col_base)


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
    lines = Lines(
        array("I"), [0] * (last_line - first_line), bytearray(last_line - first_line), prev_line
    )
    if first_line >= last_line:
        return lines
    run = _run(doc, first_line, last_line, unit, start_offset, end_offset)
    if not run.text:
        return lines
    k0 = _encode_tokens(doc, run, unit, lines, prev_col)
    if k0 < len(doc) and int(doc.token_start(k0)) < run.start and first_line > 0:
        lines.cont[0] = 1
    return lines


def _encode_tokens(doc: Document, run: _Run, unit: int, lines: Lines, prev_col: int) -> int:
    """Appends the semantic tokens of the run's LLM tokens to `lines`; returns the first token.

    The hot loop of every semantic result: plain locals and comparisons, no calls per token.
    """
    text, starts, ends, a, n_text = run.text, run.starts, run.ends, run.start, len(run.text)
    k0 = int(doc.group(doc.token_at(a))[0])
    k1 = min(int(doc.group(doc.token_at(run.end - 1))[1]), len(doc))
    spans, kinds = _units(doc, k0, k1)
    ascii_text = unit == UTF32 or text.isascii()
    columns: list[int] = []  # code units before each character of line `columns_of` (non-ASCII)
    columns_of = -1
    data, counts, cont, last_j = lines.data, lines.counts, lines.cont, len(starts) - 1
    j = parity = 0  # j: the line (of the run) where the current token starts
    parity_line, last_line, last_col = -1, lines.last_line, prev_col
    for t in range(len(kinds)):
        start, end = spans[2 * t] - a, spans[2 * t + 1] - a
        if end <= start:
            continue  # zero-width: a byte-fallback continuation or a lone dummy prefix
        start, end = (start if start > 0 else 0), (end if end < n_text else n_text)
        while j < last_j and starts[j + 1] <= start:
            j += 1
        kind = kinds[t]
        mods = MODIFIERS_OF_KIND[kind]
        if kind & TOKEN_BYTE and text[start:end].isspace():
            mods |= MOD_WHITESPACE
        while True:
            line_start, line_end = starts[j], ends[j]
            piece_start = start if start > line_start else line_start
            piece_end = end if end < line_end else line_end
            if piece_end > piece_start:
                if ascii_text:
                    col, length = piece_start - line_start, piece_end - piece_start
                else:
                    if columns_of != j:
                        columns, columns_of = unit_columns(text[line_start:line_end], unit), j
                    col = columns[piece_start - line_start]
                    length = columns[piece_end - line_start] - col
                line = run.first_line + j
                if j == 0:
                    col += run.col_base
                if parity_line != line:
                    parity, parity_line = 0, line
                data.extend(
                    (0, col - last_col, length, parity, mods)
                    if line == last_line
                    else (line - last_line, col, length, parity, mods)
                )
                parity ^= 1
                last_line, last_col = line, col
                counts[j] += 1
            if j < last_j and end > starts[j + 1]:
                j += 1
                cont[j] = 1  # this token began on an earlier line
                continue
            break
    lines.last_line = last_line
    return k0


def _units(doc: Document, k0: int, k1: int) -> tuple[list[int], list[int]]:
    """Spans (flattened) and kinds of what tokens [k0, k1) show as: a token each, except that
    tokens sharing a character are one unit, with the span of all of them and the first's kind.

    k0 must start a group and k1 end one. Only byte tokens can share a character.
    """
    spans = doc.spans(k0, k1)
    kinds = [int(doc.model.token_kind(i)) for i in doc.ids_between(k0, k1)]
    if not any(kind & TOKEN_BYTE for kind in kinds):
        return spans, kinds
    out_spans: list[int] = []
    out_kinds: list[int] = []
    n = k1 - k0
    t = 0
    while t < n:
        end = t + 1
        if kinds[t] & TOKEN_BYTE:
            end = max(end, min(int(doc.group(k0 + t)[1]) - k0, n))
        out_spans += (spans[2 * t], spans[2 * end - 1])
        out_kinds.append(kinds[t])
        t = end
    return out_spans, out_kinds


def starts_unit(doc: Document, offset: int) -> bool:
    """True when a token that starts no shared character starts exactly at offset (or offset is
    the end of the text): no semantic token crosses it."""
    k = int(doc.token_at(offset))
    if k >= len(doc):
        return True
    return int(doc.token_start(k)) == offset and int(doc.group(k)[0]) == k


def full(doc: Document, unit: int, result_id: str) -> SemanticCache:
    """The semantic tokens of the whole document."""
    n_lines = int(doc.line_count())
    lines = encode_lines(doc, 0, n_lines, unit)
    line_first = array("I", itertools.accumulate(lines.counts, initial=0))
    return SemanticCache(result_id, lines.data, line_first, lines.cont, n_lines)


def delta(
    doc: Document, unit: int, old: SemanticCache, result_id: str
) -> tuple[SemanticCache, list[types.SemanticTokensEdit]]:
    """Updates `old` in place to the document's semantic tokens and returns the edits that do it.

    Only the lines between old.clean_head and old.clean_tail (lines no change touched since
    `old`) are encoded again; both counters are reset.
    """
    n_old, n_new = old.n_lines, int(doc.line_count())
    head, tail = _changed_region(doc, old, n_new)
    lf = old.line_first
    i0, i1 = lf[head], lf[n_old - tail]  # the old semantic tokens of the region: [i0, i1)
    prev_line = bisect_right(lf, i0 - 1) - 1 if i0 > 0 else 0
    lines = encode_lines(doc, head, n_new - tail, unit, prev_line, 0)
    repl: list[int] = lines.data.tolist()
    del_end = i1
    if i1 < lf[n_old]:
        # The first semantic token after the region: only its line delta can change.
        new_line = bisect_right(lf, i1) - 1 + (n_new - n_old)
        following = old.data[FIELDS * i1 : FIELDS * (i1 + 1)].tolist()
        repl.extend([new_line - lines.last_line, *following[1:]])
        del_end = i1 + 1
    edits = _trimmed_edit(old.data, FIELDS * i0, FIELDS * del_end, repl)
    old.data[FIELDS * i0 : FIELDS * del_end] = array("I", repl)
    _update_lines(old, head, tail, n_new, lines)
    old.result_id = result_id
    old.clean_head = old.clean_tail = ALL_LINES
    return old, edits


def _changed_region(doc: Document, old: SemanticCache, n_new: int) -> tuple[int, int]:
    """Lines at the start and at the end whose semantic tokens are surely unchanged.

    Starts from the lines no change touched and widens the region between them until both the
    old and the new tokenization have a token boundary at its edges.
    """
    n_old = old.n_lines
    head = max(0, min(old.clean_head, n_old - 1, n_new - 1))
    tail = max(0, min(old.clean_tail, n_old - head, n_new - head))
    while head > 0 and (old.cont[head] or not starts_unit(doc, int(doc.line_start(head)))):
        head -= 1
    while tail > 0 and (
        old.cont[n_old - tail] or not starts_unit(doc, int(doc.line_start(n_new - tail)))
    ):
        tail -= 1
    return head, tail


def _trimmed_edit(
    data: array[int], start: int, stop: int, repl: list[int]
) -> list[types.SemanticTokensEdit]:
    """The edit replacing data[start:stop] by repl, without the whole semantic tokens that match
    at either end (none when nothing differs)."""
    r0, r1 = 0, len(repl)
    while r0 < r1 and start < stop and _same_token(data, start, repl, r0):
        start += FIELDS
        r0 += FIELDS
    while r1 > r0 and stop > start and _same_token(data, stop - FIELDS, repl, r1 - FIELDS):
        stop -= FIELDS
        r1 -= FIELDS
    if stop <= start and r1 <= r0:
        return []
    return [types.SemanticTokensEdit(start=start, delete_count=stop - start, data=repl[r0:r1])]


def _same_token(data: array[int], at: int, repl: list[int], repl_at: int) -> bool:
    """True when the semantic token at data[at] equals the one at repl[repl_at]."""
    return data[at : at + FIELDS].tolist() == repl[repl_at : repl_at + FIELDS]


def _update_lines(old: SemanticCache, head: int, tail: int, n_new: int, lines: Lines) -> None:
    """The cache's per-line tables after lines [head, n_old - tail) became `lines`."""
    n_old, lf = old.n_lines, old.line_first
    i0, i1 = lf[head], lf[n_old - tail]
    added = sum(lines.counts) - (i1 - i0)
    new_lf = lf[:head]
    new_lf.extend(itertools.accumulate(lines.counts, initial=i0))
    if added:
        new_lf.extend(array("I", [x + added for x in lf[n_old - tail + 1 :]]))
    else:
        new_lf.extend(lf[n_old - tail + 1 :])
    old.line_first = new_lf
    old.cont[head : n_old - tail] = lines.cont
    old.n_lines = n_new


def range_tokens(doc: Document, rng: types.Range, unit: int) -> array[int]:
    """Semantic tokens of the lines a range touches (whole lines, so colours match full)."""
    n_lines = int(doc.line_count())
    l0 = max(0, rng.start.line)
    l1 = min(n_lines, rng.end.line + 1)
    if l0 >= l1:
        return array("I")
    a = int(doc.line_start(l0))
    b = int(doc.line_end(l1 - 1))
    if b - a > LONG_LINE:
        start = int(doc.offset(rng.start.line, rng.start.character, unit))
        end = int(doc.offset(rng.end.line, rng.end.character, unit))
        k0 = int(doc.token_at(start))
        if k0 < len(doc):
            start = min(start, int(doc.token_start(doc.group(k0)[0])))
        return encode_lines(doc, l0, l1, unit, 0, 0, start, end).data
    return encode_lines(doc, l0, l1, unit).data


class SemanticTokensFeature(Feature):
    """Semantic tokens (full, delta, range), with each document's last full result for deltas."""

    def __init__(self, host: Host) -> None:
        super().__init__(host)
        self._results: dict[str, SemanticCache] = {}
        self._result_ids = itertools.count(1)
        self.can_refresh = False
        # Documents longer than this get no full result (RANGE_ONLY_ABOVE when the client asks
        # for ranges, else FULL_LIMIT).
        self.full_limit = FULL_LIMIT

    def handlers(self) -> list[Handler]:
        return [
            Handler(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, self.full, LEGEND),
            Handler(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL_DELTA, self.delta),
            Handler(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE, self.range),
        ]

    def initialize(self, params: types.InitializeParams) -> None:
        ws = params.capabilities.workspace
        self.can_refresh = bool(ws and ws.semantic_tokens and ws.semantic_tokens.refresh_support)
        doc = params.capabilities.text_document
        sem = doc.semantic_tokens if doc else None
        # `range` is true or {} (an empty object) when the client asks for ranges; a client that
        # supports ServerCancelled asks again for what it refused (VS Code: the visible ranges).
        if sem and sem.requests.range not in (None, False) and sem.server_cancel_support:
            self.full_limit = RANGE_ONLY_ABOVE

    def document_opened(self, st: DocState) -> None:
        self._results.pop(st.uri, None)

    def document_changed(self, st: DocState, change: Change) -> None:
        if change.new_model:
            self._results.pop(st.uri, None)
            return
        cache = self._results.get(st.uri)
        if cache is not None:
            cache.clean_head = min(cache.clean_head, change.head)
            cache.clean_tail = min(cache.clean_tail, change.tail)

    def document_closed(self, st: DocState) -> None:
        self._results.pop(st.uri, None)

    def refresh(self) -> None:
        if self.can_refresh:
            with contextlib.suppress(Exception):
                self.host.request(types.WORKSPACE_SEMANTIC_TOKENS_REFRESH, None)

    def full(self, params: types.SemanticTokensParams) -> types.SemanticTokens | None:
        return self._full_result(self.host.document(params.text_document.uri))

    def delta(
        self, params: types.SemanticTokensDeltaParams
    ) -> types.SemanticTokens | types.SemanticTokensDelta | None:
        st = self.host.document(params.text_document.uri)
        cache = self._results.get(st.uri)
        if (
            st.doc.length() > self.full_limit
            or cache is None
            or cache.result_id != params.previous_result_id
        ):
            return self._full_result(st)
        try:
            cache, edits = delta(st.doc, self.host.unit, cache, self._next_result_id())
        except Exception:
            del self._results[st.uri]
            raise
        return types.SemanticTokensDelta(edits=edits, result_id=cache.result_id)

    def range(self, params: types.SemanticTokensRangeParams) -> types.SemanticTokens:
        st = self.host.document(params.text_document.uri)
        data = range_tokens(st.doc, params.range, self.host.unit)
        return types.SemanticTokens(data=data.tolist())

    def _full_result(self, st: DocState) -> types.SemanticTokens | None:
        """A full result, remembered for deltas. A document served by range only gets a
        ServerCancelled answer for a client that supports it (it asks for ranges instead), None
        for another."""
        if st.doc.length() > self.full_limit:
            self._results.pop(st.uri, None)
            if self.full_limit == RANGE_ONLY_ABOVE:
                raise NotReady(
                    f"{st.uri}: colours by range only (over {RANGE_ONLY_ABOVE:,} characters)"
                )
            return None
        cache = full(st.doc, self.host.unit, self._next_result_id())
        self._results[st.uri] = cache
        return types.SemanticTokens(data=cache.data.tolist(), result_id=cache.result_id)

    def _next_result_id(self) -> str:
        return str(next(self._result_ids))
