"""The models documents are tokenized with: loaded once each, fallbacks, `tokenline/models`.

What a `tokenline.model` setting names is decided by the core's resolver
(`tokenline.core.resolve_model`: bundled name, path relative to the workspace folder, or Hugging
Face repo id from the local cache); this module caches what it loads and, when a setting names
nothing usable, keeps documents on a model that works.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from lsprotocol import types

from tokenline.core import (
    BUNDLED_DEFAULT,
    Model,
    ModelError,
    bundled_models,
    hf_cached_repos,
    resolve_model,
)
from tokenline.server.feature import Feature
from tokenline.server.settings import Settings

if TYPE_CHECKING:
    from tokenline.server.app import TokenlineServer

log = logging.getLogger("tokenline.server")

MODELS = "tokenline/models"


class ModelCache:
    """Loaded models by file path, so documents and folders that share a model share one."""

    def __init__(self) -> None:
        self._models: dict[str, Model] = {}

    def get(self, setting: str, base_dir: str | None = None) -> Model:
        """The model a setting names (ModelError if it cannot be used)."""
        source = resolve_model(setting, base_dir)
        key = os.path.realpath(source.path)
        model = self._models.get(key)
        if model is None:
            model = source.load()
            self._models[key] = model
            log.info("loaded %r from %s (%s)", model.name, source.path, model.mode_note)
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


def uri_path(uri: str) -> str | None:
    """The file-system path of a file: URI (None for other schemes)."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return unquote(parsed.path)


class ModelsFeature(Feature):
    """Each document's model, the last one that loaded for each setting, and `tokenline/models`."""

    def __init__(self, server: TokenlineServer) -> None:
        super().__init__(server)
        self.cache = ModelCache()
        self._last_good: dict[str, Model] = {}
        self._errors_shown: set[str] = set()

    def register(self) -> None:
        self.handle(MODELS, self.list_models)

    def list_models(self, params: Any) -> dict[str, list[dict[str, str]]]:
        return {"models": model_choices()}

    def forget_shown_errors(self) -> None:
        """New configuration: a model that still fails is reported again."""
        self._errors_shown.clear()

    def for_document(self, uri: str | None, settings: Settings, current: Model | None) -> Model:
        """The model the settings name, or (on failure) the current/last good/bundled one."""
        folder = self.server.settings.folder_of(uri)
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
        self.server.show(
            types.MessageType.Error,
            f"Tokenline: cannot load the tokenizer model {exc.path}: {exc.reason}. "
            f"Still using {fallback.name}.",
        )
