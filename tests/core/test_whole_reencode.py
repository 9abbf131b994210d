"""Models that re-encode the whole text: the split the server uses to encode off its event loop
(Document.edit_text, whole_tokens, take_tokens) gives the tokens and spans sentencepiece gives
the newest text, and the lengths of <unk> tokens read from the text (unigram models) are
sentencepiece's own offsets.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import sentencepiece as spm
from hypothesis import given
from hypothesis import strategies as st

from tests.core.strategies import edit_ops, texts
from tokenline.core import Document, Model, load_model, whole_tokens

# Unigram models (their <unk> lengths read from the text), and the other types that re-encode
# whole (measured by a second encode).
WHOLE_MODELS = ["unigram", "unigram-1000", "unigram-suffix-nfkc-cf", "char", "word"]
# Characters Botchan has none of: runs of them are <unk> to the trained models.
UNKNOWN = ["☃", "ĳ", "ꙮ", "𝔘", "☃☃ĳ", "ꙮ𝔘ꙮ", "ŋ"]

unknown_heavy = st.lists(
    st.one_of(st.sampled_from(UNKNOWN), st.sampled_from(["a", "the ", " ", "\n", "x", "."])),
    max_size=40,
).map("".join)


def check_spans(sp: spm.SentencePieceProcessor, model: Model, doc: Document, text: str) -> None:
    """The document's ids are sentencepiece's, and so is each span but those of byte pieces
    (sentencepiece gives a character to its last byte, Tokenline to its first)."""
    mapping = sp.encode(text, out_type="offset_mapping")
    assert doc.ids() == mapping["ids"]
    spans = doc.spans(0, len(doc))
    ours = list(zip(spans[0::2], spans[1::2], strict=True))
    for k, (tid, theirs) in enumerate(zip(mapping["ids"], mapping["offsets"], strict=True)):
        if not model.token_kind(tid) & 1:
            assert ours[k] == tuple(theirs), (k, model.piece(tid), text)


# Each model's reference processor and the model, by name.
Oracles = dict[str, tuple[spm.SentencePieceProcessor, Model]]


@pytest.fixture(scope="module")
def whole_models(model_paths: dict[str, Path]) -> Oracles:
    out = {}
    for name in WHOLE_MODELS:
        model = load_model(model_paths[name])
        assert not model.incremental, name
        out[name] = (spm.SentencePieceProcessor(model_file=str(model_paths[name])), model)
    return out


@pytest.mark.parametrize("name", WHOLE_MODELS)
@given(text=st.one_of(texts(), unknown_heavy), data=st.data())
def test_edits_taken_apart_match_sentencepiece(
    whole_models: Oracles,
    name: str,
    text: str,
    data: st.DataObject,
) -> None:
    """Several edits go to the text before one encode of the newest text goes in (as when the
    server drops the encode of a text superseded while it ran)."""
    sp, model = whole_models[name]
    doc = Document(model, text)
    check_spans(sp, model, doc, text)
    for _ in range(data.draw(st.integers(1, 4), label="rounds")):
        normalized = ""
        for _ in range(data.draw(st.integers(1, 3), label="edits")):
            start, end, new = data.draw(edit_ops(doc.length()), label="edit")
            if data.draw(st.booleans(), label="unknown run"):
                new += data.draw(st.sampled_from(UNKNOWN), label="unknown")
            text = text[:start] + new + text[end:]
            normalized = doc.edit_text(start, end, new)
        assert doc.text == text
        doc.take_tokens(whole_tokens(model, normalized))
        check_spans(sp, model, doc, text)


@pytest.mark.parametrize("name", ["unigram", "char"])
def test_edits_in_place_read_unknown_runs(whole_models: Oracles, name: str, botchan: str) -> None:
    sp, model = whole_models[name]
    text = botchan[:3000]
    doc = Document(model, text)
    for k, run in enumerate(UNKNOWN * 3):
        at = 97 * k % len(text)
        doc.edit(at, at, run)
        text = text[:at] + run + text[at:]
        check_spans(sp, model, doc, text)


def test_tokens_of_a_superseded_text_are_refused(
    whole_models: Oracles,
) -> None:
    sp, model = whole_models["unigram"]
    doc = Document(model, "the cat sat")
    older = doc.edit_text(3, 3, " black")
    doc.edit_text(0, 0, "so ")
    with pytest.raises(ValueError, match="not the newest text"):
        doc.take_tokens(whole_tokens(model, older))
    with pytest.raises(RuntimeError, match="take_tokens"):
        doc.edit(0, 0, "x")
    doc.edit_text(0, 0, "")
    newest = doc.edit_text(doc.length(), doc.length(), ".")
    doc.take_tokens(whole_tokens(model, newest))
    check_spans(sp, model, doc, "so the black cat sat.")
    doc.edit(0, 2, "And")  # in step again: edits go in place
    check_spans(sp, model, doc, "And the black cat sat.")
