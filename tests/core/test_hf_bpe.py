"""Llama 2 style BPE tokenizer.json files, cut into windows (tokenline.core.hfbpe): after every
edit Document.ids() equals the tokenizers library's encode, and token spans partition the text.

The files are the trained Llama 2 style one (tests/core/hfkit.py) and variants of it that
change one thing the engine must follow: Metaspace's prepend schemes instead of the normalizer,
a normalizer that only replaces spaces, added tokens in either pass with lstrip and rstrip, no
byte fallback (characters dropped, or an unknown token, fused or not), some bytes missing; the
other Llama 2 style files hfkit trains; generated vocabularies; and the real Phi-3 mini file
(Llama 2's pieces and its chat tokens, most of them rstrip: tests/data/tokenizers).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Tokenizer

from tests.conftest import ROOT
from tests.core import hfkit, metaspacegen
from tests.core.strategies import edit_ops, fragment
from tokenline.core import Document, load_model
from tokenline.core.hfbpe import HFBPEFamily
from tokenline.core.hfloader import load_hf_json

PHI3 = ROOT / "tests" / "data" / "tokenizers" / "phi-3-mini" / "tokenizer.json"
SPECIALS = hfkit.SPECIALS  # not normalized, special
PLAIN = hfkit.PLAIN_ADDED  # normalized, not special

Spec = dict[str, Any]


def _added(spec: Spec, content: str, **fields: bool) -> None:
    for a in spec["added_tokens"]:
        if a["content"] == content:
            a.update(fields)


def _metaspace(scheme: str) -> Callable[[Spec], None]:
    def change(spec: Spec) -> None:
        spec["normalizer"] = None
        spec["pre_tokenizer"] = {
            "type": "Metaspace",
            "replacement": "\u2581",
            "prepend_scheme": scheme,
            "split": False,
        }

    return change


def _strips(spec: Spec) -> None:
    _added(spec, SPECIALS[0], rstrip=True)
    _added(spec, SPECIALS[1], lstrip=True)
    _added(spec, SPECIALS[2], lstrip=True, rstrip=True)
    _added(spec, PLAIN[0], rstrip=True)
    _added(spec, PLAIN[1], lstrip=True)


def _meta_strips(spec: Spec) -> None:
    _metaspace("first")(spec)
    _strips(spec)


def _first_pass_only(spec: Spec) -> None:
    for content in PLAIN:
        _added(spec, content, normalized=False)


def _replace_only(spec: Spec) -> None:
    spec["normalizer"] = {
        "type": "Sequence",
        "normalizers": [{"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}],
    }


def _prepend_and_metaspace(spec: Spec) -> None:
    _first_pass_only(spec)
    spec["pre_tokenizer"] = _metaspace_node("first")


def _metaspace_node(scheme: str) -> Spec:
    return {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": scheme, "split": False}


def _no_fallback(
    unk: str | None, fuse: bool, keep: Callable[[int], bool]
) -> Callable[[Spec], None]:
    """Byte pieces kept only where `keep` says (byte fallback off when none is), an unknown
    token (added to the vocabulary) or none."""

    def change(spec: Spec) -> None:
        model = spec["model"]
        vocab: dict[str, int] = model["vocab"]
        for b in range(256):
            if not keep(b):
                del vocab[f"<0x{b:02X}>"]
        model["byte_fallback"] = any(keep(b) for b in range(256))
        model["fuse_unk"] = fuse
        model["unk_token"] = unk
        if unk is not None:
            vocab[unk] = max(*vocab.values(), *(a["id"] for a in spec["added_tokens"])) + 1

    return change


# Variants of the trained Llama 2 style file (Prepend + Replace, byte fallback, fused unknowns).
VARIANTS: dict[str, Callable[[Spec], None]] = {
    "prepend-replace": lambda spec: None,
    "strips": _strips,
    "first-pass": _first_pass_only,
    "replace-only": _replace_only,
    "meta-first": _metaspace("first"),
    "meta-always": _metaspace("always"),
    "meta-never": _metaspace("never"),
    "meta-first-strips": _meta_strips,
    "prepend-meta-first": _prepend_and_metaspace,
    "dropped": _no_fallback(None, True, lambda b: False),
    "unk-fused": _no_fallback("<unk>", True, lambda b: False),
    "unk-single": _no_fallback("<unk>", False, lambda b: False),
    "some-bytes": _no_fallback("<unk>", True, lambda b: b < 0xF0),
}
# Trained files of hfkit that are of this layout too: Llama 2's with and without byte fallback,
# as newer files write it (Metaspace without split), untyped; Metaspace without split, [UNK].
TRAINED = [
    "llama-style-nofallback",
    "llama-metaspace",
    "llama-metaspace-nofallback",
    "untyped-llama-style",
    "meta-always-nosplit",
    "meta-first-nosplit",
    "meta-never-nosplit",
]


class Judge:
    """A file: the model Tokenline loads and the tokenizers library's own Tokenizer."""

    def __init__(self, name: str, path: Path) -> None:
        self.name = name
        self.path = path
        self.ref = Tokenizer.from_file(str(path))
        self.model = load_model(path)
        self.added = [a.content for a in self.ref.get_added_tokens_decoder().values()]

    def ids(self, text: str) -> list[int]:
        ids: list[int] = self.ref.encode(text, add_special_tokens=False).ids
        return ids


def _dense_ids(spec: Spec) -> None:
    """Numbers the model's pieces 0, 1, ... in their order and the added tokens it lacks after
    them, as the library numbers added tokens (from the model's size: with gaps in the ids,
    it would give an added token the id of a piece, and its encode would be ambiguous)."""
    vocab: dict[str, int] = spec["model"]["vocab"]
    ordered = sorted(vocab, key=lambda piece: vocab[piece])
    dense = {piece: i for i, piece in enumerate(ordered)}
    spec["model"]["vocab"] = dense
    top = len(dense)
    for a in spec["added_tokens"]:
        if a["content"] in dense:
            a["id"] = dense[a["content"]]
        else:
            a["id"] = top
            top += 1


@pytest.fixture(scope="session")
def judges(tmp_path_factory: pytest.TempPathFactory, botchan: str) -> dict[str, Judge]:
    out = tmp_path_factory.mktemp("hfbpe")
    base = json.loads(hfkit.train("llama-style", out, botchan).read_text(encoding="utf-8"))
    found: dict[str, Judge] = {}
    for name, change in VARIANTS.items():
        spec = json.loads(json.dumps(base))
        change(spec)
        _dense_ids(spec)
        path = out / name / "tokenizer.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
        found[name] = Judge(name, path)
    for name in TRAINED:
        found[name] = Judge(name, hfkit.train(name, out, botchan))
    found["phi-3-mini"] = Judge("phi-3-mini", PHI3)
    return found


NAMES = [*VARIANTS, *TRAINED, "phi-3-mini"]


# -- what the fuzzing types --------------------------------------------------------------------

# Around the places the layout cares about: spaces at a text's start and in runs, the marker
# itself, white space strips take, characters that fall back to bytes or are unknown, parts of
# added tokens.
EXTRA = [" ", "  ", "   ", " \n", "\n ", "\t", "\u2581", "\u2581 ", " \u2581", "\u3000", "\u00a0"]
EXTRA += ["\u4e2d\u6587", "\U0001f600", "\U0001d518", "\ua66e", "\u0301", "e\u0301", "\u00e9"]
EXTRA += ["<", ">", "|", "<|", "|>", "</", "<s", "s>", "</s", "[", "]", "CLS", "SEP", "tool"]
EXTRA += ["<|user|>", "<|end|>", "<|assistant|>", "<s>", "</s>", "<unk>", "<|endoftext|>"]
EXTRA += ["[CLS]", "[SEP]", "<tool>", "</tool>", "<tool>call</tool>", "a<s>b", " <|end|> "]
bpe_fragment = st.one_of(fragment, st.sampled_from(EXTRA), st.sampled_from(EXTRA))
long_run = st.builds(
    lambda unit, n: unit * n,
    st.sampled_from([" ", "\n", "a", "ab", "\u4e2d", "\U0001f600", "\u2581", " \n", "<s>"]),
    st.integers(10, 200),
)


def bpe_texts(max_fragments: int = 25) -> st.SearchStrategy[str]:
    return st.lists(st.one_of(bpe_fragment, long_run), max_size=max_fragments).map("".join)


@st.composite
def bpe_edit(draw: st.DrawFn, length: int) -> tuple[int, int, str]:
    start, end, new = draw(edit_ops(length))
    if draw(st.integers(0, 2)) == 0:
        new = draw(st.one_of(bpe_fragment, long_run))
    return start, end, new


def check_document(judge: Judge, doc: Document, text: str) -> None:
    assert doc.text == text
    expected = judge.ids(text)
    assert doc.ids() == expected, text
    spans = doc.spans(0, len(doc))
    if expected:
        assert spans[0] == 0 and spans[-1] == len(text)
        assert all(spans[i] == spans[i + 1] for i in range(1, len(spans) - 1, 2))
        assert all(spans[i] <= spans[i + 1] for i in range(0, len(spans), 2))


def run_edits(judge: Judge, text: str, data: st.DataObject) -> None:
    doc = Document(judge.model, text)
    check_document(judge, doc, text)
    for _ in range(data.draw(st.integers(1, 20), label="steps")):
        start, end, new = data.draw(bpe_edit(doc.length()), label="edit")
        text = text[:start] + new + text[end:]
        doc.edit(start, end, new)
        check_document(judge, doc, text)
    for _ in range(data.draw(st.integers(1, 3), label="selections")):
        a = data.draw(st.integers(0, len(text)), label="a")
        b = data.draw(st.integers(a, len(text)), label="b")
        expected = judge.ids(text[a:b])
        assert doc.count(a, b) == len(expected)
        assert doc.encode_range(a, b) == expected


# -- the differential tests --------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_the_files_are_cut_into_windows(judges: dict[str, Judge], name: str) -> None:
    model = judges[name].model
    assert isinstance(model.family, HFBPEFamily)
    assert model.incremental and model.mode_note == "incremental"


@pytest.mark.parametrize("name", NAMES)
@given(text=bpe_texts(), data=st.data())
def test_edits_match_the_reference(
    judges: dict[str, Judge], name: str, text: str, data: st.DataObject
) -> None:
    run_edits(judges[name], text, data)


@pytest.mark.parametrize("name", ["prepend-replace", "meta-first", "strips", "phi-3-mini"])
@given(data=st.data())
def test_edits_on_prose(
    judges: dict[str, Judge], botchan: str, name: str, data: st.DataObject
) -> None:
    start = data.draw(st.integers(0, len(botchan) - 3000), label="offset")
    run_edits(judges[name], botchan[start : start + 3000], data)


@pytest.mark.parametrize("name", ["strips", "meta-first-strips", "phi-3-mini"])
@given(data=st.data())
def test_added_tokens_typed_one_character_at_a_time(
    judges: dict[str, Judge], name: str, data: st.DataObject
) -> None:
    """An added token appears when its last character is typed (white space around it, which a
    strip may take, typed before or after), and goes when one of its characters is deleted."""
    judge = judges[name]
    content = data.draw(st.sampled_from(judge.added), label="token")
    text = data.draw(st.sampled_from(["a b", "x  y", "one\n\ntwo", "  ", "k\u2581 q"]))
    at = data.draw(st.integers(0, len(text)), label="at")
    doc = Document(judge.model, text)
    typed = data.draw(st.sampled_from(["", " ", "\n", "  "])) + content
    typed += data.draw(st.sampled_from(["", " ", "\n ", "z"]))
    for i, c in enumerate(typed):
        doc.edit(at + i, at + i, c)
        text = text[: at + i] + c + text[at + i :]
        check_document(judge, doc, text)
    cut = data.draw(st.integers(at, at + len(typed) - 1), label="cut")
    doc.edit(cut, cut + 1, "")
    check_document(judge, doc, text[:cut] + text[cut + 1 :])


# -- which files, and what windows cost --------------------------------------------------------


def _set(path: str, value: Any) -> Callable[[Spec], None]:
    """A change of one field of the file (path: keys joined by "/")."""

    def change(spec: Spec) -> None:
        *parents, last = path.split("/")
        node = spec
        for key in parents:
            node = node[key]
        node[last] = value

    return change


def _added_token(content: str, normalized: bool, **loose: bool) -> Callable[[Spec], None]:
    def change(spec: Spec) -> None:
        top = max(*spec["model"]["vocab"].values(), *(a["id"] for a in spec["added_tokens"]))
        fields = {"single_word": False, "lstrip": False, "rstrip": False, **loose}
        token = {"id": top + 1, "content": content, "normalized": normalized, "special": True}
        spec["added_tokens"].append({**token, **fields})

    return change


def _both(*changes: Callable[[Spec], None]) -> Callable[[Spec], None]:
    def change(spec: Spec) -> None:
        for c in changes:
            c(spec)

    return change


NFKC_FIRST = {
    "type": "Sequence",
    "normalizers": [{"type": "NFKC"}, {"type": "Prepend", "prepend": "\u2581"}],
}
# Metaspace as files written before prepend_scheme have it (add_prefix_space: "always").
LEGACY_META = {
    "type": "Metaspace",
    "replacement": "\u2581",
    "add_prefix_space": True,
    "split": False,
}


@pytest.mark.parametrize(
    ("change", "windowed", "note"),
    [
        (lambda spec: None, True, ""),
        (_replace_only, True, ""),
        (_metaspace("first"), True, ""),
        (_both(_metaspace("first"), _set("pre_tokenizer", LEGACY_META)), True, ""),
        (_added_token("<|im_start|>", False, rstrip=True, lstrip=True), True, ""),
        (_set("model/dropout", 0.1), False, "dropout"),
        (_set("model/ignore_merges", True), False, "ignore_merges"),
        (_added_token("<x>", False, single_word=True), False, "single word"),
        (_added_token("a b", False), False, "no white space and no marker"),
        (_added_token("\u2581x", False), False, "no white space and no marker"),
        (_both(_metaspace("first"), _added_token("\u2581x", True)), False, "marker"),
        # The normalizer's marker is in normalized contents, which Metaspace would also put.
        (_both(_set("pre_tokenizer", _metaspace_node("always"))), False, "marker"),
    ],
)
def test_which_files_get_windows(
    judges: dict[str, Judge], change: Callable[[Spec], None], windowed: bool, note: str
) -> None:
    spec = json.loads(judges["prepend-replace"].path.read_text(encoding="utf-8"))
    change(spec)
    model = load_hf_json(json.dumps(spec))
    assert isinstance(model.family, HFBPEFamily) == windowed
    assert model.incremental == windowed
    if not windowed:
        assert "re-encode whole unless Llama 2 style" in model.mode_note and note in model.mode_note


@pytest.mark.parametrize(
    "change",
    [
        _set("normalizer", NFKC_FIRST),
        _set("normalizer", None),  # nothing escapes spaces
        _set("normalizer", {"type": "Prepend", "prepend": "\u2581"}),
        _set("pre_tokenizer", {**_metaspace_node("first"), "replacement": "_"}),  # two markers
        _both(_set("pre_tokenizer", _metaspace_node("first")), _set("pre_tokenizer/split", True)),
    ],
)
def test_other_layouts_keep_their_mode(
    judges: dict[str, Judge], change: Callable[[Spec], None]
) -> None:
    """Files that are not Llama 2 style are not taken for it (each keeps its own mode)."""
    spec = json.loads(judges["prepend-replace"].path.read_text(encoding="utf-8"))
    change(spec)
    model = load_hf_json(json.dumps(spec))
    assert not isinstance(model.family, HFBPEFamily)
    assert "Llama 2 style" not in model.mode_note


@pytest.mark.parametrize("name", ["prepend-replace", "meta-first", "strips", "phi-3-mini"])
def test_windows_stay_small(judges: dict[str, Judge], botchan: str, name: str) -> None:
    """Prose with added tokens in it (typed as text): an edit re-encodes a few words, not the
    document, and the document opens segment by segment."""
    judge = judges[name]
    # Real files' pieces hold no marker after another character (trained ones here do).
    assert (judge.model.family.segmenter is not None) == (name == "phi-3-mini")
    text = botchan[:40_000].replace("\n\n", "\n\n" + " ".join(judge.added[:4]) + " \n", 20)
    doc = Document(judge.model, text)
    check_document(judge, doc, text)
    engine = doc.engine
    rng = random.Random(3)
    for _ in range(30):
        at = rng.randrange(len(text))
        new = rng.choice(["x", " ", "", "the ", "\n", judge.added[0]])
        cut = rng.choice([0, 0, 1])
        before = engine.stats.encoded_chars
        doc.edit(at, min(len(text), at + cut), new)
        text = text[:at] + new + text[at + cut :]
        assert engine.stats.encoded_chars - before < 1_000, (at, new)
    check_document(judge, doc, text)


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        (
            "prepend-replace",
            "Hello w\u00f6rld \u00a4\U0001f600",
            " Hello w\u00f6rld \u00a4\U0001f600",
        ),
        ("meta-never", "Hello w\u00f6rld", "Hello w\u00f6rld"),
        ("phi-3-mini", "<|user|>\nHi <s>", "<|user|> Hi <s>"),
    ],
)
def test_token_bytes_are_the_text(
    judges: dict[str, Judge], name: str, text: str, expected: str
) -> None:
    """Markers are spaces (the prepended one too), fallback bytes are bytes, added tokens are
    their text as written (the white space they strip is not theirs)."""
    judge = judges[name]
    ids = judge.ids(text)
    joined = b"".join(judge.model.family.token_bytes(i) for i in ids)
    assert joined == expected.encode("utf-8")


@pytest.mark.parametrize("name", ["prepend-replace", "phi-3-mini"])
def test_a_character_in_fallback_bytes_is_one_group(judges: dict[str, Judge], name: str) -> None:
    judge = judges[name]
    text = "a \U0001d518 b"  # no piece of either file
    doc = Document(judge.model, text)
    check_document(judge, doc, text)
    first, end = doc.group(doc.token_at(2))
    assert end - first == 4 and doc.token_span(first) == (2, 3)
    assert all(doc.model.vocab.is_byte(i) for i in doc.ids_between(first, end))
    doc.edit(3, 3, "\u00e9")  # after the character: the window starts before its first byte
    check_document(judge, doc, "a \U0001d518\u00e9 b")


# -- generated vocabularies ----------------------------------------------------------------------

# The layouts, as (normalizer, pre-tokenizer) of a file.
PREPEND_REPLACE = {
    "type": "Sequence",
    "normalizers": [
        {"type": "Prepend", "prepend": "\u2581"},
        {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"},
    ],
}
REPLACE = {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}
LAYOUTS: dict[str, tuple[Any, Any]] = {
    "prepend-replace": (PREPEND_REPLACE, None),
    "replace-only": (REPLACE, None),
    "meta-first": (None, _metaspace_node("first")),
    "meta-always": (None, _metaspace_node("always")),
    "meta-never": (None, _metaspace_node("never")),
    "replace-meta-always": (REPLACE, _metaspace_node("always")),
    "prepend-meta-first": (PREPEND_REPLACE, _metaspace_node("first")),
}
GENERATED_ADDED = ["<tool>", "[X]", "ab", "\u00e9", "<s>", "</s>", "a", "\u2581x"]


@given(seed=st.integers(0, 10**9), text=bpe_texts(), data=st.data())
def test_generated_files(
    tmp_path_factory: pytest.TempPathFactory,
    botchan: str,
    seed: int,
    text: str,
    data: st.DataObject,
) -> None:
    """BPE models of random pieces and merges (tests/core/metaspacegen.py; merges across the
    marker too, which no real file has) under each layout, with added tokens of either pass,
    stripping or not."""
    layout = data.draw(st.sampled_from(sorted(LAYOUTS)), label="layout")
    normalizer, pre = LAYOUTS[layout]
    model = metaspacegen.generated_bpe(seed, botchan)
    spec: Spec = {"version": "1.0", "added_tokens": [], "normalizer": normalizer}
    spec.update(pre_tokenizer=pre, post_processor=None, decoder=None, model=model)
    top = max(model["vocab"].values())
    metaspace = pre is not None
    for i, content in enumerate(data.draw(st.sets(st.sampled_from(GENERATED_ADDED), max_size=4))):
        # Normalized only where its normalized form may be found in windows.
        normalized = data.draw(st.booleans()) and not (metaspace and normalizer is PREPEND_REPLACE)
        if "\u2581" in content:
            normalized = False
        strips = data.draw(st.sampled_from([{}, {"lstrip": True}, {"rstrip": True}]))
        token = {"id": top + 1 + i, "content": content, "single_word": False, "lstrip": False}
        token.update({"rstrip": False, "normalized": normalized, "special": True, **strips})
        spec["added_tokens"].append(token)
    path = tmp_path_factory.mktemp("generated") / "tokenizer.json"
    path.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    judge = Judge(f"generated-{seed}", path)
    holds_marker = any("\u2581" in a["content"] for a in spec["added_tokens"])
    assert judge.model.incremental == (not holds_marker), layout
    run_edits(judge, text, data)


@pytest.mark.parametrize("name", ["prepend-replace", "meta-never", "strips", "phi-3-mini"])
@given(data=st.data())
def test_long_selections(
    judges: dict[str, Judge], botchan: str, name: str, data: st.DataObject
) -> None:
    """Selections longer than the ones simply encoded reuse the document's tokens between two
    windows (their own marker in front): with added tokens and white space at their ends."""
    judge = judges[name]
    start = data.draw(st.integers(0, len(botchan) - 12_000), label="offset")
    text = botchan[start : start + 12_000]
    for _ in range(data.draw(st.integers(0, 6), label="inserted")):
        at = data.draw(st.integers(0, len(text)), label="at")
        text = text[:at] + data.draw(st.sampled_from([*judge.added, " ", "  ", "\n"])) + text[at:]
    doc = Document(judge.model, text)
    for _ in range(3):
        a = data.draw(st.integers(0, len(text) - 5_000), label="a")
        b = data.draw(st.integers(a + 4_100, len(text)), label="b")
        expected = judge.ids(text[a:b])
        assert doc.encode_range(a, b) == expected
        assert doc.count(a, b) == len(expected)
