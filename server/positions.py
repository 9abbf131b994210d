"""LSP positions and the core's offsets: encodings, code-unit lengths, token edges, loose params."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import accumulate
from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from tokenline.core import UTF8, UTF16, UTF32, Document, count_breaks, units8, units16, utf8_width

ENCODING_UNITS = {"utf-8": UTF8, "utf-16": UTF16, "utf-32": UTF32}
# The first code point that takes two UTF-16 code units (a surrogate pair).
FIRST_ASTRAL = 0x10000

__all__ = [
    "count_breaks",
    "offset_range",
    "param",
    "position_of",
    "ranges_of",
    "unit_columns",
    "unit_of",
    "units",
]


def unit_of(encoding: str) -> int:
    """The core's code-unit constant for an LSP position encoding name."""
    return ENCODING_UNITS.get(str(encoding).lower(), UTF16)


def units(s: str, unit: int) -> int:
    """Length of s in code units of the given encoding."""
    if unit == UTF32:
        return len(s)
    return int(units16(s) if unit == UTF16 else units8(s))


def _utf16_width(code_point: int) -> int:
    return 2 if code_point >= FIRST_ASTRAL else 1


def unit_columns(line: str, unit: int) -> list[int]:
    """columns[i] = code units of line[:i], for i in 0..len(line) (UTF-8 or UTF-16)."""
    width = _utf16_width if unit == UTF16 else utf8_width
    return list(accumulate(map(width, map(ord, line)), initial=0))


# -- loose params (Tokenline's own requests arrive as plain JSON objects) -------------------------


def param(params: Any, name: str) -> Any:
    """params[name] of a JSON object or an lsprotocol value (None when absent)."""
    if isinstance(params, dict):
        return params.get(name)
    return getattr(params, name, None)


def position_of(p: Any) -> tuple[int, int]:
    """(line, character) of a Position; JsonRpcInvalidParams when it is not one."""
    line, char = param(p, "line"), param(p, "character")
    if not isinstance(line, int) or not isinstance(char, int):
        raise JsonRpcInvalidParams(f"not a Position: {p!r}")
    return line, char


def offset_range(doc: Document, rng: Any, unit: int) -> tuple[int, int]:
    """Code-point offsets [start, end) of a Range (ends swapped when given backwards)."""
    start = param(rng, "start")
    end = param(rng, "end")
    if start is None or end is None:
        raise JsonRpcInvalidParams(f"not a Range: {rng!r}")
    sl, sc = position_of(start)
    el, ec = position_of(end)
    a = int(doc.offset(sl, sc, unit))
    b = int(doc.offset(el, ec, unit))
    return (a, b) if a <= b else (b, a)


def ranges_of(params: Any) -> Iterable[Any]:
    """params.ranges, which must be a list of Range."""
    ranges = param(params, "ranges")
    if not isinstance(ranges, list):
        raise JsonRpcInvalidParams("params.ranges must be a list of Range")
    return ranges
