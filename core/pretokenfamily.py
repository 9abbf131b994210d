"""What a family that pre-tokenizes supplies its window edges (tokenline.core.pretokenedges):
its pattern's cuts, how far past them it reads, and the tokens of windows and pre-tokens."""

from __future__ import annotations

from typing import Final

from librt.vecs import vec
from mypy_extensions import i32, i64, u8

from tokenline.core.family import Family
from tokenline.core.tokens import TokenRun
from tokenline.core.vocab import Vocabulary

# How a window's text lies in long letter pre-tokens (PreTokenRules.window's `inside`): its first
# pre-token continues one that starts before it, its last one goes on past its end (the scan from
# inside a run that tokenline.core.runcuts proves cuts as the whole text's does).
FIRST_INSIDE: Final = 1
LAST_INSIDE: Final = 2


class PreTokenRules(Family):
    """A family that pre-tokenizes: what its edges strategy asks of it."""

    # Characters of the text after a window read to prove its end is a cut (more if that fails).
    ahead_chars: i64
    # Documents open from one full encode, their pre-token starts found later (`sync_in`).
    lazy_cuts: bool
    # The length of the longest added token (0: none); whether some ids are added tokens.
    added_longest: i64
    added_ids: bool
    # How a long letter pre-token runs on (pretokens.run_class; 0: the family cannot tell), and the
    # most characters any token covers (a longer pre-token is never one token).
    run_class: i64
    longest_token: i64
    # Characters past its end a pre-token's scan may read beside a run of white space.
    read_past: i64
    # Characters of the new text a scan from inside a run (tokenline.core.runcuts) keeps on each
    # side of an edit beyond its own (added tokens matched as segments reach that far).
    run_margin: i64

    def __init__(self, vocab: Vocabulary) -> None:
        super().__init__(vocab)
        self.ahead_chars = 0
        self.lazy_cuts = False
        self.added_longest = 0
        self.added_ids = False
        self.run_class = 0
        self.longest_token = 0
        self.read_past = 0
        self.run_margin = 0

    def window(
        self, text: str, skip: i64, ahead: str, final: bool, pretoken_end: i64, inside: i64 = 0
    ) -> TokenRun | None:
        """The tokens of text[skip:], a window of normalized text cut from text's start (a cut),
        given the text after it (`final`: ahead runs to the end). The window's end must be a
        cut, or, when pretoken_end >= 0, lie inside a pre-token that ends exactly there. None
        when it is neither, or when text cuts at or before skip > 0. `inside` (FIRST_INSIDE,
        LAST_INSIDE): text starts inside a long pre-token rather than at a cut, and text + ahead
        ends inside one (pretoken_end is then its length)."""
        raise NotImplementedError

    def opening_joins(self, ids: list[int]) -> vec[u8]:
        """Join flags of a document's tokens from a full encode, pre-token starts unknown."""
        raise NotImplementedError

    def sync_in(self, text: str, last: bool) -> i64:
        """The last (or first) offset in text, after its start, that is a cut whatever comes
        before it; -1 when there is none."""
        raise NotImplementedError

    def near_sync(self, text: str, last: bool) -> i64:
        """Some of the places sync_in finds, in a short text, found faster (by default all)."""
        return self.sync_in(text, last)

    def pretoken_joins(self, text: str, lens: vec[i32], joins: vec[u8]) -> vec[u8]:
        """The join flags of tokens (lengths `lens`, old flags `joins`) that start at text's
        start, a cut, and end where text ends or earlier, from text's pre-tokens."""
        raise NotImplementedError

    def run_continues(self, before: str, new: str, after: str) -> bool:
        """Whether a long letter pre-token holding the characters either side of an edit stays
        one pre-token with `new` between them."""
        return False

    def in_run(self, text: str) -> bool:
        """Whether every character of text is one a long letter pre-token's loop runs on
        through whatever follows (pretokens.run_chars)."""
        return False

    def added_free(self, text: str) -> bool:
        """Whether no added token matched as a segment lies in text (families that guard added
        tokens otherwise: always)."""
        return True

    def inner_part(self, text: str) -> TokenRun:
        """The tokens of text, a stretch inside a long pre-token, starting between its tokens."""
        raise NotImplementedError

    def reach_after(self, text: str, before: str = "") -> i64:
        """How far past a cut, followed by `text` and after the character `before` ("" when not
        known: read as if it could be any), the scan may read to decide it (more than len(text)
        when text does not settle it)."""
        raise NotImplementedError

    def clean(self, text: str) -> bool:
        """Whether text holds no added token's text (always, for families without them)."""
        return True

    def added_id(self, token_id: i64) -> bool:
        """Whether the token is an added token (matched before pre-tokenizing)."""
        return False
