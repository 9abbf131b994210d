"""Opening a document: the count is the first thing the server sends, and a file whose editor
opens (`tokenline/willOpen`) is counted from disk before its didOpen (docs/protocol.md)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types as T

from tests.conftest import BOTCHAN
from tokenline.core import load_model
from tokenline.server.ahead import OpeningAhead, read_text
from tokenline.server.settings import Settings
from tokenline.server.store import DocumentStore

from .harness import Session, bundled_model_path, rng, sp_count

MODEL = bundled_model_path()
WILL_OPEN = "tokenline/willOpen"


def botchan(n: int) -> str:
    text = BOTCHAN.read_text(encoding="utf-8").lstrip("\ufeff")
    return (text * (n // len(text) + 1))[:n]


def received(session: Session) -> list[Any]:
    """Every message the client handles from now on, in the order it arrives."""
    seen: list[Any] = []
    protocol = session.client.protocol
    handle = protocol.handle_message

    def record(message: Any) -> None:
        seen.append(message)
        handle(message)

    protocol.handle_message = record  # type: ignore[method-assign]
    return seen


def ahead_status(session: Session, uri: str) -> dict[str, Any]:
    """The status the server sent of a file counted ahead of its didOpen (version null)."""

    def found() -> dict[str, Any] | None:
        return next((s for s in session.statuses if s["uri"] == uri and s["version"] is None), None)

    return dict(session.wait_for(found, what=f"the status of {uri} counted ahead"))


def test_the_status_comes_before_the_answers_to_requests_sent_behind_the_did_open(
    session: Session,
) -> None:
    """VS Code asks for colours and hints right behind the didOpen: the server reads them all
    before it next waits, and sends the count before it answers any of them."""
    uri = "file:///opening-order.md"
    text = "# Title\n\n" + botchan(200_000) + "\n# Next\n\nmore\n"
    seen = received(session)
    session.open(uri, text)
    doc = T.TextDocumentIdentifier(uri=uri)
    asked = [
        session.client.text_document_semantic_tokens_range_async(
            T.SemanticTokensRangeParams(text_document=doc, range=rng((0, 0), (40, 0)))
        ),
        session.client.text_document_inlay_hint_async(
            T.InlayHintParams(text_document=doc, range=rng((0, 0), (10**6, 0)))
        ),
        session.client.text_document_hover_async(
            T.HoverParams(text_document=doc, position=T.Position(line=2, character=3))
        ),
    ]

    async def answers() -> list[Any]:
        return await asyncio.gather(*asked)

    session.run(answers())
    kinds = [
        "status"
        if getattr(m, "method", None) == "tokenline/status" and m.params.uri == uri
        else "answer"
        if getattr(m, "method", None) is None
        else "other"
        for m in seen
    ]
    assert kinds.count("answer") == 3 and kinds.count("status") == 1, kinds
    assert kinds.index("status") < kinds.index("answer"), kinds
    assert session.status(uri, 1)["tokens"] == sp_count(MODEL, text)
    session.close_doc(uri)


def test_a_file_is_counted_when_its_editor_opens_and_its_did_open_keeps_the_count(
    session: Session, tmp_path: Path
) -> None:
    text = "\ufeff" + botchan(60_000) + "\n中文 😀\n"
    path = tmp_path / "ahead.md"
    path.write_text(text, encoding="utf-8")
    uri = path.as_uri()
    session.client.protocol.notify(WILL_OPEN, {"uri": uri})
    ahead = ahead_status(session, uri)
    # The editor shows the file without its byte order mark, and so does the count.
    want = sp_count(MODEL, text[1:])
    assert ahead["tokens"] == want and ahead["model"] == "mistral-7b-v0.1"
    session.open(uri, text[1:], version=3)
    assert session.status(uri, 3)["tokens"] == want
    session.close_doc(uri)


def test_a_did_open_whose_text_is_not_the_files_counts_its_own_text(
    session: Session, tmp_path: Path
) -> None:
    """The editor's text wins: the file changed on disk, or the editor read it otherwise."""
    path = tmp_path / "changed.md"
    path.write_text(botchan(30_000), encoding="utf-8")
    uri = path.as_uri()
    session.client.protocol.notify(WILL_OPEN, {"uri": uri})
    assert ahead_status(session, uri)["tokens"] == sp_count(MODEL, botchan(30_000))
    editor = botchan(30_000).replace("\n", "\r\n")
    session.open(uri, editor)
    assert session.status(uri, 1)["tokens"] == sp_count(MODEL, editor)
    session.change(uri, [(rng((0, 0), (0, 0)), "More words. ")])
    assert session.status(uri, 2)["tokens"] == sp_count(MODEL, "More words. " + editor)
    session.close_doc(uri)


def test_files_that_wait_for_their_did_open(session: Session, tmp_path: Path) -> None:
    """No status ahead for a file that is not UTF-8, a chat file (its status is its
    conversations'), a missing file, an open document, or a non-file URI: the status of a
    plain file asked after them is the first to come (notifications are handled in order)."""
    latin = tmp_path / "latin.txt"
    latin.write_bytes("caf\xe9 au lait\n".encode("latin-1"))
    chat = tmp_path / "chat.jsonl"
    chat.write_text('{"messages": [{"role": "user", "content": "hi"}]}\n', encoding="utf-8")
    opened = tmp_path / "open.md"
    opened.write_text("on disk\n", encoding="utf-8")
    session.open(opened.as_uri(), "in the editor\n")
    session.status(opened.as_uri(), 1)
    plain = tmp_path / "plain.md"
    plain.write_text("plain words\n", encoding="utf-8")
    first = len(session.statuses)
    for uri in (
        latin.as_uri(),
        chat.as_uri(),
        (tmp_path / "missing.md").as_uri(),
        opened.as_uri(),
        "untitled:Untitled-1",
        plain.as_uri(),
    ):
        session.client.protocol.notify(WILL_OPEN, {"uri": uri})
    ahead_status(session, plain.as_uri())
    assert [s["uri"] for s in session.statuses[first:]] == [plain.as_uri()]
    session.close_doc(opened.as_uri())


def test_the_tokens_counted_ahead_are_taken_only_for_their_text_and_model(tmp_path: Path) -> None:
    model = load_model("")
    ahead = OpeningAhead()
    counted = ahead.count("file:///a.md", "some text\n", model)
    assert ahead.holds("file:///a.md")
    assert ahead.take("file:///a.md", "some text\n", model) is counted
    assert not ahead.holds("file:///a.md")
    assert ahead.take("file:///a.md", "some text\n", model) is None  # taken once
    ahead.count("file:///a.md", "some text\n", model)
    assert ahead.take("file:///a.md", "other text\n", model) is None
    ahead.count("file:///a.md", "some text\n", model)
    assert ahead.take("file:///b.md", "some text\n", model) is None
    ahead.count("file:///a.md", "some text\n", model)
    other = load_model(str(MODEL))  # the same file loaded again: another model object
    assert other is not model
    assert ahead.take("file:///a.md", "some text\n", other) is None
    ahead.count("file:///a.md", "x\n", model)
    ahead.count("file:///c.md", "y\n", model)
    assert not ahead.holds("file:///a.md")  # one file at a time


def test_the_store_opens_a_document_with_the_tokens_counted_ahead() -> None:
    model = load_model("")
    counted = OpeningAhead().count("file:///a.md", "some text\n", model)
    store = DocumentStore()
    item = T.TextDocumentItem(
        uri="file:///a.md", language_id="markdown", version=4, text="some text\n"
    )
    st = store.open(item, Settings(), model, counted=counted)
    assert st.doc is counted.doc and st.version == 4 and len(st.doc) == len(counted.doc)


def test_read_text(tmp_path: Path) -> None:
    f = tmp_path / "f.md"
    f.write_bytes(b"\xef\xbb\xbfbom\r\nline\n")
    assert read_text(f.as_uri()) == "bom\r\nline\n"
    f.write_bytes(b"\xff\xfe")
    assert read_text(f.as_uri()) is None
    assert read_text((tmp_path / "none.md").as_uri()) is None
    assert read_text(tmp_path.as_uri()) is None
    assert read_text("untitled:Untitled-1") is None
