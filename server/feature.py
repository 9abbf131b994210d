"""What a unit of the server is, and all it may ask of the server.

A feature is built with the server (`TokenlineServer.__init__` lists them) from a `Host`: the
small protocol below is everything a feature may ask of the server, so that no feature reads
another's state or imports `app.py`. A feature names the LSP methods it answers in `handlers`
and overrides the hooks it needs; the server calls each hook on every feature in that list's
order, each call on its own (server/dispatch.py): an exception in one feature is logged with its
name and the others still run. Per-document state a feature keeps (a cache, what it last
published) lives in the feature, keyed by URI, and goes in `document_closed`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tokenline.core import Document, Model
from tokenline.server.settings import Settings

# "Every line so far": the largest count of untouched lines a change can report.
ALL_LINES = 1 << 62


class Edit(NamedTuple):
    """One edit of a document's text: text[start:end] (code points of the text before it)
    replaced by `text`."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Change:
    """What a change of a document left alone, and the edits it made.

    head/tail: lines at the start/end of the text that no edit touched. A new model (a new
    tokenization of the same text) touches everything. edits: the change's edits in order, so
    that other tokenizations of the text can follow it edit by edit; None when the text was
    replaced in a way not told edit by edit (a whole-text change, a rebuild).
    """

    head: int = ALL_LINES
    tail: int = ALL_LINES
    new_model: bool = False
    edits: tuple[Edit, ...] | None = ()

    def then(self, later: Change) -> Change:
        """This change followed by `later`: what both left alone, and both's edits."""
        edits = None
        if self.edits is not None and later.edits is not None:
            edits = self.edits + later.edits
        return Change(
            min(self.head, later.head),
            min(self.tail, later.tail),
            self.new_model or later.new_model,
            edits,
        )


EVERYTHING = Change(0, 0, edits=None)


@dataclass(frozen=True)
class ModelProblem:
    """Why a document is not on the model its settings name: that setting, and why it could not
    be loaded."""

    requested: str
    reason: str


@dataclass
class DocState:
    """One open document: its text and tokens, and the settings it is checked against."""

    uri: str
    language_id: str
    version: int | None
    doc: Document
    settings: Settings
    surrogates_logged: bool = False
    # Set while the model the settings name cannot be loaded (doc.model is another one).
    model_problem: ModelProblem | None = None
    # The text has changed since the tokens were made (a model that re-encodes whole catching
    # up: server/catchup.py); `doc` still holds the older text and its tokens.
    pending: bool = False

    @property
    def model(self) -> Model:
        return self.doc.model


class NotReady(JsonRpcException):
    """The error answer (LSP's ServerCancelled) to a request the server cannot answer now: the
    document's tokens are catching up with its text, or colours of a document that large come by
    range only. VS Code's client takes it as a cancellation: it keeps what it shows and asks
    again later."""

    CODE = -32802


class TextView(Protocol):
    """A document's newest text with its line index: its Document, or while its tokens catch up
    with the text, the copy that takes the edits first (server/catchup.py)."""

    def length(self) -> int: ...
    def line_count(self) -> int: ...
    def line_start(self, line: int) -> int: ...
    def line_end(self, line: int) -> int: ...
    def offset(self, line: int, column: int, unit: int) -> int: ...
    def position(self, offset: int, unit: int) -> tuple[int, int]: ...
    def slice(self, start: int, end: int) -> str: ...


class Host(Protocol):
    """What a feature may ask of the server (TokenlineServer is the one host)."""

    @property
    def unit(self) -> int:
        """The code unit of LSP positions that the client and the server agreed on."""

    def document(self, uri: str) -> DocState:
        """The open document at uri, its tokens in step with its text; an InvalidParams error
        answer when it is not open, NotReady while its tokens catch up."""

    def text(self, uri: str) -> TextView:
        """The newest text of the open document at uri, even while its tokens catch up (features
        that read the text alone answer meanwhile); an InvalidParams error answer when it is not
        open."""

    def folders(self) -> list[str]:
        """The workspace folders' URIs (none before `initialize`)."""

    def notify(self, method: str, params: object) -> None:
        """Sends a notification to the client."""

    def later(self, kind: str, uri: str, step: Callable[[], bool]) -> None:
        """Runs `step` in idle slices (server/idle.py) until it returns False; replaces the
        document's job of the same kind."""

    def mark(self, uri: str) -> None:
        """Publishes the document again (every feature's `publish`) before the server next
        waits: what a feature shows of it changed without a change of its text."""

    def request(self, method: str, params: object) -> Awaitable[Any]:
        """Sends a request to the client now; awaiting the result gives its answer."""

    def show(self, kind: types.MessageType, message: str) -> None:
        """Shows the user a message (`window/showMessage`); never raises."""

    def configuration_changed(self) -> None:
        """Event: the user's configuration changed. Every feature's `configuration_changed`
        hook runs (forgetting what it read or reported of the old one)."""

    def settings_changed(self) -> None:
        """Event: a source of settings changed. Every document's settings and model are read
        again, and what changed is published."""


class Handler(NamedTuple):
    """An LSP method a feature answers: the method, its handler, and the method's options."""

    method: str
    run: Callable[[Any], Any]
    options: Any = None


class Feature:
    """Base class of the server's features: every hook does nothing."""

    def __init__(self, host: Host) -> None:
        self.host = host

    @property
    def name(self) -> str:
        """How the log names this feature."""
        return type(self).__name__

    def handlers(self) -> Iterable[Handler]:
        """The LSP methods this feature answers."""
        return ()

    def initialize(self, params: types.InitializeParams) -> None:
        """The client's `initialize`: read its capabilities and options."""

    async def initialized(self) -> None:
        """The client's `initialized`: ask the client for what needs asking."""

    def document_opened(self, st: DocState) -> None:
        """A document was opened (it is in the store)."""

    def text_changed(self, st: DocState, change: Change) -> None:
        """A `didChange` changed the document's text (`Host.text`), its tokens following now or,
        while they catch up, later (then `document_changed` comes with all the changes since)."""

    def document_changed(self, st: DocState, change: Change) -> None:
        """A document's text or model changed (one `didChange`, or new settings)."""

    def document_closed(self, st: DocState) -> None:
        """A document was closed (it has left the store)."""

    def publish(self, st: DocState) -> None:
        """Send what the client should see after changes to `st` (when input is idle)."""

    def configuration_changed(self) -> None:
        """The user's configuration changed: forget what was read or reported of the old one."""

    def refresh(self) -> None:
        """New settings changed what documents show: ask the client to re-request it."""
