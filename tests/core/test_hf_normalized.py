"""tokenizer.json files kept in step through a Unicode normalizer: byte-level BPE after NFC, NFD,
NFKC, NFKD, Lowercase or a Sequence of them (GPT-NeoX-20B's file and trained layouts), and
WordLevel files. After every edit Document.ids() equals the tokenizers library's own encode, with
texts full of what normalizers change: combining marks in and out of order, precomposed and
decomposed pairs, Hangul jamo, letters whose case mapping is special (Σ, İ, ß, ǅ), compatibility
characters, characters the two sides' Unicode tables disagree on, added tokens and runs of them.

GPT-NeoX-20B's file: EleutherAI's tokenizer, Apache-2.0, as committed in BlinkDL/RWKV-LM
(`RWKV-v4/20B_tokenizer.json`, 524481d5099b38d9bc8ef1e89209161b86c8011b).
"""

from __future__ import annotations

import json
import random
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Tokenizer, normalizers

from tests.conftest import ROOT
from tests.core import hfkit
from tests.core.strategies import edit_ops
from tests.core.test_hf_family import Judge, check_document, check_selections
from tokenline.core import Document, load_model
from tokenline.core.hfloader import load_hf_json
from tokenline.core.hfnormbytelevel import NormalizedByteLevelFamily
from tokenline.core.hfnormloader import NOT_NORMALIZER, NOT_RAW, NOT_WORDS
from tokenline.core.hfwordlevel import WordLevelFamily
from tokenline.core.rope import TextRope
from tokenline.core.stepnorm import StepNorm
from tokenline.core.unicodesteps import MAYBE_STARTERS, UnicodeSteps

NEOX = ROOT / "tests" / "data" / "tokenizers" / "gpt-neox-20b" / "tokenizer.json"
TRAINED = sorted((hfkit.NORMALIZED_PIECEWISE | hfkit.WORD_LEVEL) - hfkit.UNTYPED)
NAMES = [*TRAINED, "gpt-neox-20b"]

NORMALIZING = [
    # Combining marks, in canonical order and out of it, alone and after starters.
    "e\u0301", "e\u0316\u0301", "e\u0301\u0316", "\u0301", "\u0316", "\u0345", "\u0338",
    "a\u030a", "\u00e5", "\u212b", "u\u0308\u0304", "\u01d6", "o\u0328\u0304", "=\u0338",
    # Precomposed characters beside their decompositions.
    "é", "É", "\u00c5", "\u1e69", "s\u0323\u0307", "\u0ddd",
    # Hangul: syllables, conjoining and compatibility jamo.
    "가", "각", "\u1100", "\u1161", "\u11a8", "\u1100\u1161\u11a8", "\u3131", "\u314f", "\uffa1",
    # Case: Σ at a word's end and inside, dotted I, sharp s, titlecase, the Kelvin sign.
    "Σ", "ΑΣ", "ΣΑΣ ", "ς", "İ", "ı", "ß", "ẞ", "ǅ", "\u212a", "K",
    # Compatibility characters.
    "ﬁ", "Ｈ", "²", "①", "＜", "＞", "｜", "\u32ff", "\u3000", "\u2126",
    # Compositions whose second part is a starter (Brahmic vowel signs), and characters the two
    # sides' tables disagree on (Unicode 11 and later, some unknown to Python's tables).
    "\u0b47\u0b3e", "\u0dd9\u0dcf", "\u0d46\u0d3e", "\U00011935\U00011930", "\U00011938",
    "\u07fd", "\u0898", "\u0897", "\ua7f2", "\u1c89", "\ua7cb", "\U0001e030", "\U000105c9",
    # Added tokens: matched before normalizing, after it, runs of spaces, and their parts.
    "<|endoftext|>", "<|padding|>", "<tool>", "</tool>", "[CLS]", "[SEP]", "[cls]", "<TOOL>",
    "<", ">", "|", "endoftext", "  ", "    ", "        ", "\t", "\n", "\n    ",
    # Plain text.
    "a", "x", " ", "the", "1", "foo_bar", "x!", "--", ",",
]  # fmt: skip
CODE_LINES = [
    "def f(x):\n",
    "    if x:\n",
    "        return x  # done\n",
    "\treturn None\n",
    "                        deep = 1\n",
    "    s = 'Ça va, naïve café'\n",
    "\n",
    "class A:\n",
    "    '''<|endoftext|> in a string'''\n",
]

RUNS = ["\u0301", " ", "가", "\u1161", "Σ", "a", "e\u0301", "ﬁ", "<|endoftext|>"]
run = st.builds(lambda unit, n: unit * n, st.sampled_from(RUNS), st.integers(10, 80))
piece = st.one_of(st.sampled_from(NORMALIZING), run)
texts = st.lists(piece, max_size=30).map("".join)


@st.composite
def edit(draw: st.DrawFn, length: int) -> tuple[int, int, str]:
    start, end, new = draw(edit_ops(length))
    if draw(st.integers(0, 2)) > 0:
        new = draw(st.lists(piece, max_size=3).map("".join))
    return start, end, new


@pytest.fixture(scope="session")
def normalized_judges(tmp_path_factory: pytest.TempPathFactory, botchan: str) -> dict[str, Judge]:
    out = tmp_path_factory.mktemp("hf-normalized")
    judges = {name: Judge(name, hfkit.train(name, out, botchan)) for name in TRAINED}
    judges["gpt-neox-20b"] = Judge("gpt-neox-20b", NEOX)
    return judges


def run_edits(judge: Judge, text: str, data: st.DataObject) -> None:
    doc = Document(judge.model, text)
    check_document(judge, doc, text)
    for _ in range(data.draw(st.integers(1, 20), label="steps")):
        start, end, new = data.draw(edit(doc.length()), label="edit")
        text = text[:start] + new + text[end:]
        doc.edit(start, end, new)
        check_document(judge, doc, text)
    check_selections(judge, doc, data)


def test_the_layouts_are_incremental(normalized_judges: dict[str, Judge]) -> None:
    for name, judge in normalized_judges.items():
        family = judge.model.family
        kind = WordLevelFamily if name in hfkit.WORD_LEVEL else NormalizedByteLevelFamily
        assert isinstance(family, kind), name
        assert judge.model.incremental and judge.model.mode_note == "incremental", name


@pytest.mark.parametrize("name", NAMES)
@given(text=texts, data=st.data())
def test_edits_match_the_reference(
    normalized_judges: dict[str, Judge], name: str, text: str, data: st.DataObject
) -> None:
    run_edits(normalized_judges[name], text, data)


@pytest.mark.parametrize("name", ["gpt-neox-20b", "bl-gpt2-nfd-lower", "wordlevel-bert-nfkc"])
@given(data=st.data())
def test_edits_on_prose_and_code(
    normalized_judges: dict[str, Judge], botchan: str, name: str, data: st.DataObject
) -> None:
    start = data.draw(st.integers(0, len(botchan) - 1500), label="offset")
    code = "".join(data.draw(st.lists(st.sampled_from(CODE_LINES), max_size=20), label="code"))
    run_edits(normalized_judges[name], botchan[start : start + 1500] + code, data)


@given(text=texts)
def test_steps_normalize_as_the_library_does(
    normalized_judges: dict[str, Judge], text: str
) -> None:
    """A text's steps give the library's normalized text, and the text cut at any step boundary
    normalizes as its two sides apart (added tokens matched before normalizing aside)."""
    for name, judge in normalized_judges.items():
        family = judge.model.family
        assert isinstance(family, NormalizedByteLevelFamily | WordLevelFamily)
        steps = family.steps
        norm = judge.ref.normalizer
        if norm is None:
            continue
        plain = UnicodeSteps(norm, steps.stages, steps.forms, [])
        whole = norm.normalize_str(text)
        assert plain.normalize(text).text() == whole, name
        for p in range(1, len(text)):
            if plain.boundary(text, p):
                assert norm.normalize_str(text[:p]) + norm.normalize_str(text[p:]) == whole, p


def test_maybe_starters_are_pythons() -> None:
    """Every starter Python's tables have a composition take second is in MAYBE_STARTERS (or
    a Hangul vowel or trailing jamo)."""
    found = set()
    for cp in range(0x110000):
        decomposition = unicodedata.decomposition(chr(cp)).split()
        if len(decomposition) == 2 and not decomposition[0].startswith("<"):
            second = chr(int(decomposition[1], 16))
            composes = unicodedata.normalize("NFC", chr(cp)) == chr(cp)
            if composes and unicodedata.combining(second) == 0:
                found.add(second)
    assert found and found <= MAYBE_STARTERS


def python_source(n: int, seed: int) -> str:
    rng = random.Random(seed)
    out: list[str] = []
    while sum(map(len, out)) < n:
        out.append(rng.choice(CODE_LINES))
    return "".join(out)


@pytest.mark.parametrize(
    "name", ["gpt-neox-20b", "bl-gpt2-nfc", "wordlevel", "wordlevel-bert-nfkc"]
)
def test_windows_stay_small_in_indented_code(
    normalized_judges: dict[str, Judge], name: str
) -> None:
    """GPT-NeoX's added tokens are runs of spaces, found in every indented line: they are
    segments of their own, so an edit beside one still re-encodes a few pieces, as does a long
    selection."""
    judge = normalized_judges[name]
    text = python_source(20_000, 1)
    doc = Document(judge.model, text)
    check_document(judge, doc, text)
    engine = doc.engine
    for at, cut, new in [(10_000, 1, "x"), (5_003, 0, "    "), (15_000, 4, ""), (12_345, 0, "é")]:
        at = text.index("\n", at) + 1  # at a line's indentation
        before = engine.stats.encoded_chars
        doc.edit(at, at + cut, new)
        text = text[:at] + new + text[at + cut :]
        check_document(judge, doc, text)
        assert engine.stats.encoded_chars - before < 300, (at, new)
    before = engine.stats.encoded_chars
    a, b = text.index("\n", 1234) + 1, text.index("\n", 17_000) + 1
    assert doc.encode_range(a, b) == judge.ids(text[a:b])
    assert engine.stats.encoded_chars - before < 600


def test_an_added_token_before_a_combining_mark(normalized_judges: dict[str, Judge]) -> None:
    """The library matches <|endoftext|> before normalizing, so the U+0338 after it is not
    composed with its ">" (≯); text that only normalizes to an added token is not one."""
    judge = normalized_judges["gpt-neox-20b"]
    text = "a <|endoftext|>\u0338 b"
    doc = Document(judge.model, text)
    check_document(judge, doc, text)
    eot = judge.ref.token_to_id("<|endoftext|>")
    assert eot is not None and eot in doc.ids()
    assert doc.token_span(doc.ids().index(eot)) == (2, 15)
    for start, end, new in [(15, 16, ""), (15, 15, "\u0338"), (14, 15, "\uff1e"), (14, 15, ">")]:
        doc.edit(start, end, new)
        text = text[:start] + new + text[end:]
        check_document(judge, doc, text)
    kc = normalized_judges["bl-gpt4-nfkc"]
    fake = "x \uff3bCLS\uff3d y"  # fullwidth brackets: "[CLS]" only once normalized
    assert kc.ref.token_to_id("[CLS]") not in kc.ids(fake)
    check_document(kc, Document(kc.model, fake), fake)


def test_word_level_tokens_hold_the_space_after_them(normalized_judges: dict[str, Judge]) -> None:
    judge = normalized_judges["wordlevel"]
    text = "  the boy,  and  "
    doc = Document(judge.model, text)
    check_document(judge, doc, text)
    assert doc.spans(0, len(doc)) == [0, 6, 6, 9, 9, 12, 12, 17]


def _spec(judge: Judge) -> dict[str, Any]:
    spec: dict[str, Any] = json.loads(judge.path.read_text(encoding="utf-8"))
    return spec


def _raw(content: str, token_id: int) -> dict[str, Any]:
    fields = {"single_word": False, "lstrip": False, "rstrip": False}
    return {"id": token_id, "content": content, "normalized": False, "special": True, **fields}


_STRIP = {"type": "Strip", "strip_left": False, "strip_right": True}


@pytest.mark.parametrize(
    ("normalizer", "windowed"),
    [
        ({"type": "NFKD"}, True),
        ({"type": "Lowercase"}, True),
        ({"type": "Sequence", "normalizers": [{"type": "Lowercase"}, {"type": "NFC"}]}, True),
        ({"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "NFC"}]}, False),
        ({"type": "Sequence", "normalizers": [{"type": "NFC"}, _STRIP]}, False),
        ({"type": "StripAccents"}, False),
    ],
)
def test_which_normalizers_are_kept_in_step(
    normalized_judges: dict[str, Judge], normalizer: dict[str, Any], windowed: bool
) -> None:
    for name in ("bl-gpt2-nfc", "wordlevel"):
        spec = _spec(normalized_judges[name])
        spec["normalizer"] = normalizer
        model = load_hf_json(json.dumps(spec))
        assert model.incremental == windowed, (name, normalizer)
        if not windowed:
            assert (NOT_WORDS if name == "wordlevel" else NOT_NORMALIZER) in model.mode_note


def test_overlapping_raw_added_tokens_re_encode_whole(
    normalized_judges: dict[str, Judge], tmp_path: Path
) -> None:
    """Added tokens matched before normalizing whose occurrences could overlap ("[[x" and "x]]")
    are matched left to right by the library, so they are not found locally: whole."""
    for name in ("bl-gpt2-nfc", "wordlevel"):
        spec = _spec(normalized_judges[name])
        top = 1 + max([*spec["model"]["vocab"].values(), *(a["id"] for a in spec["added_tokens"])])
        spec["added_tokens"] += [_raw("[[x", top), _raw("x]]", top + 1)]
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(spec), encoding="utf-8")
        judge = Judge(name, path)
        assert not judge.model.incremental and NOT_RAW in judge.model.mode_note
        text = "a [[x]] b"
        doc = Document(judge.model, text)
        doc.edit(3, 3, "[")
        check_document(judge, doc, "a [[[x]] b")


@pytest.mark.parametrize(
    "change",
    [
        {"pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always"}},
        {
            "normalizer": {
                "type": "BertNormalizer",
                "clean_text": True,
                "handle_chinese_chars": True,
                "strip_accents": None,
                "lowercase": True,
            }
        },
        {"model": "no unknown token"},
    ],
)
def test_which_word_level_files_get_windows(
    normalized_judges: dict[str, Judge], change: dict[str, Any]
) -> None:
    spec = _spec(normalized_judges["wordlevel"])
    if "model" in change:
        spec["model"]["unk_token"] = "<nothing>"
    else:
        spec.update(change)
    model = load_hf_json(json.dumps(spec))
    assert not model.incremental and NOT_WORDS in model.mode_note


def test_an_edit_reports_only_what_it_changed_in_the_normalized_text() -> None:
    """Composing a mark onto a letter changes one normalized character; writing the composed
    character instead changes none; an added token that loses a character is text again."""
    steps = UnicodeSteps(normalizers.NFC(), [normalizers.NFC()], ["NFC"], ["<|x|>"])
    norm = StepNorm(TextRope("ab cde fg <|x|> h"), steps)
    assert norm.slice(0, norm.length()) == "ab cde fg \ud800 h"
    assert norm.apply(6, 6, "\u0301") == (5, 6, 6)
    assert norm.slice(0, norm.length()) == "ab cd\u00e9 fg \ud800 h"
    ns, ne_old, ne_new = norm.apply(5, 7, "\u00e9")
    assert ns == ne_old == ne_new
    assert norm.apply(13, 14, "") == (10, 11, 14)
    assert norm.slice(0, norm.length()) == "ab cd\u00e9 fg <|x> h"
    assert norm.to_orig(norm.length()) == norm.orig.length()
    for off in range(norm.orig.length() + 1):
        assert norm.to_orig(norm.to_norm(off)) == off


def test_text_normalized_character_by_character_is_read_through_the_original() -> None:
    """Under Lowercase, "Hello" normalizes character by character: nothing is stored until an
    edit brings a character that does not (İ lower-cases to two), and the normalized text stays
    the library's through both."""
    lower = normalizers.Lowercase()
    steps = UnicodeSteps(lower, [lower], ["Lowercase"], [])
    text = "Hello Wörld ΣΑΣ"
    norm = StepNorm(TextRope(text), steps)
    assert norm.derived and norm.steps.size() == 0
    for start, end, new, derived in [(0, 1, "J", True), (6, 7, "İ", False), (0, 2, "ǅ", False)]:
        norm.apply(start, end, new)
        text = text[:start] + new + text[end:]
        assert norm.derived == derived
        assert norm.slice(0, norm.length()) == lower.normalize_str(text)
        assert norm.to_norm(len(text)) == norm.length()


def test_a_long_document_of_every_kind_opens_as_the_library_encodes_it(
    normalized_judges: dict[str, Judge], botchan: str
) -> None:
    rng = random.Random(5)
    text = "".join(rng.choice(NORMALIZING) for _ in range(6_000)) + botchan[:20_000]
    for name, judge in normalized_judges.items():
        doc = Document(judge.model, text)
        assert doc.ids() == judge.ids(text), name
        for _ in range(20):
            at = rng.randrange(len(text))
            new = rng.choice(NORMALIZING)
            doc.edit(at, at, new)
            text = text[:at] + new + text[at:]
        assert doc.ids() == judge.ids(text), name


def test_neox_loads_through_its_folder() -> None:
    model = load_model(NEOX.parent)
    assert model.incremental and isinstance(model.family, NormalizedByteLevelFamily)
    ref = Tokenizer.from_file(str(NEOX))
    text = python_source(400, 3)
    assert Document(model, text).ids() == ref.encode(text, add_special_tokens=False).ids
