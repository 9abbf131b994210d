"""Edits that split, join or border long words of WordPiece and WordLevel files, settled from a
bounded read around the edit (tokenline.core.longwords): white space or punctuation typed inside
a long word, the space between two long words deleted, a short word added at one's edge.

The texts hold words past the read's reach (so that the read starts or ends inside them), words
near the family's limit, characters the normalizers delete, map to white space, split off
(Chinese characters) or strip (accents), and added tokens. After every edit the document's ids
are the tokenizers library's encode of its text, and its token lengths those of a document
opened on that text (one full encode).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core import hfkit
from tests.core.test_hf_family import Judge, check_document
from tests.core.test_hf_long_words import FILES, small_judges
from tokenline.core import Document
from tokenline.core.hfwordlevel import WordLevelLength
from tokenline.core.hfwordpiece import WordPieceLength
from tokenline.core.longwords import LONG_READS, LongWordEdges, LongWords

# Small files with limits of 8 (WordPiece) and 18 (WordLevel), files trained on Botchan, and
# BERT's own file (a limit of 100).
SMALL = sorted(FILES)
TRAINED = ["wp-lower-chinese", "wp-cased-accents", "wordlevel", "wordlevel-bert-nfkc"]
BERT = "bert-base-uncased"
BERT_FILE = Path(__file__).resolve().parents[1] / "data" / "tokenizers" / BERT / "tokenizer.json"
NAMES = [*SMALL, *TRAINED, BERT]


@pytest.fixture(scope="session")
def split_judges(tmp_path_factory: pytest.TempPathFactory, botchan: str) -> dict[str, Judge]:
    out = tmp_path_factory.mktemp("long-splits")
    found = small_judges(out)
    for name in TRAINED:
        found[name] = Judge(name, hfkit.train(name, out, botchan))
    found[BERT] = Judge(BERT, BERT_FILE)
    return found


def _rule(judge: Judge) -> LongWords:
    edges = Document(judge.model, "a b").engine.edges
    assert isinstance(edges, LongWordEdges), judge.name
    return edges.rule


def _limit(rule: LongWords) -> int:
    """The longest word that is not one token for its length alone."""
    if isinstance(rule, WordPieceLength):
        return int(rule.limit)
    assert isinstance(rule, WordLevelLength)
    return int(rule.longest)


def check_layout(judge: Judge, doc: Document, text: str) -> None:
    """check_document, and the tokens' lengths are a freshly opened document's."""
    check_document(judge, doc, text)
    toks = doc.engine.toks
    fresh = Document(judge.model, text).engine.toks
    assert toks.lengths(0, toks.size()) == fresh.lengths(0, fresh.size())


# Characters that join into words (some deleted, stripped or composed by a normalizer), and
# what ends words: white space, punctuation, Chinese characters, characters BERT's normalizer
# maps to a space, added tokens' texts.
LETTERS = ["a", "b", "e", "q", "é", "e\u0301", "\u0301", "A", "İ", "ß", "x", "\x01", "\u200b"]
BREAKS = [" ", "  ", ",", ".", "中", "\t", "\n", "\u3000", "\u00a0", "-", "'", "\x0b"]
ADDED = ["abq", "[CLS]", "<tool>", "[UNK]", "unk", "[SEP]"]


@st.composite
def long_text(draw: st.DrawFn, limit: int, reach: int) -> str:
    """Words of every length that matters (around the limit, around the read's reach, well past
    it), with breaks between them."""
    long_from = LONG_READS * reach
    sizes = st.one_of(
        st.integers(1, 4),
        st.integers(max(1, limit - 2), limit + 2),
        st.integers(long_from - 3, long_from + 3),
        st.integers(long_from, 4 * long_from),
    )
    parts: list[str] = []
    for _ in range(draw(st.integers(1, 5), label="words")):
        pattern = "".join(draw(st.lists(st.sampled_from(LETTERS), min_size=1, max_size=4)))
        size = draw(sizes, label="size")
        parts.append((pattern * (size // len(pattern) + 1))[:size])
        parts.append(draw(st.sampled_from(BREAKS + ADDED + [" " + a + " " for a in ADDED])))
    return "".join(parts)


def _near_break(text: str, data: st.DataObject) -> int:
    """A place at or beside a break of the text (a word's edge), or anywhere."""
    edges = [i for i, c in enumerate(text) if c in " ,.中\t\n\u3000\u00a0-'"]
    if not edges or data.draw(st.booleans(), label="anywhere"):
        return data.draw(st.integers(0, len(text)), label="at")
    at = data.draw(st.sampled_from(edges), label="edge") + data.draw(st.integers(-2, 2))
    return min(max(at, 0), len(text))


inserts = st.one_of(
    st.sampled_from(BREAKS + ADDED),
    st.lists(st.sampled_from(LETTERS + BREAKS), min_size=1, max_size=4).map("".join),
    st.tuples(st.sampled_from(["ab", "x", "é", "[UNK]"]), st.sampled_from(BREAKS)).map("".join),
    st.tuples(st.sampled_from(BREAKS), st.sampled_from(["ab", "x", "é"])).map("".join),
    st.just(""),
)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=max(100, settings().max_examples))
@given(data=st.data())
def test_splits_and_joins_around_long_words(
    split_judges: dict[str, Judge], name: str, data: st.DataObject
) -> None:
    judge = split_judges[name]
    rule = _rule(judge)
    text = data.draw(long_text(_limit(rule), int(rule.reach)), label="text")
    doc = Document(judge.model, text)
    check_layout(judge, doc, text)
    for _ in range(data.draw(st.integers(1, 8), label="steps")):
        start = _near_break(text, data)
        # A few characters, or a stretch from one long word into another.
        far = st.integers(start, len(text))
        end = data.draw(st.integers(start, min(len(text), start + 4)) | far, label="end")
        new = data.draw(inserts, label="new")
        text = text[:start] + new + text[end:]
        doc.edit(start, end, new)
        check_layout(judge, doc, text)


def _long(n: int) -> str:
    return ("abé" * (n // 3 + 1))[:n]


@pytest.mark.parametrize("name", NAMES)
def test_a_split_or_join_reads_a_bounded_stretch(split_judges: dict[str, Judge], name: str) -> None:
    """Two words of 6,000 letters: a space, a comma or a Chinese character typed in one's middle,
    the space between them deleted and typed again, short words added at their edges. Each
    edit encodes a few reaches of text, not the words."""
    judge = split_judges[name]
    reach = int(_rule(judge).reach)
    text = "x. " + _long(6000) + " " + _long(6000) + " .x"
    doc = Document(judge.model, text)
    stats = doc.engine.stats
    for at, end, new in [
        (3000, 3000, " "),
        (3000, 3001, ""),
        (3000, 3000, ","),
        (4000, 4000, "中"),
        (6003, 6004, ""),
        (6003, 6003, " "),
        (3, 3, "ab "),
        (6006, 6006, " ab"),
        (6010, 6010, "q, "),
    ]:
        chars = stats.encoded_chars
        text = text[:at] + new + text[end:]
        doc.edit(at, end, new)
        check_layout(judge, doc, text)
        assert stats.encoded_chars - chars < 8 * reach, (at, new)


@pytest.mark.parametrize("name", [n for n in NAMES if n.startswith(("wp-", "bert"))])
def test_a_letter_typed_among_deleted_characters_joins_the_word_before(
    split_judges: dict[str, Judge], name: str
) -> None:
    """A token of more than a reach of characters BERT's normalizer deletes, then a full stop:
    the read starts at that token, whose deleted characters alone cannot show that the word
    before it still ends there; a letter typed among them joins "xy" to it."""
    judge = split_judges[name]
    reach = int(_rule(judge).reach)
    text = "xy" + "\x01" * (reach + 5) + ". b " + _long(6 * reach) + " c"
    doc = Document(judge.model, text)
    at = 2 + reach + 3
    for start, end, new in [(at, at, "z"), (at, at + 1, ""), (at + 1, at + 1, " ")]:
        text = text[:start] + new + text[end:]
        doc.edit(start, end, new)
        check_layout(judge, doc, text)


@pytest.mark.parametrize("name", [n for n in NAMES if n.startswith(("wp-", "bert"))])
def test_a_long_token_of_deleted_characters_is_not_a_long_word(
    split_judges: dict[str, Judge], name: str
) -> None:
    """A word past the limit, then a token of a space, more than two reaches of deleted
    characters and a comma: deleting the space, the read ends inside that token among deleted
    characters that join the word before it, but its unread part holds the comma, a word of its
    own (found by hypothesis)."""
    judge = split_judges[name]
    rule = _rule(judge)
    at = _limit(rule) + 1
    text = "a" * at + " " + "\x01" * (2 * int(rule.reach) + 1) + ","
    doc = Document(judge.model, text)
    text = text[:at] + text[at + 1 :]
    doc.edit(at, at + 1, "")
    check_layout(judge, doc, text)
