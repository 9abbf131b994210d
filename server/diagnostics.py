"""The limit diagnostics: an Error over what does not fit, a Warning when close. The limit is the
document's budget from the project configuration when it has one, else the context window."""

from __future__ import annotations

from lsprotocol import types

from tokenline.core import Document
from tokenline.core.model import FLAG_BYTE
from tokenline.server.settings import Settings
from tokenline.server.text import fmt

SOURCE = "tokenline"
CODE_OVER = "context-window"
CODE_NEAR = "context-window-near"
CODE_OVER_BUDGET = "budget"
CODE_NEAR_BUDGET = "budget-near"


def first_beyond(doc: Document, context_window: int) -> int:
    """Code-point offset where the first token that does not fit begins.

    That is token index `context_window`. When it is a byte-fallback continuation (zero-width, at
    the end of its character), the character it belongs to does not fit whole, so the offset is
    that character's start.
    """
    k = context_window
    s, e = doc.token_span(k)
    s, e = int(s), int(e)
    if e == s and s > 0 and doc.model.flags[int(doc.token_id(k))] & FLAG_BYTE:
        return s - 1
    return s


def compute(doc: Document, settings: Settings, unit: int) -> list[types.Diagnostic]:
    total = len(doc)
    limit = settings.limit
    budget = settings.budget is not None
    if budget:
        name = f"{fmt(limit)}-token budget for {settings.budget_pattern}"
        near = f"the budget for {settings.budget_pattern}"
    else:
        name, near = f"{fmt(limit)}-token context window", "the context window"
    if total > limit:
        start = first_beyond(doc, limit)
        sl, sc = doc.position(start, unit)
        el, ec = doc.position(doc.length(), unit)
        return [
            types.Diagnostic(
                range=types.Range(
                    start=types.Position(line=int(sl), character=int(sc)),
                    end=types.Position(line=int(el), character=int(ec)),
                ),
                message=f"Beyond the {name}: {fmt(total)} tokens, {fmt(total - limit)} over",
                severity=types.DiagnosticSeverity.Error,
                source=SOURCE,
                code=CODE_OVER_BUDGET if budget else CODE_OVER,
            )
        ]
    if total >= settings.warn_threshold():
        last = int(doc.line_count()) - 1
        el, ec = doc.position(doc.length(), unit)
        pct = round(100 * total / limit)
        if total < limit:
            pct = min(pct, 99)
        return [
            types.Diagnostic(
                range=types.Range(
                    start=types.Position(line=last, character=0),
                    end=types.Position(line=int(el), character=int(ec)),
                ),
                message=f"{fmt(total)} of {fmt(limit)} tokens ({pct}%): close to {near}",
                severity=types.DiagnosticSeverity.Warning,
                source=SOURCE,
                code=CODE_NEAR_BUDGET if budget else CODE_NEAR,
            )
        ]
    return []


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
