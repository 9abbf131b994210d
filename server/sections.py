"""Token counts of Markdown sections (heading to heading), shown as inlay hints.

A section runs from an ATX heading (`#` to `######`, outside fenced code blocks) to the next
heading of any level, or the end of the document. Its count is the number of document tokens that
start inside it, so the sections (plus the text before the first heading) add up to the
document's total.
"""

from __future__ import annotations

import contextlib
import re

from lsprotocol import types

from tokenline.core import Document
from tokenline.server.feature import Change, DocState, Feature, Handler, Host
from tokenline.server.positions import count_breaks
from tokenline.server.text import fmt

# (line, start offset, end offset of the heading text) of one ATX heading.
Heading = tuple[int, int, int]

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


def headings(text: str) -> list[Heading]:
    """(line, start offset, end offset of the heading text) of each ATX heading."""
    out: list[Heading] = []
    open_fence: str | None = None  # the ``` or ~~~ run of the code block we are in
    line = 0
    counted = 0  # line breaks are counted up to this offset
    candidates = [m.start() + 1 for m in _CANDIDATE.finditer(text)]
    if _FIRST_CANDIDATE.match(text):
        candidates.insert(0, 0)
    for start in candidates:
        line_end = _LINE_END.search(text, start)
        end = line_end.start() if line_end else len(text)
        line += int(count_breaks(text[counted:start]))
        counted = start
        body = text[start:end]
        fence = _FENCE.match(body)
        if open_fence is not None:
            if fence and _closes(fence.group(1), open_fence, body):
                open_fence = None
        elif fence:
            open_fence = fence.group(1)
        elif _HEADING.match(body):
            out.append((line, start, end))
    return out


def _closes(fence: str, open_fence: str, line: str) -> bool:
    """True when a fence line closes the code block open_fence opened."""
    return fence[0] == open_fence[0] and len(fence) >= len(open_fence) and line.strip() == fence


def section_counts(doc: Document, heads: list[Heading]) -> list[int]:
    """Tokens that start in each heading's section."""
    out: list[int] = []
    n = int(doc.length())
    for i, (_line, s, _e) in enumerate(heads):
        nxt = heads[i + 1][1] if i + 1 < len(heads) else n
        k0 = int(doc.first_token_from(s))
        k1 = int(doc.first_token_from(nxt)) if nxt < n else len(doc)
        out.append(k1 - k0)
    return out


def inlay_hints(
    doc: Document,
    heads: list[Heading],
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


class SectionsFeature(Feature):
    """Section token counts of Markdown documents as inlay hints; headings cached per document."""

    def __init__(self, host: Host) -> None:
        super().__init__(host)
        self._headings: dict[str, list[Heading]] = {}
        self.can_refresh = False

    def handlers(self) -> list[Handler]:
        options = types.InlayHintOptions(resolve_provider=False)
        return [Handler(types.TEXT_DOCUMENT_INLAY_HINT, self.inlay_hint, options)]

    def initialize(self, params: types.InitializeParams) -> None:
        ws = params.capabilities.workspace
        self.can_refresh = bool(ws and ws.inlay_hint and ws.inlay_hint.refresh_support)

    def document_opened(self, st: DocState) -> None:
        self._headings.pop(st.uri, None)

    def document_changed(self, st: DocState, change: Change) -> None:
        self._headings.pop(st.uri, None)

    def document_closed(self, st: DocState) -> None:
        self._headings.pop(st.uri, None)

    def refresh(self) -> None:
        if self.can_refresh:
            with contextlib.suppress(Exception):
                self.host.request(types.WORKSPACE_INLAY_HINT_REFRESH, None)

    def inlay_hint(self, params: types.InlayHintParams) -> list[types.InlayHint]:
        st = self.host.document(params.text_document.uri)
        if not st.settings.section_counts or not is_markdown(st.uri, st.language_id):
            return []
        heads = self._headings.get(st.uri)
        if heads is None:
            heads = self._headings[st.uri] = headings(st.doc.text)
        first_line, last_line = params.range.start.line, params.range.end.line
        return inlay_hints(st.doc, heads, first_line, last_line, self.host.unit)
