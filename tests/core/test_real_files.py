"""Real tokenizer files from public repositories (tests/data/tokenizers/SOURCES.md): each loads as
its own library loads it, and after every edit Document.ids() equals that library's full encode.

The judges are read independently of Tokenline's loaders: `tokenizers` for a tokenizer.json,
tiktoken over the file's ranks with the pattern its maker uses for a rank file (known here by its
sha256), sentencepiece for a .model file. Files that cannot be committed (Meta's Llama 3 and 4
rank files, ...) join the corpus from the folder TOKENLINE_EXTRA_TOKENIZERS names, when set.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest
import sentencepiece as spm
import tiktoken
from hypothesis import given
from hypothesis import strategies as st
from tiktoken_ext import openai_public
from tokenizers import Tokenizer

from tests.conftest import ROOT
from tests.core import test_hf_family as hf
from tokenline.core import Document, Model, ModelError, load_model

CORPUS = ROOT / "tests" / "data" / "tokenizers"
SUFFIXES = (".json", ".model", ".tiktoken")
# Rank files by sha256: the pattern their maker encodes with (Meta's written as in Meta's
# models/llama3/tokenizer.py and models/llama4/tokenizer.py).
LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
LLAMA4_PATTERN = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+"
    r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+"
    r"[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
RANK_PATTERNS = {
    "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930": openai_public.r50k_pat_str,
    "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55": LLAMA3_PATTERN,
    "d0bdbaf59b0762c8c807617e2d8ea51420eb1b1de266df2495be755c8e0ed6ed": LLAMA4_PATTERN,
}
# Rank files Tokenline must refuse: no pattern is known to go with them.
REFUSED = {"torchtune-tiktoken-small/tokenizer.model"}
# What each committed file loads as: model_type, and "incremental" or why it re-encodes whole (the
# end of its mode note: what such a file would need to be edited by pieces).
PATTERN = "byte-level with a pattern known to read only a few characters past each cut"
EXPECTED = {
    "bert-base-uncased/tokenizer.json": ("wordpiece (tokenizer.json)", "incremental"),
    "roberta-base/tokenizer.json": (
        "bpe (tokenizer.json)",
        "byte-level with added tokens matched as written (no lstrip, rstrip, single_word)",
    ),
    "t5-small/tokenizer.json": ("unigram (tokenizer.json)", "incremental"),
    "gpt2/tokenizer.json": ("bpe (tokenizer.json)", "incremental"),
    "gpt-neox-20b/tokenizer.json": ("bpe (tokenizer.json)", "incremental"),
    "phi-3-mini/tokenizer.json": ("bpe (tokenizer.json)", "incremental"),
    # Falcon: Punctuation, GPT-2's split, Digits and a Split in sequence; CLIP: its own pattern,
    # white space removed; DeepSeek: three Splits in sequence. No known pattern says how far past
    # a cut they read.
    "falcon/tokenizer.json": ("bpe (tokenizer.json)", PATTERN),
    "clip/tokenizer.json": ("bpe (tokenizer.json)", PATTERN),
    "deepseek-r1/tokenizer.json": ("bpe (tokenizer.json)", PATTERN),
    "qwen2.5/tokenizer.json": ("bpe (tokenizer.json)", "incremental"),
    "minimax-m1/tokenizer.json": ("bpe (tokenizer.json)", "incremental"),
    "whisper/gpt2.tiktoken": ("tiktoken", "incremental"),
}


def corpus_files() -> list[Path]:
    """The committed files, then any in TOKENLINE_EXTRA_TOKENIZERS."""
    found = sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.suffix in SUFFIXES)
    extra = os.environ.get("TOKENLINE_EXTRA_TOKENIZERS")
    if extra:
        found += sorted(p for p in Path(extra).rglob("*") if p.is_file())
    return found


def label(path: Path) -> str:
    return path.relative_to(CORPUS).as_posix() if path.is_relative_to(CORPUS) else str(path)


FILES = [p for p in corpus_files() if label(p) not in REFUSED]


def _ranks(path: Path) -> dict[bytes, int]:
    lines = path.read_bytes().split()
    return {base64.b64decode(lines[i]): int(lines[i + 1]) for i in range(0, len(lines), 2)}


@cache
def reference(path: Path) -> Callable[[str], list[int]]:
    """The file's own library's encode of a whole text (no special tokens added)."""
    head = path.read_bytes()[:64]
    if head.lstrip()[:1] == b"{":
        tok = Tokenizer.from_file(str(path))
        tok.no_truncation()
        tok.no_padding()
        return lambda text: list(tok.encode(text, add_special_tokens=False).ids)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest in RANK_PATTERNS:
        ranks = _ranks(path)
        enc = tiktoken.Encoding(
            "reference", pat_str=RANK_PATTERNS[digest], mergeable_ranks=ranks, special_tokens={}
        )
        return lambda text: list(enc.encode_ordinary(text))
    sp = spm.SentencePieceProcessor(model_file=str(path))
    return lambda text: list(sp.encode(text))


@cache
def model(path: Path) -> Model:
    return load_model(path)


def test_the_corpus_is_here() -> None:
    assert {label(p) for p in corpus_files() if p.is_relative_to(CORPUS)} == {
        *EXPECTED,
        *REFUSED,
    }
    sources = (CORPUS / "SOURCES.md").read_text(encoding="utf-8")
    assert all(f"`{name}`" in sources for name in (*EXPECTED, *REFUSED))


@pytest.mark.parametrize("path", FILES, ids=label)
def test_every_file_loads_and_encodes_as_its_library(path: Path, botchan: str) -> None:
    m = model(path)
    if label(path) in EXPECTED:
        kind, why = EXPECTED[label(path)]
        assert m.model_type == kind
        assert m.incremental == (why == "incremental"), m.mode_note
        assert m.mode_note.endswith(why), m.mode_note
    encode = reference(path)
    text = botchan[10_000:14_000] + "".join(hf.HF_EXTRA)
    assert m.encode(text) == encode(text)
    doc = Document(m, text)
    assert doc.ids() == encode(text)


@pytest.mark.parametrize("path", FILES, ids=label)
@given(text=hf.hf_texts(), data=st.data())
def test_edits_match_the_reference(path: Path, text: str, data: st.DataObject) -> None:
    m, encode = model(path), reference(path)
    doc = Document(m, text)
    assert doc.ids() == encode(text)
    for _ in range(data.draw(st.integers(1, 20), label="steps")):
        start, end, new = data.draw(hf.hf_edit(doc.length()), label="edit")
        text = text[:start] + new + text[end:]
        doc.edit(start, end, new)
        assert doc.ids() == encode(text), (start, end, new)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_unknown_rank_files_are_refused_naming_the_known_ones(name: str) -> None:
    with pytest.raises(ModelError) as caught:
        load_model(CORPUS / name)
    reason = caught.value.reason
    assert "tiktoken rank file (2,000 ranks)" in reason
    for known in ("o200k_base", "cl100k_base", "r50k_base", "Llama 3", "Llama 4"):
        assert known in reason


def test_a_rank_file_of_a_known_encoding_is_that_encoding() -> None:
    m = model(CORPUS / "whisper" / "gpt2.tiktoken")
    assert m.name == "r50k_base" and m.path == str(CORPUS / "whisper" / "gpt2.tiktoken")
    assert m.vocab_size == 50257 and m.vocab.piece(50256) == "<|endoftext|>"
