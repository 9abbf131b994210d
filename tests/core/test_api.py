"""The public API's contract: errors that say what is wrong, and a document left intact."""

from __future__ import annotations

from pathlib import Path

import pytest
import sentencepiece as spm

import tokenline.core
from tests.conftest import IN_CI
from tokenline.core import COMPILED, Document, ModelError, load_model


def test_public_names() -> None:
    for name in ("load_model", "Document", "ModelError", "COMPILED"):
        assert hasattr(tokenline.core, name)
    assert issubclass(ModelError, ValueError)


def test_ci_runs_the_compiled_build() -> None:
    # CI installs with mypyc; a silent fallback to pure Python would go unnoticed otherwise.
    if IN_CI:
        assert COMPILED
    assert isinstance(COMPILED, bool)


def test_bundled_model_is_mistral() -> None:
    model = load_model()
    assert model.name == "mistral-7b-v0.1"
    assert model.vocab_size == 32000
    license_file = Path(model.path).with_name("LICENSE-mistral-apache-2.0.txt")
    assert "Apache License" in license_file.read_text(encoding="utf-8")


def test_basic_document() -> None:
    model = load_model()
    sp = spm.SentencePieceProcessor(model_file=model.path)
    doc = Document(model, "Hello world")
    assert doc.text == "Hello world"
    assert doc.ids() == sp.encode("Hello world")
    assert len(doc) == len(sp.encode("Hello world"))
    doc.edit(5, 5, ",")
    assert doc.text == "Hello, world"
    assert doc.ids() == sp.encode("Hello, world")
    empty = Document(model)
    assert empty.text == "" and empty.ids() == [] and len(empty) == 0


@pytest.mark.parametrize("start,end", [(-1, 0), (0, 12), (5, 4), (11, 12), (12, 12)])
def test_out_of_range_edit_raises_and_keeps_document(start: int, end: int) -> None:
    model = load_model()
    doc = Document(model, "Hello world")
    before = doc.ids()
    with pytest.raises(ValueError, match="outside the text, which has 11 characters"):
        doc.edit(start, end, "x")
    assert doc.text == "Hello world"
    assert doc.ids() == before


def test_lone_surrogate_is_rejected_and_document_kept() -> None:
    model = load_model()
    doc = Document(model, "abc")
    with pytest.raises(ValueError, match="lone surrogate U\\+D800 at offset 1"):
        doc.edit(1, 1, "x\ud800y")
    assert doc.text == "abc"
    with pytest.raises(ValueError, match="lone surrogate"):
        Document(model, "\udfff")


def test_nul_bytes_are_text() -> None:
    model = load_model()
    sp = spm.SentencePieceProcessor(model_file=model.path)
    doc = Document(model, "a\x00b")
    doc.edit(1, 1, "\x00\x00")
    assert doc.ids() == sp.encode("a\x00\x00\x00b")


def test_missing_model(tmp_path: Path) -> None:
    missing = tmp_path / "nope.model"
    with pytest.raises(ModelError) as info:
        load_model(missing)
    assert str(missing) in str(info.value) and "no such file" in str(info.value)
    assert info.value.path == str(missing)


def test_directory_is_not_a_model(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="directory"):
        load_model(tmp_path)


@pytest.mark.parametrize(
    "content,reason",
    [
        (b"", "empty"),
        (b"\x00\x01garbage that is not protobuf \xff\xff\xff", "not a SentencePiece model"),
        (b"# a text file\nhello\n", "not a SentencePiece model"),
    ],
)
def test_corrupt_model(tmp_path: Path, content: bytes, reason: str) -> None:
    path = tmp_path / "bad.model"
    path.write_bytes(content)
    with pytest.raises(ModelError, match=reason) as info:
        load_model(path)
    assert str(path) in str(info.value)


def test_truncated_model(tmp_path: Path) -> None:
    data = Path(load_model().path).read_bytes()
    path = tmp_path / "truncated.model"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelError) as info:
        load_model(path)
    assert str(path) in str(info.value)


def test_model_without_unk_is_unsupported(tmp_path: Path) -> None:
    from tests.core import modelkit

    proto = modelkit.pb2().ModelProto()
    for text in ("a", "b", "ab"):
        p = proto.pieces.add()
        p.piece, p.score, p.type = text, -1.0, modelkit.NORMAL
    proto.trainer_spec.model_type = 2
    path = tmp_path / "no-unk.model"
    path.write_bytes(proto.SerializeToString())
    with pytest.raises(ModelError, match="SentencePiece rejects it") as info:
        load_model(path)
    assert "unk" in str(info.value)


def test_set_text_replaces_everything(model_paths: dict[str, Path]) -> None:
    for name in ("mistral-7b-v0.1", "bpe-default", "bpe-suffix", "unigram"):
        sp = spm.SentencePieceProcessor(model_file=str(model_paths[name]))
        doc = Document(load_model(model_paths[name]), "first  text ")
        doc.set_text("  second, longer text\n\n")
        assert doc.text == "  second, longer text\n\n"
        assert doc.ids() == sp.encode(doc.text)
        doc.edit(0, 2, "x")
        assert doc.ids() == sp.encode(doc.text)


def test_groups_join_the_bytes_of_one_character() -> None:
    # Mistral has no piece for U+12000: byte fallback spells it in four tokens, shown as one.
    model = load_model()
    text = "x \U00012000 y \U00012000"
    doc = Document(model, text)
    for k in range(len(doc)):
        first, end = doc.group(k)
        assert first <= k < end
        # Every token of a group has the same group, and the group covers whole characters.
        assert all(doc.group(j) == (first, end) for j in range(first, end))
        start, stop = doc.token_span(first)[0], doc.token_span(end - 1)[1]
        piece_bytes = b"".join(
            bytes([int(model.piece(i)[3:5], 16)])
            if model.token_kind(i) & tokenline.core.TOKEN_BYTE
            else model.piece(i).replace("\u2581", " ").encode()
            for i in doc.ids_between(first, end)
        )
        assert piece_bytes.decode("utf-8").strip() == text[start:stop].strip()
    sizes = sorted({doc.group(k)[1] - doc.group(k)[0] for k in range(len(doc))})
    assert sizes == [1, 4]
    assert doc.group(len(doc)) == (len(doc), len(doc))


def test_token_index_out_of_range_is_a_clear_error() -> None:
    doc = Document(load_model(), "Hello world")
    for k in (len(doc), -1, 10**6):
        with pytest.raises(IndexError, match="does not exist"):
            doc.token_span(k)
        with pytest.raises(IndexError, match="does not exist"):
            doc.token_id(k)
    assert doc.token_span(len(doc) - 1)[1] == len(doc.text)
