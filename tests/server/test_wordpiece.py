"""The server on a BERT-style WordPiece `tokenizer.json`, end to end: status, counts after edits,
semantic tokens at `##` continuations, hover pieces and ids, selection counts, whitespace-only
text. The `tokenizers` library, on the same file, is the reference.

The tokenizer is trained here (the `tokenizers` WordPiece trainer on a slice of Botchan, as
tests/core/hfkit.py does), so nothing is downloaded.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tokenizers import Tokenizer

from tests.core import hfkit

from .harness import (
    Session,
    apply_semantic_edits,
    check_semantic_spans,
    decode_semantic,
    position,
    rng,
)

NAME = "bert-wp"
# Words WordPiece cuts into `##` continuations, a character outside the vocabulary ([UNK]),
# Chinese characters (each its own word), punctuation, runs of spaces, a whitespace-only line.
TEXT = (
    "The schoolmaster was walking quickly; nobody answered.\n"
    "  Snowmen ☃ and 中文 too...   \n"
    "   \t \n"
    "Unbelievably, everything happened!"
)


@pytest.fixture(scope="module")
def wp_path(tmp_path_factory: pytest.TempPathFactory, botchan: str) -> Path:
    return hfkit.small_bert(tmp_path_factory.mktemp("wordpiece"), botchan, NAME)


@pytest.fixture(scope="module")
def ref(wp_path: Path) -> Tokenizer:
    return Tokenizer.from_file(str(wp_path))


@pytest.fixture(scope="module")
def wp(wp_path: Path) -> Iterator[Session]:
    s = Session(init={"model": str(wp_path)})
    try:
        yield s
    finally:
        s.close()


def count(ref: Tokenizer, text: str) -> int:
    return len(ref.encode(text, add_special_tokens=False).ids)


def spans(ref: Tokenizer, text: str) -> list[tuple[int, int, int, bool]]:
    """(start, end, id, False) of each token as the document covers the text: the reference's
    end offsets are the boundaries; the text between two tokens (spaces the model drops) goes to
    the token after it, and the text after the last token to the last one."""
    enc = ref.encode(text, add_special_tokens=False)
    out: list[tuple[int, int, int, bool]] = []
    at = 0
    for token_id, (_, end) in zip(enc.ids, enc.offsets, strict=True):
        out.append((at, end, token_id, False))
        at = end
    if out:
        out[-1] = (out[-1][0], len(text), out[-1][2], False)
    return out


def test_the_text_exercises_continuations_and_unknowns(ref: Tokenizer) -> None:
    enc = ref.encode(TEXT, add_special_tokens=False)
    assert sum(t.startswith("##") for t in enc.tokens) >= 5, enc.tokens
    assert "[UNK]" in enc.tokens
    assert count(ref, "   \t \n") == 0


def test_status_names_the_model_and_counts_after_edits(wp: Session, ref: Tokenizer) -> None:
    uri = "file:///wordpiece/status.md"
    wp.open(uri, TEXT)
    st = wp.status(uri)
    assert st["model"] == NAME
    assert st["tokens"] == count(ref, TEXT)
    text = TEXT
    at = text.index("walking") + 3  # inside the word: "wal|king"
    edits = [(at, at, "xyz"), (text.index("nobody") + 6, text.index("nobody") + 6, ", (yes)")]
    for a, b, new in edits:
        v = wp.change(uri, [(rng(position(text, a), position(text, b)), new)])
        text = text[:a] + new + text[b:]
        assert wp.status(uri, v)["tokens"] == count(ref, text), text
    # Joining two words by deleting the space between them, and splitting one with a space.
    a = text.index(" quickly")
    v = wp.change(uri, [(rng(position(text, a), position(text, a + 1)), "")])
    text = text[:a] + text[a + 1 :]
    assert wp.status(uri, v)["tokens"] == count(ref, text), text
    wp.close_doc(uri)


def test_whitespace_only_text_has_no_tokens(wp: Session, ref: Tokenizer) -> None:
    uri = "file:///wordpiece/blank.md"
    blank = "  \n\t  \n"
    wp.open(uri, blank)
    assert wp.status(uri)["tokens"] == 0
    full = wp.semantic_full(uri)
    assert full is not None and list(full.data) == []
    assert wp.hover(uri, 0, 1) is None
    assert wp.request("tokenline/count", {"uri": uri, "ranges": [_json_range(blank, 0, 5)]}) == {
        "counts": [0]
    }
    # A word typed into the blank text, then deleted again.
    v = wp.change(uri, [(rng((1, 1), (1, 1)), "walking")])
    text = blank[:4] + "walking" + blank[4:]
    assert wp.status(uri, v)["tokens"] == count(ref, text) > 0
    v = wp.change(uri, [(rng((1, 1), (1, 8)), "")])
    assert wp.status(uri, v)["tokens"] == 0
    full = wp.semantic_full(uri)
    assert full is not None and list(full.data) == []
    wp.close_doc(uri)


def test_semantic_tokens_cut_at_continuations(wp: Session, ref: Tokenizer) -> None:
    uri = "file:///wordpiece/semantic.md"
    wp.open(uri, TEXT)
    full = wp.semantic_full(uri)
    assert full is not None and full.result_id is not None
    check_semantic_spans(spans(ref, TEXT), TEXT, full.data)
    # "school" and "##master" (or however the word is cut) are separate semantic tokens.
    enc = ref.encode(TEXT, add_special_tokens=False)
    word = TEXT.index("schoolmaster")
    cuts = [s for s, _ in enc.offsets if word < s < word + len("schoolmaster")]
    assert cuts, enc.tokens
    got = decode_semantic(full.data)
    starts = {(t[0], t[1]) for t in got}
    for cut in cuts:
        assert position(TEXT, cut) in starts
    # The character outside the vocabulary is marked unknown.
    (unknown,) = [t for t in got if t[4] & 8]
    assert unknown[:2] == position(TEXT, TEXT.index("☃") - 1)
    # Edits inside a word and adding punctuation: the delta equals the reference's tokens.
    text = TEXT
    data: list[int] = list(full.data)
    previous = full.result_id
    for at, new in ((text.index("quickly") + 5, "ier"), (text.index("Unbeliev") + 8, ".!")):
        wp.change(uri, [(rng(position(text, at), position(text, at)), new)])
        text = text[:at] + new + text[at:]
        delta = wp.semantic_delta(uri, previous)
        if hasattr(delta, "edits"):
            data = apply_semantic_edits(data, delta.edits)
        else:
            data = list(delta.data)
        previous = delta.result_id
        check_semantic_spans(spans(ref, text), text, data)
    wp.close_doc(uri)


def test_hover_shows_pieces_and_ids(wp: Session, ref: Tokenizer) -> None:
    uri = "file:///wordpiece/hover.md"
    wp.open(uri, TEXT)
    enc = ref.encode(TEXT, add_special_tokens=False)
    covered = spans(ref, TEXT)
    continuations = [k for k, t in enumerate(enc.tokens) if t.startswith("##")]
    unknown = enc.tokens.index("[UNK]")
    for k in [*continuations, unknown, 0]:
        start = enc.offsets[k][0]
        line, col = position(TEXT, start)
        hover = wp.hover(uri, line, col)
        assert hover is not None
        value = hover.contents.value  # type: ignore[union-attr]
        token = enc.tokens[k]
        if token.startswith("##"):
            # The text the piece stands for, as for SentencePiece's "▁": "##" is not text.
            assert f"piece `{token[2:]}` (raw `{token}`)" in value, value
        else:
            assert f"piece `{token}`" in value and "raw" not in value, value
        assert f"id {enc.ids[k]}" in value, value
        assert f"model {NAME}" in value
        assert "bytes" not in value, value
        want = (position(TEXT, covered[k][0]), position(TEXT, covered[k][1]))
        got = hover.range
        assert ((got.start.line, got.start.character), (got.end.line, got.end.character)) == want
        token = wp.request(
            "tokenline/tokenAt", {"uri": uri, "position": {"line": line, "character": col}}
        )
        assert token["ids"] == [enc.ids[k]] and token["piece"] == enc.tokens[k]
    at = enc.offsets[unknown][0]
    value = wp.hover(uri, *position(TEXT, at)).contents.value  # type: ignore[union-attr]
    assert "unknown (`[UNK]`)" in value and "special" not in value, value
    wp.close_doc(uri)
    # "[UNK]" spelt out in the text is the special token, not an unknown character.
    uri = "file:///wordpiece/spelt.md"
    spelt = "say [UNK] here"
    assert ref.encode(spelt, add_special_tokens=False).tokens[1] == "[UNK]"
    wp.open(uri, spelt)
    value = wp.hover(uri, 0, 5).contents.value  # type: ignore[union-attr]
    assert "special piece" in value and "unknown" not in value, value
    wp.close_doc(uri)


def _json_range(text: str, a: int, b: int) -> dict[str, Any]:
    (la, ca), (lb, cb) = position(text, a), position(text, b)
    return {"start": {"line": la, "character": ca}, "end": {"line": lb, "character": cb}}


def test_selection_counts_and_ids(wp: Session, ref: Tokenizer, botchan: str) -> None:
    uri = "file:///wordpiece/selection.md"
    text = TEXT + "\n" + botchan[:6000]
    wp.open(uri, text)
    ranges = [
        (text.index("walking") + 2, text.index("answered") + 4),  # from and to mid-word
        (text.index("中"), text.index("中") + 1),
        (text.index("   \t"), text.index("Unbeliev")),
        (10, len(text) - 10),  # over 4,096 characters: windows at the edges only
    ]
    json_ranges = [_json_range(text, a, b) for a, b in ranges]
    counts = wp.request("tokenline/count", {"uri": uri, "ranges": json_ranges})["counts"]
    assert counts == [count(ref, text[a:b]) for a, b in ranges]
    ids = wp.request("tokenline/ids", {"uri": uri, "ranges": json_ranges[:3]})["ids"]
    assert ids == [ref.encode(text[a:b], add_special_tokens=False).ids for a, b in ranges[:3]]
    wp.close_doc(uri)


def test_the_model_setting_switches_to_the_file(wp_path: Path, ref: Tokenizer) -> None:
    s = Session()
    try:
        uri = "file:///wordpiece/switch.md"
        s.open(uri, TEXT)
        assert s.status(uri)["model"] != NAME
        s.configure({"model": str(wp_path.parent)})  # the folder holding tokenizer.json
        st = s.wait_for(
            lambda: [x for x in s.statuses if x["uri"] == uri and x["model"] == NAME],
            what="status on the WordPiece file",
        )
        assert st[-1]["tokens"] == count(ref, TEXT)
    finally:
        s.close()
