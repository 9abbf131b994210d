"""Byte-level BPE after a regex pre-tokenizer: tiktoken's encodings and Mistral's Tekken.

Each piece the pattern cuts is encoded alone by tiktoken itself (its BPE of one piece), so the
ids are the reference library's. A token covers bytes, not characters: its length is the number
of characters that start in it, and a token that starts inside a character continues it
(JOIN_CHARACTER), which also keeps window edges off it. Built by tokenline.core.tiktokenloader.
"""

from __future__ import annotations

from typing import Any, Final

from librt.vecs import append, vec
from mypy_extensions import i32, i64, u8

from tokenline.core.family import JOIN_CHARACTER, JOIN_EDGE, Encoded, Family
from tokenline.core.normalizer import Normalization, NormRules, TrivialNorm
from tokenline.core.pretokens import PreTokenSegmenter, reach_after
from tokenline.core.rope import TextRope
from tokenline.core.segments import CACHED_SEGMENT_CHARS, CachedTokens
from tokenline.core.vocab import FLAG_CONTINUATION, Vocabulary

# Characters of the text after a window read to prove its end is a cut (more only if that fails).
AHEAD_CHARS: Final = 24


class ByteLevelFamily(Family):
    """A tiktoken Encoding (`enc`), whose ids are shifted by `id_offset` (Tekken's specials)."""

    enc: Any
    id_offset: i64
    pieces: PreTokenSegmenter
    rules: NormRules

    def __init__(self, vocab: Vocabulary, enc: Any, pattern: str, id_offset: i64) -> None:
        super().__init__(vocab)
        self.enc = enc
        self.id_offset = id_offset
        self.pieces = PreTokenSegmenter(pattern)
        self.rules = NormRules()
        self.rules.add_dummy_prefix = False
        self.rules.escape_whitespaces = False
        self.keeps_joins = True

    def use_pieces(self) -> None:
        """The pattern reads little past its cuts: edit and open piece by piece."""
        self.pretokens = True
        self.ahead_chars = AHEAD_CHARS
        self.segmenter = self.pieces

    # -- the seam ------------------------------------------------------------------------------

    def normalization(self, rope: TextRope) -> Normalization:
        return TrivialNorm(rope, self.rules)

    def encode(self, text: str) -> list[int]:
        ids: list[int] = self.enc.encode_ordinary(text)
        if self.id_offset:
            off: i64 = self.id_offset
            return [x + off for x in ids]
        return ids

    def token_bytes(self, token_id: i64) -> bytes:
        """The token's bytes, from tiktoken (a special token or a hole: its name in UTF-8)."""
        if 0 <= token_id < self.vocab.size() and not self.vocab.is_special(token_id):
            try:
                return bytes(self.enc.decode_single_token_bytes(token_id - self.id_offset))
            except (KeyError, ValueError):
                pass
        return self.vocab.piece(token_id).encode("utf-8")

    def tokens(self, text: str, normalized: bool) -> Encoded:
        found = self.window(text, "", True)
        assert found is not None
        return found

    def window(self, text: str, ahead: str, final: bool) -> Encoded | None:
        n: i64 = len(text)
        pieces = self.pieces.split(text + ahead if ahead else text)
        ids: list[int] = []
        lens = vec[i32]()
        joins = vec[u8]()
        pos: i64 = 0
        for piece in pieces:
            if pos >= n:
                break
            pos += len(piece)
            if pos > n:
                return None
            got = self.piece_tokens(piece)
            m: i64 = len(got.ids)
            i: i64 = 0
            while i < m:
                ids.append(int(got.ids[i]))
                lens = append(lens, got.lens[i])
                joins = append(joins, got.joins[i])
                i += 1
        if pos != n or (not final and reach_after(ahead) > len(ahead)):
            return None
        return Encoded(ids, lens, joins)

    def reach_after(self, text: str) -> i64:
        return reach_after(text)

    # -- pieces --------------------------------------------------------------------------------

    def piece_tokens(self, piece: str) -> CachedTokens:
        """The tokens of one piece, from the model's cache or tiktoken's BPE of it."""
        cache = self.cache
        short: bool = len(piece) <= CACHED_SEGMENT_CHARS
        found = cache.get(piece) if short else None
        if found is not None:
            return found
        raw: list[int] = self.enc._encode_single_piece(piece)
        table = self.vocab.piece_len
        flags = self.vocab.flags
        off: i64 = self.id_offset
        m: i64 = len(raw)
        ids = vec[i32](capacity=m)
        lens = vec[i32](capacity=m)
        joins = vec[u8](capacity=m)
        i: i64 = 0
        while i < m:
            t: i64 = raw[i] + off
            ids = append(ids, i32(t))
            lens = append(lens, table[t])
            join: i64 = 0
            if i > 0:
                join = JOIN_EDGE
                if (flags[t] & FLAG_CONTINUATION) != 0:
                    join |= JOIN_CHARACTER
            joins = append(joins, u8(join))
            i += 1
        found = CachedTokens(ids, lens, joins)
        if short:
            cache.put(piece, found)
        return found
