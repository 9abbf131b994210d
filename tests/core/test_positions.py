"""Line and code-unit positions, checked against a plain recomputation from the text."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from tests.core.strategies import edit_ops
from tokenline.core import UTF8, UTF16, UTF32, Document, load_model

MODEL = load_model()
LINE_BREAK = re.compile(r"\r\n|\r|\n")

pieces = st.sampled_from(["a", "bc", "\n", "\r\n", "\r", "é", "😀", "中", " ", "\t", "ab\ncd"])
texts = st.lists(pieces, max_size=300).map("".join)


def units(s: str, unit: int) -> int:
    if unit == UTF32:
        return len(s)
    if unit == UTF16:
        return len(s.encode("utf-16-le")) // 2
    return len(s.encode("utf-8"))


def line_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in LINE_BREAK.finditer(text)]


def check(doc: Document, text: str) -> None:
    starts = line_starts(text)
    assert doc.line_count() == len(starts)
    for line, start in enumerate(starts):
        assert doc.line_start(line) == start
    for off in range(0, len(text) + 1, max(1, len(text) // 40)):
        line = max(i for i, s in enumerate(starts) if s <= off)
        if off > 0 and text[off - 1] == "\r" and off < len(text) and text[off] == "\n":
            continue  # between the two characters of one line break: no LSP position
        for unit in (UTF8, UTF16, UTF32):
            col = units(text[starts[line] : off], unit)
            assert doc.position(off, unit) == (line, col)
            assert doc.offset(line, col, unit) == off


@given(text=texts, data=st.data())
def test_positions_follow_edits(text: str, data: st.DataObject) -> None:
    doc = Document(MODEL, text)
    check(doc, text)
    for _ in range(data.draw(st.integers(1, 8))):
        start, end, new = data.draw(edit_ops(len(text)))
        text = text[:start] + new + text[end:]
        doc.edit(start, end, new)
        check(doc, text)


def test_positions_past_the_end_clamp() -> None:
    doc = Document(MODEL, "ab\ncd")
    assert doc.offset(0, 99, UTF16) == 2  # past the line end: the line end
    assert doc.offset(9, 0, UTF16) == 5  # past the last line: the end of text
    assert doc.offset(1, 1, UTF16) == 4
    assert doc.position(99, UTF16) == (1, 2)


def test_surrogate_pair_columns() -> None:
    doc = Document(MODEL, "😀x")
    assert doc.position(1, UTF16) == (0, 2)
    assert doc.position(1, UTF8) == (0, 4)
    assert doc.offset(0, 1, UTF16) == 0  # inside the pair: rounds down to the character
    assert doc.offset(0, 2, UTF16) == 1


def test_long_documents_span_many_chunks(botchan: str) -> None:
    text = (botchan[:20000] + "\r\n😀\r") * 3
    doc = Document(MODEL, text)
    check(doc, text)
    doc.edit(30000, 30010, "\n\n😀")
    text = text[:30000] + "\n\n😀" + text[30010:]
    check(doc, text)


def test_token_spans_match_sentencepiece_offsets() -> None:
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=MODEL.path)
    text = " Hello  wörld\n\t中文 😀 done "
    doc = Document(MODEL, text)
    doc.edit(3, 3, "x")
    text = text[:3] + "x" + text[3:]
    mapping = sp.encode(text, out_type="offset_mapping")
    spans = doc.spans(0, len(doc))
    ours = list(zip(spans[0::2], spans[1::2], strict=True))
    # Byte tokens: SentencePiece gives the character to its last byte, Tokenline to its first.
    byte_ids = {i for i in mapping["ids"] if MODEL.vocab.flags[i] & 1}
    for k, (tid, theirs) in enumerate(zip(mapping["ids"], mapping["offsets"], strict=True)):
        if tid not in byte_ids:
            assert ours[k] == tuple(theirs), (k, MODEL.piece(tid))
    assert [doc.token_at(o) for o in range(len(text))] == [
        max(k for k, (s, e) in enumerate(ours) if s <= o < e) for o in range(len(text))
    ]
