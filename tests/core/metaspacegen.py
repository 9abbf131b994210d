"""Generated Metaspace tokenizer.json files: a fresh vocabulary per seed, for the zoo test.

Each seed draws, independently, a model (Unigram or BPE, with or without byte fallback, with
random pieces, scores and merges), a normalizer (among those Tokenline cuts windows under and a
few it must refuse), a pre-tokenizer (Metaspace's prepend schemes, WhitespaceSplit first, or no
split) and added tokens. Nothing is trained: a file is written in milliseconds.
"""

from __future__ import annotations

import json
import random
from typing import Any

from tests.core import hfkit

MODELS = ("unigram", "unigram-bytes", "bpe", "bpe-bytes")
NORMALIZERS = ("none", "nfkc-lower", "t5", "albert", "custom-rules", "strip-both", "prepend")
PRE_TOKENIZERS = ("meta-always", "meta-first", "meta-never", "wsplit-meta", "meta-nosplit")
ADDED = ["<tool>", "[X]", "ab", "é", "\u2581x"]
# Characters the pieces are made of (and the text is mostly made of), with the marker.
POOL = (
    "abcdefghijklmnopqrstuvwxyzABCDEFGTXZ0123456789.,'-!?()<>[]/\u2581"
    "éèüßçñÇÉ中文字漢😀\u0301\u0308\u00a4\u00b6\u00a8"
)


def generated(seed: int, corpus: str) -> tuple[str, str]:
    """The JSON of a tokenizer.json for this seed, and its class (model/normalizer/pre)."""
    rng = random.Random(seed)
    model_kind = rng.choice(MODELS)
    norm_kind = rng.choice(NORMALIZERS)
    pre_kind = rng.choice(PRE_TOKENIZERS)
    alphabet = sorted(set(rng.sample(POOL, rng.randint(20, len(POOL)))) | {"\u2581"})
    sample = _sample(rng, corpus)
    if model_kind.startswith("unigram"):
        model = _unigram(rng, alphabet, sample, model_kind.endswith("bytes"))
    else:
        model = _bpe(rng, alphabet, sample, model_kind.endswith("bytes"))
    spec: dict[str, Any] = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [],
        "normalizer": _normalizer(norm_kind),
        "pre_tokenizer": _pre_tokenizer(pre_kind),
        "post_processor": None,
        "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always"},
        "model": model,
    }
    size = len(model["vocab"])
    for content in rng.sample(ADDED, rng.randint(0, 3)):
        spec["added_tokens"].append(
            {
                "id": size,
                "content": content,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": rng.random() < 0.5,
                "special": rng.random() < 0.5,
            }
        )
        size += 1
    return json.dumps(spec, ensure_ascii=False), f"{model_kind}/{norm_kind}/{pre_kind}"


def generated_bpe(seed: int, corpus: str) -> Any:
    """A BPE model section of random pieces and merges (with byte fallback or an unknown token,
    fused or not) for other layouts to use (tests/core/test_hf_bpe.py)."""
    rng = random.Random(seed)
    alphabet = sorted(set(rng.sample(POOL, rng.randint(20, len(POOL)))) | {"\u2581"})
    return _bpe(rng, alphabet, _sample(rng, corpus), rng.random() < 0.5)


def _sample(rng: random.Random, corpus: str) -> str:
    """A stretch of the corpus in Metaspace's form, where multi-character pieces come from."""
    start = rng.randrange(0, max(1, len(corpus) - 20_000))
    return " " + corpus[start : start + 20_000].replace("\n", " ").replace(" ", "\u2581")


def _substrings(rng: random.Random, sample: str, count: int) -> list[str]:
    out = []
    for _ in range(count):
        i = rng.randrange(0, len(sample) - 10)
        out.append(sample[i : i + rng.randint(2, 8)])
    return out


def _unigram(rng: random.Random, alphabet: list[str], sample: str, fallback: bool) -> Any:
    pieces: dict[str, float] = {}
    for c in alphabet:
        pieces[c] = rng.uniform(-14.0, -6.0)
    spread = rng.choice([0.5, 4.0, 10.0])  # near-equal scores make ties between segmentations
    for p in _substrings(rng, sample, rng.randint(50, 600)):
        pieces.setdefault(p, -rng.uniform(1.0, 1.0 + spread) * len(p) ** rng.uniform(0.3, 1.0))
    for _ in range(rng.randint(0, 60)):
        p = "".join(rng.choices(alphabet, k=rng.randint(2, 5)))
        pieces.setdefault(p, rng.uniform(-16.0, -4.0))
    vocab: list[list[Any]] = [["<unk>", 0.0]]
    vocab += [[p, round(s, 4)] for p, s in pieces.items()]
    if fallback:
        vocab += [[f"<0x{b:02X}>", 0.0] for b in range(256)]
    return {"type": "Unigram", "unk_id": 0, "vocab": vocab, "byte_fallback": fallback}


def _bpe(rng: random.Random, alphabet: list[str], sample: str, fallback: bool) -> Any:
    vocab: dict[str, int] = {"<unk>": 0}
    for c in alphabet:
        vocab.setdefault(c, len(vocab))
    merges: list[list[str]] = []
    tokens = list(alphabet)
    for _ in range(rng.randint(30, 500)):
        if rng.random() < 0.7:
            # A pair seen in the corpus: split a substring at a point both sides are tokens.
            s = _substrings(rng, sample, 1)[0]
            cut = rng.randint(1, len(s) - 1)
            left, right = s[:cut], s[cut:]
            if left not in vocab or right not in vocab:
                continue
        else:
            left, right = rng.choice(tokens), rng.choice(tokens)
        merged = left + right
        if merged in vocab:
            continue
        vocab[merged] = len(vocab)
        tokens.append(merged)
        merges.append([left, right])
    if fallback:
        for b in range(256):
            vocab.setdefault(f"<0x{b:02X}>", len(vocab))
    return {
        "type": "BPE",
        "dropout": None,
        "unk_token": "<unk>",
        "continuing_subword_prefix": None,
        "end_of_word_suffix": None,
        "fuse_unk": rng.random() < 0.5,
        "byte_fallback": fallback,
        "ignore_merges": False,
        "vocab": vocab,
        "merges": merges,
    }


def _normalizer(kind: str) -> Any:
    from tokenizers import Regex, normalizers

    made: Any
    if kind == "none":
        return None
    if kind == "nfkc-lower":
        made = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    elif kind == "t5":
        made = hfkit.t5_normalizer("\u2581")
    elif kind == "albert":
        made = hfkit.albert_normalizer()
    elif kind == "custom-rules":
        made = normalizers.Sequence(
            [
                normalizers.Precompiled(hfkit.charsmap("custom")),
                normalizers.Replace(Regex(" {2,}"), " "),
                normalizers.Strip(left=False, right=True),
            ]
        )
    elif kind == "strip-both":
        made = normalizers.Sequence([normalizers.NFC(), normalizers.Strip()])
    else:
        made = normalizers.Sequence(
            [normalizers.Prepend("\u2581"), normalizers.Replace(" ", "\u2581")]
        )
    return json.loads(made.__getstate__())


def _pre_tokenizer(kind: str) -> Any:
    meta = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}
    if kind == "meta-first":
        meta["prepend_scheme"] = "first"
    elif kind == "meta-never":
        meta["prepend_scheme"] = "never"
    elif kind == "meta-nosplit":
        meta["split"] = False
    elif kind == "wsplit-meta":
        return {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, meta]}
    return meta
