"""The models documents are tokenized with: loaded once each, fallbacks, `tokenline/models`.

What a `tokenline.model` setting names is decided by the core's resolver
(`tokenline.core.resolve_model`: bundled name, tiktoken encoding or OpenAI model name, path
relative to the workspace folder, or Hugging Face repo id from the local cache); this module caches
what it loads and, when a setting names nothing usable, keeps documents on a model that works.

`tokenline/models` lists what can be chosen without a download: the bundled models, the tiktoken
encodings whose files are in tiktoken's cache, the tokenizer files (`tokenizer.json`,
`tekken*.json`) in the workspace folders, and the Hugging Face cache's repos with a tokenizer.
"""

from __future__ import annotations

import logging
import os
from collections import deque
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from lsprotocol import types

from tokenline.core import (
    BUNDLED_DEFAULT,
    LISTED_FILES,
    Model,
    ModelError,
    bundled_models,
    cached_tiktoken_encodings,
    hf_cached_repos,
    resolve_model,
)
from tokenline.server.feature import Feature, Handler, Host
from tokenline.server.settings import Settings
from tokenline.server.uris import folder_of, uri_path

log = logging.getLogger("tokenline.server")

MODELS = "tokenline/models"
# The workspace walk for tokenizer files: folders it never enters, how deep it goes, how many
# directories it reads at most, and how many files it lists at most.
SKIPPED_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".tox"})
WALK_DEPTH = 6
WALK_DIRS = 2000
WALK_FOUND = 50


class ModelCache:
    """Loaded models by file path, so documents and folders that share a model share one."""

    def __init__(self) -> None:
        self._models: dict[str, Model] = {}

    def get(self, setting: str, base_dir: str | None = None) -> Model:
        """The model a setting names (ModelError if it cannot be used)."""
        source = resolve_model(setting, base_dir)
        model = self._models.get(source.key)
        if model is None:
            model = source.load()
            self._models[source.key] = model
            log.info("loaded %r from %s (%s)", model.name, source.path, model.mode_note)
        return model


def model_choices(folders: Sequence[Path] = ()) -> list[dict[str, str]]:
    """What `tokenline/models` lists: bundled models, cached tiktoken encodings, tokenizer files
    in the workspace folders, then repos in the local Hugging Face cache."""
    out: list[dict[str, str]] = []
    for name in sorted(bundled_models()):
        desc = "bundled" + (", the default" if name == BUNDLED_DEFAULT else "")
        out.append(_choice("bundled", name, name, desc))
    for name, path in cached_tiktoken_encodings():
        # The folder, not the cache's file (named by a hash of its URL, which says nothing).
        out.append(_choice("tiktoken", name, name, f"in {Path(path).parent}"))
    for folder in folders:
        for path in workspace_tokenizers(folder):
            rel = path.relative_to(folder).as_posix()
            # One folder: the path as the setting is read, relative to it (shareable).
            value = rel if len(folders) == 1 else str(path)
            what = "Tekken" if path.name != "tokenizer.json" else "Hugging Face"
            where = f" in {folder.name}" if len(folders) > 1 else ""
            out.append(_choice("workspace", rel, value, what + where))
    for repo, path in hf_cached_repos(names=LISTED_FILES):
        out.append(_choice("huggingface", repo, repo, f"Hugging Face cache: {path}"))
    return out


def _choice(kind: str, label: str, value: str, description: str) -> dict[str, str]:
    return {"label": label, "value": value, "description": description, "kind": kind}


def is_tokenizer_file(name: str) -> bool:
    """A Hugging Face `tokenizer.json` or a Mistral `tekken*.json`."""
    return name == "tokenizer.json" or (name.startswith("tekken") and name.endswith(".json"))


def workspace_tokenizers(folder: Path) -> list[Path]:
    """Tokenizer files under a workspace folder, in a bounded walk (WALK_DEPTH levels, WALK_DIRS
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


class ModelsFeature(Feature):
    """Each document's model, the last one that loaded for each setting, and `tokenline/models`."""

    def __init__(self, host: Host) -> None:
        super().__init__(host)
        self.cache = ModelCache()
        self._last_good: dict[str, Model] = {}
        self._errors_shown: set[str] = set()

    def handlers(self) -> list[Handler]:
        return [Handler(MODELS, self.list_models)]

    def list_models(self, params: Any) -> dict[str, list[dict[str, str]]]:
        folders = [uri_path(f) for f in self.host.folders()]
        return {"models": model_choices([Path(f) for f in folders if f])}

    def configuration_changed(self) -> None:
        """New configuration: a model that still fails is reported again."""
        self._errors_shown.clear()

    def for_document(self, uri: str | None, settings: Settings, current: Model | None) -> Model:
        """The model the settings name, or (on failure) the current/last good/bundled one."""
        folder = folder_of(self.host.folders(), uri)
        base_dir = uri_path(folder) if folder else None
        try:
            model = self.cache.get(settings.model, base_dir)
        except ModelError as exc:
            fallback = current or self._last_good.get(settings.model) or self.cache.get("")
            self._report(settings.model, exc, fallback)
            return fallback
        self._last_good[settings.model] = model
        return model

    def _report(self, setting: str, exc: ModelError, fallback: Model) -> None:
        key = f"{setting}\0{exc}"
        if key in self._errors_shown:
            return
        self._errors_shown.add(key)
        log.error("%s", exc)
        self.host.show(
            types.MessageType.Error,
            f"Tokenline: cannot load the tokenizer model {exc.path}: {exc.reason}. "
            f"Still using {fallback.name}.",
        )
