"""Differential fuzzing over the generated zoo (vocabgen): many small BPE models per run.

Hypothesis draws a seed (a model), a text and edits typed from the model's own alphabet and
pieces; after every edit the document must equal SentencePiece's full encode. Some examples grow
the text past DIRECT_COUNT_LIMIT and check selection counts, whose windowed path only runs there.
The ci profile visits a few hundred models; the deep profile, thousands.
"""

from __future__ import annotations

import collections
import os
from dataclasses import dataclass
from pathlib import Path

import pytest
import sentencepiece as spm
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.core import vocabgen
from tokenline.core import Document, load_model
from tokenline.core.document import DIRECT_COUNT_LIMIT
from tokenline.core.model import Model

BATCHES = 8
# The seeds whose classes test_zoo_reaches_every_class checks (the ci profile's seed range).
CI_SEEDS = BATCHES * 100
# Examples per batch: the profile's, but at least 150 (one example costs a few milliseconds).
EXAMPLES = max(settings().max_examples, 150)
# Seeds per batch: enough that most examples see a model no earlier example saw.
SEEDS_PER_BATCH = 4 * EXAMPLES
# Counters for the run's summary (printed by conftest's pytest_terminal_summary).
STATS: collections.Counter[str] = collections.Counter()
SEEN: set[int] = set()
SEEN_CLASSES: collections.Counter[str] = collections.Counter()
# For long local runs while a known bug is open: classes whose models are passed over, e.g.
# TOKENLINE_ZOO_EXCLUDE=no-escape-whitespaces. Unset in CI, where every class runs.
EXCLUDE = frozenset(filter(None, os.environ.get("TOKENLINE_ZOO_EXCLUDE", "").split(",")))
assert not EXCLUDE - set(vocabgen.CLASSES), f"unknown classes in TOKENLINE_ZOO_EXCLUDE: {EXCLUDE}"


@dataclass
class Entry:
    zoo: vocabgen.ZooModel
    classes: frozenset[str]
    sp: spm.SentencePieceProcessor
    model: Model


_CACHE: dict[int, Entry] = {}


@pytest.fixture(scope="session")
def zoo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("zoo")


def drawn_entry(data: st.DataObject, batch: int, directory: Path) -> Entry:
    """A model drawn from this batch's seeds (passing over TOKENLINE_ZOO_EXCLUDE classes)."""
    seed = batch * SEEDS_PER_BATCH + data.draw(st.integers(0, SEEDS_PER_BATCH - 1), label="seed")
    entry = zoo_entry(seed, directory)
    assume(not EXCLUDE & entry.classes)
    if seed not in SEEN:
        SEEN.add(seed)
        STATS["models"] += 1
        STATS["models incremental"] += entry.model.incremental
        SEEN_CLASSES.update(entry.classes)
    return entry


def zoo_entry(seed: int, directory: Path) -> Entry:
    """The generated model of seed, its SentencePiece processor and Tokenline model (cached)."""
    entry = _CACHE.get(seed)
    if entry is None:
        zoo = vocabgen.generate(seed)
        path = zoo.write(directory)
        sp = spm.SentencePieceProcessor(model_file=str(path))
        entry = Entry(zoo, vocabgen.classify(zoo.proto), sp, load_model(path))
        if len(_CACHE) > 4096:
            _CACHE.clear()
        _CACHE[seed] = entry
    return entry


def fragments(zoo: vocabgen.ZooModel, spaceless: bool = False) -> st.SearchStrategy[str]:
    if spaceless:
        return st.sampled_from([f for f in zoo.fragments if not any(c.isspace() for c in f)])
    return st.sampled_from(zoo.fragments)


def zoo_text(
    zoo: vocabgen.ZooModel, max_size: int = 12, spaceless: bool = False
) -> st.SearchStrategy[str]:
    return st.lists(fragments(zoo, spaceless), max_size=max_size).map("".join)


@st.composite
def zoo_edit(draw: st.DrawFn, zoo: vocabgen.ZooModel, length: int) -> tuple[int, int, str]:
    """One edit: mostly short inserts and deletes of the alphabet, sometimes a pasted run."""
    start = draw(st.integers(0, length))
    kind = draw(st.sampled_from(["insert", "insert", "delete", "replace", "paste"]))
    end = start
    if kind in ("delete", "replace"):
        end = draw(st.integers(start, min(length, start + draw(st.sampled_from([1, 2, 3, 8])))))
    new = ""
    if kind in ("insert", "replace"):
        new = draw(zoo_text(zoo, 2))
    elif kind == "paste":
        new = draw(zoo_text(zoo, 10))
    return start, end, new


def short(text: str) -> str:
    return repr(text) if len(text) <= 200 else f"{text[:100]!r}...({len(text)} characters)"


def same(got: list[int], expected: list[int], where: str) -> None:
    """got == expected, failing with the first difference (pytest's diff of two token lists of
    a long document takes minutes)."""
    if got == expected:
        return
    k = next(
        (i for i, (a, b) in enumerate(zip(got, expected, strict=False)) if a != b),
        min(len(got), len(expected)),
    )
    raise AssertionError(
        f"{where}: {len(got)} tokens, expected {len(expected)}; first difference at token {k}: "
        f"{got[max(0, k - 3) : k + 5]} != {expected[max(0, k - 3) : k + 5]}"
    )


def check_edits(entry: Entry, text: str, data: st.DataObject, steps: int) -> Document:
    """Edits a document step by step; after each, its ids must equal a full encode."""
    doc = Document(entry.model, text)
    same(doc.ids(), entry.sp.encode(text), f"seed {entry.zoo.seed}: initial {short(text)}")
    for _ in range(steps):
        start, end, new = data.draw(zoo_edit(entry.zoo, int(doc.length())), label="edit")
        before = doc.text
        doc.edit(start, end, new)
        text = before[:start] + new + before[end:]
        assert doc.text == text
        STATS["edits"] += 1
        where = f"seed {entry.zoo.seed}: {short(before)} edit {(start, end, new)!r}"
        same(doc.ids(), entry.sp.encode(text), where)
    return doc


def check_selections(entry: Entry, doc: Document, data: st.DataObject, count: int) -> None:
    """Long selections (the windowed path) count and encode as text[s:e] encoded alone."""
    n = int(doc.length())
    text = doc.text
    for _ in range(count):
        start = data.draw(st.integers(0, n - DIRECT_COUNT_LIMIT - 1), label="sel start")
        end = data.draw(st.integers(start + DIRECT_COUNT_LIMIT + 1, n), label="sel end")
        expected = entry.sp.encode(text[start:end])
        STATS["selections"] += 1
        where = f"seed {entry.zoo.seed}: selection {(start, end)} of {short(text)}"
        doc.engine.stats.encoded_chars = 0
        assert doc.count(start, end) == len(expected), where
        STATS["selections windowed"] += doc.engine.stats.encoded_chars < end - start
        same(doc.encode_range(start, end), expected, where)


@pytest.mark.parametrize("batch", range(BATCHES))
@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_zoo_edits_match_full_encode(zoo_dir: Path, batch: int, data: st.DataObject) -> None:
    entry = drawn_entry(data, batch, zoo_dir)
    text = data.draw(zoo_text(entry.zoo, 16), label="text")
    if data.draw(st.integers(0, 3), label="long") == 0:
        # A stretch with no white space, longer than a segment the core caches (64 characters).
        unit = data.draw(zoo_text(entry.zoo, 6, spaceless=True).filter(bool), label="unit")
        text += unit * (80 // len(unit) + 1)
    STATS["sequences"] += 1
    check_edits(entry, text, data, data.draw(st.integers(5, 40), label="steps"))


@pytest.mark.parametrize("batch", range(BATCHES // 2))
@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_zoo_long_documents_and_selections(zoo_dir: Path, batch: int, data: st.DataObject) -> None:
    # A unit of text repeated past the limit, edited, then selected in random long ranges.
    entry = drawn_entry(data, batch, zoo_dir)
    unit = data.draw(zoo_text(entry.zoo, 8).filter(bool), label="unit")
    noise = data.draw(zoo_text(entry.zoo, 6), label="noise")
    text = unit * (2 * DIRECT_COUNT_LIMIT // len(unit) + 2)
    at = data.draw(st.integers(0, len(text)), label="noise at")
    text = text[:at] + noise + text[at:]
    STATS["sequences"] += 1
    doc = check_edits(entry, text, data, data.draw(st.integers(0, 4), label="steps"))
    check_selections(entry, doc, data, 3)


def test_zoo_reaches_every_class() -> None:
    """The seeds CI visits cover every class the generator is meant to make, several times each,
    so a change to the generator cannot silently drop a trap."""
    counts: collections.Counter[str] = collections.Counter()
    for seed in range(CI_SEEDS):
        counts.update(vocabgen.classify(vocabgen.generate(seed).proto))
    thin = {c: counts[c] for c in vocabgen.CLASSES if counts[c] < 10}
    assert not thin, f"classes reached by fewer than 10 of {CI_SEEDS} seeds: {thin}"
    assert set(counts) <= set(vocabgen.CLASSES), set(counts) - set(vocabgen.CLASSES)


def test_zoo_is_deterministic_and_loadable(zoo_dir: Path) -> None:
    """A seed names one model: the same bytes every time, and SentencePiece loads it."""
    for seed in (0, 1, 7, 123, 4567):
        a, b = vocabgen.generate(seed), vocabgen.generate(seed)
        assert a.proto == b.proto
        entry = zoo_entry(seed, zoo_dir)
        assert entry.sp.get_piece_size() == entry.model.vocab_size
    assert vocabgen.generate(0).proto != vocabgen.generate(1).proto
