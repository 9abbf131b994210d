"""The project configuration in the language server: `[tool.tokenline]` in pyproject.toml, or
tokenline.toml (read by tokenline.config, as `tokenline check` and pre-commit read it).

For a document under a configured project, the project's `model`, `context-window` and `warn-at`
are the lowest layer of its settings: the user's settings (initializationOptions, workspace
configuration) are laid over them and win. A `budgets` pattern matching the document's path gives
it a budget, which its diagnostics and status use instead of the context window (in tokens of the
budget's own model when it names one). A broken
configuration file is not applied (the user's settings and the defaults stay) and is reported
once in a `window/showMessage` Warning until it changes.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from lsprotocol import types

from tokenline.config import CONFIG_NAMES, ConfigError, ConfigFinder, ProjectConfig
from tokenline.server.feature import Feature, Handler, Host
from tokenline.server.settings import Settings
from tokenline.server.uris import uri_path

log = logging.getLogger("tokenline.server")

# Registered with the client so that it tells the server when a configuration file changes.
WATCH_GLOBS = tuple(f"**/{name}" for name in CONFIG_NAMES)
WATCH_ID = "tokenline-config-files"


class ProjectFeature(Feature):
    """Each document's project configuration, the settings built on it, and re-reading it."""

    def __init__(self, host: Host) -> None:
        super().__init__(host)
        self.finder = ConfigFinder()
        self.can_watch_files = False
        self._reported: set[str] = set()

    def handlers(self) -> list[Handler]:
        return [Handler(types.WORKSPACE_DID_CHANGE_WATCHED_FILES, self.did_change_watched_files)]

    def initialize(self, params: types.InitializeParams) -> None:
        ws = params.capabilities.workspace
        watch = ws.did_change_watched_files if ws else None
        self.can_watch_files = bool(watch and watch.dynamic_registration)

    async def initialized(self) -> None:
        """Asks the client to report changes of configuration files, so that an edited budget
        applies without a restart. After the settings are pulled (the order of the features): a
        client may take its time to set up file watching. A client that refuses only loses that.
        """
        if not self.can_watch_files:
            return
        watchers = [types.FileSystemWatcher(glob_pattern=g) for g in WATCH_GLOBS]
        registration = types.Registration(
            id=WATCH_ID,
            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers),
        )
        try:
            await self.host.request(
                types.CLIENT_REGISTER_CAPABILITY,
                types.RegistrationParams(registrations=[registration]),
            )
        except Exception as exc:
            log.warning("the client did not watch the configuration files: %s", exc)

    def did_change_watched_files(self, params: types.DidChangeWatchedFilesParams) -> None:
        if any(is_config_file(uri_path(c.uri)) for c in params.changes):
            # New configuration for every feature: a model that failed to load is tried again
            # (a saved configuration chooses its model again, as a setting chosen again does).
            self.host.configuration_changed()
            self.host.settings_changed()

    def configuration_changed(self) -> None:
        """Forgets every configuration read, so that the next lookup reads the files again."""
        self.finder.clear()
        self._reported.clear()

    def config_for(self, uri: str | None) -> ProjectConfig | None:
        """The configuration of the document's file (None for unsaved or non-file documents,
        and for a broken configuration, which is reported once)."""
        path = uri_path(uri) if uri else None
        if path is None:
            return None
        try:
            return self.finder.config_for(Path(path))
        except ConfigError as exc:
            message = str(exc)
            if message not in self._reported:
                self._reported.add(message)
                log.warning("%s", message)
                self.host.show(
                    types.MessageType.Warning,
                    f"Tokenline: {message}. This configuration is not applied: "
                    "using your settings and the defaults.",
                )
            return None

    def settings(self, uri: str | None, layers: Iterable[object]) -> tuple[Settings, list[str]]:
        """The document's settings: defaults, then the project's values, then each of the user's
        setting sources in `layers` (lowest first), then the project's budget for its path.
        Returns them with the problems found in the user's sources."""
        config = self.config_for(uri)
        s = Settings() if config is None else project_base(config)
        problems: list[str] = []
        for raw in layers:
            s, found = s.overlay(raw)
            problems += found
        path = uri_path(uri) if uri else None
        budget = None if config is None or path is None else config.budget_for(Path(path))
        if budget is not None and config is not None:
            model = None if budget.model is None else config.setting(budget.model)
            s = replace(s, budget=budget.limit, budget_pattern=budget.pattern, budget_model=model)
        return s, problems


def project_base(config: ProjectConfig) -> Settings:
    """The defaults with what the project configuration sets."""
    s = Settings()
    model = config.model_setting()
    if model is not None:
        s = replace(s, model=model)
    if config.context_window is not None:
        s = replace(s, context_window=config.context_window)
    if config.warn_at is not None:
        s = replace(s, warn_at=config.warn_at)
    return s


def is_config_file(path: str | None) -> bool:
    return path is not None and Path(path).name in CONFIG_NAMES
