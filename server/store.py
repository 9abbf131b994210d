"""The open documents: one tokenline.core.Document per URI, kept identical to the client's text.

Every content change of a `didChange` goes to the core as one edit, in order, with its LSP range
converted to code-point offsets by the core's line index (never by rescanning the text). pygls's
own TextDocument is not used: the server's protocol class keeps pygls's workspace out of
didOpen/didChange/didClose, so no second copy of a document is rebuilt per change. The server
answers those notifications (app.py) and hands each document to its features. A document whose
model re-encodes whole is edited through its backlog while its tokens catch up (catchup.py), and
so is a document whose next edit would encode a long stretch at once (a long Unigram piece:
Document.encodes_long), until its tokens have caught up; the opening work a model defers is
finished in idle time (idle.py).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from typing import NamedTuple, Protocol

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from tokenline.core import UTF16, Document, Model
from tokenline.server.ahead import Counted
from tokenline.server.catchup import CatchUp
from tokenline.server.feature import EVERYTHING, Change, DocState, Edit, NotReady, TextView
from tokenline.server.idle import SLICE_SECONDS, IdleWork
from tokenline.server.memory import LARGE, give_back
from tokenline.server.settings import Settings
from tokenline.server.text import clean

log = logging.getLogger("tokenline.server")

PREPARE = "prepare"
# Characters of deferred opening work (Document.prepare) in a document's first slice; later
# slices are sized from the time the last one took, to take about SLICE_SECONDS.
FIRST_PREPARE_BUDGET = 1 << 12
PREPARE_BUDGETS = (1 << 8, 1 << 18)


class TextChange(NamedTuple):
    """One content change of a didChange: its range as (start line, start column, end line, end
    column) in the agreed code units, None for the whole text; and the new text. Plain values, so
    that a keystroke read straight from its JSON (server/quick.py) needs no LSP objects."""

    range: tuple[int, int, int, int] | None
    text: str


def text_changes(params: types.DidChangeTextDocumentParams) -> list[TextChange]:
    """The content changes of a didChange that pygls read into LSP objects."""
    out = []
    for event in params.content_changes:
        rng = getattr(event, "range", None)
        if rng is None:
            out.append(TextChange(None, event.text))
        else:
            start, end = rng.start, rng.end
            out.append(
                TextChange((start.line, start.character, end.line, end.character), event.text)
            )
    return out


class EditableText(TextView, Protocol):
    """What the store edits a document's text through: its Document, or its backlog."""

    def edit(self, start: int, end: int, text: str) -> None: ...


class Preparation:
    """A document's deferred opening work, one slice per call, each sized to take about
    SLICE_SECONDS (a long line may still make one longer: the core stops where it can)."""

    def __init__(self, st: DocState, docs: DocumentStore) -> None:
        self.st = st
        self.doc = st.doc
        self.docs = docs
        self.budget = FIRST_PREPARE_BUDGET

    def __call__(self) -> bool:
        if self.docs.get(self.st.uri) is not self.st or self.st.doc is not self.doc:
            return False  # closed, or re-tokenized (which prepares its new Document)
        start = time.perf_counter()
        more = bool(self.doc.prepare(self.budget))
        took = max(time.perf_counter() - start, 1e-6)
        # Towards the budget that takes SLICE_SECONDS, by at most a factor 4 per slice.
        scaled = self.budget * min(4.0, max(0.25, SLICE_SECONDS / took))
        self.budget = int(min(max(scaled, PREPARE_BUDGETS[0]), PREPARE_BUDGETS[1]))
        return more


class DocumentStore:
    """Documents by URI, opened, changed and closed as the client says."""

    def __init__(
        self,
        idle: IdleWork | None = None,
        caught_up: Callable[[DocState, Change], None] | None = None,
    ) -> None:
        """idle: where deferred work goes; caught_up: told when a document's tokens have
        caught up with its text (catchup.py)."""
        self._docs: dict[str, DocState] = {}
        self.idle = idle or IdleWork()
        self.catchup = CatchUp(self.idle, caught_up or (lambda st, change: None))

    def __iter__(self) -> Iterator[DocState]:
        return iter(list(self._docs.values()))

    def __len__(self) -> int:
        return len(self._docs)

    def get(self, uri: str) -> DocState | None:
        return self._docs.get(uri)

    def require(self, uri: str) -> DocState:
        """The open document at uri, its tokens in step with its text: an InvalidParams error
        answer when it is not open, NotReady while its tokens catch up."""
        st = self._docs.get(uri)
        if st is None:
            raise JsonRpcInvalidParams(f"document not open: {uri}")
        if st.pending:
            raise NotReady(f"{uri}: the tokens are catching up with the latest changes")
        return st

    def open(
        self,
        item: types.TextDocumentItem,
        settings: Settings,
        model: Model,
        defer: bool = False,
        counted: Counted | None = None,
    ) -> DocState:
        """A document the client opened, tokenized with `model` (`defer`: in idle time, after
        other work; the document is pending until then: catchup.py), or already tokenized from
        its file (`counted`: its very text with `model`, ahead.py)."""
        text, replaced = clean(item.text)
        start = time.perf_counter()
        if counted is not None:
            doc, defer = counted.doc, False
        else:
            doc = Document(model, "" if defer else text)
        st = DocState(item.uri, item.language_id, item.version, doc, settings)
        if defer:
            self.catchup.defer(st, text)
        else:
            took = counted.seconds if counted is not None else time.perf_counter() - start
            self.catchup.took(st, took, text)
        if replaced:
            _log_surrogates(st, replaced)
        self._docs[item.uri] = st
        self._prepare_later(st)
        return st

    def change(
        self, params: types.DidChangeTextDocumentParams, unit: int
    ) -> tuple[DocState, Change] | None:
        """Applies one didChange read into LSP objects (see `edit`)."""
        doc = params.text_document
        return self.edit(doc.uri, doc.version, text_changes(params), unit)

    def edit(
        self, uri: str, version: int | None, changes: Sequence[TextChange], unit: int
    ) -> tuple[DocState, Change] | None:
        """Applies one didChange; the document and what the change left alone (None when the
        document is not open). A pending document took the change into its backlog only."""
        st = self._docs.get(uri)
        if st is None:
            log.warning("didChange for %s, which is not open; ignored", uri)
            return None
        backlog = self.catchup.backlog(st)
        if backlog is None and encodes_long(st.doc, changes, unit):
            log.info("%s: an edit in a long piece; its tokens catch up on a worker", uri)
            backlog = self.catchup.hold(st)
        if backlog is not None:
            change = apply_changes(st, backlog, version, changes, unit)
            self.catchup.edited(st, change)
            return st, change
        start = time.perf_counter()
        change = apply_changes(st, None, version, changes, unit)
        self.catchup.took(st, time.perf_counter() - start)
        return st, change

    def text(self, uri: str) -> EditableText:
        """The open document's newest text (its backlog's while its tokens catch up);
        InvalidParams when it is not open."""
        st = self._docs.get(uri)
        if st is None:
            raise JsonRpcInvalidParams(f"document not open: {uri}")
        backlog = self.catchup.backlog_of(st)
        return st.doc if backlog is None else backlog

    def close(self, uri: str) -> DocState | None:
        """The document the client closed, out of the store (None when it was not open)."""
        self.idle.discard(uri)
        self.catchup.forget(uri)
        return self._docs.pop(uri, None)

    def set_model(self, st: DocState, model: Model) -> Change:
        """Re-tokenizes the document's newest text with another model (a full encode)."""
        log.info("%s: re-tokenizing with %s", st.uri, model.name)
        text = self.catchup.text(st)
        self.catchup.drop(st)
        self.idle.discard(st.uri)
        start = time.perf_counter()
        st.doc = Document(model, text)
        self.catchup.took(st, time.perf_counter() - start, text)
        if len(text) >= LARGE:
            give_back()  # the old Document's memory
        self._prepare_later(st)
        return Change(0, 0, new_model=True)

    def _prepare_later(self, st: DocState) -> None:
        """Finishes the document's opening in idle time (Document.prepare), so that the first
        edit in a far part of a large document stays fast."""
        self.idle.add(PREPARE, st.uri, Preparation(st, self))


def _log_surrogates(st: DocState, n: int) -> None:
    if not st.surrogates_logged:
        st.surrogates_logged = True
        log.warning(
            "%s: replaced %d lone surrogate(s) by U+FFFD (same UTF-16 length; not valid Unicode, "
            "so they cannot be tokenized); further ones in this document are replaced silently",
            st.uri,
            n,
        )


def apply_changes(
    st: DocState,
    backlog: EditableText | None,
    version: int | None,
    changes: Sequence[TextChange],
    unit: int,
) -> Change:
    """Applies the content changes of one didChange, in order, to the document's backlog (or,
    None, its Document), then records the version."""
    _check_version(st, version)
    change = Change()
    for rng, raw in changes:
        text, replaced = clean(raw)
        if replaced:
            _log_surrogates(st, replaced)
        if rng is None:
            _replace_all(st, backlog, text)
            change = change.then(EVERYTHING)
        else:
            change = change.then(apply_range(st, backlog, rng, text, unit))
    st.version = version
    return change


def encodes_long(doc: Document, changes: Sequence[TextChange], unit: int) -> bool:
    """Whether a ranged change would have the Document encode a long stretch at once, asked
    before any is applied: each range read in the text as it is (later changes of a didChange
    may be off by the earlier ones; a whole-text change is a full encode anyway)."""
    n_lines = doc.line_count()
    n = doc.length()
    for rng, text in changes:
        if rng is None:
            continue
        sl, sc, el, ec = rng
        if (el, ec) < (sl, sc):
            sl, sc, el, ec = el, ec, sl, sc
        a = _rough_offset(doc, sl, sc, unit, n_lines, n)
        b = _rough_offset(doc, el, ec, unit, n_lines, n)
        if doc.encodes_long(a, max(a, b), text):
            return True
    return False


def _rough_offset(doc: Document, line: int, col: int, unit: int, n_lines: int, n: int) -> int:
    """An LSP position's code-point offset, clamped to the text, for questions before an edit."""
    if line >= n_lines:
        return n
    off = int(doc.offset(max(line, 0), max(col, 0), unit))
    return min(max(off, 0), n)


def _check_version(st: DocState, version: int | None) -> None:
    """Logs versions that do not increase by one (the change is applied all the same)."""
    if version is None or st.version is None:
        return
    if version <= st.version:
        log.warning(
            "%s: version %d after version %d (versions must increase); applying the change",
            st.uri,
            version,
            st.version,
        )
    elif version != st.version + 1:
        log.info("%s: version jumped from %d to %d", st.uri, st.version, version)


def _replace_all(st: DocState, backlog: EditableText | None, text: str) -> None:
    if backlog is not None:
        backlog.edit(0, backlog.length(), text)
        return
    try:
        st.doc.set_text(text)
    except Exception:
        log.exception("%s: the core failed on a whole-text change; rebuilding", st.uri)
        st.doc = Document(st.doc.model, text)


def _text(st: DocState, backlog: EditableText | None) -> EditableText:
    """What an edit goes to: the backlog, else the document's Document (looked up each time: a
    failed edit replaces it)."""
    return st.doc if backlog is None else backlog


def apply_range(
    st: DocState,
    backlog: EditableText | None,
    rng: tuple[int, int, int, int],
    text: str,
    unit: int,
) -> Change:
    """One ranged change: clamped as LSP says, converted through the line index, applied.

    Returns the lines it left alone at the start and at the end of the text.
    """
    doc = _text(st, backlog)
    n_lines = doc.line_count()
    sl, sc, el, ec = rng
    if (el, ec) < (sl, sc):
        log.warning(
            "%s: change range end %d:%d is before its start %d:%d; swapped",
            st.uri,
            el,
            ec,
            sl,
            sc,
        )
        sl, sc, el, ec = el, ec, sl, sc
    a = _offset(st, doc, sl, sc, unit, n_lines, "start")
    b = a if (el, ec) == (sl, sc) else _offset(st, doc, el, ec, unit, n_lines, "end")
    if a < 0 or b < 0:
        # A position inside a UTF-16 surrogate pair: edit at the code-unit level.
        return _edit_units(st, backlog, (sl, sc, el, ec), text)
    line_a = min(max(sl, 0), n_lines - 1)
    line_b = min(max(el, 0), n_lines - 1)
    if not _edit(st, backlog, a, b, text):
        return EVERYTHING
    return Change(line_a, n_lines - 1 - line_b, edits=(Edit(a, b, text),))


def _offset(
    st: DocState, doc: EditableText, line: int, col: int, unit: int, n_lines: int, which: str
) -> int:
    """Code-point offset of an LSP position, clamped; -1 inside a surrogate pair (UTF-16)."""
    if line < 0 or col < 0:
        log.warning("%s: negative position %d:%d in a change; clamped to 0", st.uri, line, col)
        line, col = max(line, 0), max(col, 0)
    if line >= n_lines:
        log.warning(
            "%s: change %s %d:%d is past the last line (%d); clamped to the end of the document",
            st.uri,
            which,
            line,
            col,
            n_lines - 1,
        )
        return int(doc.length())
    off = int(doc.offset(line, col, unit))
    if col == 0:
        return off
    got_line, got_col = doc.position(off, unit)
    if got_col != col or got_line != line:
        end = int(doc.line_end(line))
        if off >= end and got_col < col:
            log.warning(
                "%s: change %s %d:%d is past the end of its line (%d code units); clamped to "
                "the line end",
                st.uri,
                which,
                line,
                col,
                got_col,
            )
            return off
        if unit == UTF16 and got_col == col - 1:
            return -1
        log.warning(
            "%s: change %s %d:%d falls inside a character; moved to its start",
            st.uri,
            which,
            line,
            col,
        )
    return off


def _edit(st: DocState, backlog: EditableText | None, a: int, b: int, text: str) -> bool:
    """Applies one edit; False when the core failed and the document was rebuilt from its text."""
    if a == b and not text:
        return True
    if backlog is not None:
        backlog.edit(a, b, text)
        return True
    try:
        st.doc.edit(a, b, text)
    except Exception:
        # Never lose the client's text: rebuild the document from it (a full encode).
        log.exception(
            "%s: the core failed on edit [%d, %d); re-syncing from the text", st.uri, a, b
        )
        doc = st.doc
        full = doc.slice(0, a) + text + doc.slice(b, doc.length())
        st.doc = Document(doc.model, full)
        return False
    return True


def _edit_units(
    st: DocState, backlog: EditableText | None, where: tuple[int, int, int, int], text: str
) -> Change:
    """A change whose ends split a surrogate pair: done on the UTF-16 code units of its lines.

    The halves left behind are lone surrogates, which the core cannot hold: they become U+FFFD,
    one code unit each, so every later UTF-16 position still matches the client's.
    """
    sl, sc, el, ec = where
    doc = _text(st, backlog)
    n_lines = doc.line_count()
    sl = min(sl, n_lines - 1)
    el = min(el, n_lines - 1)
    a = int(doc.line_start(sl))
    b = int(doc.line_end(el))
    raw = _utf16(doc.slice(a, b))
    total_units = len(raw) // 2
    start_units = min(sc, total_units)
    end_units = len(_utf16(doc.slice(a, int(doc.line_start(el))))) // 2 + ec
    end_units = min(max(end_units, start_units), total_units)
    new_raw = raw[: 2 * start_units] + _utf16(text) + raw[2 * end_units :]
    new_text, replaced = clean(new_raw.decode("utf-16-le", "surrogatepass"))
    log.warning(
        "%s: change %d:%d-%d:%d splits a surrogate pair; applied to its code units (%d lone "
        "half/halves became U+FFFD)",
        st.uri,
        sl,
        sc,
        el,
        ec,
        replaced,
    )
    if not _edit(st, backlog, a, b, new_text):
        return EVERYTHING
    return Change(sl, n_lines - 1 - el, edits=(Edit(a, b, new_text),))


def _utf16(text: str) -> bytes:
    """text as UTF-16-LE code units, lone surrogates kept (two bytes each)."""
    return text.encode("utf-16-le", "surrogatepass")
