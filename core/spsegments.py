"""SentencePiece's whitespace segments.

When no piece of a vocabulary holds the space symbol right after another character (its trainer
split at white space), no BPE merge and no unigram path crosses the place before a space symbol
that follows another character. The text splits there into segments whose ids, concatenated, are
the ids of the whole text. Built by tokenline.core.loader.
"""

from __future__ import annotations

import re

from librt.vecs import vec
from mypy_extensions import i32, i64, u8

from tokenline.core.segments import Segmenter


class WhitespaceSegmenter(Segmenter):
    """Where a model's whitespace segments begin, for the space symbol it uses.

    Space as prefix (the default): a segment begins at a space symbol that follows another
    character. Space as suffix (treat_whitespace_as_suffix): it begins at a character that
    follows a space symbol.
    """

    space: str
    suffix: bool
    pattern: re.Pattern[str]
    # Finer cuts inside long segments (CJK text has no spaces): before every character that no
    # piece holds after its first character, no token can begin earlier and reach it. joined[cp]
    # is 1 for the code points where a token may run on (those, and unknown characters of a
    # model without byte fallback, whose <unk> tokens merge); past its end, cut_beyond says.
    joined: vec[u8]
    cut_beyond: bool
    # The id of the piece that is exactly code point cp (-1: none), so that a one-character
    # stretch between two such cuts needs no encoder and no cache.
    single_id: vec[i32]

    def __init__(self, space: str, suffix: bool) -> None:
        self.space = space
        self.suffix = suffix
        self.joined = vec[u8]()
        self.cut_beyond = False
        self.single_id = vec[i32]()
        s = re.escape(space)
        if suffix:
            self.pattern = re.compile(f"[^{s}]*{s}+|[^{s}]+")
        else:
            self.pattern = re.compile(f"{s}*[^{s}]+|{s}+")

    def split(self, text: str) -> list[str]:
        """text cut into segments (text must begin at a segment start)."""
        return self.pattern.findall(text)

    def take(self, block: str, final: bool) -> list[str]:
        """The segments of a prefix of block (which begins at a segment start) that ends where
        a segment surely begins, whatever follows block; all of it when `final` (block runs to
        the end of the text). Empty when block holds no such place."""
        if final:
            return self.split(block)
        cut: i64 = self.last_cut(block)
        if cut <= 0:
            return []
        return self.split(block[:cut])

    def cut_between(self, before: str, after: str) -> bool:
        """Whether a segment begins between characters `before` and `after`."""
        if self.suffix:
            return before == self.space and after != self.space
        return before != self.space and after == self.space

    def use_character_cuts(self, joined: vec[u8], cut_beyond: bool, single_id: vec[i32]) -> None:
        self.joined = joined
        self.cut_beyond = cut_beyond
        self.single_id = single_id

    def single_token(self, cp: i64) -> i64:
        """The id of the piece that is exactly code point cp, or -1."""
        if cp >= len(self.single_id):
            return -1
        return i64(self.single_id[cp])

    def cut_before(self, cp: i64) -> bool:
        """Whether a token boundary lies before every occurrence of code point cp."""
        if cp >= len(self.joined):
            return self.cut_beyond
        return self.joined[cp] == 0

    def last_cut(self, text: str) -> i64:
        """Offset of the last segment start inside text (after its first character), or -1.
        Searches for the space symbol at C speed: text without one is passed over at once."""
        space = self.space
        i: i64 = text.rfind(space)
        while i >= 0:
            if self.suffix:
                if i + 1 < len(text) and text[i + 1] != space:
                    return i + 1
            elif i >= 1 and text[i - 1] != space:
                return i
            i = text.rfind(space, 0, i)
        return -1
