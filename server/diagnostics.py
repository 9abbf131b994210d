"""The context-window diagnostics: an Error over what does not fit, a Warning when close."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from tokenline.core import Document
from tokenline.server.feature import Feature
from tokenline.server.settings import Settings
from tokenline.server.text import fmt

if TYPE_CHECKING:
    from tokenline.server.app import TokenlineServer
    from tokenline.server.store import DocState

SOURCE = "tokenline"
CODE_OVER = "context-window"
CODE_NEAR = "context-window-near"
# A document under the window is never shown as 100% full.
MOST_PERCENT_UNDER = 99


def first_beyond(doc: Document, context_window: int) -> int:
    """Code-point offset where the first token that does not fit begins.

    That is token index `context_window`. When it shares its character with the tokens before it
    (byte fallback), the character does not fit whole, so the offset is that character's start.
    """
    first, _end = doc.group(context_window)
    return int(doc.token_start(first))


def compute(doc: Document, settings: Settings, unit: int) -> list[types.Diagnostic]:
    """The document's diagnostic against its context window: none, a Warning, or an Error."""
    total = len(doc)
    if total > settings.context_window:
        return [_over(doc, settings.context_window, unit)]
    if total >= settings.warn_threshold():
        return [_near(doc, settings.context_window, unit)]
    return []


def _to_end(doc: Document, start: types.Position, unit: int) -> types.Range:
    """From start to the end of the document."""
    el, ec = doc.position(doc.length(), unit)
    return types.Range(start=start, end=types.Position(line=int(el), character=int(ec)))


def _over(doc: Document, window: int, unit: int) -> types.Diagnostic:
    total = len(doc)
    sl, sc = doc.position(first_beyond(doc, window), unit)
    return types.Diagnostic(
        range=_to_end(doc, types.Position(line=int(sl), character=int(sc)), unit),
        message=(
            f"Beyond the {fmt(window)}-token context window: {fmt(total)} tokens, "
            f"{fmt(total - window)} over"
        ),
        severity=types.DiagnosticSeverity.Error,
        source=SOURCE,
        code=CODE_OVER,
    )


def _near(doc: Document, window: int, unit: int) -> types.Diagnostic:
    total = len(doc)
    last_line = int(doc.line_count()) - 1
    percent = round(100 * total / window)
    if total < window:
        percent = min(percent, MOST_PERCENT_UNDER)
    return types.Diagnostic(
        range=_to_end(doc, types.Position(line=last_line, character=0), unit),
        message=f"{fmt(total)} of {fmt(window)} tokens ({percent}%): close to the context window",
        severity=types.DiagnosticSeverity.Warning,
        source=SOURCE,
        code=CODE_NEAR,
    )


def key(diags: list[types.Diagnostic]) -> tuple[object, ...]:
    """What makes two diagnostic lists the same (to skip re-publishing an unchanged one)."""
    return tuple(
        (
            d.severity,
            d.message,
            d.range.start.line,
            d.range.start.character,
            d.range.end.line,
            d.range.end.character,
        )
        for d in diags
    )


class DiagnosticsFeature(Feature):
    """Publishes each document's diagnostics when they differ from what it last published."""

    def __init__(self, server: TokenlineServer) -> None:
        super().__init__(server)
        self._published: dict[str, tuple[object, ...]] = {}

    def document_opened(self, st: DocState) -> None:
        self._published.pop(st.uri, None)

    def publish(self, st: DocState) -> None:
        diags = compute(st.doc, st.settings, self.server.unit)
        published = key(diags)
        if self._published.get(st.uri) == published:
            return
        self._published[st.uri] = published
        self.server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=st.uri, diagnostics=diags, version=st.version)
        )

    def document_closed(self, st: DocState) -> None:
        if self._published.pop(st.uri, None):
            self.server.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=st.uri, diagnostics=[])
            )
