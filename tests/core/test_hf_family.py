"""Hugging Face tokenizer.json models: after every edit, Document.ids() equals the tokenizers
library's own encode, and token spans partition the text.

The files are trained here (tests/core/hfkit.py) in every configuration that changes how text is
normalized, pre-tokenized or merged; the judge is `Tokenizer.from_file` on the same file.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from tests.core import hfkit, metaspacegen
from tests.core.strategies import edit_ops, fragment
from tokenline.core import (
    TOKEN_BYTE,
    TOKEN_SPECIAL,
    TOKEN_UNKNOWN,
    TOKEN_WHITESPACE,
    Document,
    Model,
    ModelError,
    bundled_model_path,
    find_in_hf_cache,
    hf_cached_repos,
    load_model,
    pretokens,
)
from tokenline.core.hfbytelevel import HFByteLevelFamily
from tokenline.core.hfloader import load_hf_json
from tokenline.core.pretokenflags import INNER_PRETOKEN_CHARS, INNER_WIDE_CHARS
from tokenline.core.resolve import is_repo_id

PIECEWISE = sorted(hfkit.PIECEWISE)
# Byte-level models whose tokens of one character form one group. Not so NORMALIZED_PIECEWISE:
# where a normalizer makes several characters of one (NFD's "é", NFKC's "ﬁ"), each is a character
# of the normalized text, with tokens of its own (the first covering nothing of the original).
BYTE_LEVEL = [*PIECEWISE, "bl-gpt2-prefix-nfc"]
# Byte-level models that neither normalize nor insert: a token's length is the number of
# characters whose first byte it holds.
PLAIN_BYTE_LEVEL = PIECEWISE

HF_EXTRA = [
    *hfkit.SPECIALS,
    *hfkit.PLAIN_ADDED,
    "<tool>call</tool>",
    "12345678901234",
    "3,141,592.65",
    "2024-06-01T12:00:00Z",
    "CamelCaseIdentifierWithoutSpaces_and_snake_case",
    "x\r\ny\r\n",
    "'s 've 'LL",
    "Ａｂｃ ﬁ ½ ²",
    "İstanbul ǅ ß ΣΑΣ",
    "\u0301\u0301",
    # Around spaces: Prepend characters, marks, white space a normalizer makes, the marker.
    "\u0600 x \u0d4e y",
    "e\u0301 b q\u0301 c \u00a4 d",
    "a\u00a0 b\u3000 c\t d",
    "\u2581 \u2581\u2581x \u2581",
    "q\u200d b \u00a8 \u00b6 k",
    "``quoted'' Ça  va   ",
    "a\uff9e b a\U0001f3fd c \U0001f3fdx \u0e01\u0e33 d \u0301x \U0001f1fa\U0001f1f8 e",
    # Characters normalizers delete (at a text's start the library's offsets lose them).
    "\x1f\x1f\u00b6ab\x1f cd",
]
# GPT-2's table of printable stand-ins for bytes, reversed (written out independently of
# tokenline.core.hfloader's).
_PRINTABLE = [*range(33, 127), *range(161, 173), *range(174, 256)]
BYTE_DECODER = {
    chr(c): b
    for b, c in zip(
        _PRINTABLE + [b for b in range(256) if b not in _PRINTABLE],
        _PRINTABLE + list(range(256, 256 + 256 - len(_PRINTABLE))),
        strict=True,
    )
}
long_run = st.builds(
    lambda unit, n: unit * n,
    st.sampled_from(["a", "ab", " ", "\n", "\t", "中", "😀", "-", "1", "é", "👨\u200d👩\u200d👧"]),
    st.integers(15, 300),
)
hf_fragment = st.one_of(fragment, st.sampled_from(HF_EXTRA), long_run)


def hf_texts(max_fragments: int = 25) -> st.SearchStrategy[str]:
    return st.lists(hf_fragment, max_size=max_fragments).map("".join)


@st.composite
def hf_edit(draw: st.DrawFn, length: int) -> tuple[int, int, str]:
    """An edit from tests/core/strategies.py, its new text sometimes one of the fragments above
    (added tokens, digit groups, long runs)."""
    start, end, new = draw(edit_ops(length))
    if draw(st.integers(0, 3)) == 0:
        new = draw(hf_fragment)
    return start, end, new


class Judge:
    """A trained file: the model Tokenline loads and the tokenizers library's own Tokenizer."""

    def __init__(self, name: str, path: Path) -> None:
        self.name = name
        self.path = path
        self.ref = Tokenizer.from_file(str(path))
        self.model = load_model(path)
        self.added = set(self.ref.get_added_tokens_decoder())

    def chars_begun(self, token_id: int) -> int:
        """How many characters start in a token of a byte-level model (an independent count of
        its length: UTF-8 lead bytes of its bytes, or an added token's own characters)."""
        piece = self.ref.id_to_token(token_id)
        if token_id in self.added:
            return len(piece)
        raw = bytes(BYTE_DECODER[c] for c in piece)
        return sum(1 for b in raw if not 0x80 <= b < 0xC0)

    def ids(self, text: str) -> list[int]:
        ids: list[int] = self.ref.encode(text, add_special_tokens=False).ids
        return ids


@pytest.fixture(scope="session")
def hf_paths(tmp_path_factory: pytest.TempPathFactory, botchan: str) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("hf")
    return {name: hfkit.train(name, out, botchan) for name in hfkit.CONFIGS}


@pytest.fixture(scope="session")
def judges(hf_paths: dict[str, Path]) -> dict[str, Judge]:
    return {name: Judge(name, path) for name, path in hf_paths.items()}


def check_document(judge: Judge, doc: Document, text: str) -> None:
    """The document holds text, its ids are the reference's, its spans partition the text and
    each character split over byte-level tokens is one group."""
    assert doc.text == text
    expected = judge.ids(text)
    assert doc.ids() == expected
    spans = doc.spans(0, len(doc))
    if expected:
        assert spans[0] == 0 and spans[-1] == len(text)
        assert all(spans[i] == spans[i + 1] for i in range(1, len(spans) - 1, 2))
        assert all(spans[i] <= spans[i + 1] for i in range(0, len(spans), 2))
    if judge.name in PLAIN_BYTE_LEVEL:
        assert doc.engine.toks.lengths(0, len(doc)) == [judge.chars_begun(i) for i in expected]
    if judge.name in BYTE_LEVEL:
        offsets = judge.ref.encode(text, add_special_tokens=False).offsets
        for k in range(1, len(offsets)):
            if offsets[k] == offsets[k - 1] and offsets[k][0] < offsets[k][1]:
                assert doc.group(k)[0] < k, (k, offsets[k])


def check_selections(judge: Judge, doc: Document, data: st.DataObject) -> None:
    n = doc.length()
    for _ in range(data.draw(st.integers(1, 3), label="selections")):
        a = data.draw(st.integers(0, n), label="a")
        b = data.draw(st.integers(a, n), label="b")
        expected = judge.ids(doc.text[a:b])
        assert doc.count(a, b) == len(expected)
        assert doc.encode_range(a, b) == expected


def run_edits(judge: Judge, text: str, data: st.DataObject) -> None:
    doc = Document(judge.model, text)
    check_document(judge, doc, text)
    for _ in range(data.draw(st.integers(1, 20), label="steps")):
        start, end, new = data.draw(hf_edit(doc.length()), label="edit")
        text = text[:start] + new + text[end:]
        doc.edit(start, end, new)
        check_document(judge, doc, text)
    check_selections(judge, doc, data)


@pytest.mark.parametrize("name", list(hfkit.CONFIGS))
@given(text=hf_texts(), data=st.data())
def test_edits_match_the_reference(
    judges: dict[str, Judge], name: str, text: str, data: st.DataObject
) -> None:
    run_edits(judges[name], text, data)


@pytest.mark.parametrize("name", ["bl-gpt4", "llama-style", "wp-lower-chinese", "unigram"])
@given(data=st.data())
def test_edits_on_prose(
    judges: dict[str, Judge], botchan: str, name: str, data: st.DataObject
) -> None:
    start = data.draw(st.integers(0, len(botchan) - 2000), label="offset")
    run_edits(judges[name], botchan[start : start + 2000], data)


# -- generated Metaspace files: a fresh vocabulary per example -------------------------------

# Normalizers and pre-tokenizers of generated files Tokenline must cut windows under (with no
# added token holding the marker); the rest must re-encode whole.
WINDOWED_NORMALIZERS = {"none", "nfkc-lower", "t5", "albert", "custom-rules"}
WINDOWED_PRE = {"meta-always", "meta-first", "meta-never", "wsplit-meta"}


@given(seed=st.integers(0, 10**9), text=hf_texts(), data=st.data())
def test_generated_metaspace_files(
    tmp_path_factory: pytest.TempPathFactory,
    botchan: str,
    seed: int,
    text: str,
    data: st.DataObject,
) -> None:
    """Unigram and BPE files with random pieces, scores and merges, under every normalizer and
    Metaspace layout (metaspacegen): edits and selections match the library's encode, and the
    files Tokenline should cut into windows are incremental."""
    spec, cls = metaspacegen.generated(seed, botchan)
    path = tmp_path_factory.mktemp("zoo") / "tokenizer.json"
    path.write_text(spec, encoding="utf-8")
    judge = Judge(f"zoo-{seed}", path)
    kind, norm, pre = cls.split("/")
    added = json.loads(spec)["added_tokens"]
    windowed = (
        norm in WINDOWED_NORMALIZERS
        and pre in WINDOWED_PRE
        and "\u2581" not in "".join(a["content"] for a in added)
    )
    # Llama 2 style (tests/core/test_hf_bpe.py): BPE under Metaspace without split, with no
    # normalizer or Prepend + Replace, and no added token that holds the marker or is normalized
    # where the normalizer puts one in front (Metaspace would put one after it too).
    llama = (
        kind.startswith("bpe")
        and pre == "meta-nosplit"
        and norm in ("none", "prepend")
        and all(
            "\u2581" not in a["content"] and not (a["normalized"] and norm == "prepend")
            for a in added
        )
    )
    assert judge.model.incremental == (windowed or llama), cls
    run_edits(judge, text, data)


# Characters that test where a Metaspace window may start: white space of every kind, marks and
# characters that continue graphemes, Prepend ones, ones the rules in hfkit rewrite.
NEAR_SPACES = [" ", "  ", "a", "x", "k", "q", "\u00a4", "\u00b6", "\u00a8", "\u0600", "\u0301"]
NEAR_SPACES += ["\u00a0", "\u3000", "\t", "\n", "\u2581", "\uff9e", "\U0001f3fd", "\u0130"]
NEAR_SPACES += ["\u00df", "``", "''", "\u4e2d", "\u200d", "\u0e33", "\U0001f1fa", "<tool>", "\x1f"]
near_spaces = st.lists(st.sampled_from(NEAR_SPACES), max_size=40).map("".join)


@given(seed=st.integers(0, 10**9), text=near_spaces, data=st.data())
def test_a_cut_at_a_space_splits_the_encoding(
    judges: dict[str, Judge], botchan: str, seed: int, text: str, data: st.DataObject
) -> None:
    """The premise of windows cut at spaces, for the trained files and a generated one: at
    every place SpaceCuts allows, the library's encode of the text is its encode of the two
    sides, each alone."""
    spec, _ = metaspacegen.generated(seed, botchan)
    refs = [Tokenizer.from_str(spec)]
    cuts = [load_hf_json(spec).family]
    name = data.draw(st.sampled_from(sorted(hfkit.SPACE_WINDOWED)), label="trained")
    refs.append(judges[name].ref)
    cuts.append(judges[name].model.family)
    for ref, family in zip(refs, cuts, strict=True):
        spaces = getattr(family, "spaces", None)
        if spaces is None:
            continue
        whole = ref.encode(text, add_special_tokens=False).ids
        for p in range(len(text)):
            if spaces.cuts_at(text, p):
                left = ref.encode(text[:p], add_special_tokens=False).ids
                right = ref.encode(text[p:], add_special_tokens=False).ids
                assert whole == left + right, (p, text)


def test_the_metaspace_generator_reaches_every_kind(botchan: str) -> None:
    classes = [metaspacegen.generated(seed, botchan)[1].split("/") for seed in range(80)]
    for i, kinds in enumerate(
        (metaspacegen.MODELS, metaspacegen.NORMALIZERS, metaspacegen.PRE_TOKENIZERS)
    ):
        assert set(kinds) - {c[i] for c in classes} == set()


# Word parts, and parts of the added tokens <tool>, </tool> and [CLS] that edits can join.
SYLLABLES = ["un", "der", "stand", "ing", "the", "of", "x", "Ré", "中", "☃", "ab", "qu"]
SYLLABLES += ["<", "</", "too", "tool", "l>", ">", "[", "[CL", "CLS", "S]", "]"]
words = st.lists(
    st.tuples(
        st.lists(st.sampled_from(SYLLABLES), min_size=1, max_size=12).map("".join),
        st.sampled_from([" ", "  ", ".", ", ", "\n", "-", "'", "‽"]),
    ).map("".join),
    max_size=8,
).map("".join)


@pytest.mark.parametrize("name", [*sorted(hfkit.WORD_WINDOWED), "bl-gpt2", "bl-llama3"])
@settings(max_examples=max(200, settings().max_examples))
@given(text=words, data=st.data())
def test_edits_inside_long_words(
    judges: dict[str, Judge], name: str, text: str, data: st.DataObject
) -> None:
    """Words near WordPiece's longest (30 characters here, longer ones are one unknown token)
    edited in their middle: a window must never cut a word. For byte-level models: parts of
    added tokens joined and split by edits."""
    judge = judges[name]
    doc = Document(judge.model, text)
    for _ in range(data.draw(st.integers(1, 10), label="steps")):
        start = data.draw(st.integers(0, doc.length()), label="start")
        end = data.draw(st.integers(start, min(doc.length(), start + 3)), label="end")
        new = data.draw(
            st.one_of(words, st.lists(st.sampled_from(SYLLABLES), max_size=6).map("".join)),
            label="new",
        )
        text = text[:start] + new + text[end:]
        doc.edit(start, end, new)
        check_document(judge, doc, text)


@pytest.mark.parametrize("name", sorted(hfkit.WORD_WINDOWED))
def test_a_word_grown_past_the_longest_is_unknown(judges: dict[str, Judge], name: str) -> None:
    """26 characters in pieces; 7 more near its start make it one unknown token, which a window
    ending inside the word (at a piece that did not change) would not see."""
    judge = judges[name]
    text = "the " + "understanding" * 2 + " of it"
    doc = Document(judge.model, text)
    check_document(judge, doc, text)
    doc.edit(6, 6, "abcdefg")
    check_document(judge, doc, text[:6] + "abcdefg" + text[6:])
    assert judge.model.unk_id in doc.ids()


@pytest.mark.parametrize("name", [*sorted(hfkit.WORD_WINDOWED), *PIECEWISE])
def test_an_added_token_across_a_window_edge(judges: dict[str, Judge], name: str) -> None:
    """ "<tool>" completed by an edit after "tool", whose old word "tool" a window could start
    at: the added-token matcher, re-run across the edge, must see the "<" before it."""
    judge = judges[name]
    for text, (start, end, new) in [
        ("a <tool x", (7, 8, ">")),
        ("a </tool x", (8, 8, ">")),
        ("a [CLS x", (6, 6, "]")),
    ]:
        doc = Document(judge.model, text)
        doc.edit(start, end, new)
        check_document(judge, doc, text[:start] + new + text[end:])


@pytest.mark.parametrize("name", sorted(hfkit.WORD_WINDOWED | hfkit.SPACE_WINDOWED))
def test_word_windows_stay_small(judges: dict[str, Judge], botchan: str, name: str) -> None:
    """A WordPiece model with independent words, or a Metaspace model that splits, re-encodes
    a few words per edit, not the whole text, and counts long selections from windows at their
    two ends."""
    judge = judges[name]
    text = botchan[:20_000]
    doc = Document(judge.model, text)
    engine = doc.engine
    for at, new in ((10_000, "x"), (5_003, " Ünïcode 中文 [CLS] "), (19_990, "\n\n")):
        before = engine.stats.encoded_chars
        doc.edit(at, at + 1, new)
        text = text[:at] + new + text[at + 1 :]
        check_document(judge, doc, text)
        assert engine.stats.encoded_chars - before < 500
    before = engine.stats.encoded_chars
    assert doc.count(1234, 17_000) == len(judge.ids(text[1234:17_000]))
    assert engine.stats.encoded_chars - before < 500


# -- byte-level BPE edited piece by piece ------------------------------------------------------


@pytest.mark.parametrize("name", ["bl-gpt2", "bl-llama3", "bl-qwen2"])
def test_piece_windows_stay_small(judges: dict[str, Judge], botchan: str, name: str) -> None:
    """Edits in a long document re-encode a few pieces, also with an added token's text
    elsewhere in it, and long selections are counted from windows at their two ends; an edit
    next to an added token re-encodes the whole text (and stays exact)."""
    judge = judges[name]
    text = botchan[:20_000] + " <|endoftext|> " + botchan[20_000:24_000]
    doc = Document(judge.model, text)
    check_document(judge, doc, text)
    engine = doc.engine
    for at, new in ((10_000, "x"), (5_003, " Ünïcode 中文 😀 "), (19_900, "\n\n"), (23_000, "")):
        before = engine.stats.encoded_chars
        doc.edit(at, at + 1, new)
        text = text[:at] + new + text[at + 1 :]
        check_document(judge, doc, text)
        assert engine.stats.encoded_chars - before < 300, (at, new)
    before = engine.stats.encoded_chars
    assert doc.count(1234, 17_000) == len(judge.ids(text[1234:17_000]))
    assert engine.stats.encoded_chars - before < 300
    at = text.index("<|endoftext|>")
    doc.edit(at + 3, at + 4, "")  # no longer an added token
    text = text[: at + 3] + text[at + 4 :]
    check_document(judge, doc, text)
    doc.edit(at + 3, at + 3, "e")
    check_document(judge, doc, text[: at + 3] + "e" + text[at + 3 :])


@pytest.mark.parametrize("name", ["bl-gpt2", "bl-gpt2-ignore", "bl-llama3", "bl-tekken-ignore"])
@given(data=st.data())
def test_edits_inside_one_long_piece(
    judges: dict[str, Judge], name: str, data: st.DataObject
) -> None:
    """One piece of thousands of letters (or a run of one character): windows sit between its
    tokens, checked as BPE edges, the piece cut from its start."""
    judge = judges[name]
    rng = random.Random(data.draw(st.integers(0, 10**6), label="seed"))
    alphabet = data.draw(st.sampled_from(["abcdefghij", "a", "é", "ab", "z中", "the"]))
    body = "".join(rng.choice([alphabet, alphabet[:1]]) for _ in range(rng.choice([100, 2000])))
    text = f"x = {body} end"
    doc = Document(judge.model, text)
    for _ in range(data.draw(st.integers(1, 12), label="steps")):
        at = data.draw(st.integers(4, doc.length() - 4), label="at")
        cut = data.draw(st.integers(0, 3), label="cut")
        new = data.draw(st.sampled_from(["", "q", alphabet[:1], "xy", " ", "Q", "1", "'s", "<"]))
        text = text[:at] + new + text[at + cut :]
        doc.edit(at, at + cut, new)
        check_document(judge, doc, text)


@pytest.mark.parametrize("name", ["bl-gpt2", "bl-llama3"])
def test_an_edit_in_a_long_piece_encodes_a_window_of_it(
    judges: dict[str, Judge], name: str
) -> None:
    judge = judges[name]
    rng = random.Random(3)
    text = "x = " + "".join(rng.choice("abcdefgh") for _ in range(20_000)) + "\n"
    doc = Document(judge.model, text)
    before = doc.engine.stats.encoded_chars
    scanned = doc.engine.stats.scanned_chars
    for at in (5_000, 12_345, 19_990):
        doc.edit(at, at + 1, "q")
        text = text[:at] + "q" + text[at + 1 :]
    check_document(judge, doc, text)
    # Three windows of a few tokens each, not three BPEs of the 20,000-character piece; ASCII
    # letters into ASCII letters keep the piece one piece, so it is not even cut again.
    assert doc.engine.stats.encoded_chars - before < 300
    assert doc.engine.stats.scanned_chars - scanned < 300
    # Not ASCII: not known to keep the piece whole, so its window's pre-tokens are cut again,
    # from inside the piece to inside it (tokenline.core.runcuts), not from its start.
    doc.edit(10_000, 10_000, "é")
    check_document(judge, doc, text[:10_000] + "é" + text[10_000:])
    assert 0 < doc.engine.stats.scanned_chars - scanned < 300


def merged_differently(judge: Judge) -> list[str]:
    """Vocabulary pieces (as text) that the merges alone do not make one token: BPE with
    ignore_merges takes them whole as a piece, never as a part of a longer piece."""
    spec = json.loads(judge.path.read_text(encoding="utf-8"))
    spec["model"]["ignore_merges"] = False
    plain = Tokenizer.from_str(json.dumps(spec))
    out = []
    for piece, i in sorted(judge.ref.get_vocab(with_added_tokens=False).items()):
        text = bytes(BYTE_DECODER[c] for c in piece).decode("utf-8", errors="replace")
        if "\ufffd" in text or i in judge.added or len(text) < 2:
            continue
        merged = plain.encode(text, add_special_tokens=False).ids
        if merged != [i] and judge.ids(text) == [i]:
            out.append(text)
    return out


@pytest.mark.parametrize("name", sorted(hfkit.IGNORE_MERGES))
def test_a_part_of_a_long_piece_gets_the_merges_alone(judges: dict[str, Judge], name: str) -> None:
    """A long piece made of a vocabulary piece that merges would split, edited inside: the
    window's part must not be taken whole (the library does that only for a whole piece)."""
    judge = judges[name]
    found = [t for t in merged_differently(judge) if t.isalpha() and t.isascii()]
    assert found, "the trained vocabulary has no piece the merges split"
    spec = json.loads(judge.path.read_text(encoding="utf-8"))
    spec["model"]["ignore_merges"] = False
    plain = Tokenizer.from_str(json.dumps(spec))
    family = judge.model.family
    assert isinstance(family, HFByteLevelFamily)
    for unit in found:
        assert family.hf.pretoken(unit) == judge.ids(unit)
        assert family.hf.part(unit) == plain.encode(unit, add_special_tokens=False).ids
        assert family.hf.part(unit) != family.hf.pretoken(unit)
    rng = random.Random(7)
    for unit in found[:6]:
        text = "x " + unit * (200 // len(unit) + 1) + " y"
        doc = Document(judge.model, text)
        check_document(judge, doc, text)
        for _ in range(8):
            at = rng.randrange(3, len(text) - 3)
            new = rng.choice(["", unit, unit[:1], "x"])
            cut = rng.randrange(3)
            text = text[:at] + new + text[at + cut :]
            doc.edit(at, at + cut, new)
            check_document(judge, doc, text)


@pytest.mark.parametrize("name", sorted(hfkit.IGNORE_MERGES))
def test_a_long_piece_edited_into_a_vocabulary_piece(judges: dict[str, Judge], name: str) -> None:
    """A piece whose parts windows cut (longer than the cache keeps, or just past where edges
    inside a piece begin), edited inside until it is a piece of the vocabulary (which the
    library then takes whole), and back."""
    judge = judges[name]
    near_inner = [("a", INNER_PRETOKEN_CHARS + n) for n in (1, 3)]
    near_wide = [("é", INNER_WIDE_CHARS + n) for n in (1, 3)]
    for unit, n in (("a", 71), ("ab", 41), ("a", 69), *near_inner, *near_wide):
        for lead in ("", "x ", "x\n"):
            text = lead + unit * n + " y"
            doc = Document(judge.model, text)
            check_document(judge, doc, text)
            at = len(lead) + len(unit) * (n // 2)
            for new, cut in ((unit, 0), ("", len(unit)), ("", len(unit)), (unit * 2, 0)):
                text = text[:at] + new + text[at + cut :]
                doc.edit(at, at + cut, new)
                check_document(judge, doc, text)
    whole = judge.ref.token_to_id("a" * 70)
    doc = Document(judge.model, "a" * 71)
    doc.edit(30, 31, "")
    assert doc.ids() == [whole]
    for piece in ("a" * (INNER_PRETOKEN_CHARS + 2), "é" * (INNER_WIDE_CHARS + 2)):
        doc = Document(judge.model, piece + piece[:1])
        doc.edit(5, 6, "")
        assert len(judge.ids(piece)) == 1 and doc.ids() == judge.ids(piece)


def test_unknown_patterns_and_prefix_spaces_re_encode_whole(
    hf_paths: dict[str, Path], tmp_path: Path
) -> None:
    base = json.loads(hf_paths["bl-gpt4"].read_text(encoding="utf-8"))
    odd = json.loads(json.dumps(base))
    odd["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = r"\p{L}+(?=\s{3})|\S+|\s+"
    cl100k = json.loads(json.dumps(base))
    cl100k["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = pretokens.CL100K
    prefix = json.loads(json.dumps(base))
    prefix["pre_tokenizer"]["pretokenizers"][1]["add_prefix_space"] = True
    accents = json.loads(json.dumps(base))
    accents["normalizer"] = {"type": "StripAccents"}
    lstrip = json.loads(json.dumps(base))
    lstrip["added_tokens"][-1]["lstrip"] = True
    for name, spec in [("odd", odd), ("cl100k", cl100k), ("prefix", prefix), ("accents", accents)]:
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(spec), encoding="utf-8")
        model = load_model(path)
        assert not model.incremental and "re-encode whole unless" in model.mode_note, name
    path = tmp_path / "lstrip.json"
    path.write_text(json.dumps(lstrip), encoding="utf-8")
    judge = Judge("lstrip", path)
    assert not judge.model.incremental
    text = "a  <tool>b"
    doc = Document(judge.model, text)
    doc.edit(1, 1, " ")
    check_document(judge, doc, "a   <tool>b")


def test_a_split_that_keeps_only_its_matches_is_edited_by_pieces(
    hf_paths: dict[str, Path], tmp_path: Path, botchan: str
) -> None:
    """MiniMax writes its Split as Removed + invert: the gaps between matches are dropped, and a
    known pattern matches every character, so the pieces are Isolated's. A pattern that skips
    white space (CLIP's) loses characters that way, and re-encodes whole."""
    spec = json.loads(hf_paths["bl-gpt4"].read_text(encoding="utf-8"))
    split = spec["pre_tokenizer"]["pretokenizers"][0]
    split.update(behavior="Removed", invert=True)
    kept = tmp_path / "kept.json"
    kept.write_text(json.dumps(spec), encoding="utf-8")
    split["pattern"]["Regex"] = r"'s|'t|\p{L}+|\p{N}|[^\s\p{L}\p{N}]+"
    skips = tmp_path / "skips.json"
    skips.write_text(json.dumps(spec), encoding="utf-8")
    judge = Judge("kept", kept)
    assert judge.model.incremental and judge.model.mode_note == "incremental"
    rng = random.Random(5)
    text = botchan[:3000] + "  \n\n x 12345 ünïcode  "
    doc = Document(judge.model, text)
    for _ in range(40):
        start = rng.randrange(len(text))
        end = min(len(text), start + rng.randrange(4))
        new = rng.choice(["", " ", "  ", "\n", "a", "'s", "9", "é", "<tool>"])
        text = text[:start] + new + text[end:]
        doc.edit(start, end, new)
        check_document(judge, doc, text)
    model = load_model(skips)
    assert not model.incremental and "re-encode whole unless" in model.mode_note
    assert model.encode("a  b\n c") == Judge("skips", skips).ids("a  b\n c")


# -- what each kind of token is, and offset quirks ---------------------------------------------


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("bl-gpt2", "bpe (tokenizer.json)"),
        ("meta-first-split", "bpe (tokenizer.json)"),
        ("wp-cased-accents", "wordpiece (tokenizer.json)"),
        ("unigram", "unigram (tokenizer.json)"),
        ("wordlevel", "wordlevel (tokenizer.json)"),
        ("bl-gpt2-nfc", "bpe (tokenizer.json)"),
    ],
)
def test_model_type_and_mode(judges: dict[str, Judge], name: str, kind: str) -> None:
    model = judges[name].model
    assert model.model_type == kind
    windowed = hfkit.WORD_WINDOWED | hfkit.PIECEWISE | hfkit.SPACE_WINDOWED | hfkit.WORD_LEVEL
    if name in windowed | hfkit.NORMALIZED_PIECEWISE:
        assert model.incremental and model.mode_note == "incremental"
    else:
        assert not model.incremental and "re-encode whole" in model.mode_note
    assert model.name == name  # a tokenizer.json is named after its folder
    assert model.vocab_size == judges[name].ref.get_vocab_size(with_added_tokens=True)


def test_token_kinds(judges: dict[str, Judge]) -> None:
    model = judges["bl-gpt2"].model
    vocab = judges["bl-gpt2"].ref.get_vocab(with_added_tokens=True)
    assert model.token_kind(vocab["<|endoftext|>"]) == TOKEN_SPECIAL
    assert model.token_kind(vocab["<tool>"]) == 0  # added, not special
    assert model.token_kind(vocab["Ġ"]) == TOKEN_WHITESPACE
    assert model.token_kind(vocab["Ċ"]) == TOKEN_WHITESPACE  # "\n"
    assert model.token_kind(vocab["a"]) == 0
    assert model.token_kind(vocab["ä"]) == TOKEN_BYTE  # 0xE4: a lead byte alone
    assert model.piece(vocab["Ġ"]) == "Ġ"  # the token string is the display piece
    wp = judges["wp-lower-chinese"]
    unk = wp.ref.token_to_id("[UNK]")
    assert wp.model.token_kind(unk) == TOKEN_UNKNOWN | TOKEN_SPECIAL and wp.model.unk_id == unk
    meta = judges["meta-always-split"]
    assert meta.model.token_kind(meta.ref.token_to_id("▁")) == TOKEN_WHITESPACE
    llama = judges["llama-style"]
    assert llama.model.token_kind(llama.ref.token_to_id("<0xE4>")) == TOKEN_BYTE
    assert llama.model.token_kind(llama.ref.token_to_id("<0x41>")) == TOKEN_BYTE


@pytest.mark.parametrize("name", [*BYTE_LEVEL, "bl-gpt2-nfc", "bl-gpt2-nfd-lower", "llama-style"])
def test_a_split_character_is_one_group(judges: dict[str, Judge], name: str) -> None:
    text = "a 𝔘\u4e2d"  # characters the models have no single piece for
    doc = Document(judges[name].model, text)
    check_document(judges[name], doc, text)
    k = doc.token_at(2)
    first, end = doc.group(k)
    assert end - first >= 2
    assert doc.token_span(first)[0] == 2 and doc.token_span(end - 1)[1] == 3
    assert all(doc.model.token_kind(i) & TOKEN_BYTE for i in doc.ids_between(first, end))


def test_a_prepended_marker_holds_no_character(judges: dict[str, Judge]) -> None:
    """Metaspace's prepended "▁" and the first character share offsets; the character goes to
    its own token, the marker gets length 0."""
    judge = judges["meta-always-split"]
    for text in ("x", " x", "中"):
        doc = Document(judge.model, text)
        check_document(judge, doc, text)
        pieces = [doc.model.piece(i) for i in doc.ids()]
        assert pieces[0] == "▁"
        assert doc.token_span(0) == (0, 0 if text != " x" else 1)


def test_spaces_stay_in_the_tokens_that_hold_them(judges: dict[str, Judge]) -> None:
    """bl-gpt2's file has a ByteLevel post-processor that trims spaces off offsets ("Ġw" at
    (7, 8) in "hello  world"); the space stays in the token whose bytes hold it."""
    judge = judges["bl-gpt2"]
    doc = Document(judge.model, "hello  world")
    spans = doc.spans(0, len(doc))
    pieces = [doc.model.piece(i) for i in doc.ids()]
    starts = {p: spans[2 * i] for i, p in enumerate(pieces)}
    assert starts["Ġ"] == 5 and starts["Ġw"] == 6


def test_white_space_only_text_has_no_tokens(judges: dict[str, Judge]) -> None:
    judge = judges["wp-lower-chinese"]
    doc = Document(judge.model, "   \n\t ")
    assert doc.ids() == [] and doc.count(0, 3) == 0
    doc.edit(2, 2, "Hello")
    check_document(judge, doc, "  Hello \n\t ")
    first_end = judge.ref.encode(doc.text, add_special_tokens=False).offsets[0][1]
    assert doc.token_span(0) == (0, first_end)  # leading white space goes to the first token
    assert doc.token_span(len(doc) - 1)[1] == len(doc.text)  # trailing to the last
    doc.edit(2, 7, "")
    check_document(judge, doc, "   \n\t ")


def test_truncation_and_padding_in_the_file_are_ignored(
    hf_paths: dict[str, Path], tmp_path: Path
) -> None:
    spec = json.loads(hf_paths["bl-gpt2"].read_text(encoding="utf-8"))
    spec["truncation"] = {"direction": "Right", "max_length": 8, "strategy": "LongestFirst"}
    spec["truncation"]["stride"] = 0
    path = tmp_path / "truncating.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    text = "a fairly long sentence that has many more than eight tokens in it"
    whole = Tokenizer.from_file(str(path))
    whole.no_truncation()
    doc = Document(load_model(path), text)
    assert doc.ids() == whole.encode(text, add_special_tokens=False).ids
    assert len(doc) > 8


# -- finding and loading tokenizer.json files ---------------------------------------------------


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    (tmp_path / "hub").mkdir()
    return tmp_path / "hub"


def cached_snapshot(hub: Path, repo_id: str, files: dict[str, bytes]) -> Path:
    """A `main` snapshot of repo_id in the Hub cache at hub, holding files."""
    repo = hub / ("models--" + repo_id.replace("/", "--"))
    snapshot = repo / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    for name, data in files.items():
        (snapshot / name).write_bytes(data)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("abc123")
    return snapshot


def is_hf(model: Model) -> bool:
    return model.model_type.endswith("(tokenizer.json)")


def test_load_a_file_a_path_and_a_folder(hf_paths: dict[str, Path], tmp_path: Path) -> None:
    path = hf_paths["unigram"]
    assert is_hf(load_model(str(path))) and is_hf(load_model(path))
    folder_model = load_model(path.parent)
    assert is_hf(folder_model) and folder_model.path == str(path)
    assert folder_model.name == "unigram"
    relative = load_model("unigram/tokenizer.json", path.parent.parent)
    assert relative.path == str(path)
    renamed = tmp_path / "my-tok.json"
    renamed.write_bytes(path.read_bytes())
    assert load_model(renamed).name == "my-tok"


def test_a_folder_prefers_tokenizer_json(hf_paths: dict[str, Path], tmp_path: Path) -> None:
    sp = bundled_model_path().read_bytes()
    (tmp_path / "both").mkdir()
    (tmp_path / "both" / "tokenizer.model").write_bytes(sp)
    (tmp_path / "both" / "tokenizer.json").write_bytes(hf_paths["bl-gpt2"].read_bytes())
    assert load_model(tmp_path / "both").path == str(tmp_path / "both" / "tokenizer.json")
    (tmp_path / "sp").mkdir()
    (tmp_path / "sp" / "tokenizer.model").write_bytes(sp)
    model = load_model(str(tmp_path / "sp"))
    assert model.model_type == "bpe" and model.path == str(tmp_path / "sp" / "tokenizer.model")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelError, match="it is a directory"):
        load_model(tmp_path / "empty")


def test_a_cached_repo_prefers_tokenizer_json(hf_paths: dict[str, Path], hub: Path) -> None:
    sp = bundled_model_path().read_bytes()
    tj = hf_paths["wp-cased-accents"].read_bytes()
    both = cached_snapshot(hub, "acme/both", {"tokenizer.model": sp, "tokenizer.json": tj})
    only_sp = cached_snapshot(hub, "acme/sp", {"tokenizer.model": sp})
    only_json = cached_snapshot(hub, "acme/hf", {"tokenizer.json": tj, "vocab.txt": b"x\n"})
    assert find_in_hf_cache("acme/both") == both / "tokenizer.json"
    model = load_model("acme/both")
    assert model.name == "acme/both" and model.model_type == "wordpiece (tokenizer.json)"
    assert load_model("acme/sp").model_type == "bpe"
    assert load_model("acme/hf").path == str(only_json / "tokenizer.json")
    assert hf_cached_repos() == [
        ("acme/both", both / "tokenizer.json"),
        ("acme/hf", only_json / "tokenizer.json"),
        ("acme/sp", only_sp / "tokenizer.model"),
    ]


def test_json_paths_are_not_repo_ids(tmp_path: Path) -> None:
    assert not is_repo_id("acme/tokenizer.json") and is_repo_id("acme/tokenizer")
    assert not is_repo_id("acme/o200k_base.tiktoken") and not is_repo_id("acme/Tok.JSON")
    with pytest.raises(ModelError, match="no such file"):
        load_model("acme/tokenizer.json", tmp_path)


def test_a_tokenizer_json_under_any_name_is_one(hf_paths: dict[str, Path], tmp_path: Path) -> None:
    data = hf_paths["wp-cased-accents"].read_bytes()
    for name in ("Mine.JSON", "tekken_like.json", "tokenizer.model", "no-suffix"):
        (tmp_path / name).write_bytes(data)
        model = load_model(tmp_path / name)
        assert model.model_type == "wordpiece (tokenizer.json)", name


BAD_FILES = {
    "empty.json": (b"", "the file is empty"),
    "corrupt.json": (b'{"model": {"type": "BPE", ', "not valid JSON (line 1"),
    "binary.json": (b"\xff\xfe\x00{", "not UTF-8"),
    "list.json": (b"[1, 2]", 'no "model"'),
    "config.json": (b'{"architectures": ["X"]}', "nor a Mistral Tekken file"),
    "typeless.json": (b'{"model": {"vocab": {}}}', "tokenizers rejects it"),
    "typenumber.json": (b'{"model": {"type": 3, "vocab": {}}}', "unsupported tokenizer.json model"),
    "odd.json": (b'{"model": {"type": "Sentencepiece"}}', "unsupported tokenizer.json model"),
    "broken.json": (b'{"model": {"type": "BPE", "vocab": 3}}', "tokenizers rejects it"),
    "badmerge.json": (
        b'{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}}',
        "tokenizers rejects it",
    ),
}


@pytest.mark.parametrize("name", list(BAD_FILES))
def test_bad_files_give_a_clear_error(tmp_path: Path, name: str) -> None:
    data, reason = BAD_FILES[name]
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(ModelError) as caught:
        load_model(path)
    assert caught.value.path == str(path)
    assert reason in caught.value.reason
    assert str(path) in str(caught.value)


def test_cut_files_never_crash(hf_paths: dict[str, Path], tmp_path: Path) -> None:
    data = hf_paths["bl-gpt4"].read_bytes()
    path = tmp_path / "cut.json"
    for cut in range(0, len(data), max(1, len(data) // 40)):
        path.write_bytes(data[:cut])
        with pytest.raises(ModelError) as caught:
            load_model(path)
        assert caught.value.path == str(path)


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        # Metaspace's marker is a space (the prepended one too), fallback bytes are bytes.
        ("unigram-byte-fallback", "Hello wörld ¤", " Hello wörld ¤"),
        ("llama-style", "Hello wörld ¤", " Hello wörld ¤"),
        # WordPiece's "##" is not text: the pieces of a word join without it.
        ("wp-lower-chinese", "Unaffable understanding", "unaffableunderstanding"),
    ],
)
def test_token_bytes_are_the_text(
    judges: dict[str, Judge], name: str, text: str, expected: str
) -> None:
    judge = judges[name]
    ids = judge.ids(text)
    if name == "unigram-byte-fallback":
        assert any(judge.model.family.vocab.is_byte(i) for i in ids)  # "¤" falls back
    joined = b"".join(judge.model.family.token_bytes(i) for i in ids)
    assert joined == expected.encode("utf-8")


def _strip(left: bool) -> dict[str, Any]:
    return {"type": "Strip", "strip_left": left, "strip_right": True}


def _replace(kind: str, pattern: str, content: str) -> dict[str, Any]:
    return {"type": "Replace", "pattern": {kind: pattern}, "content": content}


def _added(content: str, **loose: bool) -> dict[str, Any]:
    fields = {"single_word": False, "lstrip": False, "rstrip": False, **loose}
    return {"id": 999, "content": content, "normalized": True, "special": False, **fields}


@pytest.mark.parametrize(
    ("change", "windowed"),
    [
        ({"normalizer": _strip(left=False)}, True),
        ({"normalizer": _replace("String", "``", '"')}, True),
        ({"normalizer": _replace("Regex", " {2,}", "\u2581")}, True),
        ({"added_tokens": [_added("<tool>")]}, True),
        # A left strip, or a replacement of spaces, changes what a window starting at a space is.
        ({"normalizer": _strip(left=True)}, False),
        ({"normalizer": _replace("String", " ", "\u2581")}, False),
        ({"normalizer": _replace("String", "a ", "b")}, False),
        ({"normalizer": _replace("String", "ab", "  ")}, False),
        ({"normalizer": _replace("Regex", "\\s+", " ")}, False),
        ({"normalizer": {"type": "Prepend", "prepend": "\u2581"}}, False),
        (
            {
                "normalizer": {
                    "type": "BertNormalizer",
                    "clean_text": True,
                    "handle_chinese_chars": True,
                    "strip_accents": None,
                    "lowercase": True,
                }
            },
            False,
        ),
        # Added tokens that hold a space or strip one reach across a cut.
        ({"added_tokens": [_added("a b")]}, False),
        ({"added_tokens": [_added("<tool>", lstrip=True)]}, False),
        (
            {
                "pre_tokenizer": {
                    "type": "Metaspace",
                    "replacement": "\u2581",
                    "prepend_scheme": "always",
                    "split": False,
                }
            },
            False,
        ),
    ],
)
def test_which_metaspace_files_get_windows_at_spaces(
    hf_paths: dict[str, Path], change: dict[str, Any], windowed: bool
) -> None:
    spec = json.loads(hf_paths["unigram"].read_text(encoding="utf-8"))
    spec.update(change)
    if "added_tokens" in change:
        spec["added_tokens"][0]["id"] = len(spec["model"]["vocab"])
    model = load_hf_json(json.dumps(spec))
    assert model.incremental == windowed
    if not windowed:
        assert "Metaspace splits at spaces" in model.mode_note


@pytest.mark.parametrize("name", ["unigram-t5", "meta-always-split"])
def test_an_edit_in_a_long_metaspace_piece_encodes_it_once(
    judges: dict[str, Judge], name: str
) -> None:
    """A piece with no space in it is encoded whole, once per edit: its cuts prove the window,
    which no longer grows until it holds the pieces either side (that encoded it ~15 times)."""
    judge = judges[name]
    rng = random.Random(7)
    piece = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(20_000))
    text = "some words before " + piece + " and after it"
    doc = Document(judge.model, text)
    engine = doc.engine
    for at in (10_000, 18, 20_017):
        before = engine.stats.encoded_chars
        doc.edit(at, at + 1, "Q")
        text = text[:at] + "Q" + text[at + 1 :]
        check_document(judge, doc, text)
        assert engine.stats.encoded_chars - before < 20_100


@pytest.mark.parametrize("name", ["unigram-t5", "unigram-albert", "unigram-wsplit-custom"])
def test_characters_deleted_at_the_start_keep_tokens_in_place(
    judges: dict[str, Judge], name: str
) -> None:
    """The library's offsets lose characters its normalizer deletes at a text's start ("\x1f"
    for the NFKC rules, "¶" for the custom ones): tokens still lie where their text is, and
    edits after them stay exact (a generated file found this: a space token went missing)."""
    judge = judges[name]
    text = "\x1f\x1f\u00b6ab cd ef gh"
    doc = Document(judge.model, text)
    check_document(judge, doc, text)
    starts = doc.spans(0, len(doc))[::2]
    assert text.index(" ef") in starts and text.index(" gh") in starts
    for start, end, new in [(9, 9, "0"), (0, 0, "\x1f"), (12, 13, ""), (2, 2, "x <tool>\x1f")]:
        # The last puts them after an added token, where the library starts a new stretch.
        doc.edit(start, end, new)
        text = text[:start] + new + text[end:]
        check_document(judge, doc, text)
    for start, end, new in [(20, 20, "y"), (len(text), len(text), " z"), (5, 6, "")]:
        doc.edit(start, end, new)
        text = text[:start] + new + text[end:]
        check_document(judge, doc, text)


@pytest.mark.parametrize("name", ["unigram-t5", "unigram-nfkc-lower-replace"])
def test_stripped_white_space_at_the_end_stays_with_the_last_token(
    judges: dict[str, Judge], name: str
) -> None:
    """A window of only the spaces a right strip removes has no token of its own: the whole
    text's last word holds them, so the window starts before that word (fuzzing found spans
    that stopped short of the text's end)."""
    judge = judges[name]
    text = ""
    doc = Document(judge.model, text)
    for start, end, new in [(0, 0, "x"), (0, 0, "aa "), (3, 4, ""), (3, 3, "   "), (6, 6, "b")]:
        doc.edit(start, end, new)
        text = text[:start] + new + text[end:]
        check_document(judge, doc, text)


def test_unknown_characters_and_a_byte_order_mark_keep_windows_small(
    judges: dict[str, Judge], botchan: str
) -> None:
    """The model's unknown token shares an added token's id; with a deleted byte-order mark at
    the start that once made every edit re-encode the whole text."""
    judge = judges["unigram-t5"]
    text = "\ufeff" + botchan[1:5_000] + " \U0001d11e\U0001d11e " + botchan[5_000:10_000]
    doc = Document(judge.model, text)
    assert judge.model.unk_id in doc.ids() and judge.ref.normalizer.normalize_str("\ufeff") == ""
    engine = doc.engine
    for at in (2_000, 7_000):
        before = engine.stats.encoded_chars
        doc.edit(at, at + 1, "x")
        text = text[:at] + "x" + text[at + 1 :]
        check_document(judge, doc, text)
        assert engine.stats.encoded_chars - before < 500
