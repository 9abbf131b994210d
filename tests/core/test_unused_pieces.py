"""Minimal cases found by the zoo (test_zoo): each is one way a window's tokens differ from the
whole text's, shrunk to a model of a few pieces, a short text and one edit.

SentencePiece's BPE (bpe_model.cc) merges an UNUSED piece like any other and may merge it further;
only a symbol still UNUSED at the end is re-split, recursively, through `rev_merge`. The tokens of
that re-split are not symbols of the merge: a window whose edge token equals the old token there
can still have its edge inside a merged UNUSED symbol, and then the merges at the edge differ.
Each docstring says which merge the whole text makes and the window does not.
"""

from __future__ import annotations

from pathlib import Path

import sentencepiece as spm

from tests.core import modelkit
from tests.core.modelkit import CONTROL, NORMAL, UNUSED, USER_DEFINED, chars
from tests.core.test_hard_cases import run_edits, typing
from tokenline.core import Document, load_model
from tokenline.core.document import DIRECT_COUNT_LIMIT


def encoded(path: Path, text: str) -> list[str]:
    sp = spm.SentencePieceProcessor(model_file=str(path))
    pieces: list[str] = sp.encode(text, out_type=str)
    return pieces


def right_edge_model(tmp_path: Path) -> Path:
    # "bc" (UNUSED) outranks "cb": in "bcb" the first two letters merge, then are re-split.
    pieces = [*chars("bcx▁"), ("bc", -1.0, UNUSED), ("cb", -2.0, NORMAL)]
    return modelkit.build(tmp_path / "right-edge.model", pieces)


def test_window_right_edge_inside_merged_unused_piece(tmp_path: Path) -> None:
    """Old text "bcb": bc merges (UNUSED, re-split) -> b c b. Deleting the first b leaves "cb",
    which merges into cb. The window ends at the old token "c", equal and at the same place, but
    that c was inside the merged "bc": its merge with the following b was never tried."""
    path = right_edge_model(tmp_path)
    assert encoded(path, "bcb") == ["▁", "b", "c", "b"]
    assert encoded(path, "cb") == ["▁", "cb"]
    run_edits(path, "bcb", [(0, 1, "")])


def test_window_left_edge_inside_merged_unused_piece(tmp_path: Path) -> None:
    """Mirror image: "cb" (UNUSED) outranks "bc". "bcb" -> b [cb] -> b c b; deleting the last b
    leaves "bc", which merges. The window starts at the old "c", inside the merged "cb"."""
    pieces = [*chars("bc▁"), ("bc", -2.0, NORMAL), ("cb", -1.0, UNUSED)]
    path = modelkit.build(tmp_path / "left-edge.model", pieces)
    assert encoded(path, "bcb") == ["▁", "b", "c", "b"]
    run_edits(path, "bcb", [(2, 3, "")])


def test_unused_piece_merged_into_a_larger_piece(tmp_path: Path) -> None:
    """ "ba" is UNUSED but "aba" is NORMAL. In "baaba" the second "ba" merges, then a + ba -> aba;
    in the old "baba" both "ba" were re-split. Typing "a" at 1: the window's right edge token
    "b" (old position 3) equals the old one, but in the whole text it is inside "aba"."""
    pieces = [*chars("ab▁"), ("ba", -1.0, UNUSED), ("aba", -7.0, NORMAL)]
    path = modelkit.build(tmp_path / "larger.model", pieces, add_dummy_prefix=False)
    assert encoded(path, "baaba") == ["b", "a", "aba"]
    run_edits(path, "baba", [(1, 1, "a")])


def test_unused_piece_made_of_unused_pieces_with_byte_fallback(tmp_path: Path) -> None:
    """é is no piece (byte fallback). "écéd": éd merges (UNUSED), then c + éd -> céd (UNUSED,
    made of UNUSED), re-split twice -> é c é d, the é as bytes. The window cut after "c" keeps
    the old "éc" merge instead; the whole text never makes it, c being taken by céd."""
    pieces = [*chars("cd▁"), ("éd", 0.0, UNUSED), ("céd", -1.0, UNUSED), ("éc", -9.0, NORMAL)]
    path = modelkit.build(
        tmp_path / "nested.model", pieces, byte_fallback=True, add_dummy_prefix=False
    )
    assert encoded(path, "écéd") == ["<0xC3>", "<0xA9>", "c", "<0xC3>", "<0xA9>", "d"]
    run_edits(path, "ééd", [(1, 1, "c")])


def test_unused_piece_with_a_tied_score(tmp_path: Path) -> None:
    """ "ab" (UNUSED) and "bb" score the same: leftmost first, so in "abb" ab wins and is re-split
    -> a b b. Deleting the a leaves "bb", which merges; the window ends at the old first "b",
    which was inside the merged "ab"."""
    pieces = [*chars("ab▁"), ("ab", -1.0, UNUSED), ("bb", -1.0, NORMAL)]
    path = modelkit.build(tmp_path / "tied.model", pieces, add_dummy_prefix=False)
    assert encoded(path, "abb") == ["a", "b", "b"]
    run_edits(path, "abb", [(0, 1, "")])


def test_selection_edge_inside_merged_unused_piece(tmp_path: Path) -> None:
    """A long selection reuses the document's tokens in its middle. Document "b x…x cbc": the
    end merges b + c (UNUSED) -> re-split. The selection drops the last "c", so alone it ends in
    "cb", which merges; the selection's end window starts at the document's "b", inside the
    merged "bc", and sees no reason to widen."""
    path = right_edge_model(tmp_path)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    text = "b" + "x" * (DIRECT_COUNT_LIMIT + 100) + "cbc"
    doc = Document(load_model(path), text)
    assert doc.ids() == sp.encode(text)
    start, end = 1, len(text) - 1
    expected = sp.encode(text[start:end])
    assert sp.id_to_piece(expected[-1]) == "cb"
    assert doc.encode_range(start, end) == expected
    assert doc.count(start, end) == len(expected)


def test_dummy_prefix_without_whitespace_escaping(tmp_path: Path) -> None:
    """With escape_whitespaces off, SentencePiece's dummy prefix is a plain " ", not "▁"
    (normalizer.cc add_ws). The full encode gets it right; edits must too."""
    pieces = [*chars("ab ▁"), (" a", -1.0, NORMAL), ("▁a", -2.0, NORMAL)]
    path = modelkit.build(tmp_path / "no-escape.model", pieces, escape_whitespaces=False)
    assert encoded(path, "ab") == [" a", "b"]
    run_edits(path, "", [(0, 0, "a"), (1, 1, "b a"), (0, 1, "")])
    run_edits(path, "ba", [(0, 1, ""), (1, 1, "ba")])


def test_dummy_suffix_without_whitespace_escaping(tmp_path: Path) -> None:
    """The same with treat_whitespace_as_suffix: the dummy " " goes at the end of the text."""
    pieces = [*chars("ab ▁"), ("a ", -1.0, NORMAL), ("a▁", -2.0, NORMAL)]
    path = modelkit.build(
        tmp_path / "no-escape-suffix.model",
        pieces,
        escape_whitespaces=False,
        treat_whitespace_as_suffix=True,
    )
    assert encoded(path, "ba") == ["b", "a "]
    run_edits(path, "b", [(1, 1, "a"), (0, 0, "a b"), (4, 5, "")])


# -- read from bpe_model.cc, model_interface.cc and sentencepiece_processor.cc ----------------


def test_unknown_character_re_split_from_unused_fuses_with_next_unknown(tmp_path: Path) -> None:
    """Without byte fallback, a part of a re-split UNUSED piece that is no piece is <unk>, and
    PopulateSentencePieceText fuses it with an <unk> that follows: "xé☃" -> x, <unk>(é☃). The run
    reaches across the re-split, so edits on either side change it."""
    pieces = [*chars("ax▁"), ("xé", -1.0, UNUSED), ("é☃", -2.0, NORMAL)]
    path = modelkit.build(tmp_path / "unk-fuse.model", pieces, add_dummy_prefix=False)
    assert encoded(path, "xé☃") == ["x", "é☃"]  # the surface of one <unk>
    text = "a xé☃ a"
    run_edits(path, text, [(5, 5, "☃"), (2, 3, ""), (2, 2, "x"), (4, 4, "é"), (3, 4, "")])


def unused_char_model(tmp_path: Path, byte_fallback: bool) -> Path:
    # "a" is a one-character UNUSED piece; "ab" merges it away.
    pieces = [*chars("b▁"), ("a", -100.0, UNUSED), ("ab", -1.0, NORMAL), ("bb", -2.0, UNUSED)]
    name = f"unused-char-{byte_fallback}.model"
    return modelkit.build(tmp_path / name, pieces, byte_fallback=byte_fallback)


def test_unused_single_character_piece_is_unknown(tmp_path: Path) -> None:
    """A one-character UNUSED piece that survives the merges is in no rev_merge entry: the
    installed SentencePiece emits it as <unk>, fused with unknown neighbours (or as its bytes
    under byte fallback), never with its own id."""
    for byte_fallback in (False, True):
        path = unused_char_model(tmp_path, byte_fallback)
        if not byte_fallback:
            assert encoded(path, "☃a☃") == ["▁", "☃a☃"]  # one <unk>
        text = "a ab bb abb ☃a☃"
        edits = [*typing(text, 1, "abb"), (0, 1, ""), (5, 5, "a"), (3, 4, ""), (14, 15, "")]
        run_edits(path, text, edits)


def test_unused_single_character_in_a_long_segment_is_unknown(tmp_path: Path) -> None:
    """The same inside a stretch without spaces longer than the segment cache takes (64
    characters), which the core cuts finer at characters that begin a token: the lone "a" must
    still be <unk> (or bytes), as in a short text."""
    for byte_fallback in (False, True):
        path = unused_char_model(tmp_path, byte_fallback)
        sp = spm.SentencePieceProcessor(model_file=str(path))
        for text in ["b" * 70 + "a", "ba" * 40, "☃a" * 40, "a" * 70, "b" * 70 + "☃a☃"]:
            doc = Document(load_model(path), text)
            assert doc.ids() == sp.encode(text), (byte_fallback, text)
        run_edits(path, "b" * 70, [(70, 70, "a"), (35, 35, "☃a"), (0, 0, "a"), (1, 1, "b")])


def test_control_pieces_typed_as_text_inside_unused_merges(tmp_path: Path) -> None:
    """A control piece's text typed by the user is never a symbol of the merge (it is not in
    pieces_), even when its letters form an UNUSED piece around it."""
    pieces = [
        *chars("abc▁"),
        ("ab", -1.0, UNUSED),
        ("abc", -2.0, NORMAL),
        ("c", 0.0, CONTROL),
        ("ca", 0.0, CONTROL),
    ]
    pieces = [p for p in pieces if p != ("c", -100.0, NORMAL)]
    path = modelkit.build(tmp_path / "control.model", pieces)
    text = "abc cab ab"
    run_edits(path, text, [(2, 3, ""), (2, 2, "c"), (4, 4, "ca"), (0, 0, "c"), (9, 10, "")])


def test_user_defined_piece_freezes_a_letter_of_an_unused_merge(tmp_path: Path) -> None:
    """A USER_DEFINED piece is a frozen symbol: "ab" (UNUSED) cannot form across it, and typing
    next to it changes whether the user piece matches at all."""
    pieces = [
        *chars("abx▁"),
        ("ab", -1.0, UNUSED),
        ("abx", -2.0, NORMAL),
        ("bx", -3.0, NORMAL),
        ("xa", 0.0, USER_DEFINED),
    ]
    path = modelkit.build(tmp_path / "user.model", pieces)
    text = "abx xab abab"
    run_edits(path, text, [(3, 4, ""), (2, 3, ""), (4, 4, "x"), (0, 0, "x"), (8, 8, "x")])


def test_whitespace_as_suffix_with_unused_pieces(tmp_path: Path) -> None:
    """treat_whitespace_as_suffix puts the dummy "▁" at the end; an UNUSED "b▁" merges into
    "ab▁" only when an "a" comes before it."""
    pieces = [*chars("ab▁"), ("b▁", -1.0, UNUSED), ("ab▁", -2.0, NORMAL), ("▁a", -3.0, NORMAL)]
    path = modelkit.build(tmp_path / "suffix.model", pieces, treat_whitespace_as_suffix=True)
    text = "b ab b"
    run_edits(
        path, text, [(1, 1, "a"), (0, 0, "a"), (len(text) + 2, len(text) + 2, " "), (2, 3, "")]
    )


def test_remove_extra_whitespaces_with_unused_space_pieces(tmp_path: Path) -> None:
    """remove_extra_whitespaces collapses runs of spaces, so "▁▁" (UNUSED) forms only from a
    literal "▁" typed next to a space; dummy prefix and trailing removal move it."""
    pieces = [*chars("a▁"), ("▁▁", -1.0, UNUSED), ("a▁▁", -2.0, NORMAL), ("▁a", -3.0, NORMAL)]
    path = modelkit.build(tmp_path / "rmws.model", pieces, remove_extra_whitespaces=True)
    text = "a  ▁ a▁ ▁a"
    run_edits(path, text, [(1, 2, ""), (0, 0, "▁"), (3, 3, " "), (len(text), len(text), " ")])


def test_pieces_with_space_inside_merge_across_words(tmp_path: Path) -> None:
    """BPE's Encode never calls SplitIntoWords: a piece with "▁" inside ("a▁b", from training with
    split_by_whitespace off) merges across a space, and an UNUSED "▁b" inside it is re-split only
    when it survives."""
    pieces = [*chars("ab▁"), ("▁b", -1.0, UNUSED), ("a▁b", -2.0, NORMAL), ("a▁", -3.0, NORMAL)]
    path = modelkit.build(tmp_path / "space-inside.model", pieces, add_dummy_prefix=False)
    assert encoded(path, "a b") == ["a▁b"]
    assert encoded(path, "b b") == ["b", "▁", "b"]
    text = "a b b a b"
    run_edits(path, text, [(0, 1, "b"), (0, 1, "a"), (3, 3, "a"), (4, 5, ""), (6, 6, " ")])
