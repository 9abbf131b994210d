"""`tokenline/status`: what the editors show of a document after its changes, built here and
nowhere else: its token count, context window, warnAt, model, whether the core is compiled, its
project budget when it has one, and why it is not on the model its settings name when that model
failed to load."""

from __future__ import annotations

from tokenline.core import COMPILED
from tokenline.server.feature import DocState, Feature

STATUS = "tokenline/status"


def status(st: DocState) -> dict[str, object]:
    """The `tokenline/status` notification's params for a document."""
    s = st.settings
    fields: dict[str, object] = {
        "uri": st.uri,
        "version": st.version,
        "tokens": len(st.doc),
        "contextWindow": s.context_window,
        "model": st.doc.model.name,
        "compiled": COMPILED,
        "warnAt": s.warn_at,
    }
    if s.budget is not None:
        fields["budget"] = s.budget
        fields["budgetPattern"] = s.budget_pattern
    if st.model_problem is not None:
        fields["requestedModel"] = st.model_problem.requested
        fields["modelError"] = st.model_problem.reason
    return fields


class StatusFeature(Feature):
    """Publishes a document's status each time its text, model or settings change."""

    def publish(self, st: DocState) -> None:
        self.host.notify(STATUS, status(st))
