"""The server's timeline at DEBUG (what benchmarks/bench_server.py sets each key's wait among):
when a message's bytes were read, when its handling started, when its status went out, and
when each idle step ran, all on the monotonic clock; and the benchmark's reader of that log
finds each key, its status and the steps in it. In process: bytes through the server's own
reader (transport.serve_reader over an Inbox), as stdin brings them."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import logging
import sys
import threading
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tokenline.server.app import TokenlineServer
from tokenline.server.transport import IdleReader, Inbox, serve_reader

from .test_quick import URI, Sink, did_change, ranged

ROOT = Path(__file__).resolve().parents[2]


def bench_timeline() -> ModuleType:
    spec = importlib.util.spec_from_file_location("timeline", ROOT / "benchmarks" / "timeline.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("timeline", module)  # its dataclasses look themselves up there
    spec.loader.exec_module(module)
    return module


def framed(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def serve(messages: list[dict[str, Any]]) -> tuple[Sink, float, float]:
    """Serves the messages, each arriving on its own once the server waits for input (as keys
    typed one after another do); what it sent, and the monotonic clock before and after."""

    async def scenario() -> None:
        ls = TokenlineServer()
        sink = Sink()
        ls.protocol.set_writer(sink)
        inbox = Inbox()
        ls.idle.attach(inbox)
        reader = IdleReader(inbox, ls.flush)
        served = asyncio.create_task(
            serve_reader(reader, ls.protocol, threading.Event(), ls._report_server_error)
        )
        for message in messages:
            await inbox.idle.wait()
            inbox.put(framed(message))
            await asyncio.sleep(0)
        await inbox.idle.wait()
        inbox.put(b"")
        await served
        result.append(sink)

    result: list[Sink] = []
    before = time.monotonic()
    asyncio.run(scenario())
    return result[0], before, time.monotonic()


def test_each_key_is_logged_when_read_handled_and_its_status_sent(
    caplog: pytest.LogCaptureFixture,
) -> None:
    item = {"uri": URI, "languageId": "markdown", "version": 1, "text": "first line\n" * 50}
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": item}},
        did_change([ranged(3, 0, 3, 0, "x")], version=2),
        did_change([ranged(4, 0, 4, 0, "y")], version=3),
    ]
    with caplog.at_level(logging.DEBUG, "tokenline.server"):
        sink, before, after = serve(messages)
    assert [s["version"] for s in sink.of("tokenline/status")] == [1, 2, 3]
    line = bench_timeline().Timeline("\n".join(r.getMessage() for r in caplog.records))
    for version in (2, 3):
        read, started, ended, cpu = line.keys[(URI, version)]
        written = line.statuses[(URI, version)]
        assert before < read <= started <= ended <= written < after
        assert cpu > 0
    # The second key was read after the first one's status went out (it arrived then).
    assert line.statuses[(URI, 2)] < line.keys[(URI, 3)][0]
    messages_handled = {s.cause for s in line.spans if s.group == "message"}
    assert {"initialize", "textDocument/didOpen"} <= messages_handled
    # The keys' statuses go out in a publish (the didOpen's in its handler).
    publishes = [s for s in line.spans if s.group == "publish"]
    assert len(publishes) >= 2 and all(before < s.start <= s.end < after for s in publishes)


def test_an_idle_step_is_logged_with_when_it_ran(caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        ls = TokenlineServer()
        steps = iter([True, False])
        ls.idle.add("prepare", URI, lambda: next(steps))
        while ls.idle.has("prepare", URI):
            await asyncio.sleep(0.001)

    with caplog.at_level(logging.DEBUG, "tokenline.server"):
        before = time.monotonic()
        asyncio.run(scenario())
        after = time.monotonic()
    line = bench_timeline().Timeline("\n".join(r.getMessage() for r in caplog.records))
    steps = [s for s in line.spans if s.group == "idle"]
    assert [s.cause for s in steps] == ["idle prepare", "idle prepare"]
    assert before < steps[0].start <= steps[0].end <= steps[1].start <= steps[1].end < after
    assert line.idle_done == steps[1].end
