"""WordLevel tokenizer.json files, edited by windows of whole words.

A WordLevel model maps each word its pre-tokenizer cuts (WhitespaceSplit, Whitespace, or BERT's:
white space dropped, punctuation apart) to one id, its own or the unknown token's. The normalized
text is kept in step (tokenline.core.stepnorm), added tokens are matched in it as the library
matches them (tokenline.core.addedsplit), and each token holds its word and the white space after
it (the first token also the white space before it), so a token starts where a word starts.

Whether a word starts at a place depends only on the characters either side of it and on the
added tokens that could cover it, which `longest` characters past it settle: a window whose two
edges are such places in the new text is the whole text's encoding there, with no comparison of
tokens (SymbolEdges by cuts, with `WordCuts`). Built by tokenline.core.hfnormloader.
"""

from __future__ import annotations

from typing import Any, Final

from librt.vecs import append, vec
from mypy_extensions import i32, i64, u8

from tokenline.core.addedsplit import AddedSplit
from tokenline.core.family import Family
from tokenline.core.normalization import Normalization
from tokenline.core.rope import TextRope
from tokenline.core.stepnorm import StepNorm
from tokenline.core.symboledges import CutTest, SymbolEdges
from tokenline.core.tokens import TokenRun, TokenStore, to_vec
from tokenline.core.unicodesteps import UnicodeSteps
from tokenline.core.vocab import Vocabulary
from tokenline.core.window import Edges, Stats

# The pre-tokenizers whose words start where the characters either side of a place say.
WORD_PRE_TOKENIZERS: Final = frozenset({"WhitespaceSplit", "Whitespace", "BertPreTokenizer"})


class WordLevelFamily(Family):
    """A WordLevel model after one of WORD_PRE_TOKENIZERS and a normalizer kept in step."""

    tok: Any
    steps: UnicodeSteps
    added: AddedSplit
    pre: Any
    words: dict[str, int]
    unk: i64

    def __init__(
        self,
        vocab: Vocabulary,
        tok: Any,
        steps: UnicodeSteps,
        added: AddedSplit,
        words: dict[str, int],
        unk: i64,
    ) -> None:
        super().__init__(vocab)
        self.tok = tok
        self.steps = steps
        self.added = added
        self.pre = tok.pre_tokenizer
        self.words = words
        self.unk = unk

    def normalization(self, rope: TextRope) -> Normalization:
        return StepNorm(rope, self.steps)

    def edges(self, norm: Normalization, toks: TokenStore, stats: Stats) -> Edges:
        return SymbolEdges(self, norm, toks, stats, WordCuts(self), True)

    def encode(self, text: str) -> list[int]:
        ids: list[int] = self.tok.encode(text, add_special_tokens=False).ids
        return ids

    def tokens(self, text: str, normalized: bool) -> TokenRun:
        if not normalized:
            text = self.steps.normalize_text(text)
        ids, starts = self.starts(text)
        n: i64 = len(ids)
        lens = vec[i32](capacity=n)
        i: i64 = 0
        while i < n:
            end: i64 = starts[i + 1] if i + 1 < n else len(text)
            begin: i64 = starts[i] if i > 0 else 0
            lens = append(lens, i32(end - begin))
            i += 1
        return TokenRun(to_vec(ids), lens, vec[u8]())

    def starts(self, text: str) -> tuple[list[int], list[int]]:
        """The ids of text's words and added tokens, and where each starts."""
        ids: list[int] = []
        starts: list[int] = []
        texts, added = self.added.split(text)
        pos: i64 = 0
        i: i64 = 0
        while i < len(texts):
            part = texts[i]
            if added[i] >= 0:
                ids.append(added[i])
                starts.append(pos)
            else:
                for found in self.pre.pre_tokenize_str(part):
                    word: str = found[0]
                    ids.append(self.words.get(word, self.unk))
                    starts.append(pos + found[1][0])
            pos += len(part)
            i += 1
        return ids, starts


class WordCuts(CutTest):
    """Where tokens start: at each word or added token but the first, which starts at the text's
    start. Reads `longest` past a place (the added tokens that could cover it), at least two."""

    family: WordLevelFamily

    def __init__(self, family: WordLevelFamily) -> None:
        super().__init__(max(2, family.added.longest))
        self.family = family

    def lands_on(self, text: str, start: i64, target: i64) -> bool:
        if target <= start or target >= len(text):
            return target == start or target >= len(text)
        _, starts = self.family.starts(text[start:])
        i: i64 = 1
        while i < len(starts):
            at: i64 = start + starts[i]
            if at >= target:
                return at == target
            i += 1
        return False
