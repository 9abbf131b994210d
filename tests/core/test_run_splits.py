"""Edits that split a long run of letters in two (a space, a comma, a digit, an upper-case letter
typed into it) or join two into one (deleting what split them), for byte-level models: after every
edit the ids are the reference library's, and such an edit far inside a run reads a few dozen
characters around itself (tokenline.core.runcuts), never the run to its ends.

Runs over o200k_base, cl100k_base and Tekken (tiktoken's and mistral-common's encodes), real
tokenizer.json files (GPT-2; GPT-NeoX-20B and Qwen2.5, which normalize by NFC; MiniMax-M1, with
o200k's case classes) and the byte-level files tests/core/hfkit.py trains (every local pattern,
after NFC, NFKC, NFKD, and NFD with lower case), against the tokenizers library's encode.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Tokenizer

from tests.core import hfkit
from tests.core.test_bytelevel import References
from tokenline.core import Document, load_model

Encoder = Callable[[str], list[int]]
DATA = Path(__file__).resolve().parent.parent / "data" / "tokenizers"
TIKTOKEN = ["o200k_base", "cl100k_base", "tekken"]
REAL_FILES = ["gpt2", "gpt-neox-20b", "qwen2.5", "minimax-m1"]
TRAINED = sorted(hfkit.PIECEWISE | hfkit.NORMALIZED_PIECEWISE)
# What splits a run (or, typed into one, keeps it whole: the same windows read near it): white
# space, punctuation, digits, upper case (o200k's and Tekken's case classes cut before it), a
# contraction, letters of other scripts and cases, a combining mark.
SPLITTERS = [
    " ",
    ",",
    "7",
    "D",
    "\n",
    "'s",
    "'LL",
    "x'",
    " the ",
    "é",
    "É",
    "ß",
    "İ",
    "ǅ",
    "中",
    "\u0301",
    "😀",
    "aB3+/",
    "\t",
    "..",
    "  ",
    "ab cd",
]
# The letters runs are made of: lower-case ASCII, lower case with accents, mixed case, base64.
ALPHABETS = ["abcdefghij", "abcdéfghïj", "abcDEFghiJ", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij0123+/"]


class Refs(References):
    """References (test_bytelevel's), and tokenizer.json files by name: real files, and the files
    hfkit trains (trained once per run)."""

    out: Path
    botchan: str

    def __missing__(self, name: str) -> tuple[Document, Encoder]:
        if name in TIKTOKEN:
            return super().__missing__(name)
        if name in REAL_FILES:
            path = DATA / name / "tokenizer.json"
        else:
            path = hfkit.train(name, self.out, self.botchan)
        tok = Tokenizer.from_file(str(path))

        def encode(text: str) -> list[int]:
            ids: list[int] = tok.encode(text, add_special_tokens=False).ids
            return ids

        value: tuple[Document, Encoder] = (Document(load_model(path)), encode)
        self[name] = value
        return value


@pytest.fixture(scope="module")
def refs(tmp_path_factory: pytest.TempPathFactory, botchan: str) -> Refs:
    found = Refs()
    found.out = tmp_path_factory.mktemp("runs")
    found.botchan = botchan
    return found


def run_text(rng: random.Random, letters: str, size: int) -> str:
    return "x = " + "".join(rng.choice(letters) for _ in range(size)) + " and more\n"


def prepared(doc: Document, text: str, cold: bool) -> None:
    doc.set_text(text)
    while not cold and doc.prepare(1 << 20):
        pass


def checked_edit(doc: Document, encode: Encoder, at: int, end: int, new: str) -> int:
    """Replaces [at, end) with new; the ids must be the reference's. Returns the characters the
    edit scanned for pre-tokens."""
    before = doc.engine.stats.scanned_chars
    expected = doc.text[:at] + new + doc.text[end:]
    doc.edit(at, end, new)
    assert doc.ids() == encode(expected), (at, end, new)
    return doc.engine.stats.scanned_chars - before


@pytest.mark.parametrize("cold", [False, True], ids=["prepared", "cold"])
@pytest.mark.parametrize("name", TIKTOKEN + REAL_FILES)
def test_a_split_and_its_join_in_a_long_run_read_only_near_them(
    refs: Refs, name: str, cold: bool
) -> None:
    """Each of these typed into a 100,000-letter run, far inside it or a few hundred letters
    from an end, then deleted: before runcuts, each scanned the run from its start to its end
    (100,000 characters and more), and right after opening one near an end searched it whole
    for a sure cut."""
    doc, encode = refs[name]
    rng = random.Random(4)
    prepared(doc, run_text(rng, "abcdefghij", 100_000), cold)
    spots = [4 + 200, 4 + 300, 100_004 - 300, 100_004 - 200]
    for i, new in enumerate([" ", ",", "7", "D", "\n", "'s", "x'", "é", " the "]):
        for at in [30_000 + 5_000 * i, spots[i % len(spots)]]:
            assert checked_edit(doc, encode, at, at, new) < 1_000, (at, new)
            assert checked_edit(doc, encode, at, at + len(new), "") < 1_000, (at, new)


@pytest.mark.parametrize("name", TIKTOKEN + REAL_FILES + TRAINED)
def test_splits_and_joins_at_every_distance_from_the_runs_ends(refs: Refs, name: str) -> None:
    """Splits and joins near a run's start and end (where its pieces get shorter than a token can
    be, and the window reads from the run's true end), near another piece, and far inside; in
    runs of each alphabet, prepared and right after opening."""
    doc, encode = refs[name]
    rng = random.Random(name)
    for letters in ALPHABETS:
        text = run_text(rng, letters, 3_000)
        for cold in (False, True):
            prepared(doc, text, cold)
            for offset in [1, 2, 3, 5, 8, 13, 20, 40, 130, 140, 300, 1_500, 2_880, 2_990, 2_999]:
                at = 4 + offset
                new = rng.choice(SPLITTERS)
                checked_edit(doc, encode, at, at, new)
                checked_edit(doc, encode, at, at + len(new), "")
                cut = rng.randrange(0, 3)
                checked_edit(doc, encode, at, min(at + cut, doc.length()), new)


pieces = st.one_of(
    st.builds(
        lambda letters, n, seed: "".join(random.Random(seed).choice(letters) for _ in range(n)),
        st.sampled_from(ALPHABETS),
        st.integers(1, 700),
        st.integers(0, 1_000),
    ),
    st.sampled_from(SPLITTERS),
)


@pytest.mark.parametrize("name", TIKTOKEN + REAL_FILES + TRAINED)
@given(data=st.data())
def test_random_edits_in_long_runs(refs: Refs, name: str, data: st.DataObject) -> None:
    """Texts of long runs and what splits them; edits that type or delete splitters and letters
    anywhere (a few characters, or up to whole runs), each checked."""
    doc, encode = refs[name]
    text = "".join(data.draw(st.lists(pieces, min_size=1, max_size=8), label="pieces"))
    prepared(doc, text, data.draw(st.booleans(), label="cold"))
    for _ in range(data.draw(st.integers(1, 12), label="steps")):
        at = data.draw(st.integers(0, doc.length()), label="at")
        cut = data.draw(st.one_of(st.integers(0, 4), st.integers(0, 2_000)), label="cut")
        end = min(doc.length(), at + cut)
        new = data.draw(st.one_of(st.sampled_from(SPLITTERS), st.just(""), pieces), label="new")
        checked_edit(doc, encode, at, end, new)
