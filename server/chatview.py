"""How chat files' counts read: inlay-hint labels, hover text, diagnostics and the status's
`chat` object (the chat unit, chat.py, decides what to show; this says how)."""

from __future__ import annotations

from collections.abc import Callable

from lsprotocol import types

from tokenline.core import ChatBiller
from tokenline.server.chatlines import Record, Totals
from tokenline.server.diagnostics import SOURCE, limit_of
from tokenline.server.settings import Settings
from tokenline.server.text import fmt

# ChatBiller's modes that read differently.
ESTIMATE = "estimate"
CONTENTS_ONLY = "contents only"
CODE_RECORD = "chat-record"
CODE_OVER = "chat-over"
# What each way of billing is called in hover text.
MODE_NAMES = {
    "template": "the model's chat template",
    "mistral": "mistral-common's chat encoding",
    ESTIMATE: "OpenAI's rule (3 tokens per message, 1 per name, 3 to prime the reply), an estimate",
    CONTENTS_ONLY: "the contents only (the model has no chat template)",
}


def tokens_label(n: int, estimate: bool) -> str:
    """`1,204 tok`, `≈1,204 tok` for an estimate."""
    return f"{'≈' if estimate else ''}{fmt(n)} tok"


def conversation_label(r: Record, mode: str) -> str:
    """`1,204 tok (template +18)`, `≈1,204 tok`, `1,186 tok (contents only)`, `not counted`."""
    bill = r.bill
    if bill is None:
        return "not counted"
    label = tokens_label(bill.tokens, bill.estimate)
    if mode == CONTENTS_ONLY:
        return f"{label} (contents only)"
    if bill.estimate:
        return label
    extra = bill.tokens - bill.contents
    return f"{label} (template {'+' if extra >= 0 else '−'}{fmt(abs(extra))})"


def conversation_hint(r: Record, at: types.Position, mode: str) -> types.InlayHint:
    bill = r.bill
    if bill is None:
        tooltip = f"Not counted: {r.error}"
    else:
        n = len(bill.per_message)
        tooltip = (
            f"This conversation ({n} message{'s' if n != 1 else ''}): {fmt(bill.tokens)} tokens "
            f"billed, {fmt(bill.contents)} of them the messages' contents (Tokenline)"
        )
    return types.InlayHint(
        position=at, label=conversation_label(r, mode), padding_left=True, tooltip=tooltip
    )


def message_hints(r: Record, at: Callable[[int], types.Position]) -> list[types.InlayHint]:
    """The contents' tokens of each message, at its end."""
    if r.bill is None or r.conv is None:
        return []
    return [
        types.InlayHint(
            position=at(m.content_end),
            label=f"{fmt(n)} tok",
            padding_left=True,
            tooltip="Tokens of this message's contents (Tokenline)",
        )
        for m, n in zip(r.conv.messages, r.bill.per_message, strict=False)
    ]


def message_hover(
    r: Record, index: int, biller: ChatBiller, start: types.Position, end: types.Position
) -> types.Hover:
    """A message's contents' tokens, the template's share of its conversation, the running
    total of the contents through it."""
    assert r.conv is not None
    messages = r.conv.messages
    m = messages[index]
    head = f"**Message {index + 1} of {len(messages)}** · {m.role}"
    if r.bill is None:
        body = f"Not counted: {r.error}"
    else:
        bill = r.bill
        own = bill.per_message[index] if index < len(bill.per_message) else 0
        so_far = sum(bill.per_message[: index + 1])
        shown = tokens_label(bill.tokens, bill.estimate).replace(" tok", " tokens")
        if biller.mode == CONTENTS_ONLY:
            whole = f"Conversation: {shown} (contents only)"
        else:
            share = "format" if bill.estimate else "template"
            whole = (
                f"Conversation: {shown} billed = {fmt(bill.contents)} contents + "
                f"{fmt(bill.tokens - bill.contents)} {share}"
            )
        lines = [
            f"Contents: {fmt(own)} tokens",
            f"Running total of the contents (messages 1–{index + 1}): {fmt(so_far)} tokens",
            whole,
            f"Counted with {MODE_NAMES.get(biller.mode, biller.mode)} · model {biller.model.name}",
        ]
        body = "\n\n".join(lines)
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=f"{head}\n\n{body}"),
        range=types.Range(start=start, end=end),
    )


def diagnostic(
    settings: Settings, r: Record, start: types.Position, end: types.Position
) -> types.Diagnostic:
    """A record that is not counted (skipped), or a conversation over the window or budget."""
    rng = types.Range(start=start, end=end)
    if r.bill is None:
        return types.Diagnostic(
            range=rng,
            message=f"Not counted, skipped: {r.error}",
            severity=types.DiagnosticSeverity.Error,
            source=SOURCE,
            code=CODE_RECORD,
        )
    limit = limit_of(settings)
    n = r.bill.tokens
    approx = "≈" if r.bill.estimate else ""
    return types.Diagnostic(
        range=rng,
        message=(
            f"This conversation is beyond the {limit.name}: {approx}{fmt(n)} tokens, "
            f"{approx}{fmt(n - limit.tokens)} over"
        ),
        severity=types.DiagnosticSeverity.Error,
        source=SOURCE,
        code=CODE_OVER,
    )


def summary(totals: Totals, mode: str, pending: bool) -> dict[str, object]:
    """The status's `chat` object (docs/protocol.md)."""
    return {
        "conversations": totals.conversations,
        "largest": totals.largest,
        "total": totals.total,
        "estimate": mode == ESTIMATE,
        "mode": mode,
        "errors": totals.errors,
        "pending": pending,
    }
