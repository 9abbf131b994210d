"""Every feature's hooks and handlers, each call on its own, as esbonio calls its features.

One feature's exception is logged with the feature's name, at error level with its traceback,
and the other features still run and publish: a bug in the section counts never costs the
status or the diagnostics. An LSP handler that fails is logged the same way, then answered
with an error by pygls as before; an error answer a handler means (InvalidParams for a
document that is not open) is not a failure and is not logged here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal

from pygls.exceptions import JsonRpcException

from tokenline.server.feature import Feature, Handler

log = logging.getLogger("tokenline.server")

Hook = Literal[
    "initialize",
    "document_opened",
    "document_changed",
    "document_closed",
    "publish",
    "configuration_changed",
    "refresh",
]


class Features:
    """The server's features, in the order their hooks run."""

    def __init__(self, features: Sequence[Feature]) -> None:
        self._features = tuple(features)

    def __iter__(self) -> Iterator[Feature]:
        return iter(self._features)

    def each(self, hook: Hook, *args: object) -> None:
        """Calls `hook` on every feature; one that raises is logged and the next one runs."""
        for feature in self._features:
            try:
                getattr(feature, hook)(*args)
            except Exception:
                _failed(feature.name, hook)

    async def initialized(self) -> None:
        """Awaits every feature's `initialized`, one after another, each on its own."""
        for feature in self._features:
            try:
                await feature.initialized()
            except Exception:
                _failed(feature.name, "initialized")

    def handlers(self) -> Iterator[tuple[str, Callable[[Any], Any], Any]]:
        """(method, handler, options) of every feature's LSP methods, each handler logging its
        failures with its feature's name."""
        for feature in self._features:
            for h in feature.handlers():
                yield h.method, logged(feature.name, h), h.options


def _failed(name: str, what: str) -> None:
    log.error("%s: %s failed", name, what, exc_info=True)


def logged(name: str, handler: Handler) -> Callable[[Any], Any]:
    """The handler as a plain function (sync or async like it: pygls writes attributes on its
    handlers, which a bound method cannot take) that logs its failures with `name`."""
    run, method = handler.run, handler.method
    if asyncio.iscoroutinefunction(run):

        async def run_async(params: Any) -> Any:
            try:
                return await run(params)
            except JsonRpcException:
                raise
            except Exception:
                _failed(name, method)
                raise

        return run_async

    def run_sync(params: Any) -> Any:
        try:
            return run(params)
        except JsonRpcException:
            raise
        except Exception:
            _failed(name, method)
            raise

    return run_sync
