"""What the token under the cursor is: hover text and the `tokenline/tokenAt` answer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lsprotocol import types

from tokenline.core import TOKEN_BYTE, TOKEN_SPECIAL, TOKEN_UNKNOWN, Document
from tokenline.server.feature import Feature, Handler
from tokenline.server.positions import param, position_of
from tokenline.server.text import fmt

TOKEN_AT = "tokenline/tokenAt"
# How hover shows a space.
SHOWN_SPACE = "␣"
# Control characters, shown as escapes: below FIRST_PRINTABLE, and DELETE.
FIRST_PRINTABLE = 0x20
DELETE = "\x7f"


@dataclass
class TokenInfo:
    index: int  # first token (0-based); tokens that share a character span index..last
    last: int
    total: int
    ids: list[int]
    pieces: list[str]
    start: int
    end: int
    text: str
    raw: list[bytes]  # each token's bytes (Model.token_bytes)

    @property
    def piece(self) -> str:
        return "".join(self.pieces)


def token_info(doc: Document, offset: int) -> TokenInfo | None:
    """The token holding the character at offset, with every token that shares a character with
    it (byte-fallback bytes, byte-level tokens that split a character's UTF-8 bytes)."""
    total = len(doc)
    if offset < 0 or offset >= int(doc.length()) or total == 0:
        return None
    k = int(doc.token_at(offset))
    if k >= total:
        return None
    first, end = (int(x) for x in doc.group(k))
    s = int(doc.token_span(first)[0])
    e = int(doc.token_span(end - 1)[1])
    ids = [int(x) for x in doc.ids_between(first, end)]
    model = doc.model
    pieces = [model.piece(i) for i in ids]
    raw = [model.token_bytes(i) for i in ids]
    return TokenInfo(first, end - 1, total, ids, pieces, s, e, doc.slice(s, e), raw)


def _decoded(raw: bytes) -> str:
    """A token's bytes as text, U+FFFD for a part of a character."""
    return raw.decode("utf-8", errors="replace")


def readable_piece(raw: bytes) -> str:
    """A token's text as a person reads it: spaces visible, control characters escaped."""
    return readable_text(_decoded(raw))


def hex_bytes(raw: bytes) -> str:
    """Bytes as lowercase hex pairs, "e4 b8"."""
    return raw.hex(" ")


def readable_text(text: str) -> str:
    out = []
    for ch in text:
        if ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ch == " ":
            out.append(SHOWN_SPACE)
        elif ch == "\0":
            out.append("\\0")
        elif ord(ch) < FIRST_PRINTABLE or ch == DELETE:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return "".join(out)


def code(s: str) -> str:
    """s as a Markdown code span, whatever backticks it holds."""
    longest = run = 0
    for ch in s:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") or not s.strip(" ") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def _kind_note(kind: int, info: TokenInfo) -> str:
    """The hover's note on a special or unknown token, naming the model's own unknown piece. An
    unknown piece that is also special (a tokenizer.json lists `[UNK]` among its special tokens)
    is unknown where it stands for other text, special where the text spells it."""
    spelt = kind & TOKEN_SPECIAL and info.text.strip() == info.piece
    if kind & TOKEN_UNKNOWN and not spelt:
        return f" · unknown ({code(info.piece)})"
    return " · special piece" if kind & TOKEN_SPECIAL else ""


def hover_markdown(doc: Document, info: TokenInfo) -> str:
    model = doc.model
    kind = int(model.token_kind(info.ids[0]))
    if info.last > info.index:
        where = f"tokens {fmt(info.index + 1)}–{fmt(info.last + 1)} of {fmt(info.total)}"
    else:
        where = f"token {fmt(info.index + 1)} of {fmt(info.total)}"
    if kind & TOKEN_BYTE:
        hexes = " ".join(code(hex_bytes(b)) for b in info.raw)
        piece = f"bytes {hexes}"
        if info.piece != "".join(_decoded(b) for b in info.raw):
            piece += f" (byte fallback: {code(info.piece)})"
        id_line = f"ids {', '.join(str(i) for i in info.ids)}"
    else:
        piece = code(readable_piece(info.raw[0]))
        if info.piece != _decoded(info.raw[0]):
            piece += f" (raw {code(info.piece)})"  # SentencePiece's "▁"
        id_line = f"id {info.ids[0]}"
    kind_note = _kind_note(kind, info)
    n = info.end - info.start
    chars = f"{n} character{'s' if n != 1 else ''}"
    return (
        f"**{where}** · {id_line}{kind_note}\n\n"
        f"piece {piece}\n\n"
        f"{chars}: {code(readable_text(info.text))} · model {model.name}"
    )


def _position(doc: Document, offset: int, unit: int) -> types.Position:
    line, character = doc.position(offset, unit)
    return types.Position(line=int(line), character=int(character))


def _json_position(p: types.Position) -> dict[str, int]:
    return {"line": p.line, "character": p.character}


def token_at_result(doc: Document, info: TokenInfo, unit: int) -> dict[str, object]:
    return {
        "index": info.index,
        "total": info.total,
        "id": info.ids[0],
        "ids": info.ids,
        "bytes": [hex_bytes(b) for b in info.raw],
        "piece": info.piece,
        "text": info.text,
        "range": {
            "start": _json_position(_position(doc, info.start, unit)),
            "end": _json_position(_position(doc, info.end, unit)),
        },
    }


def hover(doc: Document, offset: int, unit: int) -> types.Hover | None:
    info = token_info(doc, offset)
    if info is None:
        return None
    return types.Hover(
        contents=types.MarkupContent(
            kind=types.MarkupKind.Markdown, value=hover_markdown(doc, info)
        ),
        range=types.Range(
            start=_position(doc, info.start, unit), end=_position(doc, info.end, unit)
        ),
    )


class HoverFeature(Feature):
    """The token under the cursor: LSP hover, and `tokenline/tokenAt` for the editors' own UI."""

    def handlers(self) -> list[Handler]:
        return [Handler(types.TEXT_DOCUMENT_HOVER, self.hover), Handler(TOKEN_AT, self.token_at)]

    def hover(self, params: types.HoverParams) -> types.Hover | None:
        st = self.host.document(params.text_document.uri)
        position = params.position
        unit = self.host.unit
        return hover(st.doc, int(st.doc.offset(position.line, position.character, unit)), unit)

    def token_at(self, params: Any) -> dict[str, object] | None:
        st = self.host.document(str(param(params, "uri")))
        line, character = position_of(param(params, "position"))
        unit = self.host.unit
        info = token_info(st.doc, int(st.doc.offset(line, character, unit)))
        return None if info is None else token_at_result(st.doc, info, unit)
