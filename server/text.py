"""Text the client sends, made acceptable to the core without changing its positions; counts as
people read them."""

from __future__ import annotations

import re

_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def clean(text: str) -> tuple[str, int]:
    """`text` with each lone surrogate replaced by U+FFFD, and how many were replaced.

    JSON strings may hold lone surrogates ("\\ud800"); the core rejects them. U+FFFD has the same
    length in UTF-16 code units (1) as a lone surrogate, so the client's positions stay valid.
    """
    if text.isascii():
        return text, 0
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        out, n = _SURROGATE.subn(REPLACEMENT, text)
        return out, n
    return text, 0


def fmt(n: int) -> str:
    """A count with thousands separators: 9301 -> "9,301"."""
    return f"{n:,}"
