"""A real LSP client (pytest-lsp's) driving `python -m tokenline.server` as a subprocess, plus
independent reference computations (sentencepiece, LSP positions) to check the server against.

Synchronous on purpose: each Session owns an event loop, so hypothesis can drive one server
through many examples. Waiting is always polling with a deadline, never a bare sleep.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import re
import sys
import time
from bisect import bisect_right
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import sentencepiece as spm
from lsprotocol import types as T
from pygls.protocol import default_converter
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, LanguageClient, register_lsp_features

from tests.conftest import SHARED, shared_files

REPO = Path(__file__).resolve().parents[2]
LLAMA = SHARED / "models" / "llama-2.model"
SERVER_CMD = [sys.executable, "-m", "tokenline", "serve"]
# Generous: the pure-Python core on a busy 2-core CI machine is slow.
TIMEOUT = float(os.environ.get("TOKENLINE_TEST_TIMEOUT", "60"))


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def shared_file(path: Path) -> Path:
    """A file from ../shared (LLAMA): a skip locally when missing, a failure in CI."""
    return shared_files(path.relative_to(SHARED).as_posix())[0]


def bundled_model_path() -> Path:
    from tokenline.core import bundled_model_path as bmp

    return Path(bmp())


_SP: dict[str, spm.SentencePieceProcessor] = {}


def sp_for(path: Path | str) -> spm.SentencePieceProcessor:
    key = str(path)
    if key not in _SP:
        _SP[key] = spm.SentencePieceProcessor(model_file=key)
    return _SP[key]


# -- positions, independently of the server and the core ---------------------------------------

_BREAK = re.compile(r"\r\n|\r|\n")


def line_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in _BREAK.finditer(text)]


def line_ends(text: str) -> list[int]:
    return [m.start() for m in _BREAK.finditer(text)] + [len(text)]


def units(s: str, enc: str = "utf-16") -> int:
    if enc == "utf-32":
        return len(s)
    if enc == "utf-8":
        return len(s.encode("utf-8", "surrogatepass"))
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def position(text: str, off: int, enc: str = "utf-16") -> tuple[int, int]:
    starts = line_starts(text)
    line = bisect_right(starts, off) - 1
    return line, units(text[starts[line] : off], enc)


def offset(text: str, line: int, col: int, enc: str = "utf-16") -> int:
    """LSP clamping: a line past the end is the end of the text, a column past the line end is
    the line end."""
    starts = line_starts(text)
    ends = line_ends(text)
    if line >= len(starts):
        return len(text)
    s, e = starts[line], ends[line]
    acc = 0
    for i in range(s, e):
        if acc >= col:
            return i
        acc += units(text[i], enc)
    return e


def rng(a: tuple[int, int], b: tuple[int, int]) -> T.Range:
    return T.Range(
        start=T.Position(line=a[0], character=a[1]), end=T.Position(line=b[0], character=b[1])
    )


# -- the reference: sentencepiece ---------------------------------------------------------------


def sp_count(path: Path | str, text: str) -> int:
    return len(sp_for(path).encode(text))


def sp_char_spans(path: Path | str, text: str) -> list[tuple[int, int, int, bool]]:
    """(start, end, id, is_byte) in code points of each token that covers characters; the byte
    pieces of one character are one span (sentencepiece gives the span to the last of them)."""
    sp = sp_for(path)
    proto = sp.encode(text, out_type="proto")
    raw = text.encode("utf-8")
    # byte offset -> code point offset
    b2c = [0] * (len(raw) + 1)
    ci = 0
    bi = 0
    for ch in text:
        n = len(ch.encode("utf-8"))
        for k in range(n):
            b2c[bi + k] = ci
        bi += n
        ci += 1
    b2c[len(raw)] = ci
    out = []
    for p in proto.pieces:
        if p.end > p.begin:
            out.append((b2c[p.begin], b2c[p.end], p.id, sp.IsByte(p.id)))
    return out


def expected_segments(
    path: Path | str, text: str, enc: str = "utf-16"
) -> list[tuple[int, int, int, bool]]:
    """(line, col, length, is_byte) of each semantic token the protocol asks for."""
    return segments_of(sp_char_spans(path, text), text, enc)


def segments_of(
    spans: Sequence[tuple[int, int, Any, bool]], text: str, enc: str = "utf-16"
) -> list[tuple[int, int, int, bool]]:
    """(line, col, length, is_byte) of the semantic tokens of (start, end, _, is_byte) spans."""
    starts = line_starts(text)
    ends = line_ends(text)
    ascii_text = text.isascii()
    out = []
    for s, e, _id, is_byte in spans:
        j = bisect_right(starts, s) - 1
        while j < len(starts) and starts[j] < e:
            ls, le = starts[j], ends[j]
            ss, ee = max(s, ls), min(e, le)
            if ee > ss:
                if ascii_text:
                    out.append((j, ss - ls, ee - ss, is_byte))
                else:
                    out.append((j, units(text[ls:ss], enc), units(text[ss:ee], enc), is_byte))
            j += 1
    return out


def decode_semantic(data: Sequence[int]) -> list[tuple[int, int, int, int, int]]:
    """Relative LSP semantic-token data -> (line, col, length, type, modifiers)."""
    out = []
    line = col = 0
    for i in range(0, len(data), 5):
        dl, ds, ln, ty, mo = data[i : i + 5]
        if dl:
            line += dl
            col = ds
        else:
            col += ds
        out.append((line, col, ln, ty, mo))
    return out


def apply_semantic_edits(data: Sequence[int], edits: Sequence[T.SemanticTokensEdit]) -> list[int]:
    out = list(data)
    for e in sorted(edits, key=lambda e: e.start, reverse=True):
        out[e.start : e.start + e.delete_count] = list(e.data or [])
    return out


def check_semantic(path: Path | str, text: str, data: Sequence[int], enc: str = "utf-16") -> None:
    """The semantic tokens are exactly sentencepiece's boundaries, and neighbours differ."""
    check_semantic_spans(sp_char_spans(path, text), text, data, enc)


def check_semantic_spans(
    spans: Sequence[tuple[int, int, Any, bool]],
    text: str,
    data: Sequence[int],
    enc: str = "utf-16",
) -> None:
    """The semantic tokens are exactly these (start, end, _, is_byte) spans, and neighbours
    differ."""
    got = decode_semantic(data)
    want = segments_of(spans, text, enc)
    assert [(g[0], g[1], g[2]) for g in got] == [(w[0], w[1], w[2]) for w in want]
    for g, w in zip(got, want, strict=True):
        assert bool(g[4] & 2) == w[3], f"bytes modifier wrong at {g}"
    for p, q in itertools.pairwise(got):
        if p[0] == q[0] and p[1] + p[2] == q[1]:
            assert p[3] != q[3], f"touching semantic tokens {p} and {q} have the same type"


# -- the client ---------------------------------------------------------------------------------


def client_capabilities(
    encodings: list[str] | None = None, semantic_range: bool = True, server_cancel: bool = True
) -> T.ClientCapabilities:
    """VS Code's capabilities, as far as the server reads them (ranges and ServerCancelled for
    semantic tokens unless told otherwise)."""
    return T.ClientCapabilities(
        general=T.GeneralClientCapabilities(
            position_encodings=[T.PositionEncodingKind(e) for e in (encodings or ["utf-16"])]
        ),
        workspace=T.WorkspaceClientCapabilities(
            configuration=True,
            did_change_configuration=T.DidChangeConfigurationClientCapabilities(),
            semantic_tokens=T.SemanticTokensWorkspaceClientCapabilities(refresh_support=True),
            inlay_hint=T.InlayHintWorkspaceClientCapabilities(refresh_support=True),
        ),
        text_document=T.TextDocumentClientCapabilities(
            synchronization=T.TextDocumentSyncClientCapabilities(),
            hover=T.HoverClientCapabilities(content_format=[T.MarkupKind.Markdown]),
            publish_diagnostics=T.PublishDiagnosticsClientCapabilities(version_support=True),
            inlay_hint=T.InlayHintClientCapabilities(),
            semantic_tokens=T.SemanticTokensClientCapabilities(
                requests=T.ClientSemanticTokensRequestOptions(
                    full=T.ClientSemanticTokensRequestFullDelta(delta=True), range=semantic_range
                ),
                token_types=["tokenlineA", "tokenlineB"],
                token_modifiers=["whitespace", "bytes", "special", "unknown"],
                formats=[T.TokenFormat.Relative],
                server_cancel_support=server_cancel,
            ),
        ),
    )


def _plain(x: Any) -> Any:
    """pygls's client turns unknown JSON objects into namedtuples; back to dicts and lists."""
    if hasattr(x, "_asdict"):
        return {k: _plain(v) for k, v in x._asdict().items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


class Session:
    """One server subprocess and a client talking to it over stdio."""

    def __init__(
        self,
        init: dict[str, Any] | None = None,
        encodings: list[str] | None = None,
        configuration: dict[str, Any] | None = None,
        folders: list[str] | None = None,
        env: dict[str, str] | None = None,
        cmd: Sequence[str] = SERVER_CMD,
        semantic_range: bool = True,
        server_cancel: bool = True,
        client_features: dict[str, Callable[..., Any]] | None = None,
    ) -> None:
        """client_features: the client's own handlers of server requests, over pytest-lsp's."""
        self.loop = asyncio.new_event_loop()
        self.client: LanguageClient = LanguageClient(converter_factory=default_converter)
        register_lsp_features(self.client, {**DEFAULT_CLIENT_FEATURES, **(client_features or {})})
        if configuration is not None:
            for scope, value in configuration.items():
                self.client.set_configuration(value, scope_uri=scope)
        self.statuses: list[dict[str, Any]] = []
        statuses = self.statuses

        def on_status(params: Any) -> None:
            statuses.append(_plain(params))

        self.client.feature("tokenline/status")(on_status)
        self.versions: dict[str, int] = {}
        full_env = dict(os.environ)
        full_env.update(env or {})
        self.run(self.client.start_io(*cmd, env=full_env))
        self.init_result = self.run(
            self.client.initialize_session(
                T.InitializeParams(
                    capabilities=client_capabilities(encodings, semantic_range, server_cancel),
                    initialization_options=init,
                    workspace_folders=[T.WorkspaceFolder(uri=f, name=f) for f in folders or []],
                    root_uri=(folders or [None])[0],
                )
            )
        )
        self.encoding = str(self.init_result.capabilities.position_encoding or "utf-16")

    def run(self, coro: Any, timeout: float = TIMEOUT) -> Any:
        return self.loop.run_until_complete(asyncio.wait_for(coro, timeout))

    def wait_for(self, pred: Callable[[], Any], timeout: float = TIMEOUT, what: str = "") -> Any:
        async def poll() -> Any:
            deadline = time.monotonic() + timeout
            while True:
                v = pred()
                if v:
                    return v
                if time.monotonic() > deadline:
                    raise AssertionError(f"timed out after {timeout}s waiting for {what or pred}")
                await asyncio.sleep(0.01)

        return self.loop.run_until_complete(poll())

    def until(self, fn: Callable[[], Any], timeout: float = TIMEOUT, what: str = "") -> Any:
        """Calls fn (which may talk to the server) until it returns something true."""
        deadline = time.monotonic() + timeout
        while True:
            v = fn()
            if v:
                return v
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout}s waiting for {what or fn}")
            self.run(asyncio.sleep(0.02))

    # -- documents -------------------------------------------------------------------------------

    def open(self, uri: str, text: str, language: str = "markdown", version: int = 1) -> None:
        self.versions[uri] = version
        self.client.text_document_did_open(
            T.DidOpenTextDocumentParams(
                text_document=T.TextDocumentItem(
                    uri=uri, language_id=language, version=version, text=text
                )
            )
        )

    def change(
        self, uri: str, changes: list[tuple[T.Range | None, str]], version: int | None = None
    ) -> int:
        v = version if version is not None else self.versions[uri] + 1
        self.versions[uri] = v
        events: list[Any] = []
        for r, text in changes:
            if r is None:
                events.append(T.TextDocumentContentChangeWholeDocument(text=text))
            else:
                events.append(T.TextDocumentContentChangePartial(range=r, text=text))
        self.client.text_document_did_change(
            T.DidChangeTextDocumentParams(
                text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=v),
                content_changes=events,
            )
        )
        return v

    def close_doc(self, uri: str) -> None:
        self.client.text_document_did_close(
            T.DidCloseTextDocumentParams(text_document=T.TextDocumentIdentifier(uri=uri))
        )

    def status(self, uri: str, version: int | None = None) -> dict[str, Any]:
        v = self.versions[uri] if version is None else version

        def found() -> dict[str, Any] | None:
            for s in reversed(self.statuses):
                if s["uri"] == uri and s["version"] == v:
                    return s
            return None

        return dict(self.wait_for(found, what=f"tokenline/status of {uri} version {v}"))

    def diagnostics(self, uri: str, version: int | None = None) -> list[T.Diagnostic]:
        """Diagnostics once the status of `version` has arrived (they are sent just after it)."""
        self.status(uri, version)
        # Diagnostics follow the status in the same flush: a round trip settles them.
        self.request("tokenline/models", {})
        return list(self.client.diagnostics.get(uri, []))

    def request(self, method: str, params: Any) -> Any:
        return _plain(self.run(self.client.protocol.send_request_async(method, params)))

    def semantic_full(self, uri: str) -> T.SemanticTokens | None:
        return self.run(  # type: ignore[no-any-return]
            self.client.text_document_semantic_tokens_full_async(
                T.SemanticTokensParams(text_document=T.TextDocumentIdentifier(uri=uri))
            )
        )

    def semantic_delta(self, uri: str, previous: str) -> Any:
        return self.run(
            self.client.text_document_semantic_tokens_full_delta_async(
                T.SemanticTokensDeltaParams(
                    text_document=T.TextDocumentIdentifier(uri=uri), previous_result_id=previous
                )
            )
        )

    def semantic_range(self, uri: str, r: T.Range) -> T.SemanticTokens:
        return self.run(  # type: ignore[no-any-return]
            self.client.text_document_semantic_tokens_range_async(
                T.SemanticTokensRangeParams(
                    text_document=T.TextDocumentIdentifier(uri=uri), range=r
                )
            )
        )

    def hover(self, uri: str, line: int, col: int) -> T.Hover | None:
        return self.run(  # type: ignore[no-any-return]
            self.client.text_document_hover_async(
                T.HoverParams(
                    text_document=T.TextDocumentIdentifier(uri=uri),
                    position=T.Position(line=line, character=col),
                )
            )
        )

    def inlay_hints(self, uri: str, last_line: int = 10**6) -> list[T.InlayHint]:
        r = self.run(
            self.client.text_document_inlay_hint_async(
                T.InlayHintParams(
                    text_document=T.TextDocumentIdentifier(uri=uri),
                    range=rng((0, 0), (last_line, 0)),
                )
            )
        )
        return list(r or [])

    def configure(self, settings: dict[str, Any], scope: str | None = None) -> None:
        """Changes the client's `tokenline` configuration and tells the server."""
        self.client.set_configuration(settings, section="tokenline", scope_uri=scope)
        self.client.workspace_did_change_configuration(
            T.DidChangeConfigurationParams(settings={"tokenline": settings})
        )

    def close(self) -> None:
        try:
            self.run(self.client.shutdown_session(), timeout=30)
        finally:
            try:
                self.run(self.client.stop(), timeout=30)
            finally:
                self.loop.close()

    @property
    def returncode(self) -> int | None:
        server = self.client._server
        return None if server is None else server.returncode
