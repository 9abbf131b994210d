"""A loaded SentencePiece model: the tables and encoders a Document needs.

Built by tokenline.core.loader; kept free of protobuf so the hot paths can be compiled.
"""

from __future__ import annotations

from typing import Any, Final

from librt.vecs import vec
from mypy_extensions import i32, i64

from tokenline.core.charsmap import Charsmap
from tokenline.core.usermatch import UserMatcher

# Per-piece flags.
FLAG_BYTE: Final = 1
FLAG_SPECIAL: Final = 2  # USER_DEFINED or CONTROL
FLAG_UNKNOWN: Final = 4
FLAG_WHITESPACE: Final = 8  # every character of the piece is white space or "▁"
FLAG_CONTINUATION: Final = 16  # a UTF-8 continuation byte: no character of its own
# What a token is, for editors (Model.token_kind): the public subset of the flags above.
KIND_MASK: Final = FLAG_BYTE | FLAG_SPECIAL | FLAG_UNKNOWN | FLAG_WHITESPACE


class Model:
    """What a Document needs from a SentencePiece model (see load_model)."""

    name: str
    path: str
    model_type: str
    vocab_size: i64
    unk_id: i64
    byte_fallback: bool
    incremental: bool
    mode_note: str
    pieces: list[str]
    # Normalized length (code points) each piece covers; -1 for <unk> (a run: measured per use).
    piece_len: vec[i32]
    flags: vec[i32]
    # Normalization.
    add_dummy_prefix: bool
    dummy_as_suffix: bool
    escape_whitespaces: bool
    remove_extra_whitespaces: bool
    charsmap: Charsmap | None
    trivial_normalizer: bool
    # USER_DEFINED pieces of more than one character (None when there are none).
    bpe_matcher: UserMatcher | None
    norm_matcher: UserMatcher | None
    # SentencePiece processors: the full one normalizes; the window one sees normalized text.
    sp_full: Any
    sp_window: Any
    # Their raw pybind11 ids encoders (skipping the Python wrapper), or None to use encode().
    raw_full: Any
    raw_window: Any

    def __init__(self) -> None:
        self.name = ""
        self.path = ""
        self.model_type = "bpe"
        self.vocab_size = 0
        self.unk_id = 0
        self.byte_fallback = False
        self.incremental = True
        self.mode_note = ""
        self.pieces = []
        self.piece_len = vec[i32]()
        self.flags = vec[i32]()
        self.add_dummy_prefix = True
        self.dummy_as_suffix = False
        self.escape_whitespaces = True
        self.remove_extra_whitespaces = False
        self.charsmap = None
        self.trivial_normalizer = True
        self.bpe_matcher = None
        self.norm_matcher = None
        self.sp_full = None
        self.sp_window = None
        self.raw_full = None
        self.raw_window = None

    def __repr__(self) -> str:
        mode = "incremental" if self.incremental else "full re-encode"
        return f"<Model {self.name} {self.model_type} {self.vocab_size} pieces, {mode}>"

    def encode_full(self, text: str) -> list[int]:
        """SentencePiece's ids for text, normalized as the model says."""
        return _encode(self.raw_full, self.sp_full, text)

    def encode_window(self, text: str) -> list[int]:
        """SentencePiece's ids for text that is already normalized."""
        return _encode(self.raw_window, self.sp_window, text)

    def token_kind(self, token_id: i64) -> i64:
        """TOKEN_BYTE, TOKEN_SPECIAL, TOKEN_UNKNOWN and TOKEN_WHITESPACE bits of a token."""
        if 0 <= token_id < len(self.flags):
            return i64(self.flags[token_id]) & KIND_MASK
        return 0

    def piece(self, token_id: i64) -> str:
        if 0 <= token_id < len(self.pieces):
            return self.pieces[token_id]
        return ""

    def lengths(self, ids: list[int], text: str, window: bool) -> vec[i32]:
        """Normalized length of each token of `text`'s encoding `ids`.

        Pieces have fixed lengths except <unk>, which covers a run of unknown characters; only
        then is the text encoded again as pieces to measure the runs.
        """
        n: i64 = len(ids)
        out = vec[i32](capacity=n)
        table = self.piece_len
        need_pieces = False
        i: i64 = 0
        from librt.vecs import append

        while i < n:
            ln: i32 = table[ids[i]]
            if ln < 0:
                need_pieces = True
            out = append(out, ln)
            i += 1
        if need_pieces:
            sp = self.sp_window if window else self.sp_full
            pieces: list[str] = sp.encode(text, out_type=str, emit_unk_piece=False)
            i = 0
            while i < n:
                if out[i] < 0:
                    out[i] = i32(len(pieces[i]))
                i += 1
        return out


def _encode(raw: Any, sp: Any, text: str) -> list[int]:
    if raw is not None:
        ids: list[int] = raw(text, False, 0, 0.0, False, False, False)
        return ids
    out: list[int] = sp.encode(text)
    return out
