"""The `tokenline` settings section: defaults, validation, and where each value came from.

Values arrive from `initializationOptions`, from `workspace/configuration` (globally and per
workspace folder) and from `workspace/didChangeConfiguration`. Each source is a partial mapping;
`Settings.overlay` applies one on top of another, ignoring absent and null keys. A value of the
wrong type or out of range is dropped with a problem message instead of being half-applied.
`SettingsFeature` keeps the sources and answers the configuration notifications.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from tokenline.server.feature import Feature

if TYPE_CHECKING:
    from tokenline.server.app import TokenlineServer

log = logging.getLogger("tokenline.server")

SECTION = "tokenline"
# Longest rendering of a rejected value in a problem message.
SHOWN_VALUE_CHARS = 60
ELLIPSIS = "..."
# Tolerance of the warnAt threshold, so that 0.9 x 100 is 90 and not 91.
THRESHOLD_EPSILON = 1e-9

DEFAULT_CONTEXT_WINDOW = 8192
DEFAULT_WARN_AT = 0.9


@dataclass(frozen=True)
class Settings:
    """One effective set of settings (what a document is checked against)."""

    model: str = ""
    context_window: int = DEFAULT_CONTEXT_WINDOW
    warn_at: float = DEFAULT_WARN_AT
    section_counts: bool = True

    def overlay(self, raw: object) -> tuple[Settings, list[str]]:
        """These settings with the keys present in `raw` (a `tokenline` section) applied.

        Returns the new settings and a list of problems, one per rejected value.
        """
        section = unwrap_section(raw)
        if section is None:
            return self, []
        problems: list[str] = []
        out = self
        if "model" in section and section["model"] is not None:
            v = section["model"]
            if isinstance(v, str):
                out = replace(out, model=v.strip())
            else:
                problems.append(f"tokenline.model must be a string, not {_show(v)}")
        if "contextWindow" in section and section["contextWindow"] is not None:
            cw = parse_context_window(section["contextWindow"])
            if cw is None:
                problems.append(
                    "tokenline.contextWindow must be a positive whole number of tokens, not "
                    f"{_show(section['contextWindow'])}"
                )
            else:
                out = replace(out, context_window=cw)
        if "warnAt" in section and section["warnAt"] is not None:
            v = section["warnAt"]
            if (
                isinstance(v, (int, float))
                and not isinstance(v, bool)
                and math.isfinite(v)
                and 0 <= v <= 1
            ):
                out = replace(out, warn_at=float(v))
            else:
                problems.append(
                    f"tokenline.warnAt must be a fraction between 0 and 1, not {_show(v)}"
                )
        if "sectionCounts" in section and section["sectionCounts"] is not None:
            v = section["sectionCounts"]
            if isinstance(v, bool):
                out = replace(out, section_counts=v)
            else:
                problems.append(f"tokenline.sectionCounts must be true or false, not {_show(v)}")
        return out, problems

    def warn_threshold(self) -> int:
        """The smallest token count that gets the Warning (at or above warnAt x window)."""
        return max(0, math.ceil(self.warn_at * self.context_window - THRESHOLD_EPSILON))


def unwrap_section(raw: object) -> Mapping[str, Any] | None:
    """The `tokenline` section of `raw`: either the section itself or `{"tokenline": {...}}`."""
    if not isinstance(raw, Mapping):
        return None
    inner = raw.get(SECTION)
    if isinstance(inner, Mapping):
        return inner
    # Dotted keys, as some clients send them flat: {"tokenline.model": ...}.
    dotted = {
        k[len(SECTION) + 1 :]: v
        for k, v in raw.items()
        if isinstance(k, str) and k.startswith(SECTION + ".")
    }
    if dotted:
        return dotted
    return raw


def parse_context_window(v: object) -> int | None:
    """A positive integer from a number or a string such as "128000", "128,000" or "131_072"."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v if v > 0 else None
    if isinstance(v, float):
        return int(v) if v.is_integer() and v > 0 else None
    if isinstance(v, str):
        s = v.strip().replace(",", "").replace("_", "")
        if s.isdigit():
            n = int(s)
            return n if n > 0 else None
    return None


def _show(v: object) -> str:
    text = repr(v)
    if len(text) <= SHOWN_VALUE_CHARS:
        return text
    return text[: SHOWN_VALUE_CHARS - len(ELLIPSIS)] + ELLIPSIS


def folder_of(folders: list[str], uri: str) -> str | None:
    """The innermost workspace folder (a URI) that holds uri."""
    best: str | None = None
    for folder in folders:
        prefix = folder.rstrip("/") + "/"
        if (uri.startswith(prefix) or uri == folder) and (best is None or len(folder) > len(best)):
            best = folder
    return best


class SettingsFeature(Feature):
    """Where settings come from, each document's effective settings, and re-reading them."""

    def __init__(self, server: TokenlineServer) -> None:
        super().__init__(server)
        # Setting sources, lowest precedence first: initializationOptions, the global
        # configuration (pulled or pushed), each workspace folder's configuration.
        self.init_settings = Settings()
        self.global_raw: object = None
        self.folder_raw: dict[str, object] = {}
        self.can_pull_config = False
        self._warned: set[str] = set()

    def register(self) -> None:
        self.handle(types.INITIALIZED, self.initialized)
        self.handle(types.WORKSPACE_DID_CHANGE_CONFIGURATION, self.did_change_configuration)
        self.handle(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS, self.did_change_folders)

    def initialize(self, params: types.InitializeParams) -> None:
        self.init_settings, problems = self.init_settings.overlay(params.initialization_options)
        for p in problems:
            log.warning("initializationOptions: %s", p)
        ws = params.capabilities.workspace
        self.can_pull_config = bool(ws and ws.configuration)

    async def initialized(self, params: types.InitializedParams) -> None:
        await self.pull_configuration()

    async def did_change_configuration(self, params: types.DidChangeConfigurationParams) -> None:
        pushed = params.settings
        if isinstance(pushed, dict) and (
            SECTION in pushed
            or any(isinstance(k, str) and k.startswith(SECTION + ".") for k in pushed)
        ):
            self.global_raw = pushed
        self._warned.clear()
        self.server.models.forget_shown_errors()
        if self.can_pull_config:
            await self.pull_configuration()
        else:
            self.apply()

    async def did_change_folders(self, params: types.DidChangeWorkspaceFoldersParams) -> None:
        for f in params.event.removed:
            self.folder_raw.pop(f.uri, None)
        await self.pull_configuration()

    def folders(self) -> list[str]:
        """The workspace folders' URIs (none before `initialize`)."""
        try:
            return list(self.server.workspace.folders.keys())
        except RuntimeError:
            return []

    def folder_of(self, uri: str | None) -> str | None:
        return folder_of(self.folders(), uri) if uri else None

    def for_uri(self, uri: str | None) -> Settings:
        """The settings of a document at uri: every source overlaid, problems warned about once."""
        settings, problems = self.init_settings.overlay(self.global_raw)
        folder = self.folder_of(uri)
        if folder is not None and folder in self.folder_raw:
            settings, more = settings.overlay(self.folder_raw[folder])
            problems += more
        for msg in problems:
            self._warn_once(msg)
        return settings

    def _warn_once(self, msg: str) -> None:
        if msg not in self._warned:
            self._warned.add(msg)
            log.warning("%s", msg)
            self.server.show(types.MessageType.Warning, f"Tokenline: {msg}; using the default")

    async def pull_configuration(self) -> None:
        """Asks the client for the global and every folder's section, then applies them."""
        if not self.can_pull_config:
            return
        folders = self.folders()
        items = [types.ConfigurationItem(section=SECTION)]
        items += [types.ConfigurationItem(scope_uri=f, section=SECTION) for f in folders]
        try:
            result = await self.server.workspace_configuration_async(
                types.ConfigurationParams(items=items)
            )
        except Exception as exc:
            log.warning("workspace/configuration failed: %s", exc)
            return
        values = list(result or [])
        if values and values[0] is not None:
            self.global_raw = values[0]
        for f, v in zip(folders, values[1:], strict=False):
            if v is not None:
                self.folder_raw[f] = v
        self.apply()

    def apply(self) -> None:
        """Re-reads every document's settings; re-tokenizes those whose model changed."""
        ls = self.server
        changed_any = False
        for st in ls.documents:
            settings = self.for_uri(st.uri)
            model = ls.models.for_document(st.uri, settings, st.model)
            if model is not st.model:
                ls.documents.set_model(st, model)
                changed_any = True
            if settings != st.settings:
                st.settings = settings
                ls.mark(st.uri)
                changed_any = True
        if changed_any:
            ls.flush()
            for feature in ls.features:
                feature.refresh()
