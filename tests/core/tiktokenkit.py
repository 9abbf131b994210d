"""Generated rank vocabularies for the byte-level tests, in classes the real encodings do not
reach."""

from __future__ import annotations

import random

import tiktoken

from tokenline.core import pretokens

PATTERNS = {
    "gpt2": pretokens.GPT2,
    "gpt2-hf": pretokens.GPT2_HF,
    "r50k": pretokens.R50K,
    "cl100k": pretokens.CL100K,
    "llama3": pretokens.CL100K_OLD,
    "qwen2": pretokens.QWEN2,
    "o200k": pretokens.O200K,
    "tekken": pretokens.TEKKEN,
}
# How a generated vocabulary picks its merges, and in which order its ranks come.
SOURCES = ("corpus", "random", "runs", "partial-utf8")
ORDERS = ("creation", "shuffled", "long-first")


def generated(seed: int, corpus: str) -> tuple[tiktoken.Encoding, str]:
    """A random rank vocabulary of one class: all 256 bytes plus merges of existing tokens."""
    rng = random.Random(seed)
    source = SOURCES[seed % len(SOURCES)]
    order = ORDERS[(seed // len(SOURCES)) % len(ORDERS)]
    pattern_name = sorted(PATTERNS)[(seed // (len(SOURCES) * len(ORDERS))) % len(PATTERNS)]
    tokens: list[bytes] = [bytes([b]) for b in range(256)]
    rng.shuffle(tokens)
    known = set(tokens)
    size = rng.choice([40, 150, 600])
    sample = corpus[rng.randrange(max(1, len(corpus) - 4000)) :][:4000].encode()
    for _ in range(size * 4):
        if len(tokens) >= 256 + size:
            break
        new = _merge(rng, source, tokens, sample)
        if new not in known and 1 < len(new) <= 24:
            known.add(new)
            tokens.append(new)
    if order == "shuffled":
        tail = tokens[256:]
        rng.shuffle(tail)
        tokens = tokens[:256] + tail
    elif order == "long-first":
        tokens = sorted(tokens, key=lambda t: (-len(t), rng.random()))
    ranks = {t: i for i, t in enumerate(tokens)}
    name = f"gen-{seed}-{pattern_name}-{source}-{order}"
    enc = tiktoken.Encoding(
        name, pat_str=PATTERNS[pattern_name], mergeable_ranks=ranks, special_tokens={}
    )
    return enc, f"{pattern_name}/{source}/{order}"


def _merge(rng: random.Random, source: str, tokens: list[bytes], sample: bytes) -> bytes:
    if source == "corpus":
        i = rng.randrange(max(1, len(sample) - 8))
        return sample[i : i + rng.choice([2, 2, 3, 4, 6])]
    if source == "runs":
        unit = rng.choice([b" ", b"a", b"\n", b"0", b"=", b"\t", b"ab", "中".encode()])
        return unit * rng.randint(2, 8)
    if source == "partial-utf8":
        ch = rng.choice("中文字日本語한국어😀👍éß€✓").encode()
        cut = rng.randint(1, len(ch))
        return rng.choice([ch[:cut], ch[cut - 1 :], ch + ch[:cut], b" " + ch[:cut]])
    return rng.choice(tokens) + rng.choice(tokens)
