"""Byte-level BPE (tiktoken encodings, Tekken): after every edit, Document.ids() equals the
reference library's encode of the whole text, and selection counts equal encoding the selection.

Runs over OpenAI's o200k_base and cl100k_base (tiktoken's encode_ordinary), Mistral's Tekken
(mistral-common's Tekkenizer) and many generated rank vocabularies per run. One mismatch is a bug.
"""

from __future__ import annotations

import os
import random
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import regex
import tiktoken
from hypothesis import given
from hypothesis import strategies as st

from tests import tiktokencache
from tests.conftest import tekken_path
from tests.core import tiktokenkit
from tests.core.strategies import edit_ops, texts, unspaced
from tokenline.core import Document, Model, ModelError, load_model, pretokens
from tokenline.core.pretokenedges import PreTokenEdges
from tokenline.core.pretokenflags import INNER_PRETOKEN_CHARS, INNER_WIDE_CHARS
from tokenline.core.segments import CACHED_SEGMENT_CHARS
from tokenline.core.tiktokenloader import model_from_encoding
from tokenline.core.tokens import JOIN_UNKNOWN

Encoder = Callable[[str], list[int]]
# Every generated vocabulary class the zoo visited in this run, and how often.
SEEN: Counter[str] = Counter()


@pytest.fixture(scope="module")
def tiktoken_env(tiktoken_cache: Path) -> Iterator[Path]:
    # Only this module's tests load through the seeded cache (servers started later must not).
    before = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(tiktoken_cache)
    yield tiktoken_cache
    if before is None:
        os.environ.pop("TIKTOKEN_CACHE_DIR", None)
    else:
        os.environ["TIKTOKEN_CACHE_DIR"] = before


class References(dict[str, tuple[Document, Encoder]]):
    """Each real encoding as a (document on it, reference encoder) pair, made when a test first
    asks for it: Tekken from mistral-common's package data, tiktoken's encodings from the seeded
    cache (only their tests skip without ../shared)."""

    def __missing__(self, name: str) -> tuple[Document, Encoder]:
        if name == "tekken":
            from mistral_common.tokens.tokenizers.tekken import Tekkenizer

            tk = Tekkenizer.from_file(str(tekken_path()))

            def tekken_encode(text: str) -> list[int]:
                return list(tk.encode(text, bos=False, eos=False))

            value: tuple[Document, Encoder] = (Document(load_model(tekken_path())), tekken_encode)
        else:
            with pytest.MonkeyPatch.context() as mp:
                mp.setenv("TIKTOKEN_CACHE_DIR", str(tiktokencache.session_cache()))
                enc = tiktoken.get_encoding(name)
                value = (Document(load_model(name)), enc.encode_ordinary)
        self[name] = value
        return value


@pytest.fixture(scope="module")
def references() -> References:
    return References()


def check_sequence(doc: Document, encode: Encoder, text: str, data: st.DataObject) -> None:
    doc.set_text(text)
    assert doc.ids() == encode(text)
    for _ in range(data.draw(st.integers(1, 20), label="steps")):
        start, end, new = data.draw(edit_ops(doc.length()), label="edit")
        expected = doc.text[:start] + new + doc.text[end:]
        doc.edit(start, end, new)
        assert doc.text == expected
        assert doc.ids() == encode(expected), (start, end, new)
    check_spans(doc)
    a = data.draw(st.integers(0, doc.length()), label="sel start")
    b = data.draw(st.integers(a, doc.length()), label="sel end")
    assert doc.encode_range(a, b) == encode(doc.text[a:b])


def edit_and_check(doc: Document, encode: Encoder, at: int, end: int, new: str) -> None:
    """Replaces [at, end) with `new`; the ids must be the reference's for the new text."""
    expected = doc.text[:at] + new + doc.text[end:]
    doc.edit(at, end, new)
    assert doc.ids() == encode(expected), (at, end, new)


def edit_within(doc: Document, encode: Encoder, at: int, end: int, new: str, most: int) -> None:
    """edit_and_check, encoding at most `most` characters for it."""
    encoded = doc.engine.stats.encoded_chars
    edit_and_check(doc, encode, at, end, new)
    assert doc.engine.stats.encoded_chars - encoded <= most, (at, end, new)


def drawn_edits(
    doc: Document,
    encode: Encoder,
    data: st.DataObject,
    steps: int,
    news: st.SearchStrategy[str],
    cut: int,
    margin: int = 0,
) -> None:
    """Up to `steps` edits drawn by `data`: at least `margin` characters from either end, each
    deleting up to `cut` characters and typing one of `news`, each checked (edit_and_check)."""
    for _ in range(data.draw(st.integers(1, steps), label="steps")):
        at = data.draw(st.integers(margin, doc.length() - margin), label="at")
        end = min(doc.length(), at + data.draw(st.integers(0, cut), label="cut"))
        edit_and_check(doc, encode, at, end, data.draw(news, label="new"))


def check_spans(doc: Document) -> None:
    """Token spans partition the text."""
    spans = doc.spans(0, len(doc))
    assert spans[:1] in ([], [0]) and (not spans or spans[-1] == doc.length())
    assert all(spans[i] == spans[i + 1] for i in range(1, len(spans) - 1, 2))


REAL = ["o200k_base", "cl100k_base", "tekken"]


@pytest.mark.parametrize("name", REAL)
@given(text=texts(), data=st.data())
def test_edits_match_reference(
    references: dict[str, tuple[Document, Encoder]], name: str, text: str, data: st.DataObject
) -> None:
    doc, encode = references[name]
    check_sequence(doc, encode, text, data)


@pytest.mark.parametrize("name", REAL)
@given(data=st.data())
def test_edits_on_prose(
    references: dict[str, tuple[Document, Encoder]], botchan: str, name: str, data: st.DataObject
) -> None:
    start = data.draw(st.integers(0, len(botchan) - 3000), label="offset")
    doc, encode = references[name]
    check_sequence(doc, encode, botchan[start : start + 3000], data)


# Long enough to be pieces with inner windows (over 64 characters), short enough that the
# reference, whose BPE of a piece is quadratic, keeps the deep profile's time in bounds.
long_piece = st.tuples(
    st.sampled_from(["a", "ab", "0", " ", "\n", "=", "中", "😀", "aB", "1a", "'s", "\t "]),
    st.integers(30, 300),
).map(lambda t: t[0] * t[1])
unspaced_runs = unspaced(long_piece, min_size=1, max_size=12)


@pytest.mark.parametrize("name", REAL)
@given(runs=st.lists(unspaced_runs, min_size=1, max_size=4), data=st.data())
def test_long_runs_and_pieces(
    references: dict[str, tuple[Document, Encoder]],
    name: str,
    runs: list[str],
    data: st.DataObject,
) -> None:
    # Long pieces (base64, 'a' * n, digit groups, runs of white space) and runs without spaces.
    doc, encode = references[name]
    check_sequence(doc, encode, data.draw(st.sampled_from([" ", "\n", ""])).join(runs), data)


@given(seed=st.integers(0, 10**9), text=texts(), data=st.data())
def test_generated_vocabularies(botchan: str, seed: int, text: str, data: st.DataObject) -> None:
    # A fresh rank vocabulary per example: its pattern, where its merges come from (corpus
    # bigrams, random pairs, runs, partial UTF-8 characters) and the order of its ranks.
    enc, cls = tiktokenkit.generated(seed, botchan)
    SEEN[cls] += 1
    doc = Document(model_from_encoding(enc))
    assert doc.model.incremental
    check_sequence(doc, enc.encode_ordinary, text, data)


def test_the_generator_reaches_every_class(botchan: str) -> None:
    wanted = {
        f"{p}/{s}/{o}"
        for p in tiktokenkit.PATTERNS
        for s in tiktokenkit.SOURCES
        for o in tiktokenkit.ORDERS
    }
    classes = {tiktokenkit.generated(seed, botchan)[1] for seed in range(len(wanted))}
    assert wanted - classes == set()


@pytest.mark.parametrize("name", sorted(tiktokenkit.PATTERNS))
@given(text=texts(12), data=st.data())
def test_a_cut_depends_only_on_what_reach_after_covers(
    name: str, text: str, data: st.DataObject
) -> None:
    # The premise of every edit: an old cut survives any change beyond reach_after of it.
    rx = regex.compile(tiktokenkit.PATTERNS[name])
    cuts = _cuts(rx, text)
    x = data.draw(st.sampled_from(sorted(cuts)), label="cut")
    keep = x + pretokens.reach_after(text[x:], text[x - 1 : x] if x > 0 else "")
    if keep > len(text):
        return
    tail = data.draw(texts(4), label="new tail")
    changed = text[:keep] + tail
    assert x in _cuts(rx, changed), (text[:keep], tail)


def _cuts(rx: regex.Pattern[str], text: str) -> set[int]:
    out = {0}
    pos = 0
    for piece in rx.findall(text):
        pos += len(piece)
        out.add(pos)
    assert pos == len(text), "the pattern skipped characters"
    return out


def test_tekken_ids_are_mistral_commons(references: dict[str, tuple[Document, Encoder]]) -> None:
    doc, encode = references["tekken"]
    doc.set_text("Hello, world! 日本語のテキスト 😀 [INST] <s>")
    assert doc.ids() == encode(doc.text)
    assert min(doc.ids()) >= 1000  # shifted past Mistral's special tokens
    names = [doc.model.piece(i) for i in range(20)]
    assert names[:5] == ["<unk>", "<s>", "</s>", "[INST]", "[/INST]"]
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    tk = Tekkenizer.from_file(str(tekken_path()))
    assert names == [tk.id_to_piece(i) for i in range(20)]


def test_a_split_character_is_one_group(references: dict[str, tuple[Document, Encoder]]) -> None:
    doc = references["cl100k_base"][0]
    enc = tiktoken.get_encoding("cl100k_base")
    split = next(c for c in "鬱龘靐齉𠀋😀🧑" if len(enc.encode_ordinary(c)) > 1)
    doc.set_text(f"a {split}b")
    first, end = doc.group(doc.token_at(2))
    assert end - first > 1
    assert doc.token_start(first) <= 2 and doc.token_span(end - 1)[1] >= 3
    assert (
        b"".join(enc.decode_single_token_bytes(t) for t in doc.ids_between(first, end))
        .decode("utf-8")
        .endswith(split)
    )


def test_model_names_and_errors(tiktoken_env: Path, tmp_path: Path) -> None:
    model = load_model("gpt-4o")
    assert model.name == "gpt-4o (o200k_base)" and model.incremental
    assert load_model("cl100k_base").vocab_size == tiktoken.get_encoding("cl100k_base").n_vocab
    bad = tmp_path / "tekken_bad.json"
    bad.write_text('{"config": {}}')
    with pytest.raises(ModelError, match="not a Tekken tokenizer file"):
        load_model(str(bad))
    with pytest.raises(ModelError, match="no such file"):
        load_model(str(tmp_path / "tekken_missing.json"))


def test_an_unknown_pattern_re_encodes_whole() -> None:
    base = tiktoken.Encoding(
        "odd",
        pat_str=r"\p{L}+(?=\s{3})|\S+|\s+",
        mergeable_ranks={bytes([b]): b for b in range(256)} | {b"ab": 256},
        special_tokens={},
    )
    doc = Document(model_from_encoding(base), "ab   ab ab")
    assert not doc.model.incremental and "pattern" in doc.model.mode_note
    rng = random.Random(5)
    for _ in range(50):
        a = rng.randrange(doc.length() + 1)
        doc.edit(a, a, rng.choice(["a", "b", " ", "  "]))
        assert doc.ids() == base.encode_ordinary(doc.text)


@pytest.mark.parametrize("name", REAL)
@given(data=st.data())
def test_edits_inside_one_long_piece(
    references: dict[str, tuple[Document, Encoder]], name: str, data: st.DataObject
) -> None:
    # One piece of thousands of characters (lower-case letters, or a run of one character):
    # windows sit between its tokens and are checked as BPE edges, the piece cut from its start.
    doc, encode = references[name]
    rng = random.Random(data.draw(st.integers(0, 10**6), label="seed"))
    alphabet = data.draw(st.sampled_from(["abcdefghij", "a", "é", "ab", "z中"]), label="letters")
    body = "".join(rng.choice(alphabet) for _ in range(rng.choice([200, 3000])))
    doc.set_text(f"x = {body} end")
    news = st.sampled_from(["", "q", alphabet[:1], "xy", " ", "Q", "1", "'s"])
    drawn_edits(doc, encode, data, 15, news, 3, margin=4)


def test_an_edit_in_a_long_piece_encodes_a_window_of_it(
    references: dict[str, tuple[Document, Encoder]],
) -> None:
    doc, encode = references["o200k_base"]
    rng = random.Random(3)
    doc.set_text("x = " + "".join(rng.choice("abcdefgh") for _ in range(20_000)) + "\n")
    before = doc.engine.stats.encoded_chars
    for at in (5_000, 12_345, 19_990):
        doc.edit(at, at + 1, "q")
    assert doc.ids() == encode(doc.text)
    # Three windows of a few tokens each, not three BPEs of the 20,000-character piece.
    assert doc.engine.stats.encoded_chars - before < 300


# Lengths where the way a piece is edited changes: edges between its tokens from
# INNER_WIDE_CHARS (not ASCII) and INNER_PRETOKEN_CHARS (ASCII) on; cached up to
# CACHED_SEGMENT_CHARS.
PIECE_LIMITS = [INNER_WIDE_CHARS, INNER_PRETOKEN_CHARS, CACHED_SEGMENT_CHARS]


@pytest.mark.parametrize("name", REAL)
@given(data=st.data())
def test_edits_across_the_lengths_that_change_how_pieces_are_edited(
    references: dict[str, tuple[Document, Encoder]], name: str, data: st.DataObject
) -> None:
    # Pieces about as long as each limit (kana, kanji, a byte-split kanji, letters, hangul,
    # accented letters) grow past it and shrink under it: their tokens switch between edges
    # inside a long piece and tokens that continue a short one, next to pieces of every length.
    doc, encode = references[name]
    rng = random.Random(data.draw(st.integers(0, 10**6), label="seed"))
    alphabet = data.draw(
        st.sampled_from(["あいうかき", "字漢語喎", "abcde", "한국어", "éèaê", "aAbB"]),
        label="letters",
    )
    lead = data.draw(st.sampled_from(["。", "、", " ", "\n", "「"]), label="lead")
    pieces = []
    for _ in range(data.draw(st.integers(1, 8), label="pieces")):
        limit = data.draw(st.sampled_from(PIECE_LIMITS), label="limit")
        length = max(1, limit + data.draw(st.integers(-3, 3), label="length"))
        pieces.append(lead + "".join(rng.choice(alphabet) for _ in range(length)))
    doc.set_text("".join(pieces) + "\n")
    if data.draw(st.booleans(), label="prepared"):
        while doc.prepare():
            pass
    choices = ["", alphabet[0], alphabet[1:3], lead, " ", "、", alphabet * 3]
    drawn_edits(doc, encode, data, 12, st.sampled_from(choices), 3)


# whole_words(name, ...) by (name, ascii_only), found once per run.
WORDS: dict[tuple[str, bool], list[str]] = {}


def whole_words(name: str, low: int, high: int, ascii_only: bool) -> list[str]:
    """Tokens of a tiktoken encoding that are one word (a letter pre-token, with a leading space
    or not) of low to high characters, which the library takes whole when one is a whole piece."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIKTOKEN_CACHE_DIR", str(tiktokencache.session_cache()))
        enc = tiktoken.get_encoding(name)
    out = []
    for data in enc.token_byte_values():
        try:
            word = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if low <= len(word) <= high and word.lstrip(" ").isalpha() and word.isascii() == ascii_only:
            out.append(word)
    return sorted(out)


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
@pytest.mark.parametrize("ascii_only", [True, False])
@given(data=st.data())
def test_pieces_edited_into_and_out_of_whole_tokens(
    references: dict[str, tuple[Document, Encoder]],
    name: str,
    ascii_only: bool,
    data: st.DataObject,
) -> None:
    # A token that is a whole word as long as a piece with inner edges: a letter more or less
    # makes the piece one the library encodes by its merges (edges inside it) or takes whole
    # (then no part of it stands for it).
    limit = INNER_PRETOKEN_CHARS if ascii_only else INNER_WIDE_CHARS
    words = WORDS.get((name, ascii_only))
    if words is None:
        words = WORDS[name, ascii_only] = whole_words(name, limit - 2, limit + 6, ascii_only)
    assert words, "no whole word near the limit"
    doc, encode = references[name]
    word = data.draw(st.sampled_from(words), label="word")
    rest = "".join(data.draw(st.permutations(word.strip()), label="shuffled"))
    doc.set_text(f"x.{word}, {rest}{word[-3:]}.{word}{word[-1]}\n{word}")
    if data.draw(st.booleans(), label="prepared"):
        while doc.prepare():
            pass
    drawn_edits(doc, encode, data, 10, st.sampled_from(["", word[-1], word[:2], word[1:], "."]), 2)


def kana_clauses(doc: Document, rng: random.Random, lengths: list[int]) -> list[str]:
    """Clauses of random kana of `lengths`, each after a full stop, as the prepared text of
    `doc` (a line); returns the clauses."""
    kana = [chr(c) for c in range(0x3042, 0x3094)]
    clauses = ["。" + "".join(rng.choice(kana) for _ in range(n)) for n in lengths]
    doc.set_text("".join(clauses) + "\n")
    while doc.prepare():
        pass
    return clauses


def test_an_edit_that_makes_a_long_piece_short_reaches_its_cuts_at_once(
    references: dict[str, tuple[Document, Encoder]],
) -> None:
    # Pieces one character longer than INNER_WIDE_CHARS (kana after a full stop): their tokens
    # are edges (BPE edges within them). Deleting one character makes a short piece, whose
    # tokens all continue its first: no edge inside it can hold, so the second window takes it.
    doc, encode = references["o200k_base"]
    pieces = kana_clauses(doc, random.Random(5), [INNER_WIDE_CHARS] * 30)
    size = INNER_WIDE_CHARS + 1
    for i in (3, 11, 20):
        at = size * i + size // 2
        calls = doc.engine.stats.encode_calls
        doc.edit(at, at + 1, "")
        assert doc.ids() == encode(doc.text)
        assert doc.engine.stats.encode_calls - calls <= 2
        doc.edit(at, at, pieces[i][size // 2])  # and back
        assert doc.ids() == encode(doc.text)


def test_edits_in_japanese_clauses_encode_windows_of_them(
    references: dict[str, tuple[Document, Encoder]],
) -> None:
    # Clauses of 40 kana and of 7 in turn: an edit inside a long one encodes a few of its
    # tokens, not the clause; one in a short one (whose start lies more than `reach_after` before
    # it) encodes that clause, and the long ones either side keep their tokens (they lie before
    # or after the edit, their cuts unmoved).
    doc, encode = references["o200k_base"]
    clauses = kana_clauses(doc, random.Random(11), [40, 7] * 20)
    at = 0
    for i, clause in enumerate(clauses[:-1]):
        if i % 4 in (1, 2):
            mid = at + 2 * len(clause) // 3
            edit_within(doc, encode, mid, mid + 1, "か", 12 if len(clause) > 20 else 8)
        at += len(clause)


def test_first_edits_in_japanese_clauses_encode_windows_of_them(
    references: dict[str, tuple[Document, Encoder]],
) -> None:
    # Right after opening, a full stop either side of a 40-kana clause lies within reach of
    # an edit in it (sure cuts), but the clause is one long piece: the window loop encodes a few
    # of its tokens (inner edges) rather than the whole clause at once. A 7-kana clause, short,
    # is encoded whole between its full stops.
    doc, encode = references["o200k_base"]
    kana = [chr(c) for c in range(0x3042, 0x3094)]
    rng = random.Random(13)
    clauses = ["。" + "".join(rng.choice(kana) for _ in range(n)) for n in [40, 7] * 20]
    text = "".join(clauses) + "\n"
    doc.set_text(text)
    at = 0
    for i, clause in enumerate(clauses[:-1]):
        if i % 4 in (1, 2):
            mid = at + 2 * len(clause) // 3
            edit_within(doc, encode, mid, mid + 1, "か", 12 if len(clause) > 20 else 10)
        at += len(clause)
    while doc.prepare():
        pass
    assert doc.ids() == encode(doc.text)


def test_every_known_pattern_is_fuzzed() -> None:
    assert set(pretokens.LOCAL_PATTERNS) <= set(tiktokenkit.PATTERNS.values())


# Contractions, cases, digits, ASCII and CJK punctuation next to letters (kana, kanji, hangul,
# and the letter and mark just outside the ranges sync_in trusts): where sync places are.
SYNC_ALPHABET = (
    "aZ'sStTlLdDmMvVrReE19 .,:+/=\n\r\t_-é\u0301ǅ²"
    "かア字한、。「」（）！？ー・々\u3099\u30fb\u9fff\uff21\u3000"
)


@pytest.mark.parametrize("name", sorted(tiktokenkit.PATTERNS))
@given(text=st.one_of(texts(16), st.text(alphabet=st.sampled_from(SYNC_ALPHABET), max_size=24)))
def test_a_sync_place_is_always_a_cut(name: str, text: str) -> None:
    # The premise of opening from one full encode: pre-token starts are found later by
    # scanning from a sync place (a line break before a letter, a letter before what no letter
    # run takes), which needs nothing before it.
    rx = regex.compile(tiktokenkit.PATTERNS[name])
    cuts = _cuts(rx, text)
    for i in range(1, len(text)):
        pair = text[i - 1 : i + 1]
        if pretokens.sync_in(pair, True) == 1:
            assert i in cuts, (text, i)
            assert _cuts(rx, "x" + text[i - 1 :]) >= {c - i + 2 for c in cuts if c >= i}
        # The short search an edit right after opening makes finds some of these places.
        near = pretokens.near_sync(pair, True)
        assert near == pretokens.near_sync(pair, False)
        assert near < 0 or pretokens.sync_in(pair, True) == 1, (text, i)
    # ... the last and the first of them in a longer text.
    places = [i for i in range(1, len(text)) if pretokens.near_sync(text[i - 1 : i + 1], True) == 1]
    assert pretokens.near_sync(text, True) == max(places, default=-1)
    assert pretokens.near_sync(text, False) == min(places, default=-1)


@pytest.mark.parametrize("name", REAL)
@given(data=st.data())
def test_a_long_document_opened_whole_then_edited_anywhere(
    references: dict[str, tuple[Document, Encoder]], botchan: str, name: str, data: st.DataObject
) -> None:
    # Opened from one reference encode, piece starts unknown; each edit and selection finds
    # them near itself only, and windows that reach unknown tokens widen past them.
    doc, encode = references[name]
    start = data.draw(st.integers(0, len(botchan) - 60_000), label="offset")
    doc.set_text(botchan[start : start + 60_000].replace("\n\n", "\n\n" + "x" * 70))
    unknown = sum(1 for k in range(len(doc)) if doc.toks.flag(k) & JOIN_UNKNOWN)
    assert unknown == len(doc)
    news = st.one_of(texts(6), st.sampled_from(["\n", "\nA", "x" * 80]))
    drawn_edits(doc, encode, data, 8, news, 3000)
    a = data.draw(st.integers(0, doc.length()), label="sel start")
    b = data.draw(st.integers(a, doc.length()), label="sel end")
    assert doc.encode_range(a, b) == encode(doc.text[a:b])
    still = sum(1 for k in range(len(doc)) if doc.toks.flag(k) & JOIN_UNKNOWN)
    assert still > len(doc) // 4  # found only near the edits and the selection's ends


def test_prepare_finds_every_piece_start(
    references: dict[str, tuple[Document, Encoder]], botchan: str
) -> None:
    doc, encode = references["o200k_base"]
    doc.set_text(botchan[:50_000])
    doc.edit(20_000, 20_010, "typed\nHere")
    slices = 0
    while doc.prepare(4096):
        slices += 1
    assert slices >= 10  # in slices, not all at once
    assert not any(doc.toks.flag(k) & JOIN_UNKNOWN for k in range(len(doc)))
    doc.edit(45_000, 45_000, "x y")
    assert doc.ids() == encode(doc.text)
    assert not doc.prepare()


def test_text_typed_at_the_end_leaves_no_idle_work(
    references: dict[str, tuple[Document, Encoder]], botchan: str
) -> None:
    """Once every piece start is found, typing at the very end (or deleting there and typing
    again) keeps them all found: edits do not go back to finding them (each edit after such
    a one used to search for sure cuts around it again)."""
    doc, encode = references["o200k_base"]
    doc.set_text(botchan[:5_000])
    while doc.prepare():
        pass
    edges = doc.engine.edges
    assert isinstance(edges, PreTokenEdges)
    for new in ("x", " y", "\n", "z"):
        doc.edit(doc.length(), doc.length(), new)
        assert edges.known_upto == doc.length()
    doc.edit(doc.length() - 1, doc.length(), "")
    doc.edit(doc.length(), doc.length(), "Q.")
    assert edges.known_upto == doc.length()
    assert not doc.prepare()
    assert not any(doc.toks.flag(k) & JOIN_UNKNOWN for k in range(len(doc)))
    assert doc.ids() == encode(doc.text)


def test_a_long_selection_is_counted_from_windows(
    references: dict[str, tuple[Document, Encoder]], botchan: str
) -> None:
    """A selection longer than the direct-count limit: windows at its two ends (the right one
    ends where the selection's text does), not an encode of all of it (this used to hang)."""
    doc, encode = references["o200k_base"]
    doc.set_text(botchan[:20_000])
    before = doc.engine.stats.encoded_chars
    for a, b in ((100, 15_000), (0, 20_000), (4_321, 9_999)):
        assert doc.encode_range(a, b) == encode(doc.text[a:b])
    assert doc.engine.stats.encoded_chars - before < 600


@pytest.mark.parametrize("name", REAL)
def test_characters_newer_than_our_unicode_tables(
    references: dict[str, tuple[Document, Encoder]], name: str
) -> None:
    # U+18D80 (Unicode 17) is a letter to Python's regex and unassigned to tiktoken's engine:
    # windows that read near such characters leave them to the reference. Found by fuzzing.
    doc, encode = references[name]
    newer = ["\U00018d80", "\U00011f00", "\U0002ebf0", "\U00010d40", "\U0001e5d0"]
    rng = random.Random(11)
    doc.set_text("中文字符测试，" * 3 + "a" * 129 + " word's x!" * 20)
    for _ in range(200):
        at = rng.randrange(doc.length() + 1)
        cut = rng.choice([0, 0, 1, 3])
        new = rng.choice([*newer, "a", "'s", "!", " ", "x" + rng.choice(newer) + "x", ""])
        edit_and_check(doc, encode, at, min(doc.length(), at + cut), new)
    a = rng.randrange(doc.length())
    assert doc.encode_range(a, doc.length()) == encode(doc.text[a:])


@pytest.mark.parametrize("name", REAL)
def test_first_edits_near_a_newer_character_encode_between_sure_cuts(
    references: dict[str, tuple[Document, Encoder]], name: str
) -> None:
    # Right after opening, an edit with sure cuts near it whose stretch lies near a newer
    # character: the library encodes that stretch, not the whole text.
    doc, encode = references[name]
    rng = random.Random(14)
    line = "A fox \U00018d80 jumps over the lazy dog, and a cat \U0002ebf0 sleeps.\n"
    text = line * 2_000
    for _ in range(20):
        doc.set_text(text)
        row = rng.randrange(10, 1_990)
        at = row * len(line) + rng.choice([9, 13, 24, 31, 45, 52, 60])
        new = rng.choice(["q", "", "ab", " x", "\U00018d80", "!"])
        end = at + rng.choice([0, 1, 2])
        edit_within(doc, encode, at, end, new, 1_999)


@pytest.mark.parametrize("name", REAL)
def test_edits_next_to_a_newer_character_encode_between_sure_cuts(
    references: dict[str, tuple[Document, Encoder]], name: str
) -> None:
    # A window that reads near a newer character is refused; the library then encodes the
    # stretch between the sure cuts around the edit (Japanese clauses, English words), not the
    # whole text, right after opening and once idle work is done.
    doc, encode = references[name]
    rng = random.Random(15)
    line = "今日は\U00018d80いい天気ですね。The cat \U0002ebf0 sat on a mat.\n"
    plain = "今日はいい天気ですね。The cat sat on a mat, o.\n"
    assert len(plain) == len(line)
    text = (line + plain * 19) * 100
    for prepared in (False, True):
        doc.set_text(text)
        while prepared and doc.prepare():
            pass
        for _ in range(15):
            row = 20 * rng.randrange(1, 99)  # a line with newer characters
            at = row * len(line) + rng.randrange(len(line))
            new = rng.choice(["q", "", "字", " x", "\U00018d80", "。"])
            end = min(at + rng.choice([0, 1, 2]), (row + 1) * len(line) - 1)
            old = doc.text[at:end]
            edit_within(doc, encode, at, end, new, 1_999)
            doc.edit(at, at + len(new), old)
            assert doc.text == text


@pytest.mark.parametrize("name", REAL)
def test_first_edits_in_a_long_clause_with_a_newer_character(
    references: dict[str, tuple[Document, Encoder]], name: str
) -> None:
    # Right after opening, an edit in a long clause that holds a newer character learns its
    # stretch, but the tokens near that character stay unknown: no window edge holds there nor
    # in the text not yet learned, so the library encodes the stretch (the window walked to the
    # text's ends).
    doc, encode = references[name]
    rng = random.Random(16)
    kana = [chr(c) for c in range(0x3042, 0x3094)]
    for _ in range(12):
        left = "".join(rng.choice(kana) for _ in range(40))
        right = "".join(rng.choice(kana) for _ in range(40))
        plain = "".join(rng.choice(kana) for _ in range(81))
        text = ("。" + plain) * 300 + "。" + left + "\U00018d80" + right + ("。" + plain) * 300
        doc.set_text(text)
        at = 300 * 82 + 1 + 40 + rng.choice([-3, -1, 0, 1, 2, 5])
        new = rng.choice(["q", "", "字", "\U00018d80"])
        edit_within(doc, encode, at, at, new, 999)


@pytest.mark.parametrize("name", REAL)
def test_the_guard_of_newer_characters_after_an_idle_scan(
    references: dict[str, tuple[Document, Encoder]], name: str
) -> None:
    # Idle work scans the text for newer characters; a text scanned whole without one skips
    # the guard until an edit types one (or idle work has not yet read where one lies).
    doc, encode = references[name]
    newer = ["\U00018d80", "\U00011f00", "\U0002ebf0"]
    rng = random.Random(12)
    base = "中文字符测试，" * 30 + " word's x!" * 30
    for prepared_first in (True, False):
        doc.set_text(base)
        if prepared_first:
            while doc.prepare(256):
                pass
        for step in range(120):
            at = rng.randrange(doc.length() + 1)
            end = min(doc.length(), at + rng.choice([0, 1, 3]))
            new = rng.choice([*newer, "字", "a", "'s", " ", ""] if step > 60 else ["字", "a", ""])
            edit_and_check(doc, encode, at, end, new)
            if step % 10 == 0:
                doc.prepare(100)
        while doc.prepare():
            pass
        doc.edit(0, 0, "x")
        assert doc.ids() == encode(doc.text)
        assert any(c in doc.text for c in newer)  # the guard met them


def test_the_newer_characters_guard_finds_every_one_of_them() -> None:
    """holds_newer scans for the few characters that could be newer (newer ones of the BMP, and
    any beyond it) before looking them up: every newer character is found among prose of each
    kind, and prose without one is clean."""
    newer = pretokens.newer_characters()
    prose = ["日本語の文章、「例」。", "中文字符测试，", "Ünïcödé — “quoted”… ", "a b\n"]
    for c in sorted(newer):
        for text in prose:
            assert pretokens.holds_newer(newer, text + c + text), hex(ord(c))
    rng = random.Random(5)
    older = [
        chr(c) for c in range(0x80, 0x30000) if chr(c) not in newer and not 0xD800 <= c < 0xE000
    ]
    for _ in range(2_000):
        text = "".join(rng.choice(older) for _ in range(rng.randrange(1, 40)))
        assert not pretokens.holds_newer(newer, text)
    assert not pretokens.holds_newer({}, "\U00018d80")


RUN_EDITS = ["q", "qq", "", "Q", "1", " ", "'s", "é", "ab cd", "\n", "aaaa", "x'"]


@pytest.mark.parametrize("name", REAL)
@pytest.mark.parametrize("letters", ["abcdefghij", "a"])
def test_the_first_edit_inside_a_long_run_of_letters_reads_only_near_it(
    references: dict[str, tuple[Document, Encoder]], name: str, letters: str
) -> None:
    """Right after opening, an edit far inside a run of lower-case letters marks the tokens near
    it as continuing the run's pre-token instead of scanning the run back to its start. Edits
    that keep the run leave most of its tokens unknown; those that cut it, or whose change
    ripples far ("a" repeated), find its true ends: the piece starts it finds are those idle
    work finds. Each equals the library's encode, and so do the edits after it and the tokens
    once idle work is done."""
    doc, encode = references[name]
    rng = random.Random(12)
    run = "".join(rng.choice(letters) for _ in range(20_000))
    base = "x = '" + run + "' and more words\n" + run[:3_000] + "\n"
    spots = [10_000, 5 + 420, 5 + 385, 20_005 - 400, 20_005 - 384, 12_345]
    for i, at in enumerate(spots * 2):
        new = RUN_EDITS[i % len(RUN_EDITS)]
        cut = i % 3
        doc.set_text(base)
        expected = base[:at] + new + base[at + cut :]
        doc.edit(at, at + cut, new)
        assert doc.ids() == encode(expected), (at, cut, new)
        unknown = sum(1 for k in range(len(doc)) if doc.toks.flag(k) & JOIN_UNKNOWN)
        if new in ("q", "qq", "", "aaaa") and letters != "a" and 1_000 < at < 19_000:
            assert unknown > len(doc) * 9 // 10  # found near the edit only
        # What the edit found of piece starts is what idle work finds in a fresh document.
        fresh = Document(doc.model, doc.text)
        while fresh.prepare():
            pass
        found = [(k, doc.toks.flag(k)) for k in range(len(doc))]
        known = [(k, f) for k, f in found if not f & JOIN_UNKNOWN]
        assert known == [(k, fresh.toks.flag(k)) for k, _ in known], (at, new)
        for _ in range(3):
            at2 = rng.randrange(max(0, at - 600), min(doc.length() - 1, at + 600))
            new2 = rng.choice(RUN_EDITS)
            expected = doc.text[:at2] + new2 + doc.text[at2 + 1 :]
            doc.edit(at2, at2 + 1, new2)
            assert doc.ids() == encode(expected), (at, at2, new2)
    while doc.prepare():
        pass
    assert doc.ids() == encode(doc.text)


@pytest.mark.parametrize("name", REAL)
def test_edits_inside_a_long_piece_do_not_scan_it(
    references: dict[str, tuple[Document, Encoder]], name: str
) -> None:
    doc, encode = references[name]
    rng = random.Random(8)
    doc.set_text("x = " + "".join(rng.choice("abcdefgh") for _ in range(30_000)) + "\n")
    while doc.prepare():
        pass
    before = doc.engine.stats.scanned_chars
    for _ in range(40):
        at = rng.randrange(100, doc.length() - 100)
        doc.edit(at, at + rng.choice([0, 1, 2]), rng.choice(["q", "ab", ""]))
    assert doc.ids() == encode(doc.text)
    # Lower-case letters into lower-case letters: the piece keeps its start and end.
    assert doc.engine.stats.scanned_chars - before < 2_000
    # These split it, or join what they split: read from inside the run to inside it
    # (tokenline.core.runcuts), not from its start to its end.
    for at, end, new in ((15_000, 15_000, "Q1 "), (15_000, 15_003, ""), (9_000, 9_000, " ")):
        before = doc.engine.stats.scanned_chars
        doc.edit(at, end, new)
        assert doc.ids() == encode(doc.text), (at, end, new)
        assert 0 < doc.engine.stats.scanned_chars - before < 400


WIDE_PIECES = [" " * 150, "-" * 130 + "\n", "東京都の" * 30 + "。", "\n" * 90, "'" * 70, "word "]


@pytest.mark.parametrize("name", REAL)
@given(data=st.data())
def test_first_edits_whose_windows_reach_past_what_they_learned_first(
    references: dict[str, tuple[Document, Encoder]], name: str, data: st.DataObject
) -> None:
    # An edit right after opening learns piece starts a few dozen characters around itself;
    # pieces of white space, punctuation and Japanese longer than that make its window widen
    # past them, and it learns more outward from text the edit did not change.
    doc, encode = references[name]
    parts = data.draw(st.lists(st.sampled_from(WIDE_PIECES), min_size=40, max_size=60))
    text = "".join(parts)
    doc.set_text(text)
    at = data.draw(st.integers(0, len(text)), label="at")
    end = min(len(text), at + data.draw(st.integers(0, 200), label="cut"))
    new = data.draw(st.one_of(texts(4), st.sampled_from(WIDE_PIECES)), label="new")
    doc.edit(at, end, new)
    expected = text[:at] + new + text[end:]
    assert doc.ids() == encode(expected), (at, end, new)
    at = data.draw(st.integers(0, doc.length()), label="second")
    doc.edit(at, at, "x")
    assert doc.ids() == encode(expected[:at] + "x" + expected[at:])


def _cross_script_model(pattern: str) -> Model:
    """Bytes, plus '장' and '장S': a token across a pre-token cut that o200k's and Tekken's
    patterns make or not by what follows a run of capitals."""
    tokens = [bytes([b]) for b in range(256)]
    for word in ("장".encode(), "장S".encode()):
        tokens += [word[:k] for k in range(2, len(word) + 1) if word[:k] not in tokens]
    ranks = {t: i for i, t in enumerate(tokens)}
    enc = tiktoken.Encoding(
        "cross-script", pat_str=pattern, mergeable_ranks=ranks, special_tokens={}
    )
    return model_from_encoding(enc)


@pytest.mark.parametrize("pattern", [pretokens.O200K, pretokens.TEKKEN])
@pytest.mark.parametrize("prepared", [False, True])
def test_a_cut_before_capitals_waits_for_what_follows_them(pattern: str, prepared: bool) -> None:
    # ' 문장' stops before 'SELECT ' (no lower-case letter after the capitals) but takes
    # 'SELETh' whole: the cut before 'S' was kept for an edit four capitals on (merged 장S lost).
    model = _cross_script_model(pattern)
    doc = Document(model, "plain words.\n한국어 문장SELECT id\n")
    while prepared and doc.prepare():
        pass
    doc.edit(23, 25, "Th")
    assert doc.text == "plain words.\n한국어 문장SELETh id\n"
    assert doc.ids() == model.encode(doc.text)
