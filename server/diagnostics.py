"""The limit diagnostics: an Error over what does not fit, a Warning when close. The limit is the
document's budget from the project configuration when it has one, else the context window. A
budget that names a model holds that model's count of the text (kept by the compare unit, handed
here by the server as `OtherModels`); while that model cannot be loaded, the window applies. A
chat file's diagnostics are its conversations' (chat.py, handed here as `ChatFiles`)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace

from lsprotocol import types

from tokenline.core import Document
from tokenline.server.counted import NO_CHAT_FILES, NO_OTHER_MODELS, ChatFiles, OtherModels
from tokenline.server.feature import DocState, Feature, Host
from tokenline.server.settings import Settings
from tokenline.server.text import fmt

log = logging.getLogger("tokenline.server")

SOURCE = "tokenline"
CODE_OVER = "context-window"
CODE_NEAR = "context-window-near"
CODE_OVER_BUDGET = "budget"
CODE_NEAR_BUDGET = "budget-near"
# A document under the window is never shown as 100% full.
MOST_PERCENT_UNDER = 99


def first_beyond(doc: Document, context_window: int) -> int:
    """Code-point offset where the first token that does not fit begins.

    That is token index `context_window`. When it shares its character with the tokens before it
    (byte fallback), the character does not fit whole, so the offset is that character's start.
    """
    first, _end = doc.group(context_window)
    return int(doc.token_start(first))


@dataclass(frozen=True)
class Limit:
    """What a document is checked against, and how the messages name it."""

    tokens: int
    name: str  # "2,000-token budget for prompts/*.md"
    near: str  # "the budget for prompts/*.md"
    over_code: str
    near_code: str
    # "tokens", or "o200k_base tokens" for a budget of another model's tokens.
    tokens_of: str = "tokens"


def limit_of(settings: Settings, model: str = "") -> Limit:
    """The document's budget when the project configuration gives one, else its context window.
    model: the name of the model a budget counts, when it names one."""
    if settings.budget is not None:
        pattern = settings.budget_pattern
        return Limit(
            settings.budget,
            f"{fmt(settings.budget)}-token budget for {pattern}",
            f"the budget for {pattern}",
            CODE_OVER_BUDGET,
            CODE_NEAR_BUDGET,
            f"{model} tokens" if model else "tokens",
        )
    window = settings.context_window
    return Limit(
        window, f"{fmt(window)}-token context window", "the context window", CODE_OVER, CODE_NEAR
    )


def measured(st: DocState, others: OtherModels) -> tuple[Document, Settings, str]:
    """The tokens the document is held to its limit by, its settings, and the name of the model
    its budget counts ("" for its own): its own tokens, unless the budget names a model; while
    that model cannot be loaded, the document is held to its context window."""
    s = st.settings
    if s.budget is None or s.budget_model is None:
        return st.doc, s, ""
    doc = others.budget_document(st)
    if doc is None:
        return st.doc, replace(s, budget=None, budget_model=None), ""
    return doc, s, doc.model.name


def compute(
    doc: Document, settings: Settings, unit: int, model: str = ""
) -> list[types.Diagnostic]:
    """The document's diagnostic against its limit: none, a Warning, or an Error (model: the
    model a budget names, whose tokens `doc` holds)."""
    total = len(doc)
    limit = limit_of(settings, model)
    if total > limit.tokens:
        return [_over(doc, limit, unit)]
    if total >= settings.warn_threshold():
        return [_near(doc, limit, unit)]
    return []


def _to_end(doc: Document, start: types.Position, unit: int) -> types.Range:
    """From start to the end of the document."""
    el, ec = doc.position(doc.length(), unit)
    return types.Range(start=start, end=types.Position(line=int(el), character=int(ec)))


def _over(doc: Document, limit: Limit, unit: int) -> types.Diagnostic:
    total = len(doc)
    sl, sc = doc.position(first_beyond(doc, limit.tokens), unit)
    return types.Diagnostic(
        range=_to_end(doc, types.Position(line=int(sl), character=int(sc)), unit),
        message=(
            f"Beyond the {limit.name}: {fmt(total)} {limit.tokens_of}, "
            f"{fmt(total - limit.tokens)} over"
        ),
        severity=types.DiagnosticSeverity.Error,
        source=SOURCE,
        code=limit.over_code,
    )


def _near(doc: Document, limit: Limit, unit: int) -> types.Diagnostic:
    total = len(doc)
    last_line = int(doc.line_count()) - 1
    percent = round(100 * total / limit.tokens)
    if total < limit.tokens:
        percent = min(percent, MOST_PERCENT_UNDER)
    return types.Diagnostic(
        range=_to_end(doc, types.Position(line=last_line, character=0), unit),
        message=(
            f"{fmt(total)} of {fmt(limit.tokens)} {limit.tokens_of} ({percent}%): "
            f"close to {limit.near}"
        ),
        severity=types.DiagnosticSeverity.Warning,
        source=SOURCE,
        code=limit.near_code,
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

    def __init__(
        self, host: Host, others: OtherModels = NO_OTHER_MODELS, chats: ChatFiles = NO_CHAT_FILES
    ) -> None:
        super().__init__(host)
        self.others = others
        self.chats = chats
        self._published: dict[str, tuple[object, ...]] = {}

    def document_opened(self, st: DocState) -> None:
        self._published.pop(st.uri, None)

    def publish(self, st: DocState) -> None:
        # A chat file's conversations are held to the limit one by one, not the whole file.
        try:
            diags = self.chats.chat_diagnostics(st)
        except Exception:
            # The conversations are their unit's; the limit applies to the text meanwhile.
            log.error("%s: the chat file's diagnostics failed", self.name, exc_info=True)
            diags = None
        if diags is None:
            if st.pending:
                return  # positions in the older text: they stay until the tokens catch up
            doc, settings, model = measured(st, self.others)
            diags = compute(doc, settings, self.host.unit, model)
        published = key(diags)
        if self._published.get(st.uri) == published:
            return
        self._published[st.uri] = published
        self.host.notify(
            types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
            types.PublishDiagnosticsParams(uri=st.uri, diagnostics=diags, version=st.version),
        )

    def document_closed(self, st: DocState) -> None:
        if self._published.pop(st.uri, None):
            self.host.notify(
                types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
                types.PublishDiagnosticsParams(uri=st.uri, diagnostics=[]),
            )
