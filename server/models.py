"""The models documents are tokenized with: loaded once each, fallbacks, `tokenline/models`.

What a `tokenline.model` setting names is decided by the core's resolver
(`tokenline.core.resolve_model`: bundled name, tiktoken encoding or OpenAI model name, path
relative to the workspace folder, or Hugging Face repo id from the local cache); this module caches
what it loads and, when a setting names nothing usable, keeps documents on a model that works and
says why (a ModelProblem, which the status shows until a model loads).

`tokenline/models` lists the core's catalog (`tokenline.core.catalog`): bundled models, every
tiktoken encoding (marking those tiktoken downloads on first use), the tokenizer files in the
workspace folders, and the Hugging Face cache's repos with a tokenizer.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from tokenline.core import (
    TIKTOKEN_KIND,
    WORKSPACE_KIND,
    CatalogEntry,
    Model,
    ModelError,
    model_catalog,
    resolve_model,
)
from tokenline.server.feature import Feature, Handler, Host, ModelProblem
from tokenline.server.positions import param
from tokenline.server.settings import Settings
from tokenline.server.uris import folder_of, uri_path
from tokenline.server.windows import known_window

log = logging.getLogger("tokenline.server")

MODELS = "tokenline/models"
# How a workspace file's format is described beside its path (which already says tokenizer.json).
FORMAT_NAMES = {"tokenizer.json": "Hugging Face", "Tekken": "Mistral Tekken"}


class ModelCache:
    """Loaded models by source, so documents and folders that share a model share one; and the
    sources that failed to load, so that opening documents does not retry a download each time
    (`retry_failed` forgets them: a new configuration or an explicit choice tries again)."""

    def __init__(self) -> None:
        self._models: dict[str, Model] = {}
        self._failed: dict[str, ModelError] = {}

    def get(self, setting: str, base_dir: str | None = None) -> Model:
        """The model a setting names (ModelError if it cannot be used)."""
        source = resolve_model(setting, base_dir)
        model = self._models.get(source.key)
        if model is not None:
            return model
        failed = self._failed.get(source.key)
        if failed is not None:
            raise failed
        try:
            model = source.load()
        except ModelError as exc:
            self._failed[source.key] = exc
            raise
        self._models[source.key] = model
        log.info("loaded %r from %s (%s)", model.name, source.path, model.mode_note)
        return model

    def retry_failed(self) -> None:
        self._failed.clear()

    def key_of(self, model: Model) -> str | None:
        """The source key `model` was loaded from (None for a model this cache did not load)."""
        return next((k for k, m in self._models.items() if m is model), None)


class ModelChoice(NamedTuple):
    """A document's model, and why it is not the one its settings name (None when it is)."""

    model: Model
    problem: ModelProblem | None


def model_choices(
    folders: Sequence[Path] = (), in_use: str | None = None, base_dir: str | None = None
) -> list[dict[str, Any]]:
    """What `tokenline/models` lists: the catalog's entries as a picker shows them; `inUse` marks
    the one whose source key is `in_use` (values resolved against `base_dir`)."""
    out: list[dict[str, Any]] = []
    for entry in model_catalog(folders):
        choice: dict[str, Any] = {
            "label": entry.name,
            "value": entry.value,
            "description": _description(entry, len(folders) > 1),
            "kind": entry.section,
            "path": entry.path,
        }
        if not entry.cached:
            choice["download"] = True
        if in_use is not None and _key(entry.value, base_dir) == in_use:
            choice["inUse"] = True
        out.append(choice)
    return out


def _key(value: str, base_dir: str | None) -> str | None:
    try:
        return resolve_model(value, base_dir).key
    except ModelError:
        return None


def _description(entry: CatalogEntry, many_folders: bool) -> str:
    if entry.section == TIKTOKEN_KIND:
        # The folder, not the cache's file (named by a hash of its URL, which says nothing).
        if entry.cached:
            return f"cached in {Path(entry.path).parent}"
        return "downloaded by tiktoken on first use"
    if entry.section == WORKSPACE_KIND:
        what = FORMAT_NAMES.get(entry.format, entry.format)
        return what + (f" in {Path(entry.folder).name}" if many_folders else "")
    if entry.default:
        return "bundled, the default"
    if entry.section == "bundled":
        return "bundled"
    return f"Hugging Face cache: {entry.path}"


class ModelsFeature(Feature):
    """Each document's model, the last one that loaded for each setting, and `tokenline/models`."""

    def __init__(self, host: Host) -> None:
        super().__init__(host)
        self.cache = ModelCache()
        self._last_good: dict[str, Model] = {}
        self._errors_shown: set[str] = set()

    def handlers(self) -> list[Handler]:
        return [Handler(MODELS, self.list_models)]

    def list_models(self, params: Any) -> dict[str, list[dict[str, Any]]]:
        """The catalog; with `uri` (an open document), the model it uses is marked `inUse`."""
        folders = [uri_path(f) for f in self.host.folders()]
        uri = param(params, "uri") if params is not None else None
        in_use: str | None = None
        base_dir: str | None = None
        if uri:
            try:
                st = self.host.document(str(uri))
            except JsonRpcInvalidParams:
                st = None  # not open: nothing is in use
            if st is not None:
                in_use = self.cache.key_of(st.model)
                folder = folder_of(self.host.folders(), st.uri)
                base_dir = uri_path(folder) if folder else None
        return {"models": model_choices([Path(f) for f in folders if f], in_use, base_dir)}

    def configuration_changed(self) -> None:
        """New configuration (or a model chosen again): failed models are tried again and a
        model that still fails is reported again."""
        self._errors_shown.clear()
        self.cache.retry_failed()

    def load(self, spec: str, uri: str | None) -> Model:
        """The model `spec` names for the document at uri (relative paths against its workspace
        folder), loaded once and shared with every document; ModelError when it cannot be."""
        return self.cache.get(spec, self._base_dir(uri))

    def known_window(self, spec: str, uri: str | None) -> int | None:
        """The context window known for the model `spec` names (server/windows.py), or None."""
        try:
            source = resolve_model(spec, self._base_dir(uri))
        except ModelError:
            return None
        return known_window(spec, None if source.origin == "tiktoken" else source.path)

    def _base_dir(self, uri: str | None) -> str | None:
        folder = folder_of(self.host.folders(), uri)
        return uri_path(folder) if folder else None

    def for_document(
        self, uri: str | None, settings: Settings, current: Model | None
    ) -> ModelChoice:
        """The model the settings name, or (on failure) the current/last good/bundled one and
        why."""
        folder = folder_of(self.host.folders(), uri)
        base_dir = uri_path(folder) if folder else None
        try:
            model = self.cache.get(settings.model, base_dir)
        except ModelError as exc:
            fallback = current or self._last_good.get(settings.model) or self.cache.get("")
            self._report(settings.model, exc, fallback)
            return ModelChoice(fallback, ModelProblem(settings.model, exc.reason))
        self._last_good[settings.model] = model
        return ModelChoice(model, None)

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
