"""Chat files counted as conversations: what each message and conversation is billed, shown as
inlay hints and hover, checked against the window or budget, summed in `tokenline/status`.

A document is a chat file when tokenline.core.chatfile says so (JSON Lines with a `messages`
array per line; JSON or YAML holding `messages`). Its records are billed under the document's
own model by tokenline.core.chatbill (a chat template, mistral-common, OpenAI's rule as an
estimate, or the contents alone) and read from the text alone (`Host.text`), so they are
answered even while the document's tokens are still being made (a large file's first encode
waits in idle time: catchup.py).

A JSONL file is kept line by line (chatlines.LineTable): an inlay-hint request counts only the
lines of its range; the rest is counted in idle slices (server/idle.py), the status `pending`
meanwhile; an edit re-counts only the lines it touched (bills are kept by content, so an
unchanged message costs a lookup). JSON and YAML files are parsed whole after a change.
"""

from __future__ import annotations

import logging
import time
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field

from lsprotocol import types

from tokenline.core import Model, chat_kind, first_record
from tokenline.server.chatlines import (
    BLANK,
    LineTable,
    Record,
    SegmentBiller,
    WholeFile,
    counted_line,
    located_line,
    read_lines,
)
from tokenline.server.chatview import (
    conversation_hint,
    diagnostic,
    message_hints,
    message_hover,
    summary,
)
from tokenline.server.feature import Change, DocState, Feature, Handler, Host, TextView
from tokenline.server.idle import SLICE_SECONDS
from tokenline.server.memory import freeze
from tokenline.server.positions import unit_columns
from tokenline.server.uris import uri_path

log = logging.getLogger("tokenline.server")

CHAT = "chat"
# chat_kind's name for JSON Lines.
JSONL = "jsonl"
# Documents longer than this are chat files by their first record alone (JSONL), and a JSON or
# YAML file that long is not read as one.
WHOLE_CHECK_CHARS = 4_000_000
# Documents up to this long with a chat file's suffix are checked again after each change.
RECHECK_CHARS = 100_000
# JSONL files up to this long are counted whole when they open (the first status is whole).
EAGER_OPEN_CHARS = 100_000
# Changed lines counted in the didChange itself (more wait for idle time).
EAGER_LINES = 8
# Lines read at once when counting in idle time.
IDLE_READ = 256
# Characters of lines one idle slice counts at most (about a millisecond of contents through
# the segment cache; a slice also stops at SLICE_SECONDS, for slow chat templates). A line
# longer than this is a slice of its own.
SLICE_CHARS = 1 << 16
# The status is published this often while totals are counted in idle time.
PROGRESS_SECONDS = 0.5
# At most this many lines of a range are answered (a client that asks for a whole large file).
MOST_HINT_LINES = 5000
# At most this many per-conversation diagnostics are published.
MOST_DIAGNOSTICS = 1000
CHAT_SUFFIXES = (".jsonl", ".json", ".yaml", ".yml")
# A JSONL file of at least this many lines has its records moved out of the collector's walks
# as they are counted (memory.freeze).
FROZEN_LINES = 10_000


@dataclass
class ChatDoc:
    """One open chat file: its kind, its model's biller, its records."""

    kind: str
    biller: SegmentBiller
    table: LineTable | None = None
    whole: WholeFile | None = None
    published: float = field(default_factory=time.monotonic)
    # Lines read ahead by idle counting: the first one's number and their texts (dropped when
    # the text changes).
    ahead: tuple[int, list[str]] = (0, [])


def kind_of(uri: str, text: str) -> str | None:
    """The chat kind of a document's text (a long one by its first non-blank line)."""
    path = uri_path(uri) or uri.split("?", 1)[0]
    if not path.lower().endswith(CHAT_SUFFIXES):
        return None
    if len(text) > WHOLE_CHECK_CHARS:
        if not path.lower().endswith(".jsonl"):
            return None
        text = first_record(text)
    try:
        return chat_kind(path, text)
    except Exception:
        log.exception("%s: could not tell whether it is a chat file", uri)
        return None


class ChatFeature(Feature):
    """Inlay hints, hover, diagnostics and status totals of chat files."""

    def __init__(self, host: Host) -> None:
        super().__init__(host)
        self._docs: dict[str, ChatDoc] = {}
        # Kinds told by `opening` before the store has the document.
        self._kinds: dict[str, str | None] = {}
        self._billers: dict[int, tuple[Model, SegmentBiller]] = {}

    def handlers(self) -> list[Handler]:
        options = types.InlayHintOptions(resolve_provider=False)
        return [
            Handler(types.TEXT_DOCUMENT_INLAY_HINT, self.inlay_hint, options),
            Handler(types.TEXT_DOCUMENT_HOVER, self.hover),
        ]

    # -- hooks ------------------------------------------------------------------------------------

    def opening(self, uri: str, text: str) -> str | None:
        """The chat kind of a document about to open (the server defers a large one's encode)."""
        kind = self._kinds[uri] = kind_of(uri, text)
        return kind

    def document_opened(self, st: DocState) -> None:
        self._docs.pop(st.uri, None)
        kind = self._kinds.pop(st.uri) if st.uri in self._kinds else self._kind_from_text(st.uri)
        self._start(st, kind)

    def text_changed(self, st: DocState, change: Change) -> None:
        doc = self._docs.get(st.uri)
        if doc is None:
            self._check_again(st)
            return
        if doc.whole is not None:
            doc.whole.changed()
            return
        assert doc.table is not None
        doc.ahead = (0, [])
        text = self.host.text(st.uri)
        fresh = doc.table.shift(change.head, change.tail, text.line_count())
        if len(fresh) <= EAGER_LINES:
            self._count_now(doc, text, fresh.start, fresh.stop)
        self._schedule(st.uri, doc)

    def document_changed(self, st: DocState, change: Change) -> None:
        """A new model bills every record anew (text changes came through text_changed)."""
        if change.new_model and st.uri in self._docs:
            self._start(st, self._docs[st.uri].kind)

    def document_closed(self, st: DocState) -> None:
        self._docs.pop(st.uri, None)
        self._kinds.pop(st.uri, None)

    def _check_again(self, st: DocState) -> None:
        """A small document with a chat file's suffix becomes one as its first record is typed."""
        path = uri_path(st.uri) or st.uri
        if not path.lower().endswith(CHAT_SUFFIXES):
            return
        text = self.host.text(st.uri)
        if text.length() <= RECHECK_CHARS:
            kind = kind_of(st.uri, text.slice(0, text.length()))
            if kind is not None:
                self._start(st, kind)
                self.host.mark(st.uri)

    def _kind_from_text(self, uri: str) -> str | None:
        text = self.host.text(uri)
        n = text.length()
        return kind_of(uri, text.slice(0, n if n <= WHOLE_CHECK_CHARS else 1 << 20))

    def _start(self, st: DocState, kind: str | None) -> None:
        """Starts counting the document's records (none when it is no chat file)."""
        if kind is None:
            self._docs.pop(st.uri, None)
            return
        biller = self._biller(st.model)
        if biller is None:
            return
        doc = ChatDoc(kind, biller)
        if kind == JSONL:
            doc.table = LineTable(self.host.text(st.uri).line_count(), st.settings.limit)
        else:
            doc.whole = WholeFile(kind)
        self._docs[st.uri] = doc
        text = self.host.text(st.uri)
        if doc.table is not None and text.length() <= EAGER_OPEN_CHARS:
            self._count_now(doc, text, 0, len(doc.table))
        self._schedule(st.uri, doc)

    def _biller(self, model: Model) -> SegmentBiller | None:
        found = self._billers.get(id(model))
        if found is not None and found[0] is model:
            return found[1]
        try:
            biller = SegmentBiller.for_model(model)
        except Exception:
            log.exception("%s: chat files cannot be counted with this model", model.name)
            return None
        self._billers[id(model)] = (model, biller)
        return biller

    # -- counting ---------------------------------------------------------------------------------

    def _schedule(self, uri: str, doc: ChatDoc) -> None:
        """Counts the rest of a JSONL file in idle slices."""
        if doc.table is not None and doc.table.pending:
            self.host.later(CHAT, uri, lambda: self._count_some(uri, doc))

    def _count_now(self, doc: ChatDoc, text: TextView, first: int, last: int) -> None:
        """Counts lines [first, last), placing their messages (a request or an edit needs them)."""
        assert doc.table is not None
        for i, line in enumerate(read_lines(text, first, last)):
            doc.table.put(first + i, located_line(doc.biller, line))

    def _count_some(self, uri: str, doc: ChatDoc) -> bool:
        """One idle slice of counting lines not counted yet; True while some remain."""
        table = doc.table
        if table is None or self._docs.get(uri) is not doc:
            return False
        deadline = time.perf_counter() + SLICE_SECONDS
        work = 0
        line = table.next_waiting()
        while line >= 0 and work < SLICE_CHARS and time.perf_counter() < deadline:
            body = self._line_ahead(uri, doc, line)
            work += len(body) + 1
            table.put(line, counted_line(doc.biller, body))
            line = table.next_waiting()
        if len(table) >= FROZEN_LINES:
            # Its records live as long as the file is open: a full collection walking them all
            # cost a keystroke 250 ms at 100,000 conversations, and while they were counted an
            # idle slice up to 100 ms (each full collection walked all counted so far). Frozen
            # slice by slice, no collection walks more than one slice's.
            freeze()
        now = time.monotonic()
        if line < 0 or now - doc.published >= PROGRESS_SECONDS:
            doc.published = now
            self.host.mark(uri)
        return line >= 0

    def _line_ahead(self, uri: str, doc: ChatDoc, line: int) -> str:
        """The text of a line, read IDLE_READ lines at a time."""
        first, lines = doc.ahead
        if not first <= line < first + len(lines):
            lines = read_lines(self.host.text(uri), line, line + IDLE_READ)
            first, lines = doc.ahead = (line, lines)
        return lines[line - first]

    def _records(self, uri: str, first: int, last: int) -> list[tuple[int, str, Record]] | None:
        """(line, its text, its record) of each record that starts on lines [first, last]; the
        lines' texts for a JSONL file, "" otherwise (offsets are the document's). None when the
        document is no chat file."""
        doc = self._docs.get(uri)
        if doc is None:
            return None
        text = self.host.text(uri)
        if doc.whole is not None:
            records = doc.whole.parsed(text, doc.biller)
            return [(-1, "", r) for r in records if r.conv and first <= r.conv.line <= last]
        table = doc.table
        assert table is not None
        last = min(last + 1, len(table), first + MOST_HINT_LINES)
        out = []
        for i, body in enumerate(read_lines(text, first, last)):
            line = first + i
            r = table.records[line]
            if r is None or not r.located or not table.done[line]:
                r = located_line(doc.biller, body)
                table.put(line, r)
            if r is not BLANK:
                out.append((line, body, r))
        return out

    # -- requests ---------------------------------------------------------------------------------

    def inlay_hint(self, params: types.InlayHintParams) -> list[types.InlayHint] | None:
        uri = params.text_document.uri
        found = self._records(uri, params.range.start.line, params.range.end.line)
        if found is None:
            return None
        doc = self._docs[uri]
        place = Placer(self.host.text(uri), self.host.unit)
        hints: list[types.InlayHint] = []
        for line, body, r in found:
            if r.conv is None:
                continue
            if r.shown is None or r.shown[0] != line:
                at = place.at(line, body)
                made = [
                    *message_hints(r, at),
                    conversation_hint(r, at(r.conv.end), doc.biller.mode),
                ]
                r.shown = (line, made)
            hints += r.shown[1]
        return hints

    def hover(self, params: types.HoverParams) -> types.Hover | None:
        uri = params.text_document.uri
        pos = params.position
        found = self._records(uri, pos.line, pos.line)
        if not found:
            return None
        doc = self._docs[uri]
        place = Placer(self.host.text(uri), self.host.unit)
        for line, body, r in found:
            if r.conv is None:
                continue
            offset = place.offset(line, body, pos)
            for i, m in enumerate(r.conv.messages):
                if m.start <= offset < m.end:
                    at = place.at(line, body)
                    return message_hover(r, i, doc.biller, at(m.start), at(m.end))
        return None

    # -- what the status and the diagnostics show (counted.ChatFiles) -----------------------------

    def chat_status(self, st: DocState) -> dict[str, object] | None:
        doc = self._docs.get(st.uri)
        if doc is None:
            return None
        if doc.whole is not None:
            doc.whole.parsed(self.host.text(st.uri), doc.biller)
            return summary(doc.whole.totals, doc.biller.mode, False)
        assert doc.table is not None
        return summary(doc.table.totals, doc.biller.mode, doc.table.pending)

    def chat_diagnostics(self, st: DocState) -> list[types.Diagnostic] | None:
        doc = self._docs.get(st.uri)
        if doc is None:
            return None
        limit = st.settings.limit
        if doc.whole is not None:
            text = self.host.text(st.uri)
            records = doc.whole.parsed(text, doc.biller)
            place = Placer(text, self.host.unit)
            return [
                diagnostic(st.settings, r, *place.span(r))
                for r in records
                if r.error is not None or (r.bill is not None and r.bill.tokens > limit)
            ][:MOST_DIAGNOSTICS]
        table = doc.table
        assert table is not None
        table.set_limit(limit)
        return [
            diagnostic(st.settings, table.records[line] or BLANK, *whole_line(line))
            for line in table.problem_lines(MOST_DIAGNOSTICS)
        ]


def whole_line(line: int) -> tuple[types.Position, types.Position]:
    """A line from its start to its end (a column past a line's end is its end, as LSP says)."""
    return types.Position(line=line, character=0), types.Position(line=line, character=END)


# A column past the end of any line.
END = (1 << 31) - 1


class Placer:
    """LSP positions of records' offsets: from a JSONL line's own text, or the document's."""

    def __init__(self, text: TextView, unit: int) -> None:
        self.text = text
        self.unit = unit

    def at(self, line: int, body: str) -> Callable[[int], types.Position]:
        """Position of an offset of the record on `line` (-1: offsets of the document)."""
        if line < 0:
            return self._document
        if body.isascii():
            return lambda off: types.Position(line=line, character=off)
        columns = unit_columns(body, self.unit)
        return lambda off: types.Position(line=line, character=columns[min(off, len(body))])

    def offset(self, line: int, body: str, pos: types.Position) -> int:
        """The offset of a position: in the record's line, or the document's (line -1)."""
        if line < 0:
            return self.text.offset(pos.line, pos.character, self.unit)
        if body.isascii():
            return pos.character
        return bisect_right(unit_columns(body, self.unit), pos.character) - 1

    def span(self, r: Record) -> tuple[types.Position, types.Position]:
        assert r.conv is not None
        return self._document(r.conv.start), self._document(r.conv.end)

    def _document(self, off: int) -> types.Position:
        line, character = self.text.position(off, self.unit)
        return types.Position(line=line, character=character)
