"""A keystroke's way through the server without the generic LSP machinery.

Every keystroke is a `didChange` in and a `tokenline/status` out. Through pygls, the
notification is structured into lsprotocol objects by cattrs, checked against runtime protocols,
run in its own context with a uuid and a future, and the status is an attrs notification
unstructured again before it is encoded: together many times what the core's edit costs. Here a
well-formed `didChange` is read straight from its JSON object into plain values (`TextChange`),
and plain JSON notifications are encoded as they are. Anything else, a malformed `didChange`
included, goes through pygls as before, which answers it as it always did.

A large message (a document's whole text: a didOpen of a 100 MB chat file) is read by orjson,
faster than json, into the very objects json would give (`decoded`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, NamedTuple, TypeGuard

import orjson
from lsprotocol import types

from tokenline.server.store import TextChange

DID_CHANGE = types.TEXT_DOCUMENT_DID_CHANGE
# Messages at least this long are read by orjson (108 MB of JSON Lines text in 0.19 s of CPU
# where json takes 0.28 s); shorter ones by json, as pygls reads them.
ORJSON_BYTES = 1 << 16
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


def decoded(body: bytes, hook: Callable[[dict[str, Any]], Any]) -> Any:
    """The message in `body` as `json.loads(body, object_hook=hook)` reads it (pygls's way):
    a large one by orjson, unless orjson refuses it (NaN, lone surrogates, a byte order mark,
    UTF-16) or it holds a float (orjson reads integers beyond 64 bits as floats): json reads
    those."""
    if len(body) >= ORJSON_BYTES:
        try:
            data = orjson.loads(body)
            floatless = _floatless(data)
        except (ValueError, RecursionError):
            floatless = False
        if floatless:
            return _hooked(data, hook)
    return json.loads(body, object_hook=hook)


def _floatless(value: object) -> bool:
    """Whether a decoded JSON value holds no float."""
    if type(value) is dict:
        return all(_floatless(v) for v in value.values())
    if type(value) is list:
        return all(_floatless(v) for v in value)
    return type(value) is not float


def _hooked(value: object, hook: Callable[[dict[str, Any]], Any]) -> Any:
    """The value with hook applied to each object, innermost first (as json's object_hook)."""
    if type(value) is dict:
        for k, v in value.items():
            if type(v) is dict or type(v) is list:
                value[k] = _hooked(v, hook)
        return hook(value)
    if type(value) is list:
        return [_hooked(v, hook) if type(v) is dict or type(v) is list else v for v in value]
    return value
