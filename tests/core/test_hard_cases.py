"""Each thing that makes a window's tokenization differ from the whole text's, tested by name.

Every test drives edits that put a window edge exactly where the difficulty lives, and checks the
result against SentencePiece's full encode after each edit.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest
import sentencepiece as spm
from librt.vecs import vec
from mypy_extensions import i32, u8

from tests.core import modelkit
from tests.core.modelkit import NORMAL, UNUSED
from tokenline.core import Document, load_model
from tokenline.core.spfamily import SentencePieceFamily
from tokenline.core.tokens import TokenRun
from tokenline.core.vocab import FLAG_BYTE, FLAG_CONTINUATION
from tokenline.core.window import Neighborhood


def run_edits(path: Path, text: str, edits: list[tuple[int, int, str]]) -> Document:
    """Applies edits one by one, checking against a full encode after each; returns the doc."""
    sp = spm.SentencePieceProcessor(model_file=str(path))
    doc = Document(load_model(path), text)
    assert doc.ids() == sp.encode(text)
    for start, end, new in edits:
        text = text[:start] + new + text[end:]
        doc.edit(start, end, new)
        assert doc.text == text
        assert doc.ids() == sp.encode(text), f"after {(start, end, new)!r}: {text!r}"
    return doc


def typing(text: str, at: int, typed: str) -> list[tuple[int, int, str]]:
    """Edits that type `typed` one character at a time at offset `at`."""
    return [(at + i, at + i, ch) for i, ch in enumerate(typed)]


def backspacing(at: int, count: int) -> list[tuple[int, int, str]]:
    return [(at - i - 1, at - i, "") for i in range(count)]


def test_add_dummy_prefix(model_paths: dict[str, Path]) -> None:
    # A window cut mid-text must not gain the "▁" that only the text's start gets.
    for name in ("mistral-7b-v0.1", "bpe-default", "bpe-no-dummy"):
        text = "Hello world. Tokens everywhere."
        edits = [*typing(text, 6, "big "), (0, 0, " "), (0, 1, ""), (0, 5, ""), (0, 0, "x")]
        run_edits(model_paths[name], text, edits)


def test_remove_extra_whitespaces(model_paths: dict[str, Path]) -> None:
    # Runs of spaces collapse, leading and trailing ones vanish: a window's edge spaces must not.
    text = "one two  three   four"
    end = len(text)
    edits = [
        *typing(text, 3, "   "),
        (0, 0, "   "),
        (0, 3, ""),
        (end + 3, end + 3, "    "),
        *backspacing(end + 7, 4),
        (0, 0, " \u3000 "),
        (0, 3, ""),
        (4, 4, "\t\t"),
        (end + 5, end + 5, " x"),
    ]
    for name in ("bpe-default", "bpe-suffix", "bpe-nfkc"):
        run_edits(model_paths[name], text, edits)


def test_remove_extra_whitespaces_trailing_run_comes_back(model_paths: dict[str, Path]) -> None:
    # Trailing space symbols (even literal "▁") are stripped; typing after them restores them.
    text = "abc" + "\u2581" * 30 + "   "
    edits = [(len(text), len(text), "x"), (len(text), len(text) + 1, ""), (3, 3, " ")]
    run_edits(model_paths["bpe-default"], text, edits)
    run_edits(model_paths["bpe-suffix"], text, edits)
    # A deleted control character and a space end the text: the space stays trailing after text
    # is typed before it (found by the deep fuzzing run).
    for name in ("bpe-default", "bpe-suffix"):
        run_edits(model_paths[name], "\x1f ", [(0, 0, "The quick brown fox. "), (0, 4, "")])


def test_nmt_nfkc_rules_spanning_several_characters(model_paths: dict[str, Path]) -> None:
    # e + combining acute composes to é; ﬁ expands to fi; typing splits and joins such matches.
    text = "cafe resume ﬁnance ①"
    edits = [
        (4, 4, "\u0301"),
        (4, 5, ""),
        (4, 4, "\u0301\u0301"),
        (12, 13, "ﬁ"),
        (13, 13, "\u0308"),
    ]
    for name in ("bpe-default", "bpe-nfkc", "bpe-nfkc-cf"):
        run_edits(model_paths[name], text, edits)


def test_custom_rules(model_paths: dict[str, Path]) -> None:
    # Rules "ab" -> X and "abc" -> Y: typing a, b, c changes an earlier match; "x y" spans a space.
    text = "zz ab zz x y zz"
    edits = [*typing(text, 2, "abc"), (5, 5, "c"), (9, 10, ""), (0, 0, "ß--"), (3, 3, "\u200b")]
    run_edits(model_paths["bpe-custom-rules"], text, edits)


def test_treat_whitespace_as_suffix(model_paths: dict[str, Path]) -> None:
    text = "words end with the space"
    edits = [*typing(text, len(text), " more"), (0, 5, ""), (0, len(text), ""), (0, 0, "a ")]
    for name in ("bpe-suffix", "bpe-suffix-keep-ws"):
        run_edits(model_paths[name], text, edits)


@pytest.mark.parametrize("name", ["mistral-7b-v0.1", "llama-2", "bpe-byte-fallback", "hand-user"])
def test_byte_fallback_window_never_splits_a_character(
    model_paths: dict[str, Path], name: str
) -> None:
    # 😀 and 😁 share three of four bytes; a window edge inside either would compare the wrong
    # bytes. Every byte token of one character stays in one window.
    text = "a😀b😀😀c"
    edits = [(1, 2, "😁"), (4, 4, "😁"), (5, 6, ""), (3, 3, "\U0001f9d1\u200d\U0001f4bb")]
    doc = run_edits(model_paths[name], text, edits)
    # A character's bytes: one lead token carrying it, continuation tokens of width zero.
    model = doc.model
    for k in range(len(doc)):
        tid = doc.token_id(k)
        start, end = doc.token_span(k)
        if model.vocab.flags[tid] & FLAG_CONTINUATION:
            assert start == end
        elif model.vocab.flags[tid] & FLAG_BYTE:
            assert end == start + 1


def test_unknown_characters_fuse_into_one_unk(model_paths: dict[str, Path]) -> None:
    path = model_paths["bpe-default"]
    sp = spm.SentencePieceProcessor(model_file=str(path))
    text = "snow ☃☃ man"
    edits = [(6, 6, "☃"), (5, 5, "☃"), (7, 8, ""), (5, 8, "☃x☃")]
    doc = run_edits(path, text, edits)
    unk = sp.unk_id()
    runs = [(doc.token_span(k)) for k in range(len(doc)) if doc.token_id(k) == unk]
    assert runs == [(5, 6), (7, 8)]
    # A run of several unknown characters is one token spanning all of them.
    doc.edit(5, 8, "☃☃☃☃")
    assert [doc.token_span(k) for k in range(len(doc)) if doc.token_id(k) == unk] == [(5, 9)]
    assert doc.ids() == sp.encode(doc.text)


def test_user_defined_pieces_reach_past_window_edges(model_paths: dict[str, Path]) -> None:
    # "[REFERENCE_DOC_1]" typed piece by piece: its match starts long before the edit and ends
    # after it; "ab"/"aba" overlap; the window's first and last tokens can look unchanged.
    text = "x [RE y FERENCE_DOC_1] z ab a <tool"
    edits = [
        (5, 7, ""),  # "[RE" and "FERENCE_DOC_1]" now touch
        (3, 3, "Q"),
        (3, 4, ""),
        (len(text) - 2, len(text) - 2, "b"),
        (25, 25, "ab"),
        (len(text) - 1, len(text) - 1, ">"),
    ]
    for name in ("hand-user", "bpe-user-defined"):
        run_edits(model_paths[name], text, edits)


def test_unused_pieces_with_one_split_stay_incremental(model_paths: dict[str, Path]) -> None:
    model = load_model(model_paths["hand-unused-local"])
    assert model.incremental
    run_edits(
        model_paths["hand-unused-local"], "abcd xyz abcd", [(4, 4, "ab"), (0, 2, ""), (6, 6, "c")]
    )


def test_window_edge_inside_a_resplit_unused_piece(tmp_path: Path) -> None:
    # "ac" is UNUSED and formed one way only. In "▁cbaccac" both "ac" merge (score -4) before
    # "cc" (-4.5) and are re-split at the end: "a", "c" are tokens but not boundaries of the
    # merges. After "b" -> "a", a window whose edge sat between that "a" and "c" matched the old
    # tokens at its edge, yet the whole text merges "cc" there: ▁ c aa cc a c. Edges must sit
    # between merge symbols.
    path = modelkit.build(
        tmp_path / "resplit.model",
        [
            *modelkit.chars("abc\u2581"),
            ("aa", -2.0, NORMAL),
            ("ac", -4.0, UNUSED),
            ("cc", -4.5, NORMAL),
        ],
    )
    model = load_model(path)
    assert model.incremental and model.family.keeps_joins
    run_edits(path, "cbaccac", [(1, 2, "a")])
    doc = run_edits(path, "cbaccac " * 600, [(1, 2, "a"), (2400, 2401, "a"), (9, 9, "ca")])
    sp = spm.SentencePieceProcessor(model_file=str(path))
    for start, end in ((1, 4700), (3, 4203), (5, len(doc.text) - 2)):
        assert doc.encode_range(start, end) == sp.encode(doc.text[start:end])


def test_unused_pieces_whose_split_is_global_re_encode(model_paths: dict[str, Path]) -> None:
    # SentencePiece re-splits a merged UNUSED piece with the pair last pushed for it anywhere in
    # the text. This model and edit show it: windowing gives the wrong answer, so the model is
    # re-encoded whole, and says so.
    path = model_paths["hand-unused-random-46"]
    sp = spm.SentencePieceProcessor(model_file=str(path))
    text, edit = "adacadababadcdbc", (7, 8, "c")
    model = load_model(path)
    assert not model.incremental
    assert "UNUSED" in model.mode_note
    run_edits(path, text, [edit])
    # Forcing the window algorithm on this model gives a different (wrong) answer.
    model.family.incremental = True
    doc = Document(model, text)
    doc.edit(*edit)
    assert doc.ids() != sp.encode(doc.text)


def test_control_pieces_are_plain_text(model_paths: dict[str, Path]) -> None:
    text = "say <s> and </s> to <unk>"
    edits = [*typing(text, 4, "<s>"), (0, 0, "<s"), (2, 2, ">")]
    for name in ("mistral-7b-v0.1", "bpe-control", "hand-control-text"):
        run_edits(model_paths[name], text, edits)


def test_tied_scores(model_paths: dict[str, Path]) -> None:
    # Every merge scores the same: SentencePiece merges leftmost first, so inserting a letter can
    # flip the pairing of everything to its right.
    text = "abcdabcd aaaa bcd xyabcd"
    edits = [(0, 0, "a"), (5, 5, "b"), (0, 1, ""), (9, 9, "a"), (len(text), len(text), "abc")]
    run_edits(model_paths["hand-tied"], text, edits)


def test_edge_tokens_compared_by_position_and_length(model_paths: dict[str, Path]) -> None:
    # Two <unk> tokens have the same id but cover different runs: comparing ids alone would take
    # one for the other.
    path = model_paths["bpe-default"]
    doc = Document(load_model(path), "x ☃☃ y")
    unk_k = next(k for k in range(len(doc)) if doc.token_id(k) == doc.model.unk_id)
    assert doc.token_span(unk_k) == (2, 4)
    near = Neighborhood(doc.toks, 0, len(doc))
    unk = [int(doc.model.unk_id)]
    shorter = TokenRun(vec[i32](unk), vec[i32]([1]), vec[u8]())
    assert not near.left_edge_holds(shorter, unk_k)
    assert not near.right_edge_holds(shorter, unk_k + 1)
    same = TokenRun(vec[i32](unk), vec[i32]([2]), vec[u8]())
    assert near.left_edge_holds(same, unk_k)
    assert near.right_edge_holds(same, unk_k + 1)


@pytest.mark.parametrize(
    "name",
    [
        "unigram",
        "unigram-1000",
        "unigram-no-split",
        "unigram-suffix-nfkc-cf",
        "unigram-byte-fallback-digits",
        "char",
        "word",
    ],
)
def test_other_model_types_load_and_stay_exact(
    model_paths: dict[str, Path], name: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="tokenline.core"):
        model = load_model(model_paths[name])
    assert not model.incremental
    assert model.model_type in model.mode_note
    assert any("re-encodes the whole text" in r.getMessage() for r in caplog.records)
    text = "The cat sat on the mat. 中文"
    run_edits(model_paths[name], text, [*typing(text, 4, "big "), (0, 4, ""), (3, 3, " \n")])


def test_unigram_tokens_depend_on_everything_before_them(
    model_paths: dict[str, Path], botchan: str
) -> None:
    # Why unigram models are re-encoded whole although no piece crosses a whitespace segment:
    # SentencePiece sums a path's scores in 32-bit floats, so deep into a long text a near tie
    # inside one segment is decided by the rounding of all the text before it. Encoded alone,
    # some segments of this text come out otherwise than inside it.
    path = model_paths["unigram-1000"]
    model = load_model(path)
    assert not model.incremental and model.family.segmenter is None
    sp = spm.SentencePieceProcessor(model_file=str(path))
    normalized = sp.normalize((botchan * 4)[:1_000_000])
    assert isinstance(model.family, SentencePieceFamily)
    window = model.family.sp_window
    whole = window.encode(normalized)
    segments = re.findall("\u2581*[^\u2581]+|\u2581+", normalized)
    alone = [i for ids in window.encode(segments) for i in ids]
    assert alone != whole
    assert whole == sp.encode((botchan * 4)[:1_000_000])


def test_bpe_segments_open_from_the_cache(model_paths: dict[str, Path]) -> None:
    # Mistral's pieces never hold "▁" after another character: documents open by segments,
    # and a second document of the same words is all cache hits.
    model = load_model(model_paths["mistral-7b-v0.1"])
    assert model.family.segmenter is not None
    assert load_model(model_paths["bpe-no-split"]).family.segmenter is None
    text = "Tokens repeat, words repeat: the cache sees most of them again. " * 50
    model.family.cache.clear()
    first = Document(model, text)
    misses = model.family.cache.misses
    second = Document(model, text + text)
    assert model.family.cache.misses == misses
    sp = spm.SentencePieceProcessor(model_file=str(model_paths["mistral-7b-v0.1"]))
    assert first.ids() == sp.encode(text)
    assert second.ids() == sp.encode(text + text)
    # A selection count looks its segments up too: only the two it cuts mid-word are new.
    misses = model.family.cache.misses
    assert second.count(5, 300) == len(sp.encode((text + text)[5:300]))
    assert model.family.cache.misses - misses <= 2


@pytest.mark.parametrize(
    ("suffix", "pieces", "segments"),
    [
        (False, ["▁ab", "ab"], True),  # "▁" only where a segment begins
        (False, ["▁ab", "a▁b"], False),  # a piece across a segment start
        (False, ["▁▁a"], True),  # a run of "▁" begins one segment
        (True, ["ab▁", "ab"], True),
        (True, ["ab▁", "a▁b"], False),
        (True, ["a▁▁"], True),
    ],
)
def test_whitespace_segments_only_when_no_piece_crosses_one(
    tmp_path: Path, suffix: bool, pieces: list[str], segments: bool
) -> None:
    rows = [*modelkit.chars("ab▁"), *((p, -1.0 - i, modelkit.NORMAL) for i, p in enumerate(pieces))]
    path = modelkit.build(tmp_path / "m.model", rows, treat_whitespace_as_suffix=suffix)
    model = load_model(path)
    assert model.incremental
    assert (model.family.segmenter is not None) == segments
    text = "ab a b  ab"
    run_edits(path, text, [(2, 3, ""), (0, 0, " "), (4, 4, "b a")])
