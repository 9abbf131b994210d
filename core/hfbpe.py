"""Llama 2 style BPE tokenizer.json files: windows (Algorithm 3), not whole re-encodes.

Such a file has no pre-tokenizer that splits (a Prepend("▁") + Replace(" ", "▁") normalizer, or
Metaspace without split) and a BPE model, with or without byte fallback: its text is one word
per stretch between added tokens, which BPE merges by rank, leftmost first. So Algorithm 3's
windows apply: a window of normalized text (tokenline.core.prefixnorm) is cut at its added
tokens (tokenline.core.addedmatch) and each piece between them goes through the file's own BPE
model (`Tokenizer.model.tokenize`); its edges are proven by comparing merge symbols
(`SymbolEdges`). No cut test is needed for the added tokens: the normalization reports an edit
from a place no match reaches across to one where the matches are the old ones again, so every
window holds whatever matches an edit changes, and across its edges the matches are the old.
Built by tokenline.core.hfbpeloader.
"""

from __future__ import annotations

from typing import Any, Final

from librt.vecs import append, vec
from mypy_extensions import i32, i64, u8

from tokenline.core.addedmatch import Matches
from tokenline.core.family import Family
from tokenline.core.normalization import Normalization
from tokenline.core.prefixnorm import PrefixNorm
from tokenline.core.rope import TextRope
from tokenline.core.stretchlayout import StretchRules
from tokenline.core.symboledges import SymbolEdges
from tokenline.core.tokens import TokenRun, TokenStore, empty_run
from tokenline.core.vocab import Vocabulary, byte_piece_value
from tokenline.core.window import Edges, Stats

# What the BPE model makes of a character it meets (HF's BPE::merge_word): a piece of its own,
# its UTF-8 bytes (byte fallback), the unknown token, or nothing at all (no unknown token).
KNOWN: Final = 1
BYTES: Final = 2
UNKNOWN: Final = 3
DROPPED: Final = 4


class HFBPEFamily(Family):
    """A Llama 2 style tokenizer.json: windows of normalized text through the file's BPE."""

    # The tokenizers.Tokenizer that encodes original text (the reference), and its BPE model.
    tok: Any
    bpe: Any
    rules: StretchRules
    marker: str
    # Ids of the added tokens (their pieces are the text as written).
    added: set[int]
    # The model's unknown token (-1: none) and whether it covers a run of unknown characters.
    unk: i64
    fuse_unk: bool
    # Characters that are pieces of the model, whether it falls back to bytes and which bytes it
    # has, and what each character met so far is to it (KNOWN ... DROPPED).
    singles: set[str]
    byte_fallback: bool
    byte_pieces: set[int]
    kinds: dict[i64, u8]

    def __init__(self, vocab: Vocabulary, tok: Any, rules: StretchRules) -> None:
        super().__init__(vocab)
        self.tok = tok
        self.bpe = tok.model
        self.rules = rules
        self.marker = rules.marker
        self.added = set()
        self.unk = -1
        self.fuse_unk = False
        self.singles = set()
        self.byte_fallback = False
        self.byte_pieces = set()
        self.kinds = {}

    # -- the seam ------------------------------------------------------------------------------

    def normalization(self, rope: TextRope) -> Normalization:
        return PrefixNorm(rope, self.rules)

    def edges(self, norm: Normalization, toks: TokenStore, stats: Stats) -> Edges:
        return SymbolEdges(self, norm, toks, stats, None, False)

    def encode(self, text: str) -> list[int]:
        ids: list[int] = self.tok.encode(text, add_special_tokens=False).ids
        return ids

    def tokens(self, text: str, normalized: bool) -> TokenRun:
        if not normalized:
            norm = PrefixNorm(TextRope(text), self.rules)
            text = norm.slice(0, norm.length())
        run = empty_run()
        found = Matches()
        self.rules.added.find(text, 0, len(text), found)
        pos: i64 = 0
        held: i64 = 0  # characters of no token yet (dropped ones at the text's start)
        k: i64 = 0
        while k < found.size():
            s: i64 = found.starts[k]
            e: i64 = found.ends[k]
            if s > pos:
                held = self._model_tokens(text[pos:s], run, held)
            run.add_token(i64(found.ids[k]), e - s + held, 0, False)
            held = 0
            pos = e
            k += 1
        if pos < len(text):
            self._model_tokens(text[pos:], run, held)
        return run

    def token_bytes(self, token_id: i64) -> bytes:
        """A byte-fallback piece (<0xE4>) is that byte, an added token its text as written, any
        other piece its text with the marker as a space."""
        piece = self.vocab.piece(token_id)
        value = byte_piece_value(piece)
        if self.vocab.is_byte(token_id) and value >= 0:
            return bytes([value])
        if int(token_id) not in self.added:
            piece = piece.replace(self.marker, " ")
        return piece.encode("utf-8")

    # -- the BPE model's tokens ----------------------------------------------------------------

    def _model_tokens(self, part: str, run: TokenRun, held: i64) -> i64:
        """Appends the tokens of one piece between added tokens: the BPE model's ids, each with
        the normalized characters it holds (a character's later fallback bytes hold none), the
        first also those `held` before it. A piece of characters the model drops only gives
        them to the token before it (or holds them for the next): returns what is held."""
        ids: list[int] = [t.id for t in self.bpe.tokenize(part)]
        if len(ids) == 0:
            if run.size() == 0:
                return held + len(part)
            last: i64 = run.size() - 1
            run.lens[last] = run.lens[last] + i32(len(part))
            return 0
        lens, walk = self.vocab.fixed_lengths(ids)
        total: i64 = 0
        unk: i64 = self.unk
        i: i64 = 0
        while i < len(ids):
            if ids[i] == unk:
                walk = True
            total += i64(lens[i])
            i += 1
        if walk or total != len(part):
            lens = self._walk(ids, part)
        lens[0] = lens[0] + i32(held)
        i = 0
        while i < len(ids):
            run.add_token(ids[i], i64(lens[i]), 0, False)
            i += 1
        return 0

    def _walk(self, ids: list[int], part: str) -> vec[i32]:
        """Token lengths found by walking the text: an unknown token holds one unknown character
        (a run of them when fused), a character the model drops (no unknown token) goes to the
        token before it (the first token takes those before it)."""
        out = vec[i32](capacity=len(ids))
        table = self.vocab.piece_len
        n: i64 = len(part)
        p: i64 = 0
        i: i64 = 0
        while i < len(ids):
            first: i64 = p
            while p < n and self._kind(part[p]) == DROPPED:
                p += 1
            if i > 0 and p > first:
                out[i - 1] = out[i - 1] + i32(p - first)
                first = p
            if ids[i] == self.unk:
                p = self._unknown_run(part, p)
            else:
                want: i64 = i64(table[ids[i]])
                while want > 0 and p < n:
                    if self._kind(part[p]) != DROPPED:
                        want -= 1
                    p += 1
            out = append(out, i32(p - first))
            i += 1
        if len(out) > 0 and p < n:
            out[len(out) - 1] = out[len(out) - 1] + i32(n - p)
        return out

    def _unknown_run(self, part: str, p: i64) -> i64:
        """Where the unknown token starting at p ends."""
        n: i64 = len(part)
        if p >= n:
            return p
        p += 1
        if self.fuse_unk:
            while p < n and self._kind(part[p]) == UNKNOWN:
                p += 1
        return p

    def _kind(self, c: str) -> i64:
        code: i64 = ord(c)
        got = self.kinds.get(code)
        if got is not None:
            return i64(got)
        kind: i64 = KNOWN
        if c not in self.singles:
            kind = UNKNOWN if self.unk >= 0 else DROPPED
            if self.byte_fallback and self._has_bytes(c):
                kind = BYTES
        self.kinds[code] = u8(kind)
        return kind

    def _has_bytes(self, c: str) -> bool:
        return all(b in self.byte_pieces for b in c.encode("utf-8"))
