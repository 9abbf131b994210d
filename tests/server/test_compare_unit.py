"""The compare unit in process, on the server's own store and models units: each other model's
Document is edited in place, edit by edit (never re-encoded whole), models are loaded once and
shared, a compare model that is the document's own shares its Document, and new settings add and
drop Documents. The references are sentencepiece and `tokenizers` on the same text."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as T
from tokenizers import Tokenizer

from tests.core import hfkit
from tokenline.core import UTF16
from tokenline.server.compare import CompareFeature
from tokenline.server.feature import DocState
from tokenline.server.models import ModelsFeature
from tokenline.server.settings import Settings
from tokenline.server.store import DocumentStore

from .harness import bundled_model_path, position, rng, sp_count

MISTRAL = bundled_model_path()


class Host:
    """What the units ask of the server, recorded."""

    unit = UTF16

    def __init__(self) -> None:
        self.shown: list[str] = []
        self.marked: list[str] = []
        self.store = DocumentStore()

    def document(self, uri: str) -> DocState:
        return self.store.require(uri)

    def folders(self) -> list[str]:
        return []

    def notify(self, method: str, params: object) -> None:
        pass

    def mark(self, uri: str) -> None:
        self.marked.append(uri)

    def request(self, method: str, params: object) -> Any:
        raise AssertionError("no request expected")

    def show(self, kind: T.MessageType, message: str) -> None:
        self.shown.append(message)

    def configuration_changed(self) -> None:
        pass

    def settings_changed(self) -> None:
        pass


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory, botchan: str) -> Path:
    return hfkit.train("meta-first-split", tmp_path_factory.mktemp("compare-unit"), botchan)


def opened(host: Host, compare: CompareFeature, uri: str, text: str, s: Settings) -> DocState:
    models = compare.models
    assert isinstance(models, ModelsFeature)
    item = T.TextDocumentItem(uri=uri, language_id="markdown", version=1, text=text)
    st = host.store.open(item, s, models.for_document(uri, s, None).model)
    compare.document_opened(st)
    return st


def edit(
    host: Host, compare: CompareFeature, st: DocState, text: str, a: int, b: int, new: str
) -> str:
    change = T.TextDocumentContentChangePartial(
        range=rng(position(text, a), position(text, b)), text=new
    )
    params = T.DidChangeTextDocumentParams(
        text_document=T.VersionedTextDocumentIdentifier(uri=st.uri, version=(st.version or 0) + 1),
        content_changes=[change],
    )
    changed = host.store.change(params, UTF16)
    assert changed is not None
    compare.document_changed(*changed)
    return text[:a] + new + text[b:]


def test_other_models_follow_edits_in_place(
    trained: Path, caplog: pytest.LogCaptureFixture
) -> None:
    host = Host()
    compare = CompareFeature(host, ModelsFeature(host))
    ref = Tokenizer.from_file(str(trained))
    s = Settings(compare_models=(str(trained), "mistral-7b-v0.1"))
    text = "The schoolmaster walked in.\nNobody answered him, 中文 too.\n"
    st = opened(host, compare, "file:///a.md", text, s)
    [doc] = compare._docs[st.uri].docs.values()  # the bundled model is the document's own
    caplog.set_level(logging.WARNING, "tokenline.server")
    for a, b, new in [(4, 4, "old "), (0, 3, ""), (20, 30, "\n\n"), (5, 5, "😀 héllo")]:
        text = edit(host, compare, st, text, a, b, new)
        hf, own = compare.compared(st)
        assert hf.tokens == len(ref.encode(text, add_special_tokens=False).ids)
        assert own.tokens == sp_count(MISTRAL, text) == len(st.doc)
        assert compare._docs[st.uri].docs == {id(doc.model): doc}  # the same Document, edited
    assert doc.text == text
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_models_are_loaded_once_and_settings_add_and_drop_documents(trained: Path) -> None:
    host = Host()
    models = ModelsFeature(host)
    compare = CompareFeature(host, models)
    s = Settings(compare_models=(str(trained),))
    one = opened(host, compare, "file:///one.md", "one", s)
    two = opened(host, compare, "file:///two.md", "two", s)
    [d1] = compare._docs[one.uri].docs.values()
    [d2] = compare._docs[two.uri].docs.values()
    assert d1 is not d2 and d1.model is d2.model is models.load(str(trained), None)
    # A new setting: the document's own model added (no Document of its own), the file dropped.
    one.settings = replace(s, compare_models=("mistral-7b-v0.1", str(Path("nope.model"))))
    compare.publish(one)
    assert compare._docs[one.uri].docs == {}
    own, missing = compare.compared(one)
    assert (own.model, own.tokens, own.context_window) == ("mistral-7b-v0.1", len(one.doc), 8192)
    assert missing.tokens is None and missing.error and len(host.shown) == 1
    compare.publish(one)
    assert len(host.shown) == 1  # reported once
    # The document moves to the file's model: the bundled one now needs a Document of its own.
    change = host.store.set_model(one, models.load(str(trained), None))
    compare.document_changed(one, change)
    [d] = compare._docs[one.uri].docs.values()
    assert d.model.name == "mistral-7b-v0.1" and d.text == "one"
    compare.document_closed(one)
    assert one.uri not in compare._docs


def test_a_selection_republishes_only_when_it_changes(trained: Path) -> None:
    host = Host()
    compare = CompareFeature(host, ModelsFeature(host))
    st = opened(
        host, compare, "file:///s.md", "hello world\n", Settings(compare_models=(str(trained),))
    )
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 5}}
    cursor = {"start": {"line": 0, "character": 3}, "end": {"line": 0, "character": 3}}
    compare.selection({"uri": st.uri, "ranges": [cursor]})
    assert host.marked == []  # no selection before, none now
    compare.selection({"uri": st.uri, "ranges": [whole]})
    compare.selection({"uri": st.uri, "ranges": [whole]})
    assert host.marked == [st.uri]
    [hf] = compare.compared(st)
    ref = Tokenizer.from_file(str(trained))
    assert hf.selection == len(ref.encode("hello", add_special_tokens=False).ids)
    compare.selection({"uri": "file:///not-open.md", "ranges": [whole]})
    assert host.marked == [st.uri]
    # An edit inside the selection (the client has not sent a new one yet) is counted; one
    # outside it leaves the selected text, and its count, as they were.
    text = edit(host, compare, st, "hello world\n", 1, 3, "ELL")
    [hf] = compare.compared(st)
    assert hf.selection == len(ref.encode(text[:5], add_special_tokens=False).ids)
    text = edit(host, compare, st, text, 8, 8, " and more words")
    [again] = compare.compared(st)
    assert again.selection == hf.selection
    assert again.tokens == len(ref.encode(text, add_special_tokens=False).ids)
