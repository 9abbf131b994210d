"""The open documents: one tokenline.core.Document per URI, kept identical to the client's text.

Every content change of a `didChange` goes to the core as one edit, in order, with its LSP range
converted to code-point offsets by the core's line index (never by rescanning the text). pygls's
own TextDocument is not used: the server's protocol class keeps pygls's workspace out of
didOpen/didChange/didClose, so no second copy of a document is rebuilt per change.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lsprotocol import types

from tokenline.core import UTF16, Document, Model
from tokenline.server.text import clean

if TYPE_CHECKING:
    from tokenline.server.semantic import SemanticCache

log = logging.getLogger("tokenline.server")


@dataclass
class DocState:
    """One open document and what the server remembers about it."""

    uri: str
    language_id: str
    version: int | None
    doc: Document
    # The last published status and diagnostics are recomputed when this is set.
    dirty: bool = True
    # Lines unchanged at the start and at the end of the text since `semantic` was computed.
    clean_head: int = 0
    clean_tail: int = 0
    semantic: SemanticCache | None = None
    last_diagnostics: tuple[object, ...] | None = None
    surrogates_logged: bool = False
    sections_cache: tuple[int, list[tuple[int, int, int]]] | None = None
    # Bumped on every change: caches keyed by it (sections) see every edit.
    generation: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def model(self) -> Model:
        return self.doc.model

    def touch_all(self) -> None:
        """Everything may have changed (a whole-text change, a new model)."""
        self.clean_head = 0
        self.clean_tail = 0
        self.dirty = True
        self.generation += 1


class Store:
    """Documents by URI."""

    def __init__(self) -> None:
        self._docs: dict[str, DocState] = {}

    def __contains__(self, uri: str) -> bool:
        return uri in self._docs

    def __iter__(self) -> Iterator[DocState]:
        return iter(list(self._docs.values()))

    def __len__(self) -> int:
        return len(self._docs)

    def get(self, uri: str) -> DocState | None:
        return self._docs.get(uri)

    def open(
        self, uri: str, language_id: str, version: int | None, text: str, model: Model
    ) -> DocState:
        text, replaced = clean(text)
        st = DocState(uri, language_id, version, _new_document(model, text))
        if replaced:
            _log_surrogates(st, replaced)
        self._docs[uri] = st
        return st

    def close(self, uri: str) -> DocState | None:
        return self._docs.pop(uri, None)


def _new_document(model: Model, text: str) -> Document:
    return Document(model, text)


def _log_surrogates(st: DocState, n: int) -> None:
    if not st.surrogates_logged:
        st.surrogates_logged = True
        log.warning(
            "%s: replaced %d lone surrogate(s) by U+FFFD (same UTF-16 length; not valid Unicode, "
            "so they cannot be tokenized); further ones in this document are replaced silently",
            st.uri,
            n,
        )


def set_model(st: DocState, model: Model) -> None:
    """Re-tokenizes the document with another model (a full encode)."""
    st.doc = Document(model, st.doc.text)
    st.semantic = None
    st.touch_all()


def apply_changes(
    st: DocState,
    version: int | None,
    changes: Sequence[types.TextDocumentContentChangeEvent],
    unit: int,
) -> None:
    """Applies the content changes of one didChange, in order, then records the version."""
    if version is not None and st.version is not None:
        if version <= st.version:
            log.warning(
                "%s: version %d after version %d (versions must increase); applying the change",
                st.uri,
                version,
                st.version,
            )
        elif version != st.version + 1:
            log.info("%s: version jumped from %d to %d", st.uri, st.version, version)
    for change in changes:
        rng = getattr(change, "range", None)
        text, replaced = clean(change.text)
        if replaced:
            _log_surrogates(st, replaced)
        if rng is None:
            _replace_all(st, text)
        else:
            apply_range(st, rng, text, unit)
    st.version = version
    st.dirty = True
    st.generation += 1


def _replace_all(st: DocState, text: str) -> None:
    try:
        st.doc.set_text(text)
    except Exception:
        log.exception("%s: the core failed on a whole-text change; rebuilding", st.uri)
        st.doc = Document(st.doc.model, text)
    st.touch_all()


def apply_range(st: DocState, rng: types.Range, text: str, unit: int) -> None:
    """One ranged change: clamped as LSP says, converted through the line index, applied."""
    doc = st.doc
    n_lines = doc.line_count()
    sl, sc = rng.start.line, rng.start.character
    el, ec = rng.end.line, rng.end.character
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
    a = _offset(st, sl, sc, unit, n_lines, "start")
    b = a if (el, ec) == (sl, sc) else _offset(st, el, ec, unit, n_lines, "end")
    if a < 0 or b < 0:
        # A position inside a UTF-16 surrogate pair: edit at the code-unit level.
        _edit_units(st, sl, sc, el, ec, text)
        return
    line_a = min(max(sl, 0), n_lines - 1)
    line_b = min(max(el, 0), n_lines - 1)
    _edit(st, a, b, text)
    st.clean_head = min(st.clean_head, line_a)
    st.clean_tail = min(st.clean_tail, n_lines - 1 - line_b)


def _offset(st: DocState, line: int, col: int, unit: int, n_lines: int, which: str) -> int:
    """Code-point offset of an LSP position, clamped; -1 inside a surrogate pair (UTF-16)."""
    doc = st.doc
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


def _edit(st: DocState, a: int, b: int, text: str) -> None:
    if a == b and not text:
        return
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
        st.touch_all()


def _edit_units(st: DocState, sl: int, sc: int, el: int, ec: int, text: str) -> None:
    """A change whose ends split a surrogate pair: done on the UTF-16 code units of its lines.

    The halves left behind are lone surrogates, which the core cannot hold: they become U+FFFD,
    one code unit each, so every later UTF-16 position still matches the client's.
    """
    doc = st.doc
    n_lines = doc.line_count()
    sl = min(sl, n_lines - 1)
    el = min(el, n_lines - 1)
    a = int(doc.line_start(sl))
    b = int(doc.line_end(el))
    old = doc.slice(a, b)
    raw = old.encode("utf-16-le", "surrogatepass")
    start_units = sc
    end_units = len(doc.slice(a, int(doc.line_start(el))).encode("utf-16-le", "surrogatepass")) // 2
    end_units += ec
    total = len(raw) // 2
    start_units = min(start_units, total)
    end_units = min(max(end_units, start_units), total)
    new_raw = (
        raw[: 2 * start_units] + text.encode("utf-16-le", "surrogatepass") + raw[2 * end_units :]
    )
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
    _edit(st, a, b, new_text)
    st.clean_head = min(st.clean_head, sl)
    st.clean_tail = min(st.clean_tail, n_lines - 1 - el)
