"""Which tokenizer model a spec names: one resolver for the server, the CLI and the library.

A spec is, in this order: empty or None (the bundled default); the name of a bundled model; a
tiktoken encoding name (`o200k_base`) or an OpenAI model name tiktoken knows (`gpt-4o`), loaded by
tiktoken itself so that its cache applies; a path to a tokenizer file or a folder holding one (`~`
and `$VARS` expanded, a relative path taken against a base directory); a Hugging Face repo id
(`org/name`) looked up in the local Hugging Face cache. A file's content says how it is read
(core/tokenizerfile.py: a Hugging Face tokenizer.json, a Mistral Tekken file, a SentencePiece
model, a tiktoken rank file such as Meta's Llama 3 tokenizer.model or a `.tiktoken` file); a
folder or a cached repo means the one tokenizer file it holds, or the first in
tokenizerfile.FOLDER_ORDER. Nothing is ever downloaded. An `os.PathLike` spec is always a path.

Interpreted, not compiled: it runs once per model load and only touches the file system.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from tokenline.core.loader import BUNDLED_DEFAULT, bundled_model_path, bundled_models
from tokenline.core.model import Model
from tokenline.core.modelfile import ModelError
from tokenline.core.tiktokenloader import load_tiktoken, tiktoken_name
from tokenline.core.tokenizerfile import FOLDER_ORDER, load_file, tokenizer_in_folder

# A Hugging Face repo id: owner/name, each of letters, digits, "-", "_" and ".".
REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
# What a folder or a cached repo is loaded from, and what a model picker lists from the cache:
# the tokenizer files tokenizerfile.FOLDER_ORDER names, in that order.
LISTED_FILES = FOLDER_ORDER
# How the Hub cache names a repo's folder: models--owner--name.
HF_REPO_PREFIX = "models--"
# File suffixes that make a spec a path, not a repo id.
FILE_SUFFIXES = (".model", ".json", ".tiktoken")


@dataclass(frozen=True)
class ModelSource:
    """Where a spec points: the file to load, and the model's name when not the file's own."""

    path: str
    # The bundled name or repo id the user wrote; None for a file, which is named after itself.
    name: str | None = None
    # Where the model comes from: "tiktoken" for an encoding tiktoken loads by name (path is the
    # spec), else "file".
    origin: str = "file"

    @property
    def key(self) -> str:
        """What every spec that loads the same model shares, to load it once: the file's real
        path, or a tiktoken encoding's name (named, not a file)."""
        return self.path if self.origin == "tiktoken" else os.path.realpath(self.path)

    def load(self) -> Model:
        """The model in this file (ModelError when it cannot be used)."""
        if self.origin == "tiktoken":
            return load_tiktoken(self.path)
        model = load_file(self.path)
        if self.name is not None:
            model.name = self.name
        return model


def resolve_model(
    spec: str | os.PathLike[str] | None = None, base_dir: str | os.PathLike[str] | None = None
) -> ModelSource:
    """The model file a spec names. Raises ModelError when it names nothing usable.

    A path that does not exist resolves to itself; loading it then says "no such file".
    """
    if isinstance(spec, os.PathLike):
        return ModelSource(str(in_folder(_against(Path(os.fspath(spec)), base_dir))))
    text = (spec or "").strip()
    if not text:
        return ModelSource(str(bundled_model_path(BUNDLED_DEFAULT)), BUNDLED_DEFAULT)
    bundled = bundled_models()
    if text in bundled:
        return ModelSource(str(bundled[text]), text)
    candidate = _against(Path(os.path.expandvars(os.path.expanduser(text))), base_dir)
    if not candidate.exists() and tiktoken_name(text) is not None:
        return ModelSource(text, text, "tiktoken")
    if candidate.exists() or not is_repo_id(text):
        return ModelSource(str(in_folder(candidate)))
    found = find_in_hf_cache(text)
    if found is None:
        raise ModelError(
            text,
            f"not in the local Hugging Face cache ({hf_hub_cache()}); Tokenline never "
            f"downloads: fetch it first, e.g. `huggingface-cli download {text} tokenizer.model`",
        )
    return ModelSource(str(found), text)


def load_model(
    spec: str | os.PathLike[str] | None = None, base_dir: str | os.PathLike[str] | None = None
) -> Model:
    """Loads the model a spec names (see the module docstring); ModelError when it cannot."""
    return resolve_model(spec, base_dir).load()


def is_tekken_file(path: Path) -> bool:
    """Whether a file's name is one Mistral gives its Tekken files (tekken*.json, any case); the
    loader goes by content, this only says what a missing file was taken for."""
    name = path.name.lower()
    return name.startswith("tekken") and name.endswith(".json")


def is_repo_id(text: str) -> bool:
    """True for `owner/name` that is not a tokenizer file's path."""
    return REPO_ID.match(text) is not None and not text.lower().endswith(FILE_SUFFIXES)


def in_folder(path: Path) -> Path:
    """The tokenizer file a folder means (tokenizerfile.tokenizer_in_folder); any other path,
    or a folder holding none, as it is."""
    if path.is_dir():
        return tokenizer_in_folder(path) or path
    return path


def _against(path: Path, base_dir: str | os.PathLike[str] | None) -> Path:
    if path.is_absolute() or not base_dir:
        return path
    return Path(base_dir) / path


def hf_hub_cache() -> Path:
    """Where huggingface_hub keeps downloaded repos (same environment variables as it reads)."""
    for variable in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(variable):
            return Path(os.environ[variable]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "huggingface" / "hub"


def find_in_hf_cache(
    repo_id: str, cache: Path | None = None, names: tuple[str, ...] = FOLDER_ORDER
) -> Path | None:
    """The tokenizer file of `repo_id` in the local cache: the `main` snapshot first, then any;
    in a snapshot, the file a folder means (tokenizer_in_folder), among the files `names` allows
    (FOLDER_ORDER's rules)."""
    root = (cache or hf_hub_cache()) / (HF_REPO_PREFIX + repo_id.replace("/", "--"))
    for snapshot in _snapshots(root):
        found = tokenizer_in_folder(snapshot, names)
        if found is not None:
            return found
    return None


def _snapshots(repo_root: Path) -> list[Path]:
    """A cached repo's snapshot folders: the one `refs/main` names, then the newest first."""
    snapshots = repo_root / "snapshots"
    if not snapshots.is_dir():
        return []
    order: list[Path] = []
    try:
        main_ref = (repo_root / "refs" / "main").read_text(encoding="utf-8").strip()
    except OSError:
        main_ref = ""
    if main_ref:
        order.append(snapshots / main_ref)
    try:
        others = sorted(
            (p for p in snapshots.iterdir() if p.is_dir()),
            key=lambda p: p.stat().st_mtime,
            reverse=True,
        )
    except OSError:
        others = []
    order.extend(p for p in others if p not in order)
    return order


def hf_cached_repos(
    cache: Path | None = None, names: tuple[str, ...] = FOLDER_ORDER
) -> list[tuple[str, Path]]:
    """(repo id, tokenizer path) of every cached repo that holds a tokenizer file (one of
    `names`, when given)."""
    base = cache or hf_hub_cache()
    out: list[tuple[str, Path]] = []
    try:
        entries = sorted(base.iterdir())
    except OSError:
        return out
    for entry in entries:
        if not entry.name.startswith(HF_REPO_PREFIX):
            continue
        repo = entry.name[len(HF_REPO_PREFIX) :].replace("--", "/", 1)
        found = find_in_hf_cache(repo, base, names)
        if found is not None:
            out.append((repo, found))
    return out
