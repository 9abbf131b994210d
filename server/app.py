"""The language server: its features, the events they follow, and `serve()` (`tokenline serve`).

Each feature (server/feature.py) owns its state and its LSP handlers; the server holds them,
passes document events and idle-time publishing to all of them, and answers `initialize`. The
text of each open document lives in the DocumentStore (tokenline.core Documents); pygls's
workspace keeps only the workspace folders.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import Generator
from typing import Any

from lsprotocol import types
from pygls.exceptions import FeatureRequestError
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from tokenline import __version__
from tokenline.core import COMPILED, UTF16, load_model
from tokenline.server.counts import CountsFeature
from tokenline.server.diagnostics import DiagnosticsFeature
from tokenline.server.feature import Change, Feature, plain_function
from tokenline.server.hover import HoverFeature
from tokenline.server.models import ModelsFeature
from tokenline.server.positions import unit_of
from tokenline.server.sections import SectionsFeature
from tokenline.server.semantic import SemanticTokensFeature
from tokenline.server.settings import SettingsFeature
from tokenline.server.status import StatusFeature
from tokenline.server.store import DocState, DocumentStore
from tokenline.server.transport import run_stdio, run_tcp, setup_logging

log = logging.getLogger("tokenline.server")

EXIT_USAGE = 2
DEFAULT_HOST = "127.0.0.1"


class TokenlineProtocol(LanguageServerProtocol):
    """pygls's protocol without its own copy of each document.

    pygls's built-in didOpen/didChange/didClose put every document into `workspace` as a
    TextDocument and re-split its whole text on each change. These overrides only hand the
    notification to the server's handlers, which keep the text in the core.
    """

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(
        self, params: types.DidOpenTextDocumentParams
    ) -> Generator[Any, Any, None]:
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_OPEN)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(
        self, params: types.DidChangeTextDocumentParams
    ) -> Generator[Any, Any, None]:
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(
        self, params: types.DidCloseTextDocumentParams
    ) -> Generator[Any, Any, None]:
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CLOSE)) is not None:
            yield handler, (params,), None


class TokenlineServer(LanguageServer):
    """Tokenline's language server: its features, and publishing after changes."""

    def __init__(self) -> None:
        super().__init__(
            "tokenline",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=TokenlineProtocol,
        )
        # The code units of LSP positions the client and the server agreed on.
        self.unit = UTF16
        # The features other features call.
        self.documents = DocumentStore(self)
        self.settings = SettingsFeature(self)
        self.models = ModelsFeature(self)
        # Every feature, in the order its hooks run (status before diagnostics).
        self.features: tuple[Feature, ...] = (
            self.documents,
            self.settings,
            self.models,
            StatusFeature(self),
            DiagnosticsFeature(self),
            SemanticTokensFeature(self),
            HoverFeature(self),
            SectionsFeature(self),
            CountsFeature(self),
        )
        # Documents changed since their status and diagnostics were last published.
        self.pending: set[str] = set()
        self._flush_scheduled = False
        register(self)

    def initialize(self, params: types.InitializeParams) -> None:
        self.unit = unit_of(str(self.workspace.position_encoding or "utf-16"))
        for feature in self.features:
            feature.initialize(params)
        log.info(
            "tokenline %s (core %s) initialized; position encoding %s",
            __version__,
            "compiled" if COMPILED else "pure Python",
            self.workspace.position_encoding,
        )

    # -- document events --------------------------------------------------------------------------

    def document_opened(self, st: DocState) -> None:
        for feature in self.features:
            feature.document_opened(st)
        self.mark(st.uri)

    def document_changed(self, st: DocState, change: Change) -> None:
        for feature in self.features:
            feature.document_changed(st, change)
        self.mark(st.uri)

    def document_closed(self, st: DocState) -> None:
        self.pending.discard(st.uri)
        for feature in self.features:
            feature.document_closed(st)

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
        uris = list(self.pending)
        self.pending.clear()
        for uri in uris:
            st = self.documents.get(uri)
            if st is None:
                continue
            try:
                for feature in self.features:
                    feature.publish(st)
            except Exception:
                log.exception("%s: publishing the status failed", uri)

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


def register(ls: TokenlineServer) -> None:
    """Registers `initialize` and every feature's handlers on `ls`."""
    ls.feature(types.INITIALIZE)(plain_function(ls.initialize))
    for feature in ls.features:
        feature.register()


def serve(tcp: str | None = None) -> int:
    """Runs the language server until the client says `exit` (or goes away).

    tcp: None for stdio, or "HOST:PORT" to listen on a TCP port (one client).
    Returns the process exit code.
    """
    setup_logging()
    ls = TokenlineServer()
    if tcp:
        host, _, port = tcp.rpartition(":")
        if not port.isdigit():
            print(f"tokenline serve: --tcp wants HOST:PORT, not {tcp!r}", file=sys.stderr)
            return EXIT_USAGE
        return run_tcp(ls, ls.flush, host or DEFAULT_HOST, int(port))
    return run_stdio(ls, ls.flush)


def main(argv: list[str] | None = None) -> int:
    """`python -m tokenline.server [--tcp HOST:PORT]`."""
    import argparse

    p = argparse.ArgumentParser(prog="tokenline serve", description="Tokenline language server")
    p.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio")
    args = p.parse_args(argv)
    return serve(args.tcp)


__all__ = ["TokenlineServer", "load_model", "main", "serve"]
