"""The SentencePiece family: its normalizer, its encoders, and its cut before merging.

Windows are encoded by SentencePiece itself, through a second processor whose normalizer is the
identity (windows are cut from already normalized text). Built by tokenline.core.loader.
"""

from __future__ import annotations

from typing import Any, Final

from librt.vecs import append, vec
from mypy_extensions import i32, i64, u8

from tokenline.core.family import Family
from tokenline.core.normalization import Normalization
from tokenline.core.normalizer import GeneralNorm, NormRules, TrivialNorm
from tokenline.core.rope import TextRope
from tokenline.core.symboledges import SymbolEdges
from tokenline.core.tokens import JOIN_CHARACTER, JOIN_EDGE, TokenRun, TokenStore, to_vec
from tokenline.core.usermatch import UserMatcher
from tokenline.core.vocab import LENGTH_IN_CONTEXT, Vocabulary, byte_piece_value
from tokenline.core.window import Edges, Stats

# SentencePiece's visible space.
SPACE_MARK: Final = "\u2581"


class SentencePieceFamily(Family):
    """SentencePiece models (BPE incrementally; unigram, char and word re-encoded whole)."""

    rules: NormRules
    # USER_DEFINED pieces of more than one character, matched greedily before any merge.
    bpe_matcher: UserMatcher | None
    # Processors: the full one normalizes; the window one sees normalized text.
    sp_full: Any
    sp_window: Any
    # Their raw pybind11 ids encoders (skipping the Python wrapper), or None to use encode().
    raw_full: Any
    raw_window: Any
    # For models whose UNUSED pieces merges can form: SentencePiece merges such a piece like any
    # other and re-splits it only at the end, so its parts are one symbol of the merge process.
    # The same processors with UNUSED pieces made NORMAL output those symbols (None otherwise).
    sym_full: Any
    sym_window: Any
    # Unigram models whose every known piece is made of characters that are pieces of their
    # own: those characters. The length of an <unk> is then read from the text (_unknown_runs);
    # else (None) measured by encoding the text again as pieces.
    single_characters: set[str] | None

    def __init__(self, vocab: Vocabulary, rules: NormRules) -> None:
        super().__init__(vocab)
        self.rules = rules
        self.bpe_matcher = None
        self.sp_full = None
        self.sp_window = None
        self.raw_full = None
        self.raw_window = None
        self.sym_full = None
        self.sym_window = None
        self.single_characters = None

    def use_matcher(self, matcher: UserMatcher) -> None:
        self.bpe_matcher = matcher

    def use_symbol_encoders(self, sym_full: Any, sym_window: Any) -> None:
        self.sym_full = sym_full
        self.sym_window = sym_window
        self.keeps_joins = True

    # -- the seam ------------------------------------------------------------------------------

    def normalization(self, rope: TextRope) -> Normalization:
        if self.rules.trivial():
            return TrivialNorm(rope, self.rules)
        return GeneralNorm(rope, self.rules)

    def edges(self, norm: Normalization, toks: TokenStore, stats: Stats) -> Edges:
        return SymbolEdges(self, norm, toks, stats, self.bpe_matcher, False)

    def encode(self, text: str) -> list[int]:
        return _encode(self.raw_full, self.sp_full, text)

    def token_bytes(self, token_id: i64) -> bytes:
        """A byte piece (`<0xE4>`) is that byte; any other piece is its text in UTF-8, with the
        visible space "▁" as a space when the model escapes white space."""
        piece = self.vocab.piece(token_id)
        value = byte_piece_value(piece)
        if self.vocab.is_byte(token_id) and value >= 0:
            return bytes([value])
        if self.rules.escape_whitespaces:
            piece = piece.replace(SPACE_MARK, " ")
        return piece.encode("utf-8")

    def tokens(self, text: str, normalized: bool) -> TokenRun:
        if normalized:
            ids = _encode(self.raw_window, self.sp_window, text)
            sp = self.sp_window
        else:
            ids = _encode(self.raw_full, self.sp_full, text)
            sp = self.sp_full
        lens = self._lengths(ids, text, sp, normalized)
        joins = vec[u8]()
        if self.keeps_joins:
            joins = self._joins(ids, lens, text, normalized)
        return TokenRun(to_vec(ids), lens, joins)

    # -- lengths and symbols -------------------------------------------------------------------

    def _lengths(self, ids: list[int], text: str, sp: Any, normalized: bool) -> vec[i32]:
        """Pieces have fixed lengths except <unk>, which covers a run of unknown characters,
        measured in normalized text where the other pieces are read (_unknown_runs); else (the
        original text, or a text that reading does not fit) the text is encoded again (by `sp`,
        which gave `ids`) as pieces to measure the runs: that second encode doubled a whole
        re-encode."""
        out, in_context = self.vocab.fixed_lengths(ids)
        if in_context and not (normalized and self._unknown_runs(ids, text, out)):
            pieces: list[str] = sp.encode(text, out_type=str, emit_unk_piece=False)
            n: i64 = len(ids)
            i: i64 = 0
            while i < n:
                if out[i] == LENGTH_IN_CONTEXT:
                    out[i] = i32(len(pieces[i]))
                i += 1
        return out

    def _unknown_runs(self, ids: list[int], text: str, lens: vec[i32]) -> bool:
        """The lengths of the <unk> tokens of normalized `text`, read from it (unigram models
        whose pieces allow it: `single_characters`). SentencePiece's unigram lattice has an
        <unk> node only at a character that is no piece of its own, merges a run of them into
        one <unk>, and a known piece never starts with one: each <unk> covers the longest run
        of such characters where it starts. The piece after each <unk> is checked at its place,
        and the lengths must add up to the text; else False, with `lens` as it was."""
        known = self.single_characters
        if known is None:
            return False
        vocab = self.vocab
        n: i64 = len(ids)
        total: i64 = len(text)
        runs = vec[i32]()
        pos: i64 = 0
        i: i64 = 0
        while i < n:
            ln: i64 = i64(lens[i])
            if ln == LENGTH_IN_CONTEXT:
                end: i64 = pos
                while end < total and text[end] not in known:
                    end += 1
                ln = end - pos
                if ln == 0:
                    return False
                if i + 1 < n and not text.startswith(vocab.piece(ids[i + 1]), end):
                    return False
                runs = append(runs, i32(ln))
            pos += ln
            i += 1
        if pos != total:
            return False
        j: i64 = 0
        i = 0
        while i < n:
            if lens[i] == LENGTH_IN_CONTEXT:
                lens[i] = runs[j]
                j += 1
            i += 1
        return True

    def _joins(self, ids: list[int], lens: vec[i32], text: str, normalized: bool) -> vec[u8]:
        """Per token: JOIN_EDGE when it continues the merge symbol of the token before it (a part
        of a re-split UNUSED piece, or a byte of a character, which continues the character too:
        JOIN_CHARACTER), else 0.

        Window edges may only sit between symbols: there the merges of a window are the whole
        text's. Symbol boundaries come from the processor that keeps UNUSED pieces whole.
        """
        sym = self.sym_window if normalized else self.sym_full
        bounds = self._symbol_starts(sym, text)
        n: i64 = len(lens)
        out = vec[u8](capacity=n)
        nb: i64 = len(bounds)
        j: i64 = 0
        pos: i64 = 0
        i: i64 = 0
        while i < n:
            ln: i64 = i64(lens[i])
            while j < nb and bounds[j] < pos:
                j += 1
            inside: bool = j >= nb or bounds[j] != pos
            flag: i64 = 0
            if ln == 0 and self.vocab.is_byte(ids[i]):
                flag = JOIN_EDGE | JOIN_CHARACTER
            elif ln == 0 or inside:
                flag = JOIN_EDGE
            out = append(out, u8(flag))
            pos += ln
            i += 1
        return out

    def _symbol_starts(self, sym: Any, text: str) -> vec[i64]:
        """Start offsets (normalized code points) of the merge symbols of `text`."""
        ids: list[int] = sym.encode(text)
        lens = self._lengths(ids, text, sym, False)
        n: i64 = len(lens)
        out = vec[i64](capacity=n)
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
