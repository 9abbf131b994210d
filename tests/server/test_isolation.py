"""One feature's exception costs the other features nothing: each hook and handler runs on its
own, and its failure is logged with the feature's name (server/dispatch.py)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as T
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from tokenline.server.dispatch import Features, logged
from tokenline.server.feature import Feature, Handler

from .harness import Session, bundled_model_path, rng, sp_count

FAULTY_SERVER = Path(__file__).with_name("faulty_server.py")
MODEL = bundled_model_path()


class Recorder(Feature):
    """Notes each hook it is given."""

    def __init__(self) -> None:
        super().__init__(None)  # type: ignore[arg-type]  # no hook here asks the host
        self.calls: list[str] = []

    def publish(self, st: Any) -> None:
        self.calls.append(f"publish {st}")

    def refresh(self) -> None:
        self.calls.append("refresh")


class Breaks(Recorder):
    def publish(self, st: Any) -> None:
        raise RuntimeError("broken publish")


def test_each_hook_runs_on_every_feature_past_a_failing_one(
    caplog: pytest.LogCaptureFixture,
) -> None:
    first, last = Recorder(), Recorder()
    features = Features([first, Breaks(), last])
    with caplog.at_level(logging.ERROR, "tokenline.server"):
        features.each("publish", "doc")
        features.each("refresh")
    assert first.calls == last.calls == ["publish doc", "refresh"]
    failures = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert [r.getMessage() for r in failures] == ["Breaks: publish failed"]
    assert failures[0].exc_info is not None


def test_a_failing_handler_is_logged_with_its_feature_and_still_raises(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(params: Any) -> None:
        raise ValueError(params)

    def not_open(params: Any) -> None:
        raise JsonRpcInvalidParams("document not open")

    with caplog.at_level(logging.ERROR, "tokenline.server"):
        with pytest.raises(ValueError):
            logged("Hover", Handler("textDocument/hover", broken))("p")
        # An error answer the handler means is not a failure.
        with pytest.raises(JsonRpcException):
            logged("Hover", Handler("textDocument/hover", not_open))("p")
    assert [r.getMessage() for r in caplog.records] == ["Hover: textDocument/hover failed"]


async def test_a_failing_async_handler_is_logged_too(caplog: pytest.LogCaptureFixture) -> None:
    async def broken(params: Any) -> None:
        raise ValueError(params)

    with caplog.at_level(logging.ERROR, "tokenline.server"), pytest.raises(ValueError):
        await logged("Settings", Handler("workspace/didChangeConfiguration", broken))("p")
    assert [r.getMessage() for r in caplog.records] == [
        "Settings: workspace/didChangeConfiguration failed"
    ]


def test_a_feature_failing_in_every_hook_leaves_the_others_publishing(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    s = Session(
        configuration={"": {"tokenline": {"contextWindow": 10}}},
        cmd=[sys.executable, str(FAULTY_SERVER)],
        env={"FAULTY_LOG": str(log)},
    )
    refreshes: list[object] = []

    def on_refresh(*args: object) -> None:
        refreshes.append(args)

    s.client.feature(T.WORKSPACE_SEMANTIC_TOKENS_REFRESH)(on_refresh)
    uri = "file:///faulty.md"
    text = "# Title\n\nsome words that do not fit in ten tokens, not at all\n"
    try:
        s.open(uri, text)
        # The configuration was pulled after the faulty feature's `initialized` failed.
        st = s.wait_for(
            lambda: [x for x in s.statuses if x["uri"] == uri and x["contextWindow"] == 10],
            what="the pulled contextWindow",
        )[-1]
        assert st["tokens"] == sp_count(MODEL, text)
        assert [d.code for d in s.diagnostics(uri)] == ["context-window"]
        assert s.inlay_hints(uri)[0].label == f"{sp_count(MODEL, text)} tokens"

        v = s.change(uri, [(rng((2, 0), (2, 0)), "more ")])
        assert s.status(uri, v)["tokens"] == sp_count(MODEL, "# Title\n\nmore " + text[9:])
        assert s.semantic_full(uri) is not None
        with pytest.raises(JsonRpcException):
            s.request("faulty/ping", {})

        s.configure({"contextWindow": 5000})
        s.wait_for(lambda: not s.client.diagnostics[uri], what="diagnostics cleared")
        s.wait_for(lambda: refreshes, what="semantic tokens refresh")
        s.close_doc(uri)
        s.request("tokenline/models", {})  # a round trip: the close has been handled
        assert s.returncode is None
    finally:
        s.close()
    logged_lines = log.read_text("utf-8")
    for what in (
        "initialize",
        "initialized",
        "document_opened",
        "document_changed",
        "publish",
        "configuration_changed",
        "refresh",
        "document_closed",
        "faulty/ping",
    ):
        assert f"ERROR tokenline.server: Faulty: {what} failed" in logged_lines
