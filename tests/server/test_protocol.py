"""The server's contract (docs/protocol.md), end to end over stdio."""

from __future__ import annotations

import asyncio
import logging
import random
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as T
from pygls.exceptions import JsonRpcException
from pytest_lsp.client import LanguageClient

from tests.conftest import BOTCHAN

from .harness import (
    LLAMA,
    SERVER_CMD,
    Session,
    bundled_model_path,
    check_semantic,
    decode_semantic,
    offset,
    position,
    rng,
    shared_file,
    sp_char_spans,
    sp_count,
    sp_for,
)

MODEL = bundled_model_path()


def botchan(n: int) -> str:
    text = BOTCHAN.read_text(encoding="utf-8")
    return (text * (n // len(text) + 1))[:n]


# -- status and selection counts ------------------------------------------------------------------


def test_status_fields(session: Session) -> None:
    uri = "file:///status.md"
    session.open(uri, "Hello, world!\n", version=7)
    s = session.status(uri, 7)
    assert s["tokens"] == sp_count(MODEL, "Hello, world!\n")
    assert s["contextWindow"] == 8192
    assert s["model"] == "mistral-7b-v0.1"
    assert isinstance(s["compiled"], bool)
    session.close_doc(uri)


def test_selection_counts(session: Session) -> None:
    text = botchan(40_000) + "\n中文 😀 🧿\r\nend"
    uri = "file:///count.txt"
    session.open(uri, text, language="plaintext")
    r = random.Random(5)
    spans = [(0, len(text)), (10, 30_000), (123, 124), (5, 5), (len(text) - 12, len(text))]
    spans += [tuple(sorted((r.randrange(len(text)), r.randrange(len(text))))) for _ in range(12)]
    ranges = []
    for a, b in spans:
        # Keep off the inside of "\r\n", which LSP positions cannot address.
        a -= text[a - 1 : a + 1] == "\r\n"
        b -= text[b - 1 : b + 1] == "\r\n"
        ranges.append(((a, b), rng(position(text, a), position(text, b))))
    params = {
        "uri": uri,
        "ranges": [
            {
                "start": {"line": x.start.line, "character": x.start.character},
                "end": {"line": x.end.line, "character": x.end.character},
            }
            for _, x in ranges
        ],
    }
    got = session.request("tokenline/count", params)["counts"]
    want = [sp_count(MODEL, text[a:b]) if b > a else 0 for (a, b), _ in ranges]
    assert got == want
    ids = session.request("tokenline/ids", params)["ids"]
    assert ids == [sp_for(MODEL).encode(text[a:b]) if b > a else [] for (a, b), _ in ranges]
    session.close_doc(uri)


# -- diagnostics ----------------------------------------------------------------------------------


def _session_window(window: int, warn_at: float = 0.9) -> Session:
    return Session(init={"contextWindow": window, "warnAt": warn_at})


def test_overflow_error_starts_at_the_first_token_beyond_the_window() -> None:
    s = _session_window(50)
    try:
        text = "Dear 😀 reader,\n" + botchan(2_000)
        uri = "file:///over.md"
        s.open(uri, text)
        diags = s.diagnostics(uri)
        assert len(diags) == 1
        d = diags[0]
        assert d.severity == T.DiagnosticSeverity.Error
        total = sp_count(MODEL, text)
        assert d.message == (
            f"Beyond the 50-token context window: {total:,} tokens, {total - 50:,} over"
        )
        # Token index 50 in sentencepiece's own numbering: its first character.
        proto = sp_for(MODEL).encode(text, out_type="proto")
        k = 50
        begin = proto.pieces[k].begin
        start = len(text.encode("utf-8")[:begin].decode("utf-8"))
        assert (d.range.start.line, d.range.start.character) == position(text, start)
        assert (d.range.end.line, d.range.end.character) == position(text, len(text))
        # Shrink below the warning: the diagnostics go away, with the version.
        v = s.change(uri, [(None, "short")])
        assert s.diagnostics(uri, v) == []
    finally:
        s.close()


def test_warning_at_warn_at_and_nothing_below() -> None:
    s = _session_window(100, 0.5)
    try:
        uri = "file:///warn.md"
        text = "word " * 55  # 56 tokens with the dummy prefix... whatever sentencepiece says
        n = sp_count(MODEL, text)
        assert 50 <= n <= 100
        s.open(uri, text + "\nlast line")
        n = sp_count(MODEL, text + "\nlast line")
        diags = s.diagnostics(uri)
        assert len(diags) == 1 and diags[0].severity == T.DiagnosticSeverity.Warning
        assert diags[0].range.start.line == 1 and diags[0].range.start.character == 0
        assert diags[0].message == f"{n} of 100 tokens ({round(n)}%): close to the context window"
        v = s.change(uri, [(None, "few words")])
        assert s.diagnostics(uri, v) == []
    finally:
        s.close()


# -- settings and models --------------------------------------------------------------------------


def test_model_changes_and_bad_models(tmp_path: Path) -> None:
    llama = shared_file(LLAMA)
    s = Session()
    try:
        uri = "file:///models.md"
        text = "Tokenizers differ: ÿ 😀 中文 supercalifragilistic\n"
        s.open(uri, text)
        assert s.status(uri)["model"] == "mistral-7b-v0.1"
        statuses = len(s.statuses)

        s.configure({"model": str(llama)})
        st = s.wait_for(
            lambda: [x for x in s.statuses[statuses:] if x["model"] == "llama-2"],
            what="re-tokenized status",
        )[-1]
        assert st["tokens"] == sp_count(llama, text)

        missing = tmp_path / "nope.model"
        s.configure({"model": str(missing)})
        msg = s.wait_for(
            lambda: [m for m in s.client.messages if str(missing) in m.message],
            what="error message",
        )[-1]
        assert msg.type == T.MessageType.Error
        assert "no such file" in msg.message

        corrupt = tmp_path / "corrupt.model"
        corrupt.write_bytes(b"\x08\x01garbage that is not a model")
        s.configure({"model": str(corrupt)})
        msg = s.wait_for(
            lambda: [m for m in s.client.messages if str(corrupt) in m.message],
            what="error message",
        )[-1]
        assert msg.type == T.MessageType.Error

        missing_repo = "nobody-here/NoSuchModel-7B"
        s.configure({"model": missing_repo})
        s.wait_for(
            lambda: [m for m in s.client.messages if missing_repo in m.message],
            what="error message for a repo id",
        )

        # Still serving, on the previous model (llama).
        v = s.change(uri, [(rng((0, 0), (0, 0)), "More ")])
        st = s.status(uri, v)
        assert st["model"] == "llama-2"
        assert st["tokens"] == sp_count(llama, "More " + text)

        # A bundled model by name.
        statuses = len(s.statuses)
        s.configure({"model": "mistral-7b-v0.1"})
        s.wait_for(lambda: [x for x in s.statuses[statuses:] if x["model"] == "mistral-7b-v0.1"])
    finally:
        s.close()


def test_hugging_face_repo_id_from_local_cache(tmp_path: Path) -> None:
    llama = shared_file(LLAMA)
    snap = tmp_path / "hub" / "models--meta-llama--Llama-2-7b-hf" / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    (snap / "tokenizer.model").write_bytes(llama.read_bytes())
    (tmp_path / "hub" / "models--meta-llama--Llama-2-7b-hf" / "refs").mkdir()
    (tmp_path / "hub" / "models--meta-llama--Llama-2-7b-hf" / "refs" / "main").write_text("abc123")
    s = Session(init={"model": "meta-llama/Llama-2-7b-hf"}, env={"HF_HOME": str(tmp_path)})
    try:
        uri = "file:///hf.md"
        s.open(uri, "hello ÿ")
        st = s.status(uri)
        assert st["model"] == "meta-llama/Llama-2-7b-hf"
        assert st["tokens"] == sp_count(llama, "hello ÿ")
        models = s.request("tokenline/models", {})["models"]
        assert models[0]["value"] == "mistral-7b-v0.1"
        assert "meta-llama/Llama-2-7b-hf" in [m["value"] for m in models]
    finally:
        s.close()


def test_workspace_configuration_per_folder() -> None:
    llama = shared_file(LLAMA)
    a, b = "file:///ws/a", "file:///ws/b"
    s = Session(
        folders=[a, b],
        configuration={
            "": {"tokenline": {"contextWindow": 1000}},
            b: {"tokenline": {"model": str(llama), "contextWindow": 2000}},
        },
    )
    try:
        s.open(a + "/x.md", "same text")
        s.open(b + "/x.md", "same text")
        sa = s.wait_for(
            lambda: [
                x for x in s.statuses if x["uri"] == a + "/x.md" and x["contextWindow"] == 1000
            ]
        )[-1]
        sb = s.wait_for(
            lambda: [
                x
                for x in s.statuses
                if x["uri"] == b + "/x.md"
                and x["contextWindow"] == 2000
                and x["model"] == "llama-2"
            ]
        )[-1]
        assert sa["model"] == "mistral-7b-v0.1"
        assert sb["tokens"] == sp_count(llama, "same text")
    finally:
        s.close()


def test_a_document_opened_before_the_settings_arrive_is_counted_under_them() -> None:
    """The server pulls the user's settings when the client is initialized; a didOpen sent right
    behind, before the (late) answer, waits for it: every status of the document is under the
    user's settings, none under the defaults first (it was one under the 8,192 default)."""
    pulls: list[list[str | None]] = []

    async def late_configuration(client: LanguageClient, params: T.ConfigurationParams) -> Any:
        pulls.append([item.section for item in params.items])
        await asyncio.sleep(0.5)
        return [{"contextWindow": 40} for _ in params.items]

    s = Session(client_features={T.WORKSPACE_CONFIGURATION: late_configuration})
    try:
        uri, text = "file:///held.md", "Opened before the settings came."
        s.open(uri, text)
        hover = s.run(
            s.client.text_document_hover_async(
                T.HoverParams(
                    text_document=T.TextDocumentIdentifier(uri=uri),
                    position=T.Position(line=0, character=2),
                )
            )
        )
        statuses = [x for x in s.statuses if x["uri"] == uri]
        assert pulls == [["tokenline"]]
        assert statuses, "no status before the hover's answer"
        assert [x["contextWindow"] for x in statuses] == [40] * len(statuses)
        assert statuses[0]["tokens"] == sp_count(MODEL, text)
        # The hover, sent behind the didOpen, was held with it and answered after it.
        assert hover is not None
    finally:
        s.close()


# -- bad input ------------------------------------------------------------------------------------


def test_out_of_range_edits_are_clamped(session: Session) -> None:
    uri = "file:///clamp.md"
    text = "first line\nsecond 😀 line\nthird"
    session.open(uri, text)
    mirror = text
    for (a, b), new in [
        (((1, 200), (1, 300)), "!"),  # column past the line end
        (((9, 0), (12, 4)), " tail"),  # lines past the end
        (((0, 5), (0, 2)), "<swapped>"),  # end before start
        (((2, 3), (99, 99)), "X"),
    ]:
        oa = offset(mirror, *a)
        ob = offset(mirror, *b)
        oa, ob = min(oa, ob), max(oa, ob)
        session.change(uri, [(rng(a, b), new)])
        mirror = mirror[:oa] + new + mirror[ob:]
    st = session.status(uri)
    assert st["tokens"] == sp_count(MODEL, mirror)
    full = session.semantic_full(uri)
    assert full is not None
    check_semantic(MODEL, mirror, full.data)
    session.close_doc(uri)


def test_version_gaps_and_edits_inside_a_surrogate_pair(session: Session) -> None:
    uri = "file:///gaps.md"
    session.open(uri, "ab😀cd", version=1)
    # Version jumps and even goes back: the server applies the changes and reports them.
    session.change(uri, [(rng((0, 0), (0, 0)), "x")], version=10)
    session.change(uri, [(rng((0, 1), (0, 1)), "y")], version=5)
    assert session.status(uri, 5)["tokens"] == sp_count(MODEL, "xyab😀cd")
    # Replace the low half of the emoji (UTF-16 columns 5..6): the high half left alone is a
    # lone surrogate in the client's text; the server holds U+FFFD there.
    v = session.change(uri, [(rng((0, 5), (0, 6)), "Z")])
    assert session.status(uri, v)["tokens"] == sp_count(MODEL, "xyab\ufffdZcd")
    # Positions after it still line up (UTF-16 length kept).
    v = session.change(uri, [(rng((0, 7), (0, 8)), "")])
    assert session.status(uri, v)["tokens"] == sp_count(MODEL, "xyab\ufffdZd")
    session.close_doc(uri)


def test_lone_surrogates_and_nul_bytes(session: Session) -> None:
    uri = "file:///weird.md"
    text = "nul\x00byte and lone \ud800 surrogate \udfff end"
    session.open(uri, text)
    clean = text.replace("\ud800", "\ufffd").replace("\udfff", "\ufffd")
    assert session.status(uri)["tokens"] == sp_count(MODEL, clean)
    v = session.change(uri, [(rng((0, 3), (0, 3)), "\udc00\x00")])
    clean = clean[:3] + "\ufffd\x00" + clean[3:]
    assert session.status(uri, v)["tokens"] == sp_count(MODEL, clean)
    full = session.semantic_full(uri)
    assert full is not None
    check_semantic(MODEL, clean, full.data)
    session.close_doc(uri)


def test_burst_of_1000_changes_ends_in_the_last_state(session: Session) -> None:
    uri = "file:///burst.md"
    text = botchan(20_000)
    session.open(uri, text)
    session.status(uri)
    r = random.Random(11)
    mirror = text
    before = len(session.statuses)
    for _ in range(1000):
        a = r.randrange(len(mirror) + 1)
        a -= mirror[a - 1 : a + 1] == "\r\n"
        b = min(len(mirror), a + r.choice([0, 0, 1, 2]))
        b -= mirror[b - 1 : b + 1] == "\r\n"
        new = r.choice(["", "e", " ", "th", "\n", "😀"])
        session.change(uri, [(rng(position(mirror, a), position(mirror, b)), new)])
        mirror = mirror[:a] + new + mirror[b:]
    st = session.status(uri)
    assert st["version"] == session.versions[uri]
    assert st["tokens"] == sp_count(MODEL, mirror)
    sent = [x for x in session.statuses[before:] if x["uri"] == uri]
    # Versions only increase; coalescing may drop intermediate ones but never the last.
    versions = [x["version"] for x in sent]
    assert versions == sorted(versions)
    session.close_doc(uri)


def test_handler_errors_are_answered_and_the_server_lives_on(session: Session) -> None:
    from pygls.exceptions import JsonRpcException

    with pytest.raises(JsonRpcException):
        session.request("tokenline/count", {"uri": "file:///not-open.md", "ranges": []})
    with pytest.raises(JsonRpcException):
        session.request("tokenline/count", {"uri": "file:///x", "ranges": "nonsense"})
    with pytest.raises(JsonRpcException):
        session.semantic_full("file:///not-open.md")
    # A didChange for a document that is not open is logged and ignored.
    session.versions["file:///ghost.md"] = 1
    session.change("file:///ghost.md", [(rng((0, 0), (0, 0)), "boo")])
    uri = "file:///alive.md"
    session.open(uri, "still alive")
    assert session.status(uri)["tokens"] == sp_count(MODEL, "still alive")
    assert session.returncode is None
    session.close_doc(uri)


# -- semantic tokens ------------------------------------------------------------------------------


def test_semantic_modifiers_and_hover(session: Session) -> None:
    uri = "file:///hover.md"
    text = "Hi \U0001f9ff there\n\ttab"
    session.open(uri, text)
    full = session.semantic_full(uri)
    assert full is not None
    toks = decode_semantic(full.data)
    check_semantic(MODEL, text, full.data)
    emoji = [t for t in toks if t[0] == 0 and t[1] == 3]
    assert emoji and emoji[0][2] == 2 and emoji[0][4] & 2  # one token, bytes modifier
    h = session.hover(uri, 0, 4)
    assert h is not None
    value = h.contents.value  # type: ignore[union-attr]
    assert "bytes `f0` `9f` `a7` `bf`" in value and "of" in value
    spans = sp_char_spans(MODEL, text)
    k = next(i for i, sp in enumerate(spans) if sp[0] == 3)
    t = session.request("tokenline/tokenAt", {"uri": uri, "position": {"line": 0, "character": 3}})
    assert t["text"] == "\U0001f9ff"
    assert t["piece"] == "<0xF0><0x9F><0xA7><0xBF>"
    assert t["bytes"] == ["f0", "9f", "a7", "bf"]
    assert t["ids"] == sp_for(MODEL).encode("Hi \U0001f9ff")[-4:]
    assert t["total"] == sp_count(MODEL, text)
    assert t["range"] == {"start": {"line": 0, "character": 3}, "end": {"line": 0, "character": 5}}
    assert k >= 0
    h = session.hover(uri, 0, 0)
    total = sp_count(MODEL, text)
    assert h is not None
    assert f"token 1 of {total}" in h.contents.value  # type: ignore[union-attr]
    assert "▁Hi" in h.contents.value  # type: ignore[union-attr]
    session.close_doc(uri)


@pytest.mark.parametrize("encoding", ["utf-8", "utf-32"])
def test_position_encodings(encoding: str) -> None:
    s = Session(encodings=[encoding, "utf-16"])
    try:
        assert s.encoding == encoding
        uri = "file:///enc.md"
        text = "añb 😀 中文\r\nx𠀀y"
        s.open(uri, text)
        a = text.index("中")
        mirror = text[:a] + "日本" + text[a + 1 :]
        s.change(uri, [(rng(position(text, a, encoding), position(text, a + 1, encoding)), "日本")])
        assert s.status(uri)["tokens"] == sp_count(MODEL, mirror)
        full = s.semantic_full(uri)
        assert full is not None
        check_semantic(MODEL, mirror, full.data, encoding)
    finally:
        s.close()


SERVER_CANCELLED = -32802


def _refused(call: Callable[[], object]) -> int:
    """The error code of a request's error answer."""
    with pytest.raises(JsonRpcException) as refused:
        call()
    return refused.value.code


def test_large_documents_are_coloured_by_range(session: Session) -> None:
    """A client that asks for ranges and supports ServerCancelled (VS Code) gets colours of a
    large document by range: full and delta are refused with ServerCancelled (VS Code then keeps
    asking for the visible ranges; a null result would mean no colours at all)."""
    uri = "file:///huge.txt"
    text = botchan(2_100_000)
    session.open(uri, text, language="plaintext")
    assert session.status(uri)["tokens"] == sp_count(MODEL, text)
    assert _refused(lambda: session.semantic_full(uri)) == SERVER_CANCELLED
    assert _refused(lambda: session.semantic_delta(uri, "1")) == SERVER_CANCELLED
    lines = text.splitlines(keepends=True)
    first = 5000
    r = session.semantic_range(uri, rng((first, 0), (first + 40, 0)))
    chunk = "".join(lines[first : first + 41])
    got = decode_semantic(r.data)
    assert got and got[0][0] == first
    # Botchan's lines start at token boundaries: the range's tokens are those of its text.
    want = [(line + first, c, n) for line, c, n, _b in _segments_of(chunk)]
    assert [(g[0], g[1], g[2]) for g in got] == want
    session.close_doc(uri)


def test_range_only_from_a_hundred_thousand_characters(session: Session) -> None:
    uri = "file:///mid.txt"
    text = botchan(150_000)
    session.open(uri, text, language="plaintext")
    assert _refused(lambda: session.semantic_full(uri)) == SERVER_CANCELLED
    r = session.semantic_range(uri, rng((0, 0), (text.count("\n") + 1, 0)))
    check_semantic(MODEL, text, r.data)
    session.close_doc(uri)


@pytest.mark.parametrize(
    ("semantic_range", "server_cancel"),
    [(False, False), (True, False)],
    ids=["no ranges", "ranges without ServerCancelled (lsp-mode)"],
)
def test_other_clients_get_full_results(semantic_range: bool, server_cancel: bool) -> None:
    """A client without ranges, or without ServerCancelled, gets full results up to 2,000,000
    characters, and null above (lsp-mode asks for a range first and then for the full result
    when idle: a refusal would leave it the range alone)."""
    s = Session(
        init={"contextWindow": 8192}, semantic_range=semantic_range, server_cancel=server_cancel
    )
    try:
        text = botchan(150_000)
        s.open("file:///mid.txt", text, language="plaintext")
        full = s.semantic_full("file:///mid.txt")
        assert full is not None
        check_semantic(MODEL, text, full.data)
        s.open("file:///huge.txt", botchan(2_100_000), language="plaintext")
        s.status("file:///huge.txt")
        assert s.semantic_full("file:///huge.txt") is None
    finally:
        s.close()


def _segments_of(chunk: str) -> list[tuple[int, int, int, bool]]:
    from .harness import expected_segments

    # Without the dummy prefix a line's first word would differ; compare from line 1 of the
    # chunk onwards by encoding it after a newline.
    segs = expected_segments(MODEL, "\n" + chunk)
    return [(line - 1, c, n, b) for line, c, n, b in segs if line >= 1]


def test_a_100k_character_line(session: Session) -> None:
    uri = "file:///long-line.txt"
    text = ("lorem ipsum dolor sit amet, 中文 " * 3500)[:100_000]
    session.open(uri, text, language="plaintext")
    v = session.change(uri, [(rng((0, 50_000), (0, 50_001)), "Z")])
    mirror = text[:50_000] + "Z" + text[50_001:]
    assert session.status(uri, v)["tokens"] == sp_count(MODEL, mirror)
    r = session.semantic_range(uri, rng((0, 49_990), (0, 50_010)))
    check_semantic(MODEL, mirror, r.data)
    session.close_doc(uri)


# -- Markdown sections ----------------------------------------------------------------------------


def test_section_counts_as_inlay_hints() -> None:
    s = Session()
    try:
        uri = "file:///sections.md"
        text = "intro\n# One\nalpha beta\n```\n# not a heading\n```\n## Two\ngamma\n"
        s.open(uri, text)
        s.status(uri)
        hints = s.inlay_hints(uri)
        assert [h.position.line for h in hints] == [1, 6]
        spans = sp_char_spans(MODEL, text)
        one, two = text.index("# One"), text.index("## Two")
        # Document tokens that start in each section (zero-width ones included).
        proto = sp_for(MODEL).encode(text, out_type="proto")
        starts = [len(text.encode()[: p.begin].decode()) for p in proto.pieces]
        n1 = sum(1 for x in starts if one <= x < two)
        n2 = sum(1 for x in starts if two <= x)
        assert [h.label for h in hints] == [f"{n1} tokens", f"{n2} tokens"]
        assert spans
        s.configure({"sectionCounts": False})
        s.until(lambda: s.inlay_hints(uri) == [], what="hints switched off")
        # Plain text gets none.
        s.configure({"sectionCounts": True})
        s.open("file:///plain.txt", "# One\ntext", language="plaintext")
        s.status("file:///plain.txt")
        assert s.inlay_hints("file:///plain.txt") == []
    finally:
        s.close()


# -- TCP ------------------------------------------------------------------------------------------


def test_tcp_transport() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen(
        [*SERVER_CMD, "--tcp", f"127.0.0.1:{port}"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                conn = socket.create_connection(("127.0.0.1", port), timeout=5)
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.05)
        import json

        def send(msg: dict) -> None:
            body = json.dumps(msg).encode()
            conn.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)

        def recv() -> dict:
            buf = b""
            while b"\r\n\r\n" not in buf:
                buf += conn.recv(1)
            n = int(buf.split(b"Content-Length: ")[1].split(b"\r\n")[0])
            body = b""
            while len(body) < n:
                body += conn.recv(n - len(body))
            return json.loads(body)

        send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"processId": None, "rootUri": None, "capabilities": {}},
            }
        )
        while (m := recv()).get("id") != 1:
            pass
        assert m["result"]["capabilities"]["textDocumentSync"]["change"] == 2
        send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        send(
            {
                "jsonrpc": "2.0",
                "method": "textDocument/didOpen",
                "params": {
                    "textDocument": {
                        "uri": "file:///t.md",
                        "languageId": "markdown",
                        "version": 3,
                        "text": "over tcp",
                    }
                },
            }
        )
        while (m := recv()).get("method") != "tokenline/status":
            pass
        assert m["params"]["version"] == 3
        assert m["params"]["tokens"] == sp_count(MODEL, "over tcp")
        send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        while recv().get("id") != 2:
            pass
        send({"jsonrpc": "2.0", "method": "exit"})
        assert proc.wait(timeout=30) == 0
        conn.close()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def test_exit_code(session: Session) -> None:
    del session
    s = Session()
    s.close()
    assert s.returncode == 0


def test_a_not_ready_answer_is_not_logged_as_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    """pygls logs every error answer with a traceback; the ServerCancelled answers a large
    document's colours get on each keystroke are meant, so the server's log leaves them out."""
    from tokenline.server.feature import NotReady
    from tokenline.server.transport import setup_logging

    root = logging.getLogger()
    pygls_log = logging.getLogger("pygls.protocol.json_rpc")
    saved = (root.handlers[:], root.level, pygls_log.filters[:])
    try:
        setup_logging()
        for error in (NotReady("colours by range only"), RuntimeError("a real failure")):
            try:
                raise error
            except Exception:
                pygls_log.exception("Exception occurred for message %s", 2)
    finally:
        root.handlers[:], pygls_log.filters[:] = saved[0], saved[2]
        root.setLevel(saved[1])
    err = capsys.readouterr().err
    assert "a real failure" in err
    assert "colours by range only" not in err
