"""What models can be used here: one list for `tokenline models`, the server's `tokenline/models`
and the editors' model pickers.

In order: the bundled models; every encoding tiktoken knows, cached or to be downloaded on first
use; the tokenizer files in the given folders (a bounded walk); the repos in the local Hugging
Face cache that hold a tokenizer. Each entry's `value` is the spec the resolver (core/resolve.py)
loads it from. Interpreted, not compiled: it only looks at the file system.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

from tokenline.core.loader import BUNDLED_DEFAULT, bundled_models
from tokenline.core.rankfile import is_rank_file
from tokenline.core.resolve import LISTED_FILES, hf_cached_repos
from tokenline.core.tiktokencache import tiktoken_cache_dir, tiktoken_encodings

BUNDLED = "bundled"
TIKTOKEN = "tiktoken"
WORKSPACE = "workspace"
HUGGINGFACE = "huggingface"
# The catalog's sections, in the order it lists them.
SECTIONS = (BUNDLED, TIKTOKEN, WORKSPACE, HUGGINGFACE)

# The workspace walk for tokenizer files: folders it never enters, how deep it goes, how many
# directories it reads at most, and how many files it lists at most.
SKIPPED_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".tox"})
WALK_DEPTH = 6
WALK_DIRS = 2000
WALK_FOUND = 50
# Bytes read to tell a rank file from a SentencePiece one.
RANK_HEAD = 256


@dataclass(frozen=True)
class CatalogEntry:
    """One model that can be used here, in one of the SECTIONS."""

    section: str
    # What a list shows.
    name: str
    # The model setting (or `--model` value) that loads it.
    value: str
    # The file it is read from; "" for a tiktoken encoding that is not downloaded yet.
    path: str
    # "SentencePiece", "tokenizer.json", "Tekken" or "tiktoken".
    format: str
    # False for a tiktoken encoding tiktoken downloads on first use.
    cached: bool = True
    # A tiktoken encoding's download location (the first, when it reads two files).
    url: str = ""
    # A workspace file's folder.
    folder: str = ""
    # The model used when none is named.
    default: bool = False

    def to_json(self) -> dict[str, Any]:
        """As `tokenline models --json` writes it: the section under "kind", the name the
        server's `tokenline/models` gives it too."""
        out = asdict(self)
        out["kind"] = out.pop("section")
        return out


def model_catalog(folders: Sequence[Path] = ()) -> list[CatalogEntry]:
    """Every model that can be used here (see the module docstring); tokenizer files are looked
    for under `folders`."""
    return [
        *bundled_entries(),
        *tiktoken_entries(),
        *workspace_entries(folders),
        *huggingface_entries(),
    ]


def bundled_entries() -> list[CatalogEntry]:
    return [
        CatalogEntry(
            BUNDLED, name, name, str(path), "SentencePiece", default=name == BUNDLED_DEFAULT
        )
        for name, path in sorted(bundled_models().items())
    ]


def tiktoken_entries() -> list[CatalogEntry]:
    """Every encoding tiktoken knows, newest first; `cached` says whether loading it needs the
    network."""
    cache = tiktoken_cache_dir()
    out: list[CatalogEntry] = []
    for encoding in reversed(tiktoken_encodings()):
        cached = cache is not None and encoding.cached(cache)
        path = str(encoding.cache_files(cache)[0]) if cached and cache is not None else ""
        url = encoding.files[0].url if encoding.files else ""
        out.append(
            CatalogEntry(TIKTOKEN, encoding.name, encoding.name, path, TIKTOKEN, cached, url)
        )
    return out


def workspace_entries(folders: Sequence[Path]) -> list[CatalogEntry]:
    """Tokenizer files under the folders; with one folder the value is the path relative to it
    (how a shared workspace setting names it), else the absolute path."""
    out: list[CatalogEntry] = []
    for folder in folders:
        for path in workspace_tokenizers(folder):
            rel = path.relative_to(folder).as_posix()
            value = rel if len(folders) == 1 else str(path)
            found = file_format(path)
            out.append(CatalogEntry(WORKSPACE, rel, value, str(path), found, folder=str(folder)))
    return out


def huggingface_entries() -> list[CatalogEntry]:
    """Repos in the local Hugging Face cache that hold a tokenizer, by repo id."""
    return [
        CatalogEntry(HUGGINGFACE, repo, repo, str(path), file_format(path))
        for repo, path in hf_cached_repos(names=LISTED_FILES)
    ]


def file_format(path: Path) -> str:
    """Which loader reads a tokenizer file, as a list shows it: by its name where that tells
    (Tekken files are named tekken*.json), else by its first bytes, as the loader reads it."""
    name = path.name.lower()
    if fnmatch(name, "tekken*.json"):
        return "Tekken"
    if name.endswith(".json"):
        return "tokenizer.json"
    try:
        with path.open("rb") as f:
            head = f.read(RANK_HEAD)
    except OSError:
        head = b""
    return "tiktoken ranks" if is_rank_file(head) else "SentencePiece"


def is_tokenizer_file(name: str) -> bool:
    """A file name a workspace walk lists: one of the names a folder is loaded from
    (tokenizerfile.FOLDER_ORDER: tokenizer.json, tekken*.json, *.model, *.tiktoken)."""
    lower = name.lower()
    return any(fnmatch(lower, rule) for rule in LISTED_FILES)


def workspace_tokenizers(folder: Path) -> list[Path]:
    """Tokenizer files under a folder, in a bounded walk (WALK_DEPTH levels, WALK_DIRS
    directories, WALK_FOUND files) that skips SKIPPED_DIRS and hidden folders."""
    found: list[Path] = []
    for root, files in _walk(folder):
        found.extend(root / f for f in sorted(files) if is_tokenizer_file(f))
        if len(found) >= WALK_FOUND:
            break
    return found[:WALK_FOUND]


def _skipped(name: str) -> bool:
    return name in SKIPPED_DIRS or name.startswith(".")


def _walk(folder: Path) -> Iterator[tuple[Path, list[str]]]:
    """(directory, its file names), breadth first within the walk's bounds."""
    queue = deque([(folder, 0)])
    seen = 0
    while queue and seen < WALK_DIRS:
        here, depth = queue.popleft()
        seen += 1
        try:
            entries = sorted(os.scandir(here), key=lambda e: e.name)
        except OSError:
            continue
        files: list[str] = []
        for entry in entries:
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if not is_dir:
                files.append(entry.name)
            elif depth < WALK_DEPTH and not _skipped(entry.name):
                queue.append((Path(entry.path), depth + 1))
        yield here, files


__all__ = [
    "BUNDLED",
    "HUGGINGFACE",
    "SECTIONS",
    "TIKTOKEN",
    "WORKSPACE",
    "CatalogEntry",
    "file_format",
    "is_tokenizer_file",
    "model_catalog",
    "workspace_tokenizers",
]
