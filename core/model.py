"""A loaded tokenizer: its vocabulary and the family that encodes with it.

Built by tokenline.core.loader. Editors read the vocabulary (pieces, kinds); Documents hand the
family to the engine.
"""

from __future__ import annotations

from mypy_extensions import i64

from tokenline.core.family import Family
from tokenline.core.vocab import Vocabulary


class Model:
    """A tokenizer as Documents and editors use it (see load_model)."""

    name: str
    path: str
    model_type: str
    vocab: Vocabulary
    family: Family

    def __init__(self, name: str, path: str, model_type: str, family: Family) -> None:
        self.name = name
        self.path = path
        self.model_type = model_type
        self.vocab = family.vocab
        self.vocab.pack()
        self.family = family

    def __repr__(self) -> str:
        mode = "incremental" if self.incremental else "full re-encode"
        return f"<Model {self.name} {self.model_type} {self.vocab_size} pieces, {mode}>"

    @property
    def vocab_size(self) -> i64:
        return self.vocab.size()

    @property
    def unk_id(self) -> i64:
        return self.vocab.unk_id

    @property
    def incremental(self) -> bool:
        """False when every edit re-encodes the whole text (still exact)."""
        return self.family.incremental

    @property
    def mode_note(self) -> str:
        """Why the model is not incremental ("incremental" when it is)."""
        return self.family.mode_note

    def piece(self, token_id: i64) -> str:
        return self.vocab.piece(token_id)

    def token_bytes(self, token_id: i64) -> bytes:
        """The bytes of the text the token stands for: a byte piece's byte, a byte-level token's
        bytes (possibly part of a UTF-8 character), SentencePiece's "▁" as a space."""
        return self.family.token_bytes(token_id)

    def token_kind(self, token_id: i64) -> i64:
        """TOKEN_BYTE, TOKEN_SPECIAL, TOKEN_UNKNOWN and TOKEN_WHITESPACE bits of a token."""
        return self.vocab.token_kind(token_id)

    def encode(self, text: str) -> list[int]:
        """The reference library's ids for the whole text."""
        return self.family.encode(text)
