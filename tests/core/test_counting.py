"""A text counted in chunks (tokenline.core.counting, what `tokenline count` does with a file)
has exactly as many tokens as the reference library's encode of the whole text, wherever the
chunks end: inside words, inside runs of white space, between CR and LF, inside lines of
hundreds of thousands of characters without a break."""

from __future__ import annotations

import base64
import itertools
import random
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import sentencepiece as spm
import tiktoken
import tokenizers
from hypothesis import given
from hypothesis import strategies as st

from tests import tiktokencache
from tests.conftest import DATA, read_botchan, tekken_path
from tokenline.core import Model, bundled_model_path, load_model
from tokenline.core.counting import UNCOUNTED, TokenCounter, count_text

Encoder = Callable[[str], list[int]]
GPT2 = DATA / "tokenizers" / "gpt2" / "tokenizer.json"
NAMES = ["mistral", "o200k_base", "cl100k_base", "tekken", "gpt2"]


def _reference(name: str) -> tuple[Model, Encoder]:
    if name == "mistral":
        sp = spm.SentencePieceProcessor(model_file=str(bundled_model_path("mistral-7b-v0.1")))
        return load_model("mistral-7b-v0.1"), sp.encode
    if name == "tekken":
        from mistral_common.tokens.tokenizers.tekken import Tekkenizer

        tk = Tekkenizer.from_file(str(tekken_path()))
        return load_model(tekken_path()), lambda t: list(tk.encode(t, bos=False, eos=False))
    if name == "gpt2":
        hf = tokenizers.Tokenizer.from_file(str(GPT2))
        return load_model(GPT2), lambda t: hf.encode(t, add_special_tokens=False).ids
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIKTOKEN_CACHE_DIR", str(tiktokencache.session_cache()))
        enc = tiktoken.get_encoding(name)
        return load_model(name), enc.encode_ordinary


class References(dict[str, tuple[Model, Encoder]]):
    """Each model with its reference encoder, loaded when a test first asks for it."""

    def __missing__(self, name: str) -> tuple[Model, Encoder]:
        self[name] = _reference(name)
        return self[name]


REFERENCES = References()


def japanese(n: int, seed: int) -> str:
    rng = random.Random(seed)
    words = [
        "吾輩は",
        "猫である。",
        "名前は",
        "まだ無い。",
        "どこで",
        "生れたか",
        "とんと",
        "見当が",
    ]
    extra = ["🐈", "e\u0301", "Ａ", "\u3000", "\n", "、"]
    pieces = [
        rng.choice(words) + (rng.choice(extra) if rng.random() < 0.2 else "") for _ in range(n)
    ]
    return "".join(pieces)


def texts() -> dict[str, str]:
    """Texts whose chunk ends fall in awkward places (each a few tens of thousands of
    characters: several of the counter's blocks)."""
    botchan = read_botchan()
    rng = random.Random(3)
    b64 = base64.b64encode(rng.randbytes(60_000)).decode("ascii")
    return {
        "prose": botchan[:90_000],
        "crlf": botchan[:60_000].replace("\n", "\r\n"),
        "japanese": japanese(12_000, 1),
        "base64 line": b64,
        "aB3+/ line": "aB3+/" * 20_000,
        "letter run": "x" * 70_000 + " then words",
        "space runs": "".join(
            " " * rng.randrange(1, 40) + "w" * rng.randrange(1, 9) for _ in range(6_000)
        ),
        "mixed": "".join(
            rng.choice(["\r\n", "\r", "\n\n", "\t", " ", "a", "的", "'s", "123", "é"])
            for _ in range(40_000)
        ),
        "leading spaces": "   \n\n  " + botchan[:20_000] + "  \n  ",
    }


TEXTS = texts()


def chunks(text: str, sizes: list[int]) -> Iterator[str]:
    """text cut into pieces of the given sizes in turn."""
    i = 0
    k = 0
    while i < len(text):
        j = i + sizes[k % len(sizes)]
        yield text[i:j]
        i = j
        k += 1


def counted(model: Model, pieces: Iterator[str]) -> int:
    counter = TokenCounter(model)
    for piece in pieces:
        counter.feed(piece)
    return int(counter.finish())


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("kind", sorted(TEXTS))
def test_chunked_counts_equal_the_reference(name: str, kind: str) -> None:
    model, encode = REFERENCES[name]
    text = TEXTS[kind]
    expected = len(encode(text))
    assert TokenCounter(model).streams(), f"{name} no longer counts in chunks"
    for sizes in ([len(text)], [1 << 16], [7, 3, 1, 4099], [65_537, 2], [12_345]):
        assert counted(model, chunks(text, sizes)) == expected, (name, kind, sizes)


@pytest.mark.parametrize("name", NAMES)
def test_chunks_of_one_character_and_cuts_between_cr_and_lf(name: str) -> None:
    model, encode = REFERENCES[name]
    text = read_botchan()[:4_000].replace("\n", "\r\n") + "  \r\n\r\n" + japanese(300, 2)
    assert counted(model, iter(text)) == len(encode(text))
    at_cr = text.split("\r")
    pieces = iter([*(p + "\r" for p in at_cr[:-1]), at_cr[-1]])
    assert counted(model, pieces) == len(encode(text))


@pytest.mark.parametrize("name", NAMES)
@given(
    text=st.lists(
        st.sampled_from([*"ab \n\r\t'é的🐈0.,-_", "\u2581", "\u3000", "  ", "\r\n"]),
        max_size=300,
    ).map("".join),
    cuts=st.lists(st.integers(0, 400), max_size=12),
)
def test_any_text_cut_anywhere(name: str, text: str, cuts: list[int]) -> None:
    model, encode = REFERENCES[name]
    bounds = sorted({min(c, len(text)) for c in cuts} | {0, len(text)})
    pieces = iter([text[a:b] for a, b in itertools.pairwise(bounds)])
    assert counted(model, pieces) == len(encode(text))
    assert count_text(model, text) == len(encode(text))


def test_the_empty_text_has_no_tokens() -> None:
    model, _ = REFERENCES["mistral"]
    assert counted(model, iter([])) == 0
    assert counted(model, iter(["", ""])) == 0


def test_an_added_token_across_chunks_hands_the_count_to_one_encode() -> None:
    """GPT-2's "<|endoftext|>" is matched before pre-tokenizing: a text holding it cannot be
    counted segment by segment, even when the chunks cut it in two."""
    model, encode = REFERENCES["gpt2"]
    text = "some words <|endof" + "text|> and more words\n" * 3
    counter = TokenCounter(model)
    counter.feed(text[:18])
    counter.feed(text[18:])
    assert counter.finish() == UNCOUNTED
    assert count_text(model, text) == len(encode(text))


def test_a_model_that_cannot_stream_says_so(tmp_path: Path) -> None:
    """RoBERTa's tokenizer.json (byte-level with a post-processor's offsets trimmed) opens by one
    encode: its count is the reference's all the same."""
    path = DATA / "tokenizers" / "roberta-base" / "tokenizer.json"
    model = load_model(path)
    hf = tokenizers.Tokenizer.from_file(str(path))
    text = read_botchan()[:5_000]
    counter = TokenCounter(model)
    counter.feed(text)
    assert counter.finish() == UNCOUNTED
    assert count_text(model, text) == len(hf.encode(text, add_special_tokens=False).ids)


@pytest.mark.parametrize("name", NAMES)
def test_one_counter_counts_text_after_text_alone(name: str) -> None:
    """count_alone (a chat file's messages, one counter for them all) counts each text as the
    reference encodes it alone, whatever the counter counted before: a message left half-way
    (fed, not finished) leaves nothing behind either."""
    model, encode = REFERENCES[name]
    rng = random.Random(5)
    botchan = read_botchan()
    pieces = ["", " ", "  lead and trail  ", "\r\n", japanese(40, 3), "x" * 3_000, "\u2581a"]
    for _ in range(60):
        a = rng.randrange(0, len(botchan) - 600)
        pieces.append(botchan[a : a + rng.randrange(0, 600)])
    rng.shuffle(pieces)
    counter = TokenCounter(model)
    counter.feed("a message left half-way ")
    got = [int(counter.count_alone(p)) for p in pieces]
    assert got == [len(encode(p)) for p in pieces]


def test_count_alone_of_a_text_with_an_added_token_is_left_to_the_encode() -> None:
    model, encode = REFERENCES["gpt2"]
    counter = TokenCounter(model)
    assert counter.count_alone("words <|endoftext|> words") == UNCOUNTED
    assert counter.count_alone("words and words") == len(encode("words and words"))


WORDY = st.lists(
    st.sampled_from(
        [*"ab \n\t'é的0", "the", "word", "\u2581", "\u2581a", "\u3000", "  ", "   ", "x" * 70]
    ),
    max_size=80,
).map("".join)


@given(texts=st.lists(WORDY, min_size=1, max_size=8))
def test_count_alone_splitting_at_spaces_counts_as_the_reference(texts: list[str]) -> None:
    """count_alone splits prose at its spaces (Mistral's escaped spaces and dummy prefix) and
    keeps each word's count: runs of spaces, leading and trailing ones, a text holding the space
    symbol itself, words too long for the cache, in any order, count as the reference's."""
    model, encode = REFERENCES["mistral"]
    counter = TokenCounter(model)
    assert counter.splits_raw
    for text in [*texts, *texts]:  # the second time through the counts kept
        assert counter.count_alone(text) == len(encode(text)), text


# Trained models that count in chunks (identity normalization, white space kept), whose
# count_alone splits the text itself ("dummy"), the normalized text ("no dummy"),
# or leaves the cut to the segmenter ("suffix").
STREAMING = {
    "dummy": {},
    "no dummy": {"add_dummy_prefix": False},
    "suffix": {"treat_whitespace_as_suffix": True},
}


@pytest.fixture(scope="module")
def streaming(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("streaming")
    paths = {}
    for i, (name, options) in enumerate(STREAMING.items()):
        prefix = out / f"m{i}"
        options = {"model_type": "bpe", **options}
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(read_botchan().splitlines()[:3000]),
            model_prefix=str(prefix),
            vocab_size=800,
            normalization_rule_name="identity",
            remove_extra_whitespaces=False,
            hard_vocab_limit=False,
            minloglevel=2,
            num_threads=1,
            **options,
        )
        paths[name] = prefix.with_suffix(".model")
    return paths


@pytest.mark.parametrize("name", sorted(STREAMING))
def test_count_alone_of_normalized_text_split_at_its_space_symbols(
    name: str, streaming: dict[str, Path]
) -> None:
    """A SentencePiece model without a dummy prefix splits the normalized text at its space
    symbols; space as suffix keeps the segmenter's own cut; each
    counts as the reference's."""
    sp = spm.SentencePieceProcessor(model_file=str(streaming[name]))
    counter = TokenCounter(load_model(streaming[name]))
    assert counter.streams()
    assert counter.splits_raw == (name == "dummy")
    assert (counter.space == "") == (name == "suffix")
    rng = random.Random(11)
    botchan = read_botchan()
    pieces = ["", " ", "  lead  and   trail  ", "a\u2581b", "\u2581\u2581x", "y" * 90 + " z"]
    for _ in range(40):
        a = rng.randrange(0, len(botchan) - 400)
        pieces.append(botchan[a : a + rng.randrange(0, 400)])
    for text in pieces * 2:
        assert counter.count_alone(text) == len(sp.encode(text)), (name, text)
    assert (len(counter.words) > 0) == (name != "suffix")
