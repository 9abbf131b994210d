"""Token counts of Markdown sections (heading to heading), shown as inlay hints.

A section runs from an ATX heading (`#` to `######`, outside fenced code blocks) to the next
heading of any level, or the end of the document. Its count is the number of document tokens that
start inside it, so the sections (plus the text before the first heading) add up to the
document's total.
"""

from __future__ import annotations

import re

from lsprotocol import types

from tokenline.core import Document
from tokenline.server.text import fmt

MARKDOWN_LANGUAGES = frozenset({"markdown", "mdx", "prompt", "prompty", "chatagent", "rmd"})
MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx", ".mkd", ".prompt", ".prompty")

_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# Lines that can open a heading or a fence; everything else is skipped at regex speed, so an
# inlay-hint request after each keystroke does not walk every line in Python.
_CANDIDATE = re.compile(r"[\r\n] {0,3}[#`~]")
_FIRST_CANDIDATE = re.compile(r" {0,3}[#`~]")
_LINE_END = re.compile(r"\r\n|\r|\n")


def is_markdown(uri: str, language_id: str) -> bool:
    if language_id.lower() in MARKDOWN_LANGUAGES:
        return True
    path = uri.split("?", 1)[0].split("#", 1)[0].lower()
    return path.endswith(MARKDOWN_SUFFIXES)


def _breaks(text: str, start: int, end: int) -> int:
    """Line breaks in text[start:end] ("\\r\\n" counts once)."""
    crlf = text.count("\r\n", start, end)
    return text.count("\n", start, end) + text.count("\r", start, end) - crlf


def headings(text: str) -> list[tuple[int, int, int]]:
    """(line, start offset, end offset of the heading text) of each ATX heading."""
    out: list[tuple[int, int, int]] = []
    fence: str | None = None
    line = 0
    counted = 0  # line breaks are counted up to this offset
    starts = [m.start() + 1 for m in _CANDIDATE.finditer(text)]
    if _FIRST_CANDIDATE.match(text):
        starts.insert(0, 0)
    for s in starts:
        nl = _LINE_END.search(text, s)
        end = nl.start() if nl else len(text)
        line += _breaks(text, counted, s)
        counted = s
        body = text[s:end]
        f = _FENCE.match(body)
        if fence is not None:
            if (
                f
                and f.group(1)[0] == fence[0]
                and len(f.group(1)) >= len(fence)
                and body.strip() == f.group(1)
            ):
                fence = None
        elif f:
            fence = f.group(1)
        elif _HEADING.match(body):
            out.append((line, s, end))
    return out


def _first_token_from(doc: Document, off: int) -> int:
    """Index of the first token that starts at or after off."""
    k = int(doc.token_at(off))
    if k < len(doc) and int(doc.token_start(k)) < off:
        k += 1
    return k


def section_counts(doc: Document, heads: list[tuple[int, int, int]]) -> list[int]:
    out: list[int] = []
    n = int(doc.length())
    for i, (_line, s, _e) in enumerate(heads):
        nxt = heads[i + 1][1] if i + 1 < len(heads) else n
        k0 = _first_token_from(doc, s)
        k1 = _first_token_from(doc, nxt) if nxt < n else len(doc)
        out.append(k1 - k0)
    return out


def inlay_hints(
    doc: Document,
    heads: list[tuple[int, int, int]],
    first_line: int,
    last_line: int,
    unit: int,
) -> list[types.InlayHint]:
    counts = section_counts(doc, heads)
    hints: list[types.InlayHint] = []
    for (line, _s, e), count in zip(heads, counts, strict=True):
        if line < first_line or line > last_line:
            continue
        pl, pc = doc.position(e, unit)
        hints.append(
            types.InlayHint(
                position=types.Position(line=int(pl), character=int(pc)),
                label=f"{fmt(count)} token{'s' if count != 1 else ''}",
                padding_left=True,
                tooltip="Tokens from this heading to the next one (Tokenline)",
            )
        )
    return hints
