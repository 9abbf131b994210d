"""Every feature's hooks and handlers, each call on its own, as esbonio calls its features.

One feature's exception is logged with the feature's name, at error level with its traceback,
and the other features still run and publish: a bug in the section counts never costs the
status or the diagnostics. An LSP handler that fails is logged the same way, then answered
with an error by pygls as before; an error answer a handler means (InvalidParams for a
document that is not open) is not a failure and is not logged here.

Several features may answer one method (inlay hints: Markdown sections and chat files; hover:
the token and the chat message under the cursor): each is asked on its own and the answers are
merged, lists joined and hovers' texts one under the other. A handler answers None for a
document that is not its kind. One that fails costs only its part; an error answer one means
(ServerCancelled while the tokens catch up) is the answer only when no other feature answered.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tokenline.server.feature import Feature, Handler

log = logging.getLogger("tokenline.server")

Hook = Literal[
    "initialize",
    "document_opened",
    "text_changed",
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
        by_method: dict[str, list[tuple[str, Handler]]] = {}
        for feature in self._features:
            for h in feature.handlers():
                by_method.setdefault(h.method, []).append((feature.name, h))
        for method, found in by_method.items():
            options = next((h.options for _name, h in found if h.options is not None), None)
            if len(found) == 1:
                yield method, logged(*found[0]), options
            else:
                yield method, combined(method, found), options


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


def combined(method: str, found: list[tuple[str, Handler]]) -> Callable[[Any], Any]:
    """One handler that asks each feature's handler of `method` on its own and merges their
    answers (synchronous handlers only)."""
    for name, h in found:
        if asyncio.iscoroutinefunction(h.run):
            raise TypeError(f"{name}: {method} is answered by several features, so it must be sync")

    def run_all(params: Any) -> Any:
        answers: list[Any] = []
        refused: JsonRpcException | None = None
        for name, h in found:
            try:
                answer = h.run(params)
            except JsonRpcException as exc:
                refused = refused or exc
                continue
            except Exception:
                _failed(name, method)
                continue
            if answer is not None:
                answers.append(answer)
        if not answers and refused is not None:
            raise refused
        return merged(answers)

    return run_all


def merged(answers: list[Any]) -> Any:
    """The features' answers as one: lists joined, hovers' texts one under the other (the first
    one's range), else the first answer; None when there is none."""
    if not answers:
        return None
    if all(isinstance(a, list) for a in answers):
        return [item for a in answers for item in a]
    hovers = [a for a in answers if isinstance(a, types.Hover)]
    if len(hovers) == len(answers) and len(hovers) > 1:
        texts = [h.contents.value for h in hovers if isinstance(h.contents, types.MarkupContent)]
        return types.Hover(
            contents=types.MarkupContent(
                kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(texts)
            ),
            range=hovers[0].range,
        )
    return answers[0]
