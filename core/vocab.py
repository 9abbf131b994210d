"""A tokenizer's vocabulary: what each token id is, independent of how text is encoded.

Editors ask what a token is (a byte, a special piece, white space); the engine asks how much
normalized text a token covers. Both are per-id tables here, kept apart from the encoders so that
every tokenizer family shares them.
"""

from __future__ import annotations

from typing import Final

from librt.vecs import append, vec
from mypy_extensions import i32, i64

# Per-piece flags.
FLAG_BYTE: Final = 1
FLAG_SPECIAL: Final = 2  # USER_DEFINED or CONTROL
FLAG_UNKNOWN: Final = 4
FLAG_WHITESPACE: Final = 8  # every character of the piece is white space or "▁"
FLAG_CONTINUATION: Final = 16  # a UTF-8 continuation byte: no character of its own
# What a token is, for editors (Vocabulary.token_kind): the public subset of the flags above.
KIND_MASK: Final = FLAG_BYTE | FLAG_SPECIAL | FLAG_UNKNOWN | FLAG_WHITESPACE
# piece_len of a token whose length is only known in context (<unk> covers a run).
LENGTH_IN_CONTEXT: Final = -1
# How SentencePiece and byte-fallback tokenizer.json files write a byte piece: <0xE4>.
BYTE_PIECE_PREFIX: Final = "<0x"
_HEX: Final = "0123456789abcdefABCDEF"


def byte_piece_value(piece: str) -> i64:
    """The byte a piece such as `<0xE4>` stands for; -1 for any other piece (the one answer for
    bad input, wherever byte pieces are read)."""
    if len(piece) != 6 or not piece.startswith(BYTE_PIECE_PREFIX) or piece[5] != ">":
        return -1
    high = _HEX.find(piece[3])
    low = _HEX.find(piece[4])
    if high < 0 or low < 0:
        return -1
    return (high if high < 16 else high - 6) * 16 + (low if low < 16 else low - 6)


class Vocabulary:
    """Pieces, the normalized length each covers, and what kind of token each is.

    The pieces' texts are kept in one string (`chars`, with where each ends), not a list: the
    garbage collector walks a list of 200,000 strings on every full collection (7 ms for
    o200k_base's, a pause in whichever edit it falls on) and never a string."""

    chars: str
    ends: vec[i64]
    # Pieces added since chars was last joined (pack), while a loader adds them one by one.
    added: list[str]
    piece_len: vec[i32]
    flags: vec[i32]
    unk_id: i64
    byte_fallback: bool

    def __init__(self) -> None:
        self.chars = ""
        self.ends = vec[i64]()
        self.added = []
        self.piece_len = vec[i32]()
        self.flags = vec[i32]()
        self.unk_id = 0
        self.byte_fallback = False

    def add(self, piece: str, length: i64, flags: i64) -> None:
        end: i64 = self.ends[len(self.ends) - 1] if len(self.ends) > 0 else 0
        self.ends = append(self.ends, end + len(piece))
        self.added.append(piece)
        self.piece_len = append(self.piece_len, i32(length))
        self.flags = append(self.flags, i32(flags))

    def pack(self) -> None:
        """Joins the pieces added one by one into `chars` (a loaded model's last step)."""
        if self.added:
            self.chars += "".join(self.added)
            self.added = []

    def size(self) -> i64:
        return len(self.ends)

    def piece(self, token_id: i64) -> str:
        if 0 <= token_id < len(self.ends):
            self.pack()
            start: i64 = self.ends[token_id - 1] if token_id > 0 else 0
            return self.chars[start : self.ends[token_id]]
        return ""

    def token_kind(self, token_id: i64) -> i64:
        """TOKEN_BYTE, TOKEN_SPECIAL, TOKEN_UNKNOWN and TOKEN_WHITESPACE bits of a token."""
        if 0 <= token_id < len(self.flags):
            return i64(self.flags[token_id]) & KIND_MASK
        return 0

    def is_byte(self, token_id: i64) -> bool:
        return (self.flags[token_id] & FLAG_BYTE) != 0

    def is_special(self, token_id: i64) -> bool:
        return (self.flags[token_id] & FLAG_SPECIAL) != 0

    def fixed_lengths(self, ids: list[int]) -> tuple[vec[i32], bool]:
        """Each token's length from the table, and whether some are only known in context."""
        n: i64 = len(ids)
        out = vec[i32](capacity=n)
        table = self.piece_len
        in_context = False
        i: i64 = 0
        while i < n:
            ln: i32 = table[ids[i]]
            if ln == LENGTH_IN_CONTEXT:
                in_context = True
            out = append(out, ln)
            i += 1
        return out, in_context
