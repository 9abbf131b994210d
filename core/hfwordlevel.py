"""WordLevel tokenizer.json files, edited by windows of whole words.

A WordLevel model maps each word its pre-tokenizer cuts (WhitespaceSplit, Whitespace, or BERT's:
white space dropped, punctuation apart) to one id, its own or the unknown token's. The normalized
text is kept in step (tokenline.core.stepnorm), added tokens are matched in it as the library
matches them (tokenline.core.addedsplit), and each token holds its word and the white space after
it (the first token also the white space before it), so a token starts where a word starts.

A word longer than the longest in the vocabulary is the unknown token whatever its characters: an
edit inside one, or one that splits or joins such words, is settled from a bounded read around it
(`WordLevelLength`, see tokenline.core.longwords), not by encoding the word again.

Whether a word starts at a place depends only on the characters either side of it and on the
added tokens that could cover it, which `longest` characters past it settle: a window whose two
edges are such places in the new text is the whole text's encoding there, with no comparison of
tokens (SymbolEdges by cuts, with `WordCuts`). Built by tokenline.core.hfnormloader.
"""

from __future__ import annotations

from typing import Any, Final

from librt.vecs import append, vec
from mypy_extensions import i32, i64, u8

from tokenline.core.addedsplit import SENTINEL_RX, AddedSplit
from tokenline.core.family import Family
from tokenline.core.longwords import CUT, OPEN, LongWordEdges, LongWords
from tokenline.core.normalization import Normalization
from tokenline.core.rope import TextRope
from tokenline.core.stepnorm import StepNorm
from tokenline.core.symboledges import CutTest
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
    long_words: WordLevelLength

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
        self.long_words = WordLevelLength(self)

    def normalization(self, rope: TextRope) -> Normalization:
        return StepNorm(rope, self.steps)

    def edges(self, norm: Normalization, toks: TokenStore, stats: Stats) -> Edges:
        return LongWordEdges(self, norm, toks, stats, WordCuts(self), True, self.long_words)

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


class WordLevelLength(LongWords):
    """The long-word rule of a WordLevel family (read in normalized text, where its tokens lie).

    The read text must pre-tokenize to one word that holds old characters on both sides of the
    edit (so the old word's other characters join it: its pre-tokenizers cut words where the
    characters either side of a place differ in kind) and nothing but white space outside it,
    which only the token's ends may hold (the first token's before its word, every token's after
    it). An old token that was an added token whose content is the unknown token's is ruled out
    by the word's characters counted on either side of the edit, past the longest added token
    (only the content's own could be counted there); no added token may occur near the edit.
    """

    family: WordLevelFamily
    # The longest vocabulary word, and the longest added token (normalized; 0: none).
    longest: i64
    longest_added: i64

    def __init__(self, family: WordLevelFamily) -> None:
        longest: i64 = 0
        for word in family.words:
            longest = max(longest, len(word))
        added: i64 = family.added.longest
        super().__init__(longest + added + 2, added)
        self.family = family
        self.longest = longest
        self.longest_added = added

    def long_word(self, text: str, at: i64, upto: i64, first: bool, last: bool) -> i64:
        if SENTINEL_RX.search(text) is not None:
            return -1  # an added token matched before normalizing: no one word
        pieces = self.family.pre.pre_tokenize_str(text)
        if len(pieces) != 1:
            return -1
        s0: i64 = pieces[0][1][0]
        e0: i64 = pieces[0][1][1]
        n: i64 = len(text)
        if (s0 > 0 and not first) or (e0 < n and not last) or s0 >= at or e0 <= upto:
            return -1
        if e0 - s0 <= self.longest:
            return -1
        if at - s0 <= self.longest_added and e0 - upto <= self.longest_added:
            return -1
        return self.family.unk

    def fits(self, text: str, at: i64, upto: i64, first: i64, last: i64, run: TokenRun) -> bool:
        """An open side's word is the read's first (last) pre-token, which must touch the read's
        edge (so it is the old token's word, which the unread characters continue) and be
        longer than any vocabulary word already. A cut side is an old token boundary, where a
        word starts: the pre-tokenizers decide that from the characters either side of it,
        which must be old ones."""
        if SENTINEL_RX.search(text) is not None:
            return False
        pieces = self.family.pre.pre_tokenize_str(text)
        if len(pieces) == 0:
            return False
        n: i64 = len(text)
        m: i64 = run.size()
        unk: i64 = self.family.unk
        s0: i64 = pieces[0][1][0]
        e0: i64 = pieces[0][1][1]
        if first == OPEN and (s0 != 0 or e0 <= self.longest or i64(run.ids[0]) != unk):
            return False
        if first == CUT and (at < 1 or s0 != 0):
            return False
        s1: i64 = pieces[len(pieces) - 1][1][0]
        e1: i64 = pieces[len(pieces) - 1][1][1]
        if last == OPEN and (e1 != n or e1 - s1 <= self.longest or i64(run.ids[m - 1]) != unk):
            return False
        if last == OPEN and i64(run.lens[m - 1]) != n - s1:
            return False
        return last != CUT or upto < n

    def clean(self, text: str) -> bool:
        rx = self.family.added.rx
        return SENTINEL_RX.search(text) is None and (rx is None or rx.search(text) is None)
