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

from mypy_extensions import i64

from tokenline.core.counting import UNCOUNTED, TokenCounter


def plain_contents(counter: TokenCounter, messages: object) -> list[int] | None:
    """The tokens of each message's content, counted alone, when `messages` is a list of
    objects whose values are all strings, each with a role; None for any other messages, and
    when a content is one the counter cannot count (the model's own encode counts it, the
    general way). Not kept by text, as billers keep contents: through the counter's words a
    content costs about as much as a lookup of it, and a table of half a million contents
    cost more (hashing them, and growing it, in pauses of 10 ms)."""
    if not plain_messages(messages):
        return None
    assert isinstance(messages, list)
    out: list[int] = []
    for m in messages:
        content = m.get("content")
        if not isinstance(content, str):
            out.append(0)  # no content: nothing to count
            continue
        if not content.isascii() and not _encodable(content):
            return None  # the general way says why it cannot be counted
        n: i64 = counter.count_alone(content)
        if n == UNCOUNTED:
            return None
        out.append(int(n))
    return out


def plain_messages(messages: object) -> bool:
    """Whether `messages` is a list of objects whose values are all strings, each with a role
    (what most datasets hold: every value a chat format reads is a string)."""
    if not isinstance(messages, list):
        return False
    for m in messages:
        if not isinstance(m, dict) or not isinstance(m.get("role"), str):
            return False
        for value in m.values():
            if not isinstance(value, str):
                return False
    return True


def _encodable(text: str) -> bool:
    """Whether text holds no lone surrogate (which no model encodes)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
