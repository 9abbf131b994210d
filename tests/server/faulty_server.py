"""`python faulty_server.py`: Tokenline's server with one more feature, run before the others,
that fails in every hook and in its own request, logging to the file $FAULTY_LOG as well.

tests/server/test_isolation.py drives it to check that the other features still run and publish.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from lsprotocol import types

from tokenline.server.app import TokenlineServer
from tokenline.server.feature import Change, DocState, Feature, Handler
from tokenline.server.transport import run_stdio, setup_logging

PING = "faulty/ping"


class Faulty(Feature):
    """Raises in every hook and handler."""

    def handlers(self) -> list[Handler]:
        return [Handler(PING, self.ping)]

    def ping(self, params: Any) -> None:
        raise RuntimeError("faulty ping")

    def initialize(self, params: types.InitializeParams) -> None:
        raise RuntimeError("faulty initialize")

    async def initialized(self) -> None:
        raise RuntimeError("faulty initialized")

    def document_opened(self, st: DocState) -> None:
        raise RuntimeError("faulty document_opened")

    def document_changed(self, st: DocState, change: Change) -> None:
        raise RuntimeError("faulty document_changed")

    def document_closed(self, st: DocState) -> None:
        raise RuntimeError("faulty document_closed")

    def publish(self, st: DocState) -> None:
        raise RuntimeError("faulty publish")

    def configuration_changed(self) -> None:
        raise RuntimeError("faulty configuration_changed")

    def refresh(self) -> None:
        raise RuntimeError("faulty refresh")


def main() -> int:
    setup_logging()
    to_file = logging.FileHandler(os.environ["FAULTY_LOG"], encoding="utf-8")
    to_file.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logging.getLogger().addHandler(to_file)
    ls = TokenlineServer(extra=[Faulty])
    return run_stdio(ls, ls.flush, ls.idle.attach)


if __name__ == "__main__":
    raise SystemExit(main())
