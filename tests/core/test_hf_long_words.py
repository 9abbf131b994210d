"""Edits inside long words of WordPiece and WordLevel files (tokenline.core.longwords): a word
past WordPiece's max_input_chars_per_word, or longer than any WordLevel vocabulary word, is one
unknown token, and an edit inside it is settled from a bounded read around the edit.

The files are built here with small limits (a word of 8 normalized characters is the longest
WordPiece splits), so that hypothesis's words cross them both ways: characters the normalizer
deletes, splits, expands or composes (control characters, accents as marks, Chinese characters,
İ, ligatures), white space and punctuation that end a word, added tokens made of letters (one of
them the unknown token's own content) and vocabularies with entries longer than the limit. After
every edit the document's ids are the tokenizers library's encode of its text.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import AddedToken, Tokenizer, models, normalizers
from tokenizers import pre_tokenizers as pre

from tests.core.test_hf_family import Judge, check_document
from tokenline.core import Document
from tokenline.core.longwords import LongWordEdges

LIMIT = 8
PIECES = ["a", "b", "ab", "ba", "é", "e", "i", "abababababab", "aaaaaaaaaaaaaaaaaaaaa"]


def _wordpiece(prefix: str, normalizer: object, unk: str) -> Tokenizer:
    vocab = {unk: 0, "[CLS]": 1, ".": 2, "中": 3}
    for piece in PIECES:
        for form in (piece, prefix + piece):
            vocab.setdefault(form, len(vocab))
    tok = Tokenizer(
        models.WordPiece(
            vocab, unk_token=unk, max_input_chars_per_word=LIMIT, continuing_subword_prefix=prefix
        )
    )
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre.BertPreTokenizer()
    tok.add_special_tokens([unk, "[CLS]"])
    tok.add_tokens([AddedToken("abq", normalized=False), AddedToken("<tool>", normalized=False)])
    return tok


def _wordlevel(pre_tokenizer: object, normalizer: object, unk: str) -> Tokenizer:
    words = [unk, "[CLS]", "a", "ab", "abab", "é", "x" * 12, "ab" * 9, "."]
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token=unk))
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizer
    tok.add_special_tokens([unk, "[CLS]"])
    tok.add_tokens([AddedToken("abq", normalized=False)])
    return tok


FILES = {
    "wp-bert-lower": lambda: _wordpiece("##", normalizers.BertNormalizer(lowercase=True), "[UNK]"),
    "wp-bert-cased": lambda: _wordpiece(
        "##", normalizers.BertNormalizer(lowercase=False, strip_accents=False), "[UNK]"
    ),
    "wp-no-chinese-at": lambda: _wordpiece(
        "@@", normalizers.BertNormalizer(handle_chinese_chars=False, strip_accents=True), "[UNK]"
    ),
    "wp-plain-unk-letters": lambda: _wordpiece("##", None, "unk"),
    "wl-whitespace": lambda: _wordlevel(pre.Whitespace(), None, "[UNK]"),
    "wl-split-lower": lambda: _wordlevel(pre.WhitespaceSplit(), normalizers.Lowercase(), "unk"),
    "wl-bert-nfkc": lambda: _wordlevel(pre.BertPreTokenizer(), normalizers.NFKC(), "[UNK]"),
    "wl-nfd-lower": lambda: _wordlevel(
        pre.Whitespace(), normalizers.Sequence([normalizers.NFD(), normalizers.Lowercase()]), "unk"
    ),
}


def small_judges(out: Path) -> dict[str, Judge]:
    """Judges of the FILES, each saved under `out`."""
    found: dict[str, Judge] = {}
    for name, build in FILES.items():
        path = out / name / "tokenizer.json"
        path.parent.mkdir()
        build().save(str(path))
        found[name] = Judge(name, Path(path))
    return found


@pytest.fixture(scope="session")
def long_judges(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Judge]:
    return small_judges(tmp_path_factory.mktemp("long-words"))


# Word characters, ones the normalizers delete, expand, split or compose, and ones that end words.
LETTERS = ["a", "b", "ab", "q", "é", "e\u0301", "\u0301", "A", "İ", "ß", "ﬁ", "x", "\x01", "\ufffd"]
BREAKS = [" ", "  ", ".", "中", "\t", "\u3000", "-", "abq", "[CLS]", "unk", "[UNK]", "<tool>"]
word = st.one_of(
    st.lists(st.sampled_from(LETTERS), min_size=1, max_size=30).map("".join),
    st.lists(st.sampled_from(["a", "b", "ab", "é"]), min_size=8, max_size=40).map("".join),
)
word_and_break = st.tuples(word, st.sampled_from(BREAKS)).map("".join)
texts = st.lists(word_and_break, min_size=1, max_size=5).map("".join)
inserts = st.one_of(
    word, st.sampled_from(BREAKS), st.lists(st.sampled_from(LETTERS + BREAKS)).map("".join)
)


def test_the_files_get_long_word_edges(long_judges: dict[str, Judge]) -> None:
    for name, judge in long_judges.items():
        doc = Document(judge.model, "a b")
        assert isinstance(doc.engine.edges, LongWordEdges), name


@pytest.mark.parametrize("name", sorted(FILES))
@given(text=texts, data=st.data())
def test_edits_in_words_near_the_limits(
    long_judges: dict[str, Judge], name: str, text: str, data: st.DataObject
) -> None:
    judge = long_judges[name]
    doc = Document(judge.model, text)
    check_document(judge, doc, text)
    for _ in range(data.draw(st.integers(1, 12), label="steps")):
        start = data.draw(st.integers(0, doc.length()), label="start")
        end = data.draw(st.integers(start, min(doc.length(), start + 3)), label="end")
        new = data.draw(inserts, label="new")
        text = text[:start] + new + text[end:]
        doc.edit(start, end, new)
        check_document(judge, doc, text)


@pytest.mark.parametrize("name", sorted(FILES))
def test_an_edit_inside_a_long_word_reads_around_it(
    long_judges: dict[str, Judge], name: str
) -> None:
    """A word of 5,000 letters is one unknown token; an edit in its middle encodes nothing and
    reads a few dozen characters, and the word's token keeps its place and grows."""
    judge = long_judges[name]
    text = "x. " + "ab" * 2500 + " .x"
    doc = Document(judge.model, text)
    stats = doc.engine.stats
    for at, end, new in ((2000, 2001, "b"), (3000, 3000, "aaa"), (10, 14, "")):
        chars, scanned = stats.encoded_chars, stats.scanned_chars
        text = text[:at] + new + text[end:]
        doc.edit(at, end, new)
        check_document(judge, doc, text)
        assert stats.encoded_chars == chars
        assert 0 < stats.scanned_chars - scanned < 200
    assert judge.model.unk_id in doc.ids()


@pytest.mark.parametrize("name", sorted(FILES))
def test_words_grown_and_cut_across_the_limit(long_judges: dict[str, Judge], name: str) -> None:
    """A word of exactly the limit, one over it, and edits that take it over and back; a word
    made long by characters the normalizer deletes (which count for nothing)."""
    judge = long_judges[name]
    for text, edits in [
        ("x " + "a" * LIMIT + " y", [(4, 4, "b"), (4, 5, ""), (5, 5, "\x01\x01"), (3, 6, "")]),
        ("x " + "ab" * 9 + " y", [(5, 5, "b"), (5, 6, ""), (6, 7, "")]),
        ("x a" + "\x01" * 40 + "b y", [(20, 20, "a"), (20, 21, "")]),
        ("x " + "e\u0301" * 12 + " y", [(6, 6, "\u0301\u0301"), (5, 9, ""), (4, 4, " ")]),
        ("unk" + "a" * 30 + " abq", [(2, 3, "kz"), (1, 2, ""), (34, 34, "b")]),
    ]:
        doc = Document(judge.model, text)
        check_document(judge, doc, text)
        for start, end, new in edits:
            text = text[:start] + new + text[end:]
            doc.edit(start, end, new)
            check_document(judge, doc, text)
