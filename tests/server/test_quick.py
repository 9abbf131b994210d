"""A keystroke's quick way (server/quick.py): a well-formed didChange is read straight from its
JSON and skips pygls, anything else goes through pygls as before, and both apply the same text;
plain notifications go out as the JSON they are. In process, on the server's own protocol, with
the messages a client sends as bytes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from lsprotocol import types as T

from tokenline.server.app import TokenlineServer
from tokenline.server.quick import ORJSON_BYTES, QuickChange, decoded, quick_change
from tokenline.server.store import TextChange

from .harness import bundled_model_path, sp_count

MODEL = bundled_model_path()
URI = "file:///quick.md"


def did_change(changes: list[Any], version: Any = 2, uri: Any = URI) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "textDocument/didChange",
        "params": {"textDocument": {"uri": uri, "version": version}, "contentChanges": changes},
    }


def ranged(sl: Any, sc: Any, el: Any, ec: Any, text: Any) -> dict[str, Any]:
    return {
        "range": {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}},
        "text": text,
    }


def test_a_well_formed_did_change_is_read_into_plain_values() -> None:
    got = quick_change(did_change([ranged(0, 1, 2, 3, "x"), {"text": "whole"}], version=7))
    assert got == QuickChange(URI, 7, [TextChange((0, 1, 2, 3), "x"), TextChange(None, "whole")])
    assert quick_change(did_change([], version=None)) == QuickChange(URI, None, [])


@pytest.mark.parametrize(
    "message",
    [
        did_change([ranged(-1, 0, 0, 0, "x")]),  # a negative line
        did_change([ranged(0, 0, 0, 1 << 31, "x")]),  # beyond LSP's uinteger
        did_change([ranged(0, 0, 0, 1.5, "x")]),  # not an integer
        did_change([ranged(0, True, 0, 0, "x")]),  # a boolean is no integer
        did_change([ranged(0, 0, 0, 0, None)]),  # no text
        did_change([{"range": None, "text": "x"}]),  # a null range
        did_change([{"range": {"start": {"line": 0}}, "text": "x"}]),  # half a range
        did_change(["x"]),
        did_change([], version="2"),
        did_change([], version=False),
        did_change([], uri=None),
        {**did_change([]), "id": 3},  # a request is no notification
        {**did_change([]), "method": "textDocument/didOpen"},
        {**did_change([]), "jsonrpc": "1.0"},
        {**did_change([]), "params": []},
    ],
)
def test_anything_else_is_left_to_pygls(message: dict[str, Any]) -> None:
    assert quick_change(message) is None


class Sink:
    """The server's writer: what it sends, as messages."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def write(self, data: bytes) -> None:
        header, _, body = data.partition(b"\r\n\r\n")
        assert int(header.split(b"\r\n")[0].split(b": ")[1]) == len(body)
        self.sent.append(json.loads(body))

    def close(self) -> None:
        pass

    def of(self, method: str) -> list[dict[str, Any]]:
        return [m["params"] for m in self.sent if m.get("method") == method]


@pytest.fixture
def server() -> Iterator[tuple[TokenlineServer, Sink]]:
    """A server in process, initialized, its writer a Sink, a running event loop set."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    ls = TokenlineServer()
    sink = Sink()
    ls.protocol.set_writer(sink)
    receive(ls, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
    receive(ls, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
    loop.run_until_complete(asyncio.sleep(0.01))
    try:
        yield ls, sink
    finally:
        loop.close()
        asyncio.set_event_loop(None)


def receive(ls: TokenlineServer, message: dict[str, Any]) -> Any:
    """What pygls's reader does with a message's bytes; the message as structured."""
    body = json.dumps(message).encode()
    structured = json.loads(body, object_hook=ls.protocol.structure_message)
    ls.protocol.handle_message(structured)
    ls.flush()
    return structured


def open_doc(ls: TokenlineServer, text: str) -> None:
    item = {"uri": URI, "languageId": "markdown", "version": 1, "text": text}
    receive(
        ls, {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": item}}
    )


def test_both_ways_apply_the_change_and_publish_its_status(
    server: tuple[TokenlineServer, Sink],
) -> None:
    ls, sink = server
    open_doc(ls, "first line\nsecond line")
    quick = receive(ls, did_change([ranged(0, 5, 1, 6, " and")], version=2))
    assert type(quick) is QuickChange
    assert ls.store.require(URI).doc.text == "first and line"
    # A column of 0.0 is not an integer: pygls reads it (as 0), as it did before.
    slow = receive(ls, did_change([ranged(0, 0.0, 0, 0, "<")], version=3))
    assert type(slow) is not QuickChange
    assert ls.store.require(URI).doc.text == "<first and line"
    statuses = sink.of("tokenline/status")
    assert [s["version"] for s in statuses] == [1, 2, 3]
    assert statuses[-1]["tokens"] == sp_count(MODEL, "<first and line")
    assert statuses[-1]["pending"] is False


def test_a_failure_on_the_quick_way_is_reported_and_the_server_goes_on(
    server: tuple[TokenlineServer, Sink], monkeypatch: pytest.MonkeyPatch
) -> None:
    ls, sink = server
    open_doc(ls, "text")

    def broken(*args: object) -> None:
        raise RuntimeError("a bug in the store")

    with monkeypatch.context() as m:
        m.setattr(ls.store, "edit", broken)
        receive(ls, did_change([ranged(0, 0, 0, 0, "x")], version=2))
    shown = sink.of(T.WINDOW_SHOW_MESSAGE)
    assert shown and "a bug in the store" in shown[-1]["message"]
    receive(ls, did_change([ranged(0, 0, 0, 0, "y")], version=3))
    assert ls.store.require(URI).doc.text == "ytext"
    assert sink.of("tokenline/status")[-1]["version"] == 3


def test_after_shutdown_a_did_change_is_ignored(server: tuple[TokenlineServer, Sink]) -> None:
    ls, _sink = server
    open_doc(ls, "text")
    receive(ls, {"jsonrpc": "2.0", "id": 9, "method": "shutdown"})
    receive(ls, did_change([ranged(0, 0, 0, 0, "x")], version=2))
    assert ls.store.require(URI).doc.text == "text"


BIG = "x" * ORJSON_BYTES  # makes any message long enough for orjson


def big(body: str) -> bytes:
    """A message of `body` (JSON text with a %s where a long string goes)."""
    return (body % json.dumps(BIG)).encode()


@pytest.mark.parametrize(
    "body",
    [
        big('{"jsonrpc": "2.0", "method": "m", "params": {"text": %s, "n": [1, {"a": []}]}}'),
        big('{"jsonrpc": "2.0", "method": "m", "params": {"t": %s, "t": "last"}}'),
        big('{"jsonrpc": "2.0", "params": {"inner": {"jsonrpc": "2.0", "x": %s}}}'),
        big('[{"jsonrpc": "2.0", "id": 1, "method": "m"}, %s]'),
        big('{"jsonrpc": "2.0", "params": {"t": %s, "f": 0.5}}'),
        big('{"jsonrpc": "2.0", "params": {"t": %s, "n": 18446744073709551616}}'),
        big('{"jsonrpc": "2.0", "params": {"t": %s, "n": -9223372036854775809}}'),
        big('{"jsonrpc": "2.0", "params": {"t": %s, "n": NaN, "m": -Infinity}}'),
        big('{"jsonrpc": "2.0", "params": {"t": %s, "s": "\\ud800"}}'),
        b"\xef\xbb\xbf" + big('{"jsonrpc": "2.0", "params": {"t": %s}}'),
        big('{"jsonrpc": "2.0", "params": {"t": %s}}').decode().encode("utf-16"),
        big('{"jsonrpc": "2.0", "params": %s}'),
        big('{"jsonrpc": "2.0", "params": {"t": %s} "broken"}'),
        big("[" * 2000 + "%s" + "]" * 2000),
        b'{"jsonrpc": "2.0", "method": "small", "params": {"n": 18446744073709551616}}',
    ],
)
def test_a_message_decodes_as_pygls_decodes_it(body: bytes) -> None:
    """Whether orjson or json reads it: the same objects, the hook called on the same objects
    innermost first, or the same error."""

    def reading(read: Any) -> tuple[Any, list[Any]]:
        seen: list[Any] = []

        def hook(d: dict[str, Any]) -> Any:
            seen.append(repr(d))
            return ("hooked", d) if "jsonrpc" in d else d

        try:
            return read(body, hook), seen
        except (ValueError, RecursionError) as exc:
            return type(exc), seen

    ours, pygls_way = reading(decoded), reading(lambda b, h: json.loads(b, object_hook=h))
    assert repr(ours) == repr(pygls_way)


def test_a_large_message_is_read_by_orjson(monkeypatch: pytest.MonkeyPatch) -> None:
    from tokenline.server import quick

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("read by json")

    monkeypatch.setattr(quick.json, "loads", refused)
    body = big('{"jsonrpc": "2.0", "method": "m", "params": {"text": %s, "n": [1]}}')
    assert decoded(body, lambda d: d)["params"]["text"] == BIG
    with pytest.raises(AssertionError, match="read by json"):
        decoded(big('{"jsonrpc": "2.0", "params": {"t": %s, "f": 0.5}}'), lambda d: d)
