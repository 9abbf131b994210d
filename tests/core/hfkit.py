"""Hugging Face tokenizer.json files for the tests, trained here with the `tokenizers` trainers.

Each configuration changes how the file normalizes, pre-tokenizes or merges text; training on a
slice of Botchan plus a few synthetic sentences keeps each one well under a second.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from tokenizers import (
    AddedToken,
    Regex,
    Tokenizer,
    decoders,
    models,
    normalizers,
    processors,
    trainers,
)
from tokenizers import pre_tokenizers as pre

from tests.core.modelkit import CUSTOM_RULES, EXTRA_SENTENCES
from tokenline.core import pretokens
from tokenline.core.pretokenflags import INNER_PRETOKEN_CHARS, INNER_WIDE_CHARS

# A GPT-4 style pre-tokenizer pattern (run by a Split, then ByteLevel without its own regex), as
# Llama 3's file writes it.
GPT4_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
assert GPT4_PATTERN == pretokens.CL100K_OLD
SYNTHETIC = [
    *EXTRA_SENTENCES,
    "12345 678,901.23 2024-06-01 0x7fff 3.14159 1e-9 9999999",
    "aaaaaaaaaaaaaaaaaaaaaaaa bbbbbbbbbbbb ------------ ============ ............",
    "https://example.com/path/to/page?query=1&other=2#anchor",
    "line one\r\nline two\r\n\r\n\ttabbed\n    indented\n",
    "漢字かなカナ 全角　スペース 한국어 😀😀😀 🧑\u200d💻 👍🏽 ❤️",
    "Z\u0351\u0362a\u034el n\u0303o \u0915\u094d\u0937 a\u0308",
]
# WordPiece models Tokenline re-encodes in windows of whole words.
WORD_WINDOWED = {"wp-lower-chinese", "wp-cased-accents", "untyped-wp"}
# Metaspace models that split, re-encoded in windows cut before spaces.
SPACE_WINDOWED = {
    "meta-always-split",
    "meta-first-split",
    "meta-never-split",
    "unigram",
    "unigram-nfkc-lower-replace",
    "unigram-t5",
    "unigram-albert",
    "unigram-wsplit-custom",
    "unigram-first-nfkc",
    "unigram-byte-fallback",
    "untyped-unigram",
}
# Byte-level BPE files Tokenline edits piece by piece (the rest of CONFIGS re-encode whole), and
# which of them take a piece found in the vocabulary as one token (BPE's ignore_merges, as Llama
# 3's file does).
PIECEWISE = {
    "bl-gpt2",
    "bl-gpt4",
    "bl-gpt2-ignore",
    "bl-llama3",
    "bl-qwen2",
    "bl-o200k",
    "bl-tekken-ignore",
    "bl-r50k",
    "untyped-bl-gpt2",
}
IGNORE_MERGES = {"bl-gpt2-ignore", "bl-llama3", "bl-tekken-ignore"}
# Byte-level BPE files after a Unicode normalizer, their normalized text kept in step and edited
# piece by piece; WordLevel files, edited by windows of whole words.
NORMALIZED_PIECEWISE = {
    "bl-gpt2-nfc",
    "bl-qwen2-nfc",
    "bl-gpt4-nfkc",
    "bl-gpt2-nfd-lower",
    "bl-o200k-nfkd",
}
WORD_LEVEL = {"wordlevel", "wordlevel-wsplit-lower", "wordlevel-bert-nfkc", "untyped-wordlevel"}
SPECIALS = ["<|endoftext|>", "[CLS]", "[SEP]"]
# Added tokens that are not special (matched in text like special ones, shown as ordinary).
PLAIN_ADDED = ["<tool>", "</tool>"]


def corpus(botchan: str, chars: int = 40_000) -> list[str]:
    """Training text: a slice of Botchan in lines, and the synthetic sentences a few times."""
    lines = botchan[:chars].splitlines()
    return lines + SYNTHETIC * 5


def _bpe(vocab: int, **model: Any) -> tuple[Tokenizer, Any]:
    tok = Tokenizer(models.BPE(**model))
    trainer = trainers.BpeTrainer(
        vocab_size=vocab, special_tokens=SPECIALS, show_progress=False, min_frequency=2
    )
    return tok, trainer


def _byte_level(vocab: int) -> tuple[Tokenizer, Any]:
    tok = Tokenizer(models.BPE())
    trainer = trainers.BpeTrainer(
        vocab_size=vocab,
        special_tokens=SPECIALS,
        initial_alphabet=pre.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.decoder = decoders.ByteLevel()
    return tok, trainer


def gpt2(prefix: bool = False, nfc: bool = False) -> tuple[Tokenizer, Any]:
    tok, trainer = _byte_level(600)
    tok.pre_tokenizer = pre.ByteLevel(add_prefix_space=prefix, use_regex=True)
    # Its post-processor trims offsets (Tokenline must not let that move token lengths).
    tok.post_processor = processors.ByteLevel(trim_offsets=True)
    if nfc:
        tok.normalizer = normalizers.NFC()
    return tok, trainer


def gpt4(pattern: str = GPT4_PATTERN) -> tuple[Tokenizer, Any]:
    tok, trainer = _byte_level(700)
    tok.pre_tokenizer = pre.Sequence(
        [
            pre.Split(Regex(pattern), behavior="isolated", invert=False),
            pre.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    return tok, trainer


def metaspace_bpe(scheme: str, split: bool) -> tuple[Tokenizer, Any]:
    tok, trainer = _bpe(400, unk_token="[UNK]", fuse_unk=True)
    tok.pre_tokenizer = pre.Metaspace(prepend_scheme=scheme, split=split)
    tok.decoder = decoders.Metaspace(prepend_scheme=scheme, split=split)
    trainer = trainers.BpeTrainer(
        vocab_size=400, special_tokens=["[UNK]", *SPECIALS], show_progress=False
    )
    return tok, trainer


def llama_style() -> tuple[Tokenizer, Any]:
    """Llama 2's layout: the normalizer prepends "▁" and escapes spaces, no pre-tokenizer, BPE
    with byte fallback (the <0xXX> pieces are added to the vocabulary after training)."""
    tok, trainer = _bpe(500)
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    return tok, trainer


def wordpiece(lowercase: bool, strip_accents: bool | None, chinese: bool) -> tuple[Tokenizer, Any]:
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]", max_input_chars_per_word=30))
    tok.normalizer = normalizers.BertNormalizer(
        clean_text=True,
        handle_chinese_chars=chinese,
        strip_accents=strip_accents,
        lowercase=lowercase,
    )
    tok.pre_tokenizer = pre.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok.post_processor = processors.BertProcessing(("[SEP]", 2), ("[CLS]", 1))
    trainer = trainers.WordPieceTrainer(
        vocab_size=500, special_tokens=["[UNK]", "[CLS]", "[SEP]"], show_progress=False
    )
    return tok, trainer


def unigram_metaspace(normalizer: Any, pre_tokenizer: Any = None) -> tuple[Tokenizer, Any]:
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre.Metaspace() if pre_tokenizer is None else pre_tokenizer
    tok.decoder = decoders.Metaspace()
    trainer = trainers.UnigramTrainer(
        vocab_size=400, special_tokens=["<unk>", *SPECIALS], unk_token="<unk>", show_progress=False
    )
    return tok, trainer


def digits_bpe() -> tuple[Tokenizer, Any]:
    """Character BPE with an unknown token: whitespace, punctuation and single digits cut."""
    tok, trainer = _bpe(300, unk_token="[UNK]")
    tok.pre_tokenizer = pre.Sequence(
        [pre.WhitespaceSplit(), pre.Punctuation(), pre.Digits(individual_digits=True)]
    )
    tok.normalizer = normalizers.Sequence(
        [normalizers.NFKC(), normalizers.Lowercase(), normalizers.Strip()]
    )
    trainer = trainers.BpeTrainer(
        vocab_size=300, special_tokens=["[UNK]", *SPECIALS], show_progress=False
    )
    return tok, trainer


def byte_level_normalized(normalizer: Any, pattern: str | None = None) -> tuple[Tokenizer, Any]:
    """GPT-NeoX's layout (a Unicode normalizer before byte-level BPE): GPT-2's pre-tokenizer,
    or a Split by `pattern` as Qwen 2's file has it."""
    tok, trainer = gpt2() if pattern is None else gpt4(pattern)
    tok.post_processor = None
    tok.normalizer = normalizer
    return tok, trainer


def llama_metaspace(fallback: bool) -> tuple[Tokenizer, Any]:
    """Llama 2's layout as newer files write it: Metaspace without split (no normalizer), BPE,
    byte fallback added after training when `fallback`."""
    tok, trainer = _bpe(500)
    tok.pre_tokenizer = pre.Metaspace(prepend_scheme="first", split=False)
    tok.decoder = decoders.Metaspace(prepend_scheme="first", split=False)
    return tok, trainer


def wordlevel(pre_tokenizer: Any = None, normalizer: Any = None) -> tuple[Tokenizer, Any]:
    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = pre.Whitespace() if pre_tokenizer is None else pre_tokenizer
    tok.normalizer = normalizer
    trainer = trainers.WordLevelTrainer(
        vocab_size=400, special_tokens=["[UNK]", *SPECIALS], show_progress=False
    )
    return tok, trainer


NORMALIZER_SEQUENCE = normalizers.Sequence(
    [
        normalizers.NFKC(),
        normalizers.Lowercase(),
        normalizers.Replace(Regex(" {2,}"), " "),
        normalizers.Strip(left=False, right=True),
    ]
)

# Rules beyond tests/core/modelkit.py's that end a character, or a grapheme, in white space or
# remove it, as a charsmap may: a window must never end on one.
SPACE_MAKING_RULES = [
    ("\u00a4", "\u00a4 "),
    ("q\u0301", "q "),
    ("\u0600", " "),
    ("\u00b6", ""),
    ("k", "K"),
]


@cache
def charsmap(rules: str) -> bytes:
    """SentencePiece's precompiled normalization rules, for tokenizers' Precompiled normalizer:
    "nmt_nfkc" (what T5, ALBERT and XLM-R files carry) or "custom" (modelkit's rules and
    SPACE_MAKING_RULES), taken from a tiny model trained to carry them."""
    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2 as pb

    with tempfile.TemporaryDirectory() as tmp:
        options: dict[str, Any] = {}
        if rules == "custom":
            tsv = Path(tmp) / "rules.tsv"
            rows = [
                " ".join(f"{ord(c):X}" for c in src) + "\t" + " ".join(f"{ord(c):X}" for c in dst)
                for src, dst in [*CUSTOM_RULES, *SPACE_MAKING_RULES]
            ]
            tsv.write_text("\n".join(rows) + "\n", encoding="utf-8")
            options["normalization_rule_tsv"] = str(tsv)
        else:
            options["normalization_rule_name"] = rules
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(SYNTHETIC * 3),
            model_prefix=str(Path(tmp) / "m"),
            vocab_size=60,
            model_type="char",
            hard_vocab_limit=False,
            minloglevel=2,
            num_threads=1,
            **options,
        )
        proto = pb.ModelProto()
        proto.ParseFromString((Path(tmp) / "m.model").read_bytes())
    blob: bytes = proto.normalizer_spec.precompiled_charsmap
    return blob


def t5_normalizer(runs_to: str) -> Any:
    """T5's and XLM-R's: the precompiled NFKC rules, runs of spaces made one, right strip."""
    return normalizers.Sequence(
        [
            normalizers.Precompiled(charsmap("nmt_nfkc")),
            normalizers.Replace(Regex(" {2,}"), runs_to),
            normalizers.Strip(left=False, right=True),
        ]
    )


def albert_normalizer() -> Any:
    """ALBERT's: quotes, NFKD, accents stripped, lower case, precompiled rules, space runs."""
    return normalizers.Sequence(
        [
            normalizers.Replace("``", '"'),
            normalizers.Replace("''", '"'),
            normalizers.NFKD(),
            normalizers.StripAccents(),
            normalizers.Lowercase(),
            normalizers.Precompiled(charsmap("nmt_nfkc")),
            normalizers.Replace(Regex(" {2,}"), " "),
        ]
    )


# name -> how to build its (untrained) tokenizer and trainer.
CONFIGS: dict[str, Callable[[], tuple[Tokenizer, Any]]] = {
    "bl-gpt2": gpt2,
    "bl-gpt2-prefix-nfc": lambda: gpt2(prefix=True, nfc=True),
    "bl-gpt4": gpt4,
    "bl-gpt2-ignore": gpt2,
    "bl-llama3": gpt4,
    "bl-qwen2": lambda: gpt4(pretokens.QWEN2),
    "bl-o200k": lambda: gpt4(pretokens.O200K),
    "bl-tekken-ignore": lambda: gpt4(pretokens.TEKKEN),
    "bl-r50k": lambda: gpt4(pretokens.GPT2),
    "meta-always-split": lambda: metaspace_bpe("always", True),
    "meta-always-nosplit": lambda: metaspace_bpe("always", False),
    "meta-first-split": lambda: metaspace_bpe("first", True),
    "meta-first-nosplit": lambda: metaspace_bpe("first", False),
    "meta-never-split": lambda: metaspace_bpe("never", True),
    "meta-never-nosplit": lambda: metaspace_bpe("never", False),
    "llama-style": llama_style,
    "wp-lower-chinese": lambda: wordpiece(True, None, True),
    "wp-cased-accents": lambda: wordpiece(False, False, True),
    "wp-lower-strip-nochinese": lambda: wordpiece(True, True, False),
    "unigram": lambda: unigram_metaspace(None),
    "unigram-nfkc-lower-replace": lambda: unigram_metaspace(NORMALIZER_SEQUENCE),
    "unigram-t5": lambda: unigram_metaspace(t5_normalizer("▁")),
    "unigram-albert": lambda: unigram_metaspace(albert_normalizer()),
    "unigram-wsplit-custom": lambda: unigram_metaspace(
        normalizers.Precompiled(charsmap("custom")),
        pre.Sequence([pre.WhitespaceSplit(), pre.Metaspace()]),
    ),
    "unigram-first-nfkc": lambda: unigram_metaspace(
        normalizers.NFKC(), pre.Metaspace(prepend_scheme="first")
    ),
    "unigram-byte-fallback": lambda: unigram_metaspace(t5_normalizer(" ")),
    "unigram-nfc-prepend-strip": lambda: unigram_metaspace(
        normalizers.Sequence([normalizers.NFC(), normalizers.Strip(), normalizers.Prepend("▁")])
    ),
    "bpe-digits-unk": digits_bpe,
    "wordlevel": wordlevel,
    # Layouts of real files (GPT-NeoX, Qwen 2, Llama 2, WordLevel) and untyped model sections.
    "bl-gpt2-nfc": lambda: byte_level_normalized(normalizers.NFC()),
    "bl-qwen2-nfc": lambda: byte_level_normalized(normalizers.NFC(), pretokens.QWEN2),
    "bl-gpt4-nfkc": lambda: byte_level_normalized(normalizers.NFKC(), GPT4_PATTERN),
    "bl-gpt2-nfd-lower": lambda: byte_level_normalized(
        normalizers.Sequence([normalizers.NFD(), normalizers.Lowercase()])
    ),
    "bl-o200k-nfkd": lambda: byte_level_normalized(normalizers.NFKD(), pretokens.O200K),
    "llama-style-nofallback": llama_style,
    "llama-metaspace": lambda: llama_metaspace(True),
    "llama-metaspace-nofallback": lambda: llama_metaspace(False),
    "wordlevel-wsplit-lower": lambda: wordlevel(pre.WhitespaceSplit(), normalizers.Lowercase()),
    "wordlevel-bert-nfkc": lambda: wordlevel(pre.BertPreTokenizer(), normalizers.NFKC()),
    "untyped-bl-gpt2": gpt2,
    "untyped-wp": lambda: wordpiece(True, None, True),
    "untyped-unigram": lambda: unigram_metaspace(None),
    "untyped-wordlevel": wordlevel,
    "untyped-llama-style": llama_style,
}
# Configurations whose file is saved without its model's "type" (as older tokenizers wrote them).
UNTYPED = {name for name in CONFIGS if name.startswith("untyped-")}
# Configurations given Llama's 256 <0xXX> pieces and byte fallback after training.
BYTE_FALLBACK = {"llama-style", "llama-metaspace", "untyped-llama-style"}


def train(name: str, out_dir: Path, botchan: str) -> Path:
    """Trains configuration `name` and saves its tokenizer.json under out_dir/name/."""
    tok, trainer = CONFIGS[name]()
    tok.train_from_iterator(corpus(botchan), trainer)
    # Added tokens matched on the normalized text keep a WordPiece model from windows of words.
    normalized = name not in WORD_WINDOWED
    tok.add_tokens([AddedToken(t, special=False, normalized=normalized) for t in PLAIN_ADDED])
    folder = out_dir / name
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "tokenizer.json"
    tok.save(str(path))
    if name in BYTE_FALLBACK:
        add_byte_fallback(path)
    if name == "unigram-byte-fallback":
        add_unigram_byte_fallback(path)
    if name in IGNORE_MERGES:
        add_whole_pieces(path)
    if name in UNTYPED:
        drop_model_type(path)
    return path


def drop_model_type(path: Path) -> None:
    """Removes the model section's "type", as files written by older `tokenizers` have it."""
    spec = json.loads(path.read_text(encoding="utf-8"))
    del spec["model"]["type"]
    path.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")


# Pieces no merge makes, added to the vocabulary of the ignore_merges files (also after a space,
# "Ġ"): the library takes such a piece whole, but never a part of a longer piece. Some are longer
# than the pieces whose parts windows cut (tokenline.core.pretokenflags.inner_edges: from
# INNER_PRETOKEN_CHARS on, INNER_WIDE_CHARS for text not all ASCII), two longer than the pieces
# Tokenline caches (64 characters).
WHOLE_PIECES = [
    "qzqz",
    "abcdefgh",
    "a" * (INNER_PRETOKEN_CHARS + 2),
    "é" * (INNER_WIDE_CHARS + 2),
    "a" * 70,
    "ab" * 40,
]


# GPT-2's printable stand-ins for bytes (written out independently of tokenline.core.hfloader's).
_PRINTABLE = [*range(33, 127), *range(161, 173), *range(174, 256)]
_STAND_IN = dict(
    zip(
        _PRINTABLE + [b for b in range(256) if b not in _PRINTABLE],
        _PRINTABLE + list(range(256, 256 + 256 - len(_PRINTABLE))),
        strict=True,
    )
)


def byte_level(text: str) -> str:
    """text as a byte-level vocabulary spells it (its UTF-8 bytes' stand-ins)."""
    return "".join(chr(_STAND_IN[b]) for b in text.encode("utf-8"))


def add_whole_pieces(path: Path) -> None:
    """Sets ignore_merges and adds WHOLE_PIECES to a byte-level BPE file's vocabulary."""
    spec = json.loads(path.read_text(encoding="utf-8"))
    spec["model"]["ignore_merges"] = True
    vocab: dict[str, int] = spec["model"]["vocab"]
    top = len(vocab)  # the model's ids run from 0; added tokens not in it follow them
    for piece in WHOLE_PIECES:
        for form in (byte_level(piece), byte_level(" " + piece)):
            if form not in vocab:
                vocab[form] = top
                top += 1
    for added in spec["added_tokens"]:
        if added["content"] not in vocab:
            added["id"] = top
            top += 1
    path.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")


def add_byte_fallback(path: Path) -> None:
    """Gives a BPE tokenizer.json the 256 <0xXX> pieces and byte fallback, as Llama's has."""
    spec = json.loads(path.read_text(encoding="utf-8"))
    vocab: dict[str, int] = spec["model"]["vocab"]
    top = max(max(vocab.values()), *(a["id"] for a in spec["added_tokens"])) + 1
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = top + b
    spec["model"]["byte_fallback"] = True
    spec["model"]["fuse_unk"] = True
    path.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")


def add_unigram_byte_fallback(path: Path) -> None:
    """Gives a Unigram tokenizer.json the 256 <0xXX> pieces and byte fallback, and drops its
    rarest characters, so that some text falls back to bytes."""
    spec = json.loads(path.read_text(encoding="utf-8"))
    model = spec["model"]
    vocab: list[list[Any]] = model["vocab"]
    unk = model["unk_id"]
    kept = [p for i, p in enumerate(vocab) if i == unk or len(p[0]) > 1 or p[1] > -9.0]
    kept += [[f"<0x{b:02X}>", 0.0] for b in range(256)]
    model["vocab"] = kept
    model["unk_id"] = kept.index(vocab[unk])
    model["byte_fallback"] = True
    ids = {piece: i for i, (piece, _) in enumerate(kept)}
    top = len(kept)  # added tokens the model does not hold follow its ids
    for added in spec["added_tokens"]:
        if added["content"] in ids:
            added["id"] = ids[added["content"]]
        else:
            added["id"] = top
            top += 1
    path.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")


def small_bert(out_dir: Path, botchan: str, name: str = "bert-wp") -> Path:
    """A small lower-casing BERT WordPiece file at out_dir/name/tokenizer.json (for the server
    and CLI tests: trained in well under a second)."""
    tok, trainer = wordpiece(lowercase=True, strip_accents=None, chinese=True)
    tok.train_from_iterator(corpus(botchan, chars=20_000), trainer)
    path = out_dir / name / "tokenizer.json"
    path.parent.mkdir(parents=True)
    tok.save(str(path))
    return path
