"""The language server: the host of its features, the documents, and `serve()` (`tokenline serve`).

Each feature (server/feature.py) owns its state and its LSP handlers and asks the server only
what `feature.Host` offers; the server holds the features, passes document events and idle-time
publishing to all of them (each on its own: server/dispatch.py), and makes each document's
settings and model from the configuration, project and models features (and hands the compare
feature's counts under other models to the status and the diagnostics). The text of each open
document lives in the DocumentStore (tokenline.core Documents); pygls's workspace keeps only the
workspace folders.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from lsprotocol import types
from pygls.exceptions import FeatureNotificationError, FeatureRequestError
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from tokenline import __version__
from tokenline.core import COMPILED, UTF16, ModelError, load_model
from tokenline.server.ahead import WILL_OPEN, OpeningAhead, read_text
from tokenline.server.budgets import ProjectFeature
from tokenline.server.chat import ChatFeature, kind_of
from tokenline.server.compare import CompareFeature
from tokenline.server.configuration import ConfigurationFeature
from tokenline.server.counts import CountsFeature
from tokenline.server.diagnostics import DiagnosticsFeature
from tokenline.server.dispatch import Features, logged
from tokenline.server.feature import Change, DocState, Feature, Handler, Host, TextView
from tokenline.server.hover import HoverFeature
from tokenline.server.idle import IdleWork
from tokenline.server.memory import LARGE, CollectionLog, Trimmer, settle
from tokenline.server.models import ModelsFeature
from tokenline.server.positions import param, unit_of
from tokenline.server.quick import QuickChange, notification, quick_change
from tokenline.server.sections import SectionsFeature
from tokenline.server.semantic import SemanticTokensFeature
from tokenline.server.settings import Settings
from tokenline.server.status import STATUS, StatusFeature, status
from tokenline.server.store import DocumentStore, TextChange, text_changes
from tokenline.server.transport import run_stdio, run_tcp, setup_logging

log = logging.getLogger("tokenline.server")

# Segment caches up to this many entries are compacted after an opening (about 4 MB of
# columns to copy; larger ones keep the room they grew).
COMPACT_ENTRIES = 65_536

EXIT_USAGE = 2
# Chat files this long open with their first encode in idle time, after their hints and totals.
DEFER_CHAT_CHARS = 2_000_000
DEFAULT_HOST = "127.0.0.1"
# How long the client's messages wait for its answer to the first configuration pull.
HOLD_SECONDS = 2.0


class TokenlineProtocol(LanguageServerProtocol):
    """pygls's protocol without its own copy of each document.

    pygls's built-in didOpen/didChange/didClose put every document into `workspace` as a
    TextDocument and re-split its whole text on each change. These overrides only hand the
    notification to the server's handlers, which keep the text in the core. A well-formed
    didChange skips pygls altogether (server/quick.py), and plain notifications (the status)
    are encoded as they are.
    """

    def structure_message(self, data: dict[str, Any]) -> Any:
        if "jsonrpc" in data and data.get("method") == types.TEXT_DOCUMENT_DID_CHANGE:
            quick = quick_change(data)
            if quick is not None:
                return quick
        return super().structure_message(data)

    def __init__(self, server: Any, converter: Any) -> None:
        super().__init__(server, converter)
        # The client's messages held while the user's settings are first pulled (hold()).
        self._held: list[Any] | None = None

    def hold(self) -> None:
        """Holds the client's requests and notifications (not its answers) until release(), or
        for a little longer than HOLD_SECONDS should nothing release them."""
        if self._held is None:
            self._held = []
            with contextlib.suppress(RuntimeError):
                asyncio.get_running_loop().call_later(HOLD_SECONDS + 1, self.release)

    def release(self) -> None:
        """Handles the messages held, in the order they came."""
        held, self._held = self._held, None
        for message in held or ():
            self.handle_message(message)

    def handle_message(self, message: Any) -> None:
        if self._held is not None and (type(message) is QuickChange or hasattr(message, "method")):
            self._held.append(message)
        elif type(message) is not QuickChange:
            if getattr(message, "method", None) == types.INITIALIZED:
                # Before the next message: the server pulls the settings first (initialized).
                self.hold()
            super().handle_message(message)
        elif self._shutdown:
            log.warning("didChange after shutdown; ignored")
        else:
            server = self._server
            assert isinstance(server, TokenlineServer)
            try:
                server.edited(message.uri, message.version, message.changes)
            except Exception as exc:
                # As pygls reports a notification handler's failure; the server goes on.
                log.error("server: %s failed", types.TEXT_DOCUMENT_DID_CHANGE, exc_info=True)
                server._report_server_error(exc, FeatureNotificationError)

    def notify_plain(self, method: str, params: dict[str, Any]) -> None:
        """Sends a notification whose params are plain JSON values."""
        self._send_data(notification(method, params))

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams) -> None:
        self._document_event(types.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        self._document_event(types.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        self._document_event(types.TEXT_DOCUMENT_DID_CLOSE, params)

    def _document_event(self, method: str, params: object) -> None:
        """Calls the server's handler of the notification. Plainly, not as pygls's built-in
        handlers do (a generator yielding to it): pygls keeps the Future of every generator
        handler's notification, one per didOpen and didClose for the server's lifetime."""
        if (handler := self.fm.features.get(method)) is not None:
            handler(params)


class TokenlineServer(LanguageServer):
    """Tokenline's language server: the host of its features (feature.Host), the documents,
    and publishing after changes."""

    def __init__(self, extra: Sequence[Callable[[Host], Feature]] = ()) -> None:
        """extra: features to run before the built-in ones (a test adds a failing one)."""
        super().__init__(
            "tokenline",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=TokenlineProtocol,
        )
        # The code units of LSP positions the client and the server agreed on.
        self.unit = UTF16
        # Work done while no input waits: finishing openings, whole re-encodes (idle.py).
        self.idle = IdleWork()
        self.store = DocumentStore(self.idle, self.caught_up)
        # Models whose documents' heap the collector has settled (memory.settle).
        self._settled: set[int] = set()
        # malloc_trim, off the event loop (memory.py).
        self.trimmer = Trimmer()
        # The features whose data makes a document's settings and model.
        self.configuration = ConfigurationFeature(self)
        self.project = ProjectFeature(self)
        self.models = ModelsFeature(self)
        # Each document under other models (its models from the models feature), which the
        # status and the diagnostics count with.
        self.compare = CompareFeature(self, self.models)
        # Chat files' conversations, which the status and the diagnostics show.
        self.chat = ChatFeature(self)
        # Every feature, in the order its hooks run (the user's configuration is pulled before
        # the project's files are watched; the other models follow a change before the status
        # is published; status before diagnostics).
        self.features = Features(
            [
                *(make(self) for make in extra),
                self.configuration,
                self.project,
                self.models,
                self.compare,
                self.chat,
                StatusFeature(self, self.compare, self.chat),
                DiagnosticsFeature(self, self.compare, self.chat),
                SemanticTokensFeature(self),
                HoverFeature(self),
                SectionsFeature(self),
                CountsFeature(self),
            ]
        )
        # The file whose editor opened, counted before its didOpen (ahead.py).
        self.ahead = OpeningAhead()
        # Documents changed since their status and diagnostics were last published.
        self.pending: set[str] = set()
        self._flush_scheduled = False
        register(self)

    def initialize(self, params: types.InitializeParams) -> None:
        self.unit = unit_of(str(self.workspace.position_encoding or "utf-16"))
        self.features.each("initialize", params)
        log.info(
            "tokenline %s (core %s) initialized; position encoding %s",
            __version__,
            "compiled" if COMPILED else "pure Python",
            self.workspace.position_encoding,
        )

    async def initialized(self, params: types.InitializedParams) -> None:
        """Pulls the user's settings before anything else is handled: a document the client
        opens meanwhile is held, then counted once under the user's model and window (not under
        the defaults first, which the status would show for a moment). A client that takes over
        HOLD_SECONDS to answer gets its documents counted under the defaults until it does.
        Meanwhile the model the settings known so far name is loaded (load_ahead)."""
        assert isinstance(self.protocol, TokenlineProtocol)
        pull = asyncio.ensure_future(self.configuration.pull_configuration())
        # After the pull's first step, which sends the request.
        asyncio.get_running_loop().call_soon(self.load_ahead)
        try:
            await asyncio.wait_for(asyncio.shield(pull), HOLD_SECONDS)
        except TimeoutError:
            log.warning("workspace/configuration unanswered after %.0f s; going on", HOLD_SECONDS)
        finally:
            self.protocol.release()
        await self.features.initialized()

    def load_ahead(self) -> None:
        """Loads the model the settings known so far name (initializationOptions, the project's:
        a client that sends its settings there names the same) while the client answers the
        configuration pull and sends its first didOpen: a large file's first answers do not wait
        for it (0.1-0.2 s for a SentencePiece model). Quietly: a model that cannot load is
        reported, as always, when a document needs it."""
        if any(True for _ in self.store):
            return  # a document came first, with its model
        folders = self.folders()
        uri = folders[0] if folders else ""
        with contextlib.suppress(ModelError):
            self.models.load(self.settings_for(uri).model, uri or None)

    # -- the host of the features (feature.Host) --------------------------------------------------

    def document(self, uri: str) -> DocState:
        return self.store.require(uri)

    def text(self, uri: str) -> TextView:
        return self.store.text(uri)

    def later(self, kind: str, uri: str, step: Callable[[], bool]) -> None:
        self.idle.add(kind, uri, step)

    def folders(self) -> list[str]:
        try:
            return list(self.workspace.folders.keys())
        except RuntimeError:
            return []

    def notify(self, method: str, params: object) -> None:
        started = time.monotonic()
        if type(params) is dict:
            assert isinstance(self.protocol, TokenlineProtocol)
            self.protocol.notify_plain(method, params)
        else:
            self.protocol.notify(method, params)
        if log.isEnabledFor(logging.DEBUG):  # the server benchmark reads when a status went out
            sent(method, params, started)

    def request(self, method: str, params: object) -> Awaitable[Any]:
        answer: asyncio.Future[Any] = self.protocol.send_request_async(method, params)
        # Unawaited (a refresh), a refused request is no error worth a log line.
        answer.add_done_callback(_quietly)
        return answer

    def configuration_changed(self) -> None:
        self.features.each("configuration_changed")

    def settings_changed(self) -> None:
        """Re-reads every document's settings; re-tokenizes those whose model changed."""
        changed_any = False
        for st in self.store:
            settings = self.settings_for(st.uri)
            model, problem = self.models.for_document(st.uri, settings, st.model)
            if model is not st.model:
                self.document_changed(st, self.store.set_model(st, model))
                changed_any = True
            if problem != st.model_problem:
                st.model_problem = problem
                self.mark(st.uri)
                changed_any = True
            if settings != st.settings:
                st.settings = settings
                self.mark(st.uri)
                changed_any = True
        if changed_any:
            self.flush()
            self.features.each("refresh")

    def settings_for(self, uri: str) -> Settings:
        """A document's settings: the project's, the user's over them (problems told once)."""
        settings, problems = self.project.settings(uri, self.configuration.layers(uri))
        self.configuration.warn(problems)
        return settings

    # -- document events --------------------------------------------------------------------------

    def will_open(self, params: Any) -> None:
        """`tokenline/willOpen` {uri}: an editor of the file opens; its didOpen comes when the
        editor has the text. Counts the file from disk now and publishes its status (ahead.py)."""
        start, cpu = time.perf_counter(), time.thread_time()
        uri = param(params, "uri")
        if not isinstance(uri, str) or self.store.get(uri) is not None or self.ahead.holds(uri):
            return
        text = read_text(uri)
        # A chat file's status is its conversations' (chat.py): it waits for its didOpen.
        if text is None or kind_of(uri, text) is not None:
            return
        settings = self.settings_for(uri)
        model, problem = self.models.for_document(uri, settings, None)
        counted = self.ahead.count(uri, text, model)
        ahead = DocState(uri, "", None, counted.doc, settings, model_problem=problem)
        self.notify(STATUS, status(ahead))
        log.debug(
            "willOpen %s: %d characters, status sent in %.1f ms, cpu %.1f ms",
            uri,
            len(text),
            (time.perf_counter() - start) * 1e3,
            (time.thread_time() - cpu) * 1e3,
        )

    def did_open(self, params: types.DidOpenTextDocumentParams) -> None:
        """Opens the document and publishes its count at once, before the requests the client
        sent behind the didOpen (colours, hints) are answered."""
        start, cpu = time.perf_counter(), time.thread_time()
        uri = params.text_document.uri
        settings = self.settings_for(uri)
        model, problem = self.models.for_document(uri, settings, None)
        text = params.text_document.text
        # A large chat file's hints and totals come from its text; its encode waits (catchup.py).
        defer = len(text) >= DEFER_CHAT_CHARS and self.chat.opening(uri, text) is not None
        counted = self.ahead.take(uri, text, model)
        st = self.store.open(params.text_document, settings, model, defer, counted)
        st.model_problem = problem
        # Before the features' idle work (a chat file's totals), which then runs on a settled
        # heap: the collector's walks skip the model's vocabulary. By the text's length: a
        # deferred document's Document is still empty.
        self.give_back_later(len(text), new_model=id(model) not in self._settled)
        self.features.each("document_opened", st)
        self.pending.discard(uri)
        self.features.each("publish", st)
        log.debug(
            "didOpen %s: %d characters, status sent in %.1f ms, cpu %.1f ms",
            uri,
            st.doc.length(),
            (time.perf_counter() - start) * 1e3,
            (time.thread_time() - cpu) * 1e3,
        )

    def did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        doc = params.text_document
        self.edited(doc.uri, doc.version, text_changes(params))

    def edited(self, uri: str, version: int | None, changes: list[TextChange]) -> None:
        """A didChange, read by pygls or straight from its JSON (server/quick.py)."""
        start = time.perf_counter()
        changed = self.store.edit(uri, version, changes, self.unit)
        if changed is None:
            return
        if log.isEnabledFor(logging.DEBUG):  # the server benchmark reads it (at DEBUG)
            log.debug("didChange %s: edited in %.3f ms", uri, (time.perf_counter() - start) * 1e3)
        st, change = changed
        self.features.each("text_changed", st, change)
        if st.pending:
            self.mark(st.uri)  # the status says the tokens are catching up (catchup.py)
        else:
            self.document_changed(st, change)

    def did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        st = self.store.close(params.text_document.uri)
        if st is not None:
            self.pending.discard(st.uri)
            self.features.each("document_closed", st)
            self.give_back_later(int(st.doc.length()))

    def document_changed(self, st: DocState, change: Change) -> None:
        self.features.each("document_changed", st, change)
        self.mark(st.uri)

    def give_back_later(self, chars: int, new_model: bool = False) -> None:
        """After opening or closing a document of `chars` characters, or a model's first
        document: in idle time, once the message is gone too, hands the heap's free pages back
        when it was large and settles the collector's heap (memory.py)."""
        if chars >= LARGE or new_model:
            self.idle.add("give back", "", self._give_back)

    def _give_back(self) -> bool:
        for model in {id(st.doc.model): st.doc.model for st in self.store}.values():
            # The room its columns grew while the documents opened; a copy of them all, so
            # only while it is small enough to take well under a millisecond or two.
            if model.family.cache.size() <= COMPACT_ENTRIES:
                model.family.cache.compact()
        settle()
        self._settled.update(id(st.doc.model) for st in self.store)
        self.trimmer.start()
        return False  # one slice

    def caught_up(self, st: DocState, change: Change) -> None:
        """The tokens of a document that re-encodes whole caught up with its text (catchup.py):
        what the client asked for meanwhile was refused, so it is asked to ask again."""
        self.document_changed(st, change)
        self.features.each("refresh")

    # -- publishing -------------------------------------------------------------------------------

    def mark(self, uri: str) -> None:
        """Publishes the document's status and diagnostics before the server next waits."""
        self.pending.add(uri)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            with contextlib.suppress(RuntimeError):
                asyncio.get_running_loop().call_soon(self.flush)

    def flush(self) -> None:
        """Publishes status and diagnostics of every document changed since the last flush."""
        self._flush_scheduled = False
        if not self.pending:
            return
        started, cpu = time.monotonic(), time.thread_time()
        uris = list(self.pending)
        self.pending.clear()
        for uri in uris:
            st = self.store.get(uri)
            if st is not None:
                self.features.each("publish", st)
        if log.isEnabledFor(logging.DEBUG):  # as transport.handled logs a message
            took, cpu = (time.monotonic() - started) * 1e3, (time.thread_time() - cpu) * 1e3
            log.debug(
                "published %d: at %.6f, took %.3f ms, cpu %.3f ms", len(uris), started, took, cpu
            )

    # -- errors -----------------------------------------------------------------------------------

    def report_server_error(self, error: Exception, source: Any) -> None:
        if source == FeatureRequestError:
            # Already answered with an error response and logged with its traceback.
            return
        log.error("internal error (%s): %s", getattr(source, "__name__", source), error)
        with contextlib.suppress(Exception):
            self.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Error,
                    message=f"Tokenline: internal error: {error} (the server goes on; see its log)",
                )
            )

    def show(self, kind: types.MessageType, message: str) -> None:
        try:
            self.window_show_message(types.ShowMessageParams(type=kind, message=message))
        except Exception:
            log.exception("could not send window/showMessage")


def sent(method: str, params: object, started: float) -> None:
    """Logs (DEBUG) a notification written to the client: its document and version, when its
    writing started and how long it took (monotonic seconds, as transport.handled)."""
    if isinstance(params, dict):
        uri, version = params.get("uri"), params.get("version")
    else:
        uri, version = getattr(params, "uri", None), getattr(params, "version", None)
    took = (time.monotonic() - started) * 1e3
    log.debug("sent %s %s v%s: at %.6f, took %.3f ms", method, uri, version, started, took)


def _quietly(answer: asyncio.Future[Any]) -> None:
    """Takes a request's exception as seen, so that asyncio does not log an unawaited one."""
    if not answer.cancelled():
        answer.exception()


def register(ls: TokenlineServer) -> None:
    """Registers the server's own handlers and every feature's on `ls`."""
    own = [
        Handler(types.INITIALIZE, ls.initialize),
        Handler(types.INITIALIZED, ls.initialized),
        Handler(types.TEXT_DOCUMENT_DID_OPEN, ls.did_open),
        Handler(types.TEXT_DOCUMENT_DID_CHANGE, ls.did_change),
        Handler(types.TEXT_DOCUMENT_DID_CLOSE, ls.did_close),
        Handler(WILL_OPEN, ls.will_open),
    ]
    for h in own:
        ls.feature(h.method)(logged("server", h))
    for method, handler, options in ls.features.handlers():
        ls.feature(method, options)(handler)


def serve(tcp: str | None = None) -> int:
    """Runs the language server until the client says `exit` (or goes away).

    tcp: None for stdio, or "HOST:PORT" to listen on a TCP port (one client).
    Returns the process exit code.
    """
    setup_logging()
    CollectionLog().install()
    ls = TokenlineServer()
    if tcp:
        host, _, port = tcp.rpartition(":")
        if not port.isdigit():
            print(f"tokenline serve: --tcp wants HOST:PORT, not {tcp!r}", file=sys.stderr)
            return EXIT_USAGE
        return run_tcp(ls, ls.flush, host or DEFAULT_HOST, int(port), ls.idle.attach)
    return run_stdio(ls, ls.flush, ls.idle.attach)


def main(argv: list[str] | None = None) -> int:
    """`python -m tokenline.server [--tcp HOST:PORT]`."""
    import argparse

    p = argparse.ArgumentParser(prog="tokenline serve", description="Tokenline language server")
    p.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio")
    args = p.parse_args(argv)
    return serve(args.tcp)


__all__ = ["TokenlineServer", "load_model", "main", "serve"]
