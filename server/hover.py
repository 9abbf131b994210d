"""What the token under the cursor is: hover text and the `tokenline/tokenAt` answer."""

from __future__ import annotations

from dataclasses import dataclass

from lsprotocol import types

from tokenline.core import Document
from tokenline.core.model import FLAG_BYTE, FLAG_SPECIAL, FLAG_UNKNOWN
from tokenline.server.text import fmt


@dataclass
class TokenInfo:
    index: int  # first token (0-based); a byte-fallback character spans index..last
    last: int
    total: int
    ids: list[int]
    pieces: list[str]
    start: int
    end: int
    text: str

    @property
    def piece(self) -> str:
        return "".join(self.pieces)


def token_info(doc: Document, offset: int) -> TokenInfo | None:
    """The token holding the character at offset (all byte tokens of it for byte fallback)."""
    total = len(doc)
    if offset < 0 or offset >= int(doc.length()) or total == 0:
        return None
    k = int(doc.token_at(offset))
    if k >= total:
        return None
    s, e = (int(x) for x in doc.token_span(k))
    last = k
    model = doc.model
    if model.flags[int(doc.token_id(k))] & FLAG_BYTE:
        # The continuation bytes sit zero-width at the end of the character.
        while last + 1 < total:
            s2, e2 = (int(x) for x in doc.token_span(last + 1))
            if s2 == e2 == e and model.flags[int(doc.token_id(last + 1))] & FLAG_BYTE:
                last += 1
            else:
                break
    ids = [int(x) for x in doc.ids_between(k, last + 1)]
    return TokenInfo(k, last, total, ids, [model.piece(i) for i in ids], s, e, doc.slice(s, e))


def readable_piece(piece: str, flags: int) -> str:
    """A piece as a person reads it: "▁" as a visible space, bytes as hex."""
    if flags & FLAG_BYTE:
        return piece  # already "<0xE2>"
    return piece.replace("\u2581", "␣")


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
            out.append("␣")
        elif ch == "\0":
            out.append("\\0")
        elif ord(ch) < 0x20 or ch == "\x7f":
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


def hover_markdown(doc: Document, info: TokenInfo) -> str:
    model = doc.model
    flags = model.flags[info.ids[0]]
    if info.last > info.index:
        where = f"tokens {fmt(info.index + 1)}–{fmt(info.last + 1)} of {fmt(info.total)}"
    else:
        where = f"token {fmt(info.index + 1)} of {fmt(info.total)}"
    if flags & FLAG_BYTE:
        hexes = " ".join(p[3:5] for p in info.pieces if p.startswith("<0x"))
        piece = f"bytes {code(hexes)} (byte fallback: {code(info.piece)})"
        ids = ", ".join(str(i) for i in info.ids)
        id_line = f"ids {ids}"
    else:
        piece = code(readable_piece(info.piece, flags))
        if "\u2581" in info.piece:
            piece += f" (raw {code(info.piece)})"
        id_line = f"id {info.ids[0]}"
    kind = ""
    if flags & FLAG_SPECIAL:
        kind = " · special piece"
    elif flags & FLAG_UNKNOWN:
        kind = " · unknown (`<unk>`)"
    n = info.end - info.start
    chars = f"{n} character{'s' if n != 1 else ''}"
    return (
        f"**{where}** · {id_line}{kind}\n\n"
        f"piece {piece}\n\n"
        f"{chars}: {code(readable_text(info.text))} · model {model.name}"
    )


def token_at_result(doc: Document, info: TokenInfo, unit: int) -> dict[str, object]:
    sl, sc = doc.position(info.start, unit)
    el, ec = doc.position(info.end, unit)
    return {
        "index": info.index,
        "total": info.total,
        "id": info.ids[0],
        "piece": info.piece,
        "text": info.text,
        "range": {
            "start": {"line": int(sl), "character": int(sc)},
            "end": {"line": int(el), "character": int(ec)},
        },
    }


def hover(doc: Document, offset: int, unit: int) -> types.Hover | None:
    info = token_info(doc, offset)
    if info is None:
        return None
    sl, sc = doc.position(info.start, unit)
    el, ec = doc.position(info.end, unit)
    return types.Hover(
        contents=types.MarkupContent(
            kind=types.MarkupKind.Markdown, value=hover_markdown(doc, info)
        ),
        range=types.Range(
            start=types.Position(line=int(sl), character=int(sc)),
            end=types.Position(line=int(el), character=int(ec)),
        ),
    )
