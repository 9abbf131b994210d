"""`tokenline/status`: the token count, context window and model of a document, after changes."""

from __future__ import annotations

from tokenline.core import COMPILED
from tokenline.server.feature import Feature
from tokenline.server.store import DocState

STATUS = "tokenline/status"


class StatusFeature(Feature):
    """Publishes a document's status each time its text, model or settings change."""

    def publish(self, st: DocState) -> None:
        self.server.protocol.notify(
            STATUS,
            {
                "uri": st.uri,
                "version": st.version,
                "tokens": len(st.doc),
                "contextWindow": st.settings.context_window,
                "model": st.doc.model.name,
                "compiled": COMPILED,
            },
        )
