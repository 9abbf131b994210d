"""The language server: pygls wiring, handlers, and `serve()` (what `tokenline serve` runs).

State lives on the TokenlineServer object. The text of each open document lives in the server's
own Store (tokenline.core Documents); pygls's workspace keeps only the workspace folders.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import sys
import threading
from collections.abc import Generator, Iterable
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.exceptions import FeatureRequestError, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from tokenline import __version__
from tokenline.core import COMPILED, Model, ModelError, load_model
from tokenline.server import budgets as bud
from tokenline.server import diagnostics as diag
from tokenline.server import hover as hov
from tokenline.server import sections as sec
from tokenline.server import semantic as sem
from tokenline.server.models import ModelCache, model_choices
from tokenline.server.settings import SECTION, Settings
from tokenline.server.store import DocState, Store, apply_changes, set_model
from tokenline.server.text import unit_of
from tokenline.server.transport import CHUNK, IdleReader, serve_reader, stdin_source

log = logging.getLogger("tokenline.server")

STATUS = "tokenline/status"
COUNT = "tokenline/count"
IDS = "tokenline/ids"
TOKEN_AT = "tokenline/tokenAt"
MODELS = "tokenline/models"

# Clean-line counters after a semantic result: "every line is unchanged so far".
ALL_LINES = 1 << 62


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
    """Tokenline's language server and all its state."""

    def __init__(self) -> None:
        super().__init__(
            "tokenline",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=TokenlineProtocol,
        )
        self.store = Store()
        self.models = ModelCache()
        self.unit = unit_of("utf-16")
        # Setting sources, lowest precedence first: the project configuration (pyproject.toml
        # [tool.tokenline], in self.project), initializationOptions, the global configuration
        # (pulled or pushed), each workspace folder's configuration.
        self.init_raw: object = None
        self.project = bud.ProjectSettings(lambda m: self.show(types.MessageType.Warning, m))
        self.global_raw: object = None
        self.folder_raw: dict[str, object] = {}
        self.pending: set[str] = set()
        self._flush_scheduled = False
        self._result_ids = itertools.count(1)
        self._model_errors_shown: set[str] = set()
        self._last_good: dict[str, Model] = {}
        self._doc_settings: dict[str, Settings] = {}
        self.can_pull_config = False
        self.can_refresh_semantic = False
        self.can_refresh_inlay = False
        self.can_watch_files = False
        self.initialized_done = False
        register(self)

    # -- errors ---------------------------------------------------------------------------------

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

    # -- settings and models ----------------------------------------------------------------------

    def folder_of(self, uri: str) -> str | None:
        best: str | None = None
        try:
            folders = list(self.workspace.folders.keys())
        except RuntimeError:
            folders = []
        for f in folders:
            prefix = f.rstrip("/") + "/"
            if (uri.startswith(prefix) or uri == f) and (best is None or len(f) > len(best)):
                best = f
        return best

    def settings_for(self, uri: str | None) -> Settings:
        layers = [self.init_raw, self.global_raw]
        folder = self.folder_of(uri) if uri else None
        if folder is not None and folder in self.folder_raw:
            layers.append(self.folder_raw[folder])
        s, problems = self.project.settings(_uri_path(uri) if uri else None, layers)
        for msg in problems:
            self._warn_once(msg)
        return s

    def _warn_once(self, msg: str) -> None:
        if msg not in self._model_errors_shown:
            self._model_errors_shown.add(msg)
            log.warning("%s", msg)
            self.show(types.MessageType.Warning, f"Tokenline: {msg}; using the default")

    def model_for(self, uri: str | None, settings: Settings, current: Model | None) -> Model:
        """The model the settings name, or (on failure) the current/last good/bundled one."""
        folder = self.folder_of(uri) if uri else None
        base = _uri_path(folder) if folder else None
        try:
            model = self.models.get(settings.model, base)
        except ModelError as exc:
            fallback = current or self._last_good.get(settings.model) or self._bundled()
            key = f"{settings.model}\0{exc}"
            if key not in self._model_errors_shown:
                self._model_errors_shown.add(key)
                log.error("%s", exc)
                self.show(
                    types.MessageType.Error,
                    f"Tokenline: cannot load the tokenizer model {exc.path}: {exc.reason}. "
                    f"Still using {fallback.name}.",
                )
            return fallback
        self._last_good[settings.model] = model
        return model

    def _bundled(self) -> Model:
        return self.models.get("")

    def apply_settings(self) -> None:
        """Re-reads every document's settings; re-tokenizes those whose model changed."""
        changed_any = False
        for st in self.store:
            s = self.settings_for(st.uri)
            old = self._doc_settings.get(st.uri)
            model = self.model_for(st.uri, s, st.model)
            if model is not st.model:
                log.info("%s: re-tokenizing with %s", st.uri, model.name)
                set_model(st, model)
                changed_any = True
            if s != old:
                st.dirty = True
                self._doc_settings[st.uri] = s
                self.pending.add(st.uri)
                changed_any = True
        if changed_any:
            self.flush()
            if self.can_refresh_semantic:
                with contextlib.suppress(Exception):
                    self.workspace_semantic_tokens_refresh(None)
            if self.can_refresh_inlay:
                with contextlib.suppress(Exception):
                    self.workspace_inlay_hint_refresh(None)

    async def pull_configuration(self) -> None:
        if not self.can_pull_config:
            return
        folders = list(self.workspace.folders.keys())
        items = [types.ConfigurationItem(section=SECTION)]
        items += [types.ConfigurationItem(scope_uri=f, section=SECTION) for f in folders]
        try:
            result = await self.workspace_configuration_async(
                types.ConfigurationParams(items=items)
            )
        except Exception as exc:
            log.warning("workspace/configuration failed: %s", exc)
            return
        values = list(result or [])
        if values and values[0] is not None:
            self.global_raw = values[0]
        for f, v in zip(folders, values[1:], strict=False):
            if v is not None:
                self.folder_raw[f] = v
        self.apply_settings()

    # -- publishing -------------------------------------------------------------------------------

    def mark(self, uri: str) -> None:
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
            st = self.store.get(uri)
            if st is None:
                continue
            try:
                self.publish(st)
            except Exception:
                log.exception("%s: publishing the status failed", uri)

    def publish(self, st: DocState) -> None:
        s = self._doc_settings.get(st.uri) or self.settings_for(st.uri)
        doc = st.doc
        st.dirty = False
        self.protocol.notify(
            STATUS,
            {
                "uri": st.uri,
                "version": st.version,
                "tokens": len(doc),
                "contextWindow": s.context_window,
                "model": doc.model.name,
                "compiled": COMPILED,
                **bud.status_fields(s),
            },
        )
        diags = diag.compute(doc, s, self.unit)
        key = diag.key(diags)
        if key != st.last_diagnostics:
            st.last_diagnostics = key
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=st.uri, diagnostics=diags, version=st.version)
            )

    def next_result_id(self) -> str:
        return str(next(self._result_ids))

    def doc(self, uri: str) -> DocState:
        st = self.store.get(uri)
        if st is None:
            raise JsonRpcInvalidParams(f"document not open: {uri}")
        return st


def _uri_path(uri: str) -> str | None:
    p = urlparse(uri)
    if p.scheme != "file":
        return None
    return unquote(p.path)


def _param(params: Any, name: str) -> Any:
    if isinstance(params, dict):
        return params.get(name)
    return getattr(params, name, None)


def _position(p: Any) -> tuple[int, int]:
    if isinstance(p, dict):
        line, char = p.get("line"), p.get("character")
    else:
        line, char = getattr(p, "line", None), getattr(p, "character", None)
    if not isinstance(line, int) or not isinstance(char, int):
        raise JsonRpcInvalidParams(f"not a Position: {p!r}")
    return line, char


def _offsets(st: DocState, rng: Any, unit: int) -> tuple[int, int]:
    start = _param(rng, "start")
    end = _param(rng, "end")
    if start is None or end is None:
        raise JsonRpcInvalidParams(f"not a Range: {rng!r}")
    sl, sc = _position(start)
    el, ec = _position(end)
    a = int(st.doc.offset(sl, sc, unit))
    b = int(st.doc.offset(el, ec, unit))
    return (a, b) if a <= b else (b, a)


def _ranges(params: Any) -> Iterable[Any]:
    ranges = _param(params, "ranges")
    if not isinstance(ranges, list):
        raise JsonRpcInvalidParams("params.ranges must be a list of Range")
    return ranges


def register(ls: TokenlineServer) -> None:
    """Registers every handler of the server on `ls`."""

    @ls.feature(types.INITIALIZE)
    def initialize(params: types.InitializeParams) -> None:
        ls.unit = unit_of(str(ls.workspace.position_encoding or "utf-16"))
        _, problems = Settings().overlay(params.initialization_options)
        ls.init_raw = params.initialization_options
        for p in problems:
            log.warning("initializationOptions: %s", p)
        caps = params.capabilities
        ws = caps.workspace
        ls.can_pull_config = bool(ws and ws.configuration)
        ls.can_refresh_semantic = bool(
            ws and ws.semantic_tokens and ws.semantic_tokens.refresh_support
        )
        ls.can_refresh_inlay = bool(ws and ws.inlay_hint and ws.inlay_hint.refresh_support)
        watch = ws.did_change_watched_files if ws else None
        ls.can_watch_files = bool(watch and watch.dynamic_registration)
        log.info(
            "tokenline %s (core %s) initialized; position encoding %s",
            __version__,
            "compiled" if COMPILED else "pure Python",
            ls.workspace.position_encoding,
        )

    @ls.feature(types.INITIALIZED)
    async def initialized(params: types.InitializedParams) -> None:
        ls.initialized_done = True
        if ls.can_watch_files:
            await bud.watch_config_files(ls)
        await ls.pull_configuration()

    @ls.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(params: types.DidChangeConfigurationParams) -> None:
        settings = params.settings
        if isinstance(settings, dict) and (
            SECTION in settings
            or any(isinstance(k, str) and k.startswith(SECTION + ".") for k in settings)
        ):
            ls.global_raw = settings
        ls._model_errors_shown.clear()
        ls.project.reload()
        if ls.can_pull_config:
            await ls.pull_configuration()
        else:
            ls.apply_settings()

    @ls.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(params: types.DidChangeWatchedFilesParams) -> None:
        if any(bud.is_config_file(_uri_path(c.uri)) for c in params.changes):
            ls.project.reload()
            ls.apply_settings()

    @ls.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def did_change_folders(params: types.DidChangeWorkspaceFoldersParams) -> None:
        for f in params.event.removed:
            ls.folder_raw.pop(f.uri, None)
        await ls.pull_configuration()

    @ls.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        td = params.text_document
        s = ls.settings_for(td.uri)
        model = ls.model_for(td.uri, s, None)
        ls.store.open(td.uri, td.language_id, td.version, td.text, model)
        ls._doc_settings[td.uri] = s
        ls.mark(td.uri)

    @ls.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        st = ls.store.get(uri)
        if st is None:
            log.warning("didChange for %s, which is not open; ignored", uri)
            return
        apply_changes(st, params.text_document.version, params.content_changes, ls.unit)
        ls.mark(uri)

    @ls.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        st = ls.store.close(uri)
        ls.pending.discard(uri)
        ls._doc_settings.pop(uri, None)
        if st is not None and st.last_diagnostics:
            ls.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
            )

    # -- semantic tokens ------------------------------------------------------------------------

    @ls.feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, sem.LEGEND)
    def semantic_full(params: types.SemanticTokensParams) -> types.SemanticTokens | None:
        st = ls.doc(params.text_document.uri)
        if st.doc.length() > sem.FULL_LIMIT:
            st.semantic = None
            return None
        cache = sem.full(st.doc, ls.unit, ls.next_result_id())
        st.semantic = cache
        st.clean_head = st.clean_tail = ALL_LINES
        return types.SemanticTokens(data=cache.data.tolist(), result_id=cache.result_id)

    @ls.feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL_DELTA)
    def semantic_delta(
        params: types.SemanticTokensDeltaParams,
    ) -> types.SemanticTokens | types.SemanticTokensDelta | None:
        st = ls.doc(params.text_document.uri)
        if st.doc.length() > sem.FULL_LIMIT:
            st.semantic = None
            return None
        cache = st.semantic
        if cache is None or cache.result_id != params.previous_result_id:
            cache = sem.full(st.doc, ls.unit, ls.next_result_id())
            st.semantic = cache
            st.clean_head = st.clean_tail = ALL_LINES
            return types.SemanticTokens(data=cache.data.tolist(), result_id=cache.result_id)
        try:
            cache, edits = sem.delta(
                st.doc, ls.unit, cache, st.clean_head, st.clean_tail, ls.next_result_id()
            )
        except Exception:
            st.semantic = None
            raise
        st.clean_head = st.clean_tail = ALL_LINES
        return types.SemanticTokensDelta(edits=edits, result_id=cache.result_id)

    @ls.feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE)
    def semantic_range(params: types.SemanticTokensRangeParams) -> types.SemanticTokens:
        st = ls.doc(params.text_document.uri)
        return types.SemanticTokens(data=sem.range_tokens(st.doc, params.range, ls.unit))

    # -- hover, inlay hints -----------------------------------------------------------------------

    @ls.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(params: types.HoverParams) -> types.Hover | None:
        st = ls.doc(params.text_document.uri)
        p = params.position
        off = int(st.doc.offset(p.line, p.character, ls.unit))
        return hov.hover(st.doc, off, ls.unit)

    @ls.feature(types.TEXT_DOCUMENT_INLAY_HINT, types.InlayHintOptions(resolve_provider=False))
    def inlay_hint(params: types.InlayHintParams) -> list[types.InlayHint]:
        st = ls.doc(params.text_document.uri)
        s = ls._doc_settings.get(st.uri) or ls.settings_for(st.uri)
        if not s.section_counts or not sec.is_markdown(st.uri, st.language_id):
            return []
        cached = st.sections_cache
        if cached is None or cached[0] != st.generation:
            cached = (st.generation, sec.headings(st.doc.text))
            st.sections_cache = cached
        return sec.inlay_hints(
            st.doc, cached[1], params.range.start.line, params.range.end.line, ls.unit
        )

    # -- Tokenline's own requests -----------------------------------------------------------------

    @ls.feature(COUNT)
    def count(params: Any) -> dict[str, list[int]]:
        st = ls.doc(str(_param(params, "uri")))
        out = []
        for r in _ranges(params):
            a, b = _offsets(st, r, ls.unit)
            out.append(int(st.doc.count(a, b)))
        return {"counts": out}

    @ls.feature(IDS)
    def ids(params: Any) -> dict[str, list[list[int]]]:
        st = ls.doc(str(_param(params, "uri")))
        out = []
        for r in _ranges(params):
            a, b = _offsets(st, r, ls.unit)
            out.append([int(x) for x in st.doc.encode_range(a, b)])
        return {"ids": out}

    @ls.feature(TOKEN_AT)
    def token_at(params: Any) -> dict[str, object] | None:
        st = ls.doc(str(_param(params, "uri")))
        line, char = _position(_param(params, "position"))
        off = int(st.doc.offset(line, char, ls.unit))
        info = hov.token_info(st.doc, off)
        return None if info is None else hov.token_at_result(st.doc, info, ls.unit)

    @ls.feature(MODELS)
    def models(params: Any) -> dict[str, list[dict[str, str]]]:
        return {"models": model_choices()}


# -- running --------------------------------------------------------------------------------------


class _StreamWriter:
    """pygls's writer interface over an asyncio StreamWriter (TCP)."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._w = writer

    def write(self, data: bytes) -> None:
        self._w.write(data)

    def close(self) -> None:
        self._w.close()


class _FdWriter:
    def __init__(self, fd: int) -> None:
        self._f = os.fdopen(fd, "wb", buffering=0, closefd=False)

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            n = self._f.write(view)
            if n is None:
                continue
            view = view[n:]

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._f.close()


def setup_logging() -> None:
    level = os.environ.get("TOKENLINE_LOG", "WARNING").upper()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    logging.getLogger("tokenline").setLevel(getattr(logging, level, logging.INFO))
    # pygls logs every message body at INFO: far too much for megabyte documents.
    logging.getLogger("pygls").setLevel(logging.WARNING)


def run_stdio(ls: TokenlineServer) -> int:
    stdin_fd = sys.stdin.fileno()
    stdout_fd = sys.stdout.fileno()
    # Nothing else may write to the protocol stream.
    sys.stdout = sys.stderr
    ls.protocol.set_writer(_FdWriter(stdout_fd))
    stop = threading.Event()

    async def main() -> None:
        reader = IdleReader(stdin_source(stdin_fd), ls.flush)
        await serve_reader(reader, ls.protocol, stop, ls._report_server_error)

    return _run(main)


def run_tcp(ls: TokenlineServer, host: str, port: int) -> int:
    stop = threading.Event()

    async def main() -> None:
        done = asyncio.Event()

        async def connection(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            log.info("client connected from %s", w.get_extra_info("peername"))
            ls.protocol.set_writer(_StreamWriter(w))

            async def source() -> bytes:
                return await r.read(CHUNK)

            try:
                await serve_reader(
                    IdleReader(source, ls.flush), ls.protocol, stop, ls._report_server_error
                )
            finally:
                done.set()

        server = await asyncio.start_server(connection, host, port)
        addrs = ", ".join(str(s.getsockname()) for s in server.sockets)
        log.info("listening on %s", addrs)
        async with server:
            await done.wait()

    return _run(main)


def _run(main: Any) -> int:
    try:
        asyncio.run(main())
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else 0
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        log.error("the client closed the connection")
        return 1
    return 0


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
            return 2
        return run_tcp(ls, host or "127.0.0.1", int(port))
    return run_stdio(ls)


def main(argv: list[str] | None = None) -> int:
    """`python -m tokenline.server [--tcp HOST:PORT]`."""
    import argparse

    p = argparse.ArgumentParser(prog="tokenline serve", description="Tokenline language server")
    p.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio")
    args = p.parse_args(argv)
    return serve(args.tcp)


__all__ = ["TokenlineServer", "load_model", "main", "serve"]
