"""The user's `tokenline` configuration: `initializationOptions`, `workspace/configuration`
(globally and per workspace folder) and `workspace/didChangeConfiguration`.

These are the user's layers of a document's settings, lowest precedence first; the server lays
them over the project's (server/budgets.py). New configuration is announced to every feature
(`Host.configuration_changed`) and applied to every document (`Host.settings_changed`). The
server pulls them first when the client is initialized, before it handles anything else.
"""

from __future__ import annotations

import logging

from lsprotocol import types

from tokenline.server.feature import Feature, Handler, Host
from tokenline.server.settings import SECTION, Settings
from tokenline.server.uris import folder_of

log = logging.getLogger("tokenline.server")


class ConfigurationFeature(Feature):
    """The user's setting sources, the notifications that change them, and pulling them."""

    def __init__(self, host: Host) -> None:
        super().__init__(host)
        # Setting sources, lowest precedence first: initializationOptions, the global
        # configuration (pulled or pushed), each workspace folder's configuration.
        self.init_raw: object = None
        self.global_raw: object = None
        self.folder_raw: dict[str, object] = {}
        self.can_pull_config = False
        self._warned: set[str] = set()

    def handlers(self) -> list[Handler]:
        return [
            Handler(types.WORKSPACE_DID_CHANGE_CONFIGURATION, self.did_change_configuration),
            Handler(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS, self.did_change_folders),
        ]

    def initialize(self, params: types.InitializeParams) -> None:
        self.init_raw = params.initialization_options
        _, problems = Settings().overlay(self.init_raw)
        for p in problems:
            log.warning("initializationOptions: %s", p)
        ws = params.capabilities.workspace
        self.can_pull_config = bool(ws and ws.configuration)

    def configuration_changed(self) -> None:
        self._warned.clear()

    async def did_change_configuration(self, params: types.DidChangeConfigurationParams) -> None:
        pushed = params.settings
        if isinstance(pushed, dict) and (
            SECTION in pushed
            or any(isinstance(k, str) and k.startswith(SECTION + ".") for k in pushed)
        ):
            self.global_raw = pushed
        self.host.configuration_changed()
        if self.can_pull_config:
            await self.pull_configuration()
        else:
            self.host.settings_changed()

    async def did_change_folders(self, params: types.DidChangeWorkspaceFoldersParams) -> None:
        for f in params.event.removed:
            self.folder_raw.pop(f.uri, None)
        await self.pull_configuration()

    def layers(self, uri: str | None) -> list[object]:
        """The user's sources that apply to the document at uri, lowest precedence first."""
        layers = [self.init_raw, self.global_raw]
        folder = folder_of(self.host.folders(), uri)
        if folder is not None and folder in self.folder_raw:
            layers.append(self.folder_raw[folder])
        return layers

    def warn(self, problems: list[str]) -> None:
        """Tells the user of each rejected value, once until the configuration changes."""
        for msg in problems:
            if msg not in self._warned:
                self._warned.add(msg)
                log.warning("%s", msg)
                self.host.show(types.MessageType.Warning, f"Tokenline: {msg}; using the default")

    async def pull_configuration(self) -> None:
        """Asks the client for the global and every folder's section, then applies them."""
        if not self.can_pull_config:
            return
        folders = self.host.folders()
        items = [types.ConfigurationItem(section=SECTION)]
        items += [types.ConfigurationItem(scope_uri=f, section=SECTION) for f in folders]
        try:
            result = await self.host.request(
                types.WORKSPACE_CONFIGURATION, types.ConfigurationParams(items=items)
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
        self.host.settings_changed()
