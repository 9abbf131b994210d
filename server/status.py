"""`tokenline/status`: what the editors show of a document after its changes, built here and
nowhere else: its token count, context window, warnAt, model, whether the core is compiled,
whether the count is catching up with the text, its project budget when it has one (counted
under the budget's model when it names one), its counts under the compare models, a chat file's
conversations, and why it is not on the model its settings name when that model failed to load."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from tokenline.core import COMPILED
from tokenline.server.counted import (
    NO_CHAT_FILES,
    NO_OTHER_MODELS,
    ChatFiles,
    ModelCount,
    OtherModels,
    count_fields,
)
from tokenline.server.feature import DocState, Feature, Host

log = logging.getLogger("tokenline.server")

STATUS = "tokenline/status"


def status(
    st: DocState,
    compared: Sequence[ModelCount] = (),
    budget: ModelCount | None = None,
    chat: dict[str, object] | None = None,
) -> dict[str, object]:
    """The `tokenline/status` notification's params for a document, with its counts under the
    compare models and under its budget's model (when the budget names one), and its
    conversations' totals when it is a chat file."""
    s = st.settings
    fields: dict[str, object] = {
        "uri": st.uri,
        "version": st.version,
        "tokens": len(st.doc),
        "contextWindow": s.context_window,
        "model": st.doc.model.name,
        "compiled": COMPILED,
        "warnAt": s.warn_at,
        "compare": [count_fields(c) for c in compared],
        # True while a model that re-encodes whole has not yet counted the newest text: `tokens`
        # is the count of an earlier version (server/catchup.py).
        "pending": st.pending,
    }
    if s.budget is not None:
        fields["budget"] = s.budget
        fields["budgetPattern"] = s.budget_pattern
        if budget is not None:
            fields["budgetModel"] = budget.model
            fields["budgetTokens"] = budget.tokens
            if budget.error is not None:
                fields["budgetError"] = budget.error
    if chat is not None:
        fields["chat"] = chat
    if st.model_problem is not None:
        fields["requestedModel"] = st.model_problem.requested
        fields["modelError"] = st.model_problem.reason
    return fields


class StatusFeature(Feature):
    """Publishes a document's status each time its text, model or settings change."""

    def __init__(
        self, host: Host, others: OtherModels = NO_OTHER_MODELS, chats: ChatFiles = NO_CHAT_FILES
    ) -> None:
        super().__init__(host)
        self.others = others
        self.chats = chats

    def publish(self, st: DocState) -> None:
        try:
            compared, budget = self.others.compared(st), self.others.budget_count(st)
        except Exception:
            # The counts under other models are their unit's; the status goes out without them.
            log.error("%s: the counts under other models failed", self.name, exc_info=True)
            compared, budget = [], None
        try:
            chat = self.chats.chat_status(st)
        except Exception:
            log.error("%s: the chat file's totals failed", self.name, exc_info=True)
            chat = None
        self.host.notify(STATUS, status(st, compared, budget, chat))
