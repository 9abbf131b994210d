"""Text the client sends, made acceptable to the core without changing its positions."""

from __future__ import annotations

import re

from tokenline.core import UTF8, UTF16, UTF32

_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"

ENCODING_UNITS = {"utf-8": UTF8, "utf-16": UTF16, "utf-32": UTF32}


def unit_of(encoding: str) -> int:
    """The core's code-unit constant for an LSP position encoding name."""
    return ENCODING_UNITS.get(str(encoding).lower(), UTF16)


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


def units(s: str, unit: int) -> int:
    """Length of s in code units of the given encoding."""
    if unit == UTF32 or s.isascii():
        return len(s)
    if unit == UTF16:
        return len(s.encode("utf-16-le", "surrogatepass")) // 2
    return len(s.encode("utf-8", "surrogatepass"))


def fmt(n: int) -> str:
    """A count with thousands separators: 9301 -> "9,301"."""
    return f"{n:,}"
