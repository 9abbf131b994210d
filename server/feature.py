"""What a unit of the server is: its own state, the LSP methods it answers, the events it follows.

A feature is built with the server (`TokenlineServer.__init__` lists them), registers its LSP
handlers in `register`, and overrides the hooks it needs; the server calls each hook on every
feature in that list's order. Per-document state a feature keeps (a cache, what it last
published) lives in the feature, keyed by URI, and goes in `document_closed`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lsprotocol import types

if TYPE_CHECKING:
    from tokenline.server.app import TokenlineServer
    from tokenline.server.store import DocState

# "Every line so far": the largest count of untouched lines a change can report.
ALL_LINES = 1 << 62


@dataclass(frozen=True)
class Change:
    """What a change of a document left alone.

    head/tail: lines at the start/end of the text that no edit touched. A new model (a new
    tokenization of the same text) touches everything.
    """

    head: int = ALL_LINES
    tail: int = ALL_LINES
    new_model: bool = False

    def then(self, later: Change) -> Change:
        """This change followed by `later`: what both left alone."""
        return Change(
            min(self.head, later.head),
            min(self.tail, later.tail),
            self.new_model or later.new_model,
        )


EVERYTHING = Change(0, 0)


class Feature:
    """Base class of the server's features: every hook does nothing."""

    def __init__(self, server: TokenlineServer) -> None:
        self.server = server

    def register(self) -> None:
        """Registers this feature's LSP handlers on the server (with `handle`)."""

    def handle(self, method: str, handler: Callable[[Any], Any], options: Any = None) -> None:
        """Makes a method of this feature the server's handler of an LSP method."""
        self.server.feature(method, options)(plain_function(handler))

    def initialize(self, params: types.InitializeParams) -> None:
        """The client's `initialize`: read its capabilities and options."""

    def document_opened(self, st: DocState) -> None:
        """A document was opened (it is in the store)."""

    def document_changed(self, st: DocState, change: Change) -> None:
        """A document's text or model changed (one `didChange`, or new settings)."""

    def document_closed(self, st: DocState) -> None:
        """A document was closed (it has left the store)."""

    def publish(self, st: DocState) -> None:
        """Send what the client should see after changes to `st` (when input is idle)."""

    def refresh(self) -> None:
        """New settings changed what documents show: ask the client to re-request it."""


def plain_function(handler: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """handler as a plain function, sync or async like it: pygls writes attributes on its
    handlers, which a bound method cannot take."""
    if asyncio.iscoroutinefunction(handler):

        async def run_async(params: Any) -> Any:
            return await handler(params)

        return run_async

    def run(params: Any) -> Any:
        return handler(params)

    return run
