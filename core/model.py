"""A loaded SentencePiece model: the tables and encoders a Document needs.

Built by tokenline.core.loader; kept free of protobuf so the hot paths can be compiled.
"""

from __future__ import annotations

from typing import Any, Final

from librt.vecs import vec
from mypy_extensions import i32, i64, u8

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
    # BPE models whose UNUSED pieces merges can form: SentencePiece merges such a piece like any
    # other and re-splits it only at the end, so its parts are one symbol of the merge process.
    # The same processors with UNUSED pieces made NORMAL output those symbols (None otherwise).
    splits_unused: bool
    sym_full: Any
    sym_window: Any

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
        self.splits_unused = False
        self.sym_full = None
        self.sym_window = None

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
        """Normalized length of each token of `text`'s encoding `ids`."""
        return self._lengths(ids, text, self.sp_window if window else self.sp_full)

    def _lengths(self, ids: list[int], text: str, sp: Any) -> vec[i32]:
        """Pieces have fixed lengths except <unk>, which covers a run of unknown characters; only
        then is the text encoded again (by `sp`, which gave `ids`) as pieces to measure the runs.
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
            pieces: list[str] = sp.encode(text, out_type=str, emit_unk_piece=False)
            i = 0
            while i < n:
                if out[i] < 0:
                    out[i] = i32(len(pieces[i]))
                i += 1
        return out

    def joins(self, lens: vec[i32], text: str, window: bool) -> vec[u8]:
        """Per token of `text` (lengths `lens`): 1 when it continues the merge symbol of the token
        before it (a part of a re-split UNUSED piece, or a byte of a character), else 0.

        Window edges may only sit between symbols: there the merges of a window are the whole
        text's. Symbol boundaries come from the processor that keeps UNUSED pieces whole.
        """
        n: i64 = len(lens)
        out = vec[u8](capacity=n)
        from librt.vecs import append

        sym = self.sym_window if window else self.sym_full
        bounds = self._symbol_bounds(sym, text) if sym is not None else vec[i64]()
        nb: i64 = len(bounds)
        j: i64 = 0
        pos: i64 = 0
        i: i64 = 0
        while i < n:
            ln: i64 = i64(lens[i])
            while j < nb and bounds[j] < pos:
                j += 1
            inside: bool = sym is not None and (j >= nb or bounds[j] != pos)
            out = append(out, u8(1) if ln == 0 or inside else u8(0))
            pos += ln
            i += 1
        return out

    def _symbol_bounds(self, sym: Any, text: str) -> vec[i64]:
        """Start offsets (normalized code points) of the merge symbols of `text`."""
        ids: list[int] = sym.encode(text)
        lens = self._lengths(ids, text, sym)
        n: i64 = len(lens)
        out = vec[i64](capacity=n)
        from librt.vecs import append

        pos: i64 = 0
        i: i64 = 0
        while i < n:
            out = append(out, pos)
            pos += i64(lens[i])
            i += 1
        return out


def _encode(raw: Any, sp: Any, text: str) -> list[int]:
    if raw is not None:
        ids: list[int] = raw(text, False, 0, 0.0, False, False, False)
        return ids
    out: list[int] = sp.encode(text)
    return out
