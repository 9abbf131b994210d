"""Which tokenizer a `tokenline.model` setting names, and loading it once.

A setting is, in this order: empty (the bundled default); the name of a bundled model; a path to a
SentencePiece `.model` file (`~` expanded, relative paths against the workspace folder); a Hugging
Face repo id (`org/name`) looked up in the local Hugging Face cache. Nothing is ever downloaded.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path

from tokenline.core import (
    BUNDLED_DEFAULT,
    Model,
    ModelError,
    bundled_model_path,
    bundled_models,
    load_model,
)

log = logging.getLogger("tokenline.server")

# A Hugging Face repo id: owner/name, each of letters, digits, "-", "_" and ".".
REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
TOKENIZER_FILES = ("tokenizer.model", "spiece.model", "sentencepiece.bpe.model")


def hf_hub_cache() -> Path:
    """Where huggingface_hub keeps downloaded repos (same environment variables as it reads)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HUGGINGFACE_HUB_CACHE"):
        return Path(os.environ["HUGGINGFACE_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "huggingface" / "hub"


def find_in_hf_cache(repo_id: str, cache: Path | None = None) -> Path | None:
    """The tokenizer file of `repo_id` in the local cache: the `main` snapshot first, then any."""
    root = (cache or hf_hub_cache()) / ("models--" + repo_id.replace("/", "--"))
    snapshots = root / "snapshots"
    if not snapshots.is_dir():
        return None
    order: list[Path] = []
    try:
        ref = (root / "refs" / "main").read_text(encoding="utf-8").strip()
    except OSError:
        ref = ""
    if ref:
        order.append(snapshots / ref)
    try:
        others = sorted(
            (p for p in snapshots.iterdir() if p.is_dir()),
            key=lambda p: p.stat().st_mtime,
            reverse=True,
        )
    except OSError:
        others = []
    order.extend(p for p in others if p not in order)
    for snap in order:
        for name in TOKENIZER_FILES:
            f = snap / name
            if f.is_file():
                return f
    return None


def hf_cached_repos(cache: Path | None = None) -> list[tuple[str, Path]]:
    """(repo id, tokenizer path) of every cached repo that has a SentencePiece tokenizer."""
    base = cache or hf_hub_cache()
    out: list[tuple[str, Path]] = []
    try:
        entries = sorted(base.iterdir())
    except OSError:
        return out
    for entry in entries:
        if not entry.name.startswith("models--"):
            continue
        repo = entry.name[len("models--") :].replace("--", "/", 1)
        found = find_in_hf_cache(repo, base)
        if found is not None:
            out.append((repo, found))
    return out


@dataclass(frozen=True)
class Resolved:
    """Where a setting points: a file to load, and how to name it to the user."""

    path: str
    label: str


def resolve(setting: str, base_dir: str | None = None) -> Resolved:
    """The model file a setting names. Raises ModelError when it names nothing usable."""
    s = setting.strip()
    if not s:
        return Resolved(str(bundled_model_path(BUNDLED_DEFAULT)), BUNDLED_DEFAULT)
    bundled = bundled_models()
    if s in bundled:
        return Resolved(str(bundled[s]), s)
    expanded = os.path.expandvars(os.path.expanduser(s))
    candidate = Path(expanded)
    if not candidate.is_absolute() and base_dir:
        candidate = Path(base_dir) / candidate
    if candidate.exists():
        return Resolved(str(candidate), str(candidate))
    if REPO_ID.match(s) and not s.endswith(".model"):
        found = find_in_hf_cache(s)
        if found is None:
            raise ModelError(
                s,
                f"not in the local Hugging Face cache ({hf_hub_cache()}); Tokenline never "
                "downloads: fetch it first, e.g. `huggingface-cli download "
                f"{s} tokenizer.model`",
            )
        return Resolved(str(found), s)
    # A path that does not exist: load_model names it and says so.
    return Resolved(str(candidate), str(candidate))


class ModelCache:
    """Loaded models by file path, so documents and folders that share a model share one."""

    def __init__(self) -> None:
        self._models: dict[str, Model] = {}

    def get(self, setting: str, base_dir: str | None = None) -> Model:
        """The model a setting names (ModelError if it cannot be used)."""
        where = resolve(setting, base_dir)
        key = os.path.realpath(where.path)
        model = self._models.get(key)
        if model is None:
            model = load_model(where.path)
            if setting.strip() and where.label != where.path:
                # A bundled name or repo id: show what the user wrote.
                model.name = where.label
            self._models[key] = model
            log.info("loaded %r from %s (%s)", model.name, where.path, model.mode_note)
        return model


def model_choices() -> list[dict[str, str]]:
    """What `tokenline/models` lists: bundled models, then repo ids in the local HF cache."""
    out: list[dict[str, str]] = []
    for name in sorted(bundled_models()):
        desc = "bundled" + (", the default" if name == BUNDLED_DEFAULT else "")
        out.append({"label": name, "value": name, "description": desc})
    for repo, path in hf_cached_repos():
        out.append({"label": repo, "value": repo, "description": f"Hugging Face cache: {path}"})
    return out
