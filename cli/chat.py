"""Chat files in `tokenline count --chat` and `check`: one count per conversation, what the model is
billed for it (tokenline.core.ChatBiller), and the summary a fine-tuning set is judged by.

OpenAI's cookbook checks a fine-tuning file by the distribution of its examples' tokens and the
examples over the limit; `count --chat` prints those (count, min, median, p95, max, over) per
file, `check` fails on any conversation over its budget or the context window.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from tokenline.core import ChatBiller, ChatError, parse_chat
from tokenline.core.chatbill import ESTIMATE

# What a count that is an estimate (OpenAI's rule for tiktoken encodings) is marked with.
ESTIMATE_MARK = "≈"


@dataclass(frozen=True)
class ChatRecord:
    """One conversation's count; tokens and contents are None when it could not be billed."""

    # 1-based line where the conversation starts.
    line: int
    tokens: int | None
    contents: int | None
    estimate: bool
    error: str | None

    def as_json(self) -> dict[str, object]:
        return {
            "line": self.line,
            "tokens": self.tokens,
            "contents": self.contents,
            "estimate": self.estimate,
            "error": self.error,
        }

    def over(self, limit: int) -> int:
        """Tokens beyond `limit`; 0 within it, or when not counted."""
        return 0 if self.tokens is None else max(0, self.tokens - limit)


def chat_records(biller: ChatBiller, text: str, kind: str) -> tuple[ChatRecord, ...]:
    """Every conversation of a chat file of `kind`, billed."""
    out: list[ChatRecord] = []
    for conv in parse_chat(text, kind):
        line = conv.line + 1
        if conv.error is not None:
            out.append(ChatRecord(line, None, None, False, conv.error))
            continue
        try:
            bill = biller.bill([m.data for m in conv.messages], conv.tools)
        except ChatError as exc:
            out.append(ChatRecord(line, None, None, False, str(exc)))
            continue
        out.append(ChatRecord(line, bill.tokens, bill.contents, bill.estimate, None))
    return tuple(out)


def percentile(values: Sequence[int], share: float) -> int:
    """The nearest-rank percentile of sorted `values` (not empty)."""
    return values[max(0, math.ceil(share * len(values)) - 1)]


def number(n: float) -> str:
    return f"{n:,.0f}" if float(n).is_integer() else f"{n:,.1f}"


def summary(records: Sequence[ChatRecord], limit: int, limit_name: str) -> str:
    """`4 conversations: min 12, median 40, p95 96, max 96; 1 over the context window of 64;
    1 not counted`."""
    counted = sorted(r.tokens for r in records if r.tokens is not None)
    errors = sum(1 for r in records if r.error is not None)
    head = f"{len(records):,} conversation{'' if len(records) == 1 else 's'}"
    parts = []
    if counted:
        stats = (
            f"min {counted[0]:,}, median {number(statistics.median(counted))}, "
            f"p95 {percentile(counted, 0.95):,}, max {counted[-1]:,}"
        )
        over = sum(1 for r in records if r.over(limit))
        parts.append(f"{head}: {stats}")
        parts.append(f"{over:,} over {limit_name}")
    else:
        parts.append(head)
    if errors:
        parts.append(f"{errors:,} not counted")
    return "; ".join(parts)


def record_lines(records: Sequence[ChatRecord], limit: int) -> list[str]:
    """A table: each conversation's line, billed tokens (≈ for an estimate), contents' tokens,
    and why it could not be counted or by how much it is over the limit."""
    lines = [f"{'line':>8}  {'tokens':>10}  {'contents':>10}"]
    for r in records:
        if r.tokens is None or r.contents is None:
            lines.append(f"{r.line:>8}  {'-':>10}  {'-':>10}  {r.error}")
            continue
        mark = ESTIMATE_MARK if r.estimate else ""
        row = f"{r.line:>8}  {mark + format(r.tokens, ','):>10}  {r.contents:>10,}"
        over = r.over(limit)
        lines.append(row + (f"  {over:,} over" if over else ""))
    return lines


def mode_phrase(biller: ChatBiller) -> str:
    """How the conversations are counted, for the heading of a chat file's table."""
    if biller.mode == ESTIMATE:
        return "OpenAI's published rule (an estimate)"
    if biller.mode == "template" and biller.template is not None:
        return f"the chat template of {biller.template.where}"
    if biller.mode == "mistral":
        return "mistral-common's chat encoding"
    return "the contents only (the model has no chat template)"
