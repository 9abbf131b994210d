"""A keystroke's way through the server without the generic LSP machinery.

Every keystroke is a `didChange` in and a `tokenline/status` out. Through pygls, the
notification is structured into lsprotocol objects by cattrs, checked against runtime protocols,
run in its own context with a uuid and a future, and the status is an attrs notification
unstructured again before it is encoded: together many times what the core's edit costs. Here a
well-formed `didChange` is read straight from its JSON object into plain values (`TextChange`),
and plain JSON notifications are encoded as they are. Anything else, a malformed `didChange`
included, goes through pygls as before, which answers it as it always did.
"""

from __future__ import annotations

from typing import Any, NamedTuple, TypeGuard

from lsprotocol import types

from tokenline.server.store import TextChange

DID_CHANGE = types.TEXT_DOCUMENT_DID_CHANGE
# LSP's uinteger: positions beyond it are not well-formed (pygls refuses them).
UINTEGER_MAX = (1 << 31) - 1


class QuickChange(NamedTuple):
    """A didChange notification, read from its JSON object."""

    uri: str
    version: int | None
    changes: list[TextChange]


def quick_change(data: dict[str, Any]) -> QuickChange | None:
    """The didChange notification `data` holds, or None when it holds another message or one
    that is not well-formed (left to pygls)."""
    if data.get("method") != DID_CHANGE or "id" in data or data.get("jsonrpc") != "2.0":
        return None
    params = data.get("params")
    if type(params) is not dict:
        return None
    doc, events = params.get("textDocument"), params.get("contentChanges")
    if type(doc) is not dict or type(events) is not list:
        return None
    uri, version = doc.get("uri"), doc.get("version")
    if type(uri) is not str or not (version is None or type(version) is int):
        return None
    changes: list[TextChange] = []
    for event in events:
        if type(event) is not dict or type(event.get("text")) is not str:
            return None
        if "range" not in event:
            changes.append(TextChange(None, event["text"]))
            continue
        rng = _range(event["range"])
        if rng is None:
            return None
        changes.append(TextChange(rng, event["text"]))
    return QuickChange(uri, version, changes)


def _range(rng: object) -> tuple[int, int, int, int] | None:
    """(start line, start column, end line, end column) of a well-formed Range, else None."""
    if type(rng) is not dict:
        return None
    start, end = rng.get("start"), rng.get("end")
    if type(start) is not dict or type(end) is not dict:
        return None
    sl, sc, el, ec = (
        start.get("line"),
        start.get("character"),
        end.get("line"),
        end.get("character"),
    )
    if _uinteger(sl) and _uinteger(sc) and _uinteger(el) and _uinteger(ec):
        return sl, sc, el, ec
    return None


def _uinteger(n: object) -> TypeGuard[int]:
    """Whether n is an LSP uinteger (a JSON integer, not a boolean, in range)."""
    return type(n) is int and 0 <= n <= UINTEGER_MAX


def notification(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """A JSON-RPC notification as a plain JSON object (encoded as it is, no attrs object)."""
    return {"jsonrpc": "2.0", "method": method, "params": params}
