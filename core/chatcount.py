"""The contents' tokens of plain chat messages, counted in compiled code.

A large chat file's totals (100,000 conversations, half a million messages) are mostly a loop
over messages, each one's content counted alone through the model's segment cache
(TokenCounter.count_alone). Most datasets' messages are objects of strings (a role, a content,
perhaps a name): for those the loop runs here, compiled, without a Python call per message.
Anything else (a content that is a list of parts or null, a number, a message without a role)
goes the biller's general way (tokenline.core.chatbill), which also says why a message cannot
be counted.
"""

from __future__ import annotations

from typing import Final

from mypy_extensions import i64

from tokenline.core.counting import UNCOUNTED, TokenCounter

# Contents' counts a biller keeps by text (emptied when full, as ChatBiller keeps them).
CONTENTS_KEPT: Final = 1 << 18


def plain_contents(
    counter: TokenCounter, kept: dict[str, int], messages: object
) -> list[int] | None:
    """The tokens of each message's content, counted alone (and kept by text in `kept`), when
    `messages` is a list of objects whose values are all strings, each with a role; None for
    any other messages, and when a content is one the counter cannot count (the model's own
    encode counts it, the general way)."""
    if not isinstance(messages, list):
        return None
    out: list[int] = []
    for m in messages:
        if not isinstance(m, dict) or not isinstance(m.get("role"), str):
            return None
        for value in m.values():
            if not isinstance(value, str):
                return None
        content = m.get("content")
        if not isinstance(content, str):
            out.append(0)  # no content: nothing to count
            continue
        found = kept.get(content)
        if found is None:
            if not content.isascii() and not _encodable(content):
                return None  # the general way says why it cannot be counted
            n: i64 = counter.count_alone(content)
            if n == UNCOUNTED:
                return None
            if len(kept) >= CONTENTS_KEPT:
                # Emptied, not trimmed: dropping the oldest key one by one walks the dict's
                # deleted slots from its start each time (quadratic once full).
                kept.clear()
            found = int(n)
            kept[content] = found
        out.append(found)
    return out


def _encodable(text: str) -> bool:
    """Whether text holds no lone surrogate (which no model encodes)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
