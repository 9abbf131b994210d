"""tiktoken rank files: a base64 token, a space and its rank on each line.

OpenAI's `.tiktoken` encodings and Meta's Llama 3 and Llama 4 `tokenizer.model` share this format,
and the file says nothing of the pre-tokenizer pattern that goes with it. So a rank file is
recognized by its content and known by its sha256: one of tiktoken's encodings (tiktoken checks
each download against the hash it lists), or one of Meta's files, loaded with the pattern and the
special-token layout of Meta's own tokenizer (models/llama3/tokenizer.py and
models/llama4/tokenizer.py in meta-llama/llama-models). Any other rank file is refused: guessing
its pattern would give counts that look right and are not.

Interpreted, not compiled: it runs once per load.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import logging
import re
from dataclasses import dataclass

import tiktoken

from tokenline.core.model import Model
from tokenline.core.modelfile import ModelError, display_name, read_model_file
from tokenline.core.pretokens import CL100K_OLD, O200K
from tokenline.core.tiktokencache import encoding_from_ranks, tiktoken_hashes
from tokenline.core.tiktokenloader import model_from_encoding

log = logging.getLogger("tokenline.core")

# One line of a rank file: base64, one space, a decimal rank.
RANK_LINE = re.compile(rb"[A-Za-z0-9+/]+={0,2} [0-9]+")


def is_rank_file(head: bytes) -> bool:
    """Whether a file that begins with `head` is a rank file (its first line is a rank line)."""
    first = head.split(b"\n", 1)[0].rstrip(b"\r")
    return RANK_LINE.fullmatch(first) is not None


@dataclass(frozen=True)
class MetaTokenizer:
    """One of Meta's rank files: its model, its pre-tokenizer pattern, and the special tokens
    that follow its ranks (ids from the number of ranks on)."""

    label: str
    pattern: str
    specials: tuple[str, ...]


def _llama3_specials() -> tuple[str, ...]:
    named = [
        "<|begin_of_text|>",
        "<|end_of_text|>",
        "<|reserved_special_token_0|>",
        "<|reserved_special_token_1|>",
        "<|finetune_right_pad_id|>",
        "<|step_id|>",
        "<|start_header_id|>",
        "<|end_header_id|>",
        "<|eom_id|>",
        "<|eot_id|>",
        "<|python_tag|>",
        "<|image|>",
    ]
    reserved = [f"<|reserved_special_token_{2 + i}|>" for i in range(256 - len(named))]
    return (*named, *reserved)


def _reserved(prefix: str, count: int, start: int) -> list[str]:
    return [f"<|{prefix}_reserved_special_token_{i}|>" for i in range(start, start + count)]


def _llama4_specials() -> tuple[str, ...]:
    text = [
        "<|header_start|>",
        "<|header_end|>",
        "<|eom|>",
        "<|eot|>",
        "<|step|>",
        *_reserved("text_post_train", 6, 0),
        "<|python_start|>",
        "<|python_end|>",
        "<|finetune_right_pad|>",
        *_reserved("text_post_train", 61, 8),
    ]
    vision = [
        "<|image_start|>",
        "<|image_end|>",
        *_reserved("vision", 2, 0),
        "<|tile_x_separator|>",
        "<|tile_y_separator|>",
        *_reserved("vision", 4, 2),
        "<|image|>",
        *_reserved("vision", 1, 6),
        "<|patch|>",
        *_reserved("vision", 1041, 7),
    ]
    reasoning = [
        *_reserved("reasoning", 8, 0),
        "<|reasoning_thinking_start|>",
        "<|reasoning_thinking_end|>",
    ]
    basic = ["<|begin_of_text|>", "<|end_of_text|>", "<|fim_prefix|>", "<|fim_middle|>"]
    named = [*basic, "<|fim_suffix|>", *text, *vision, *reasoning]
    reserved = [f"<|reserved_special_token_{i}|>" for i in range(2048 - len(named))]
    return (*named, *reserved)


# Meta's files by sha256: Llama 3 (the same file serves 3.1, 3.2 and 3.3) and Llama 4.
META_FILES = {
    "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55": MetaTokenizer(
        "Llama 3", CL100K_OLD, _llama3_specials()
    ),
    "d0bdbaf59b0762c8c807617e2d8ea51420eb1b1de266df2495be755c8e0ed6ed": MetaTokenizer(
        "Llama 4", O200K, _llama4_specials()
    ),
}


def parse_ranks(data: bytes, path: str) -> dict[bytes, int]:
    """Token bytes by rank, from a rank file (ModelError naming the first bad line)."""
    ranks: dict[bytes, int] = {}
    for number, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        if RANK_LINE.fullmatch(line.rstrip()) is None:
            raise ModelError(
                path, f"not a tiktoken rank file (line {number} is not base64 and a rank)"
            )
        token, rank = line.split()
        try:
            ranks[base64.b64decode(token, validate=True)] = int(rank)
        except binascii.Error:
            raise ModelError(
                path, f"not a tiktoken rank file (line {number}: bad base64)"
            ) from None
    if not ranks:
        raise ModelError(path, "the file is empty")
    return ranks


def load_rank_file(path: str) -> Model:
    """The Model of a rank file that Tokenline knows by its sha256 (ModelError otherwise)."""
    data = read_model_file(path, "a tiktoken rank file")
    digest = hashlib.sha256(data).hexdigest()
    ranks = parse_ranks(data, path)
    known = tiktoken_hashes()
    if digest in known:
        enc = encoding_from_ranks(known[digest], ranks)
        log.info("%s: tiktoken's %s (by its sha256)", path, enc.name)
        return model_from_encoding(enc, enc.name, path)
    meta = META_FILES.get(digest)
    if meta is None:
        raise ModelError(path, _unknown(len(ranks), sorted(set(known.values()))))
    base = len(ranks)
    specials = {name: base + i for i, name in enumerate(meta.specials)}
    enc = tiktoken.Encoding(
        display_name(path), pat_str=meta.pattern, mergeable_ranks=ranks, special_tokens=specials
    )
    log.info("%s: Meta's %s tokenizer (by its sha256)", path, meta.label)
    model = model_from_encoding(enc, display_name(path), path)
    model.model_type = f"tiktoken ({meta.label})"
    return model


def _unknown(size: int, encodings: list[str]) -> str:
    metas = " and ".join(m.label for m in META_FILES.values())
    return (
        f"a tiktoken rank file ({size:,} ranks) that Tokenline does not know by its sha256, so it "
        "cannot tell which pre-tokenizer pattern goes with it; the rank files it knows are "
        f"tiktoken's {', '.join(encodings)} (each with its own pattern) and Meta's {metas} "
        "tokenizer.model (Llama 3 with cl100k_base's pattern, Llama 4 with o200k_base's); for "
        "a tiktoken encoding, give its name (o200k_base) instead of a file"
    )
