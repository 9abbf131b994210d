"""Hugging Face tokenizer.json files for the benchmarks, trained on Botchan in well under a second.

No real tokenizer.json is at hand offline, so bench_families trains them with the `tokenizers`
trainers in the layouts of common models: Llama 3's byte-level BPE (GPT-4's pattern split, then
ByteLevel, ignore_merges), Llama 2's BPE (Prepend + Replace normalizer, byte fallback), BERT's
lower-casing WordPiece, T5's Unigram with Metaspace, GPT-NeoX's NFC byte-level BPE with its runs
of spaces as added tokens, byte-level BPE after NFKD and Lowercase, and a lower-casing WordLevel
model. The
vocabularies are as large as Botchan allows (VOCAB), so that tokens are whole words, as in the
real files. Each file is the same on every run (the trainers alone are not: see
bert_wordpiece and _canonical_unigram).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, trainers
from tokenizers import pre_tokenizers as pre

# GPT-4's pre-tokenizer pattern as Llama 3's tokenizer.json writes it (tokenline's CL100K_OLD).
GPT4_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# Asked of every trainer; Botchan's 279 KB stop BPE near 12k, WordPiece near 9k, Unigram near 6k.
VOCAB = 8000


def llama3_style(lines: list[str]) -> tuple[Tokenizer, Any]:
    # ignore_merges: Llama 3's file takes a piece found in the vocabulary whole.
    tok = Tokenizer(models.BPE(ignore_merges=True))
    tok.pre_tokenizer = pre.Sequence(
        [
            pre.Split(Regex(GPT4_PATTERN), behavior="isolated", invert=False),
            pre.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB,
        special_tokens=["<|begin_of_text|>", "<|end_of_text|>"],
        initial_alphabet=pre.ByteLevel.alphabet(),
        show_progress=False,
    )
    return tok, trainer


LLAMA2_SPECIALS = ["<unk>", "<s>", "</s>"]


def llama2_style(lines: list[str]) -> tuple[Tokenizer, Any]:
    """Trained with Metaspace splitting at spaces, as SentencePiece trains Llama 2's pieces (none
    holds "▁" after another character); train() then gives the file Llama 2's layout."""
    tok = Tokenizer(models.BPE(unk_token="<unk>", fuse_unk=True))
    tok.pre_tokenizer = pre.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB, special_tokens=LLAMA2_SPECIALS, show_progress=False
    )
    return tok, trainer


def _llama2_layout(spec: dict[str, Any]) -> None:
    """Llama 2's tokenizer.json: Prepend("▁") + Replace(" ", "▁"), no pre-tokenizer, its
    decoder, the 256 <0xXX> pieces and byte fallback."""
    spec["normalizer"] = {
        "type": "Sequence",
        "normalizers": [
            {"type": "Prepend", "prepend": "▁"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
        ],
    }
    spec["pre_tokenizer"] = None
    spec["decoder"] = {
        "type": "Sequence",
        "decoders": [
            {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
            {"type": "ByteFallback"},
            {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0},
        ],
    }
    vocab = spec["model"]["vocab"]
    top = max(vocab.values()) + 1
    for b in range(256):
        vocab.setdefault(f"<0x{b:02X}>", top + b)
    spec["model"]["byte_fallback"] = True


BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def bert_wordpiece(lines: list[str]) -> tuple[Tokenizer, Any]:
    """The "##" form of every character of the corpus is given to the trainer up front: it
    otherwise numbers them in hash order, which breaks ties between merges differently on each
    run (train then takes them out of the added tokens, leaving them plain vocabulary)."""
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]", continuing_subword_prefix="##"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    chars = {c for line in lines for c in tok.normalizer.normalize_str(line) if not c.isspace()}
    trainer = trainers.WordPieceTrainer(
        vocab_size=VOCAB,
        special_tokens=BERT_SPECIALS + [f"##{c}" for c in sorted(chars)],
        continuing_subword_prefix="##",
        show_progress=False,
    )
    return tok, trainer


T5_SPECIALS = ["<pad>", "</s>", "<unk>"]


def t5_unigram(lines: list[str]) -> tuple[Tokenizer, Any]:
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.Sequence(
        [
            normalizers.NFKC(),
            normalizers.Replace(Regex(" {2,}"), " "),
            normalizers.Strip(left=False, right=True),
        ]
    )
    tok.pre_tokenizer = pre.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    trainer = trainers.UnigramTrainer(
        vocab_size=VOCAB,
        special_tokens=T5_SPECIALS,
        unk_token="<unk>",
        show_progress=False,
    )
    return tok, trainer


NEOX_SPECIALS = ["<|endoftext|>", "<|padding|>"]
# GPT-NeoX's added tokens besides its specials: runs of 24 spaces down to 2, matched after NFC.
NEOX_SPACES = [" " * n for n in range(24, 1, -1)]


def neox_style(lines: list[str]) -> tuple[Tokenizer, Any]:
    """GPT-NeoX-20B's layout (also Pythia's, RWKV-4's, StableLM's): NFC, then GPT-2's byte-level
    pre-tokenizer and BPE; its runs of spaces are added after training (see train)."""
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB,
        special_tokens=NEOX_SPECIALS,
        initial_alphabet=pre.ByteLevel.alphabet(),
        show_progress=False,
    )
    return tok, trainer


def nfkd_lower_style(lines: list[str]) -> tuple[Tokenizer, Any]:
    """Llama 3's layout after NFKD and Lowercase (every capital a step of its own)."""
    tok, trainer = llama3_style(lines)
    tok.normalizer = normalizers.Sequence([normalizers.NFKD(), normalizers.Lowercase()])
    return tok, trainer


def wordlevel_style(lines: list[str]) -> tuple[Tokenizer, Any]:
    """A WordLevel model of lower-cased words and punctuation (the Whitespace pre-tokenizer)."""
    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre.Whitespace()
    trainer = trainers.WordLevelTrainer(
        vocab_size=VOCAB, special_tokens=["[UNK]", "[PAD]"], show_progress=False
    )
    return tok, trainer


# name -> its untrained tokenizer and trainer (bench_families takes them as `hf:<name>`).
LAYOUTS: dict[str, Callable[[list[str]], tuple[Tokenizer, Any]]] = {
    "llama3-style": llama3_style,
    "llama2-style": llama2_style,
    "bert-wordpiece": bert_wordpiece,
    "t5-unigram": t5_unigram,
    "neox-style": neox_style,
    "nfkd-lower-style": nfkd_lower_style,
    "wordlevel-style": wordlevel_style,
}


def train(name: str, corpus: Path, out_dir: Path) -> Path:
    """Trains layout `name` on the corpus's lines; returns out_dir/name/tokenizer.json (the
    folder names the model, as Tokenline names a tokenizer.json after its folder)."""
    lines = corpus.read_text(encoding="utf-8").splitlines()
    tok, trainer = LAYOUTS[name](lines)
    tok.train_from_iterator(lines, trainer)
    if name == "neox-style":
        tok.add_tokens([AddedToken(run, normalized=True) for run in NEOX_SPACES])
    path = out_dir / name / "tokenizer.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tok.save(str(path))
    spec = json.loads(path.read_text(encoding="utf-8"))
    if name == "bert-wordpiece":
        spec["added_tokens"] = [a for a in spec["added_tokens"] if a["content"] in BERT_SPECIALS]
    elif name == "t5-unigram":
        _canonical_unigram(spec["model"])
    elif name == "llama2-style":
        _llama2_layout(spec)
    path.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    return path


def _canonical_unigram(model: dict[str, Any]) -> None:
    """Makes the trained Unigram the same on every run: its scores are sums whose last bits vary,
    and the characters the pruned model lacks are appended with the lowest scores, 0.0001 apart,
    in hash order. Scores are rounded, those characters get those scores in sorted order, and
    the pieces after the special ones are ordered by score, then by piece."""
    n = len(T5_SPECIALS)  # the trainer puts them first, unk_id among them
    assert [piece for piece, _ in model["vocab"][:n]] == T5_SPECIALS
    vocab = [(piece, round(score, 9)) for piece, score in model["vocab"][n:]]
    chars = [v for v in vocab if len(v[0]) == 1]
    low = min(score for _, score in vocab) + 0.0001 * len(chars) + 1e-9
    appended = [v for v in chars if v[1] <= low]
    scores = dict(vocab)
    pieces = sorted(p for p, _ in appended)
    scores.update(zip(pieces, sorted((s for _, s in appended), reverse=True), strict=True))
    rest = sorted(scores.items(), key=lambda v: (-v[1], v[0]))
    model["vocab"] = model["vocab"][:n] + [list(v) for v in rest]
