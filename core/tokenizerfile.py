"""Which loader reads a tokenizer file, decided by its content, and which file a folder means.

A file's name says little: Hub repos name SentencePiece and Meta's tiktoken rank files alike
`tokenizer.model`, and a Tekken file may be saved under any name. So a file is read as JSON when
it is one (a Mistral Tekken file when it has Tekken's "config" and "vocab", else a Hugging Face
tokenizer.json), as a tiktoken rank file when its first line is base64 and a rank, and as a
SentencePiece model otherwise (whose loader says when the protobuf does not parse).

A folder (or a Hub repo's snapshot) means the one tokenizer file it holds, whatever its name;
with several, FOLDER_ORDER decides and the log names the file chosen.

Interpreted, not compiled: it runs once per model load.
"""

from __future__ import annotations

import logging
from pathlib import Path

from tokenline.core.hfloader import load_hf_json, parse_json
from tokenline.core.loader import load_model_file
from tokenline.core.model import Model
from tokenline.core.modelfile import ModelError, read_model_file
from tokenline.core.rankfile import is_rank_file, load_rank_file
from tokenline.core.tiktokenloader import is_tekken_data, tekken_from_data

log = logging.getLogger("tokenline.core")

# How many bytes of a file tell its format.
HEAD = 256
# What a folder is loaded from when it holds several tokenizer files: the first kind that it
# holds, in this order (names compared without case; several of one kind: by name).
FOLDER_ORDER = (
    "tokenizer.json",
    "tekken*.json",
    "tokenizer.model",
    "spiece.model",
    "sentencepiece.bpe.model",
    "*.model",
    "*.tiktoken",
)


def load_file(path: str) -> Model:
    """The model in a tokenizer file of any kind (ModelError when it cannot be used)."""
    head = read_model_file(path, "a tokenizer file", HEAD)
    if path.lower().endswith(".json") or head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"{":
        return _load_json(path)
    if is_rank_file(head):
        return load_rank_file(path)
    return load_model_file(path)


def _load_json(path: str) -> Model:
    """A Tekken file or a Hugging Face tokenizer.json, told apart by their keys."""
    data = read_model_file(path, "a tokenizer file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ModelError(path, "not a tokenizer.json or Tekken file (not UTF-8 text)") from None
    parsed = parse_json(text, path)
    if is_tekken_data(parsed):
        return tekken_from_data(parsed, path)
    if not isinstance(parsed, dict) or "model" not in parsed:
        raise ModelError(
            path,
            'neither a Hugging Face tokenizer.json (it has no "model") nor a Mistral Tekken '
            'file (no "config" and "vocab")',
        )
    return load_hf_json(text, path, parsed)


def tokenizer_files(folder: Path, rules: tuple[str, ...] = FOLDER_ORDER) -> list[Path]:
    """The tokenizer files a folder holds, in the order of `rules` (FOLDER_ORDER's kind of
    names; empty when it is no folder)."""
    try:
        files = sorted(p for p in folder.iterdir() if p.is_file())
    except OSError:
        return []
    out: list[Path] = []
    for rule in rules:
        out.extend(p for p in files if p not in out and _matches(p.name.lower(), rule))
    return out


def _matches(name: str, rule: str) -> bool:
    if "*" not in rule:
        return name == rule
    before, after = rule.split("*")
    return name.startswith(before) and name.endswith(after) and len(name) >= len(rule) - 1


def tokenizer_in_folder(folder: Path, rules: tuple[str, ...] = FOLDER_ORDER) -> Path | None:
    """The tokenizer file a folder means: its only one, or the first in FOLDER_ORDER (logged)."""
    found = tokenizer_files(folder, rules)
    if not found:
        return None
    if len(found) > 1:
        log.info(
            "%s holds %d tokenizer files (%s); loading %s, the first in the order %s",
            folder,
            len(found),
            ", ".join(p.name for p in found),
            found[0].name,
            ", ".join(rules),
        )
    return found[0]
