"""A document's counts under models other than its own: what the compare unit (compare.py) gives
the status and the diagnostics. Neither imports the other: the server hands the compare unit to
them as `OtherModels` (NO_OTHER_MODELS when there is none). Likewise the chat unit (chat.py)
gives them a chat file's conversations as `ChatFiles`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from lsprotocol import types

from tokenline.core import Document
from tokenline.server.feature import DocState


@dataclass(frozen=True)
class ModelCount:
    """A document's count under one model. A model that could not be loaded has no counts and
    says why (`error`); its `model` is then the spec the user wrote."""

    model: str
    tokens: int | None
    context_window: int | None
    # Tokens of the editor's selection (each range encoded alone, summed); 0 with none.
    selection: int | None
    error: str | None = None


class OtherModels(Protocol):
    """The document's text counted under other models, kept in step with its edits."""

    def compared(self, st: DocState) -> list[ModelCount]:
        """The counts under each of `tokenline.compareModels`, in the setting's order."""

    def budget_count(self, st: DocState) -> ModelCount | None:
        """The count under the model the document's budget names; None when it names none."""

    def budget_document(self, st: DocState) -> Document | None:
        """The text under the model the document's budget names; None when it names none or
        that model cannot be loaded."""


class _NoOtherModels:
    def compared(self, st: DocState) -> list[ModelCount]:
        return []

    def budget_count(self, st: DocState) -> ModelCount | None:
        return None

    def budget_document(self, st: DocState) -> Document | None:
        return None


NO_OTHER_MODELS: OtherModels = _NoOtherModels()


def count_fields(c: ModelCount) -> dict[str, object]:
    """A count as `tokenline/status` and `tokenline/compare` send it (docs/protocol.md)."""
    fields: dict[str, object] = {
        "model": c.model,
        "tokens": c.tokens,
        "contextWindow": c.context_window,
        "selection": c.selection,
    }
    if c.error is not None:
        fields["error"] = c.error
    return fields


class ChatFiles(Protocol):
    """A chat file's conversations (the chat unit, chat.py), for the status and the
    diagnostics; None for a document that is no chat file."""

    def chat_status(self, st: DocState) -> dict[str, object] | None:
        """The status's `chat` object."""

    def chat_diagnostics(self, st: DocState) -> list[types.Diagnostic] | None:
        """The diagnostics of its conversations, instead of the document's own."""


class _NoChatFiles:
    def chat_status(self, st: DocState) -> dict[str, object] | None:
        return None

    def chat_diagnostics(self, st: DocState) -> list[types.Diagnostic] | None:
        return None


NO_CHAT_FILES: ChatFiles = _NoChatFiles()
