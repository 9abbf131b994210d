"""The Hugging Face `tokenizer.json` family: BPE, WordPiece, Unigram and WordLevel models.

The `tokenizers` library encodes; its offsets (characters of the original text) give each token
its length. Its own normalizer runs inside encode, so the document's normalized text is its
original text. Built by tokenline.core.hfloader.
"""

from __future__ import annotations

from typing import Any

from librt.vecs import append, vec
from mypy_extensions import i32, i64, u8

from tokenline.core.family import Encoded, Family
from tokenline.core.normalizer import Normalization, NormRules, TrivialNorm
from tokenline.core.rope import TextRope
from tokenline.core.vocab import Vocabulary


class HFFamily(Family):
    """A tokenizer.json model, re-encoded whole on every edit (exact by definition)."""

    rules: NormRules
    # The tokenizers.Tokenizer that encodes (no truncation, padding or post-processor).
    tok: Any
    # Per id: 1 for a token of inserted marker characters only (Metaspace's prepended "▁"), which
    # yields the characters it shares with the next token to that token.
    inserted: vec[u8]

    def __init__(self, vocab: Vocabulary, tok: Any, inserted: vec[u8]) -> None:
        super().__init__(vocab)
        self.tok = tok
        self.inserted = inserted
        self.incremental = False
        self.mode_note = "tokenizer.json models re-encode whole for now"
        rules = NormRules()
        rules.add_dummy_prefix = False
        rules.escape_whitespaces = False
        self.rules = rules

    def normalization(self, rope: TextRope) -> Normalization:
        return TrivialNorm(rope, self.rules)

    def encode(self, text: str) -> list[int]:
        ids: list[int] = self.tok.encode(text, add_special_tokens=False).ids
        return ids

    def tokens(self, text: str, normalized: bool) -> Encoded:
        # The normalized text is the original text: both encode the same way.
        enc = self.tok.encode(text, add_special_tokens=False)
        ids: list[int] = enc.ids
        offsets: list[tuple[int, int]] = enc.offsets
        return Encoded(ids, self.lengths(ids, offsets, len(text)), vec[u8]())

    def lengths(self, ids: list[int], offsets: list[tuple[int, int]], n: i64) -> vec[i32]:
        """Token lengths that partition the text, from offsets that may overlap or be empty.

        Each token holds the characters up to its end that no token before it holds: of the
        byte-level tokens of one character, the first holds it and the rest get length 0. An
        inserted marker yields to the next token when both cover the same characters. Text no
        token covers (white space the pre-tokenizer drops) goes to the token after it, or the
        last token at the end.
        """
        m: i64 = len(ids)
        out = vec[i32](capacity=m)
        inserted = self.inserted
        cur: i64 = 0
        i: i64 = 0
        while i < m:
            s: i64 = offsets[i][0]
            e: i64 = min(i64(offsets[i][1]), n)
            ln: i64 = 0
            yields: bool = (
                inserted[ids[i]] != 0
                and i + 1 < m
                and offsets[i + 1][0] == s
                and offsets[i + 1][1] == e
            )
            if e > cur and not yields:
                ln = e - cur
                cur = e
            out = append(out, i32(ln))
            i += 1
        if m > 0 and cur < n:
            out[m - 1] = out[m - 1] + i32(n - cur)
        return out
