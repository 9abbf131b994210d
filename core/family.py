"""The seam through which a tokenizer family plugs into the engine.

The engine (tokenline.core.retokenize) owns everything families share: the token store, the
window loop, positions and counts. A family supplies only what differs between tokenizers:

- its normalization (original text <-> the text its encoder sees);
- its window encoder: the tokens of a stretch of normalized text, with their lengths and which of
  them continue the merge symbol before them (no window edge may sit there);
- its cut test: whether its initial segmentation (user-defined pieces, pre-tokens) has a boundary
  at a given place, reading at most `edge_reach` characters past it.

Families that pre-tokenize (a regex splits the text, then each piece is encoded alone) record in
each token whether it starts a piece: window edges sit only there, and are proven by the cuts of
the new text rather than by comparing tokens (see `pretokens`).
"""

from __future__ import annotations

from typing import Final

from librt.vecs import vec
from mypy_extensions import i32, i64, u8

from tokenline.core.normalizer import Normalization
from tokenline.core.rope import TextRope
from tokenline.core.segments import SegmentCache, Segmenter
from tokenline.core.vocab import Vocabulary

# Bits of a token's join flags. EDGE: no window edge may sit before the token (it continues a merge
# symbol, or a pre-token). CHARACTER: it continues a character split over several tokens (editors
# show such tokens as one unit).
JOIN_EDGE: Final = 1
JOIN_CHARACTER: Final = 2
# A window edge may sit before the token, but it is inside a long pre-token, not at a cut: it is
# checked as a BPE edge there (Algorithm 3 within the piece).
JOIN_INNER: Final = 4
# Not yet known whether the token starts a piece (a document opened from one full encode, see
# `lazy_cuts`); such a token also carries JOIN_EDGE, so no window edge sits before it.
JOIN_UNKNOWN: Final = 8


class Encoded:
    """A stretch of text encoded: ids, normalized lengths, and per token 1 when it continues the
    merge symbol of the token before it (empty when the family keeps no such flags)."""

    ids: list[int]
    lens: vec[i32]
    joins: vec[u8]

    def __init__(self, ids: list[int], lens: vec[i32], joins: vec[u8]) -> None:
        self.ids = ids
        self.lens = lens
        self.joins = joins

    def size(self) -> i64:
        return len(self.ids)

    def joined(self, i: i64) -> bool:
        """Token i continues the symbol before it (kept flags, else a zero-length byte)."""
        if len(self.joins) > 0:
            return (self.joins[i] & JOIN_EDGE) != 0
        return self.lens[i] == 0


class Family:
    """One tokenizer family: how it normalizes, encodes windows, and cuts text before merging."""

    vocab: Vocabulary
    # False when the family's tokens are not local (re-encoded whole on every edit), and why.
    incremental: bool
    mode_note: str
    # Whether tokens carry symbol-continuation flags beyond zero-length bytes.
    keeps_joins: bool
    # How far past a place the initial segmentation reads to decide a cut there (0: it never
    # depends on what follows, so every token boundary is a cut).
    edge_reach: i64
    # Whether a window edge at a token that may start one (JOIN_EDGE clear) holds when it is a
    # cut of the new text alone (`lands_on`), its tokens not compared with the old ones: for
    # families whose text encodes as its pieces between cuts, each alone.
    cut_edges: bool
    # Where the normalized text splits into independently tokenized segments (None: nowhere
    # known), and their tokens, shared by every document of the model.
    segmenter: Segmenter | None
    cache: SegmentCache
    # Pre-tokenizing families: tokens record where pieces start (JOIN_EDGE clear), a window edge
    # holds when it is a cut of the new text, and `window` reads `ahead_chars` of the text after a
    # window to prove its end is one.
    pretokens: bool
    ahead_chars: i64
    # Documents open from one full encode by the reference library, their piece starts found
    # later, around each edit, by scanning from a place that is surely a cut (`sync_in`).
    lazy_cuts: bool
    # Families whose library matches added tokens in the text before pre-tokenizing: the length
    # of the longest (0: none). Pieces are used only where no added token's text lies near what
    # a window reads (`clean`, `added_id`); elsewhere the whole text is encoded again.
    added_longest: i64
    # Whether some token ids are added tokens (an old one in a window's stretch also guards it).
    added_ids: bool
    # Edits inside a long letter piece that keep it one piece (`run_continues`) re-encode a
    # window of it without scanning it; 0 (pretokens.NO_RUNS) when the family cannot tell.
    run_kind: i64
    # The most characters any token covers (a piece longer is never one token).
    longest_token: i64

    def __init__(self, vocab: Vocabulary) -> None:
        self.vocab = vocab
        self.incremental = True
        self.mode_note = "incremental"
        self.keeps_joins = False
        self.edge_reach = 0
        self.cut_edges = False
        self.segmenter = None
        self.cache = SegmentCache()
        self.pretokens = False
        self.ahead_chars = 0
        self.lazy_cuts = False
        self.added_longest = 0
        self.added_ids = False
        self.run_kind = 0
        self.longest_token = 0

    def normalization(self, rope: TextRope) -> Normalization:
        """A normalization kept in step with `rope` (the document's original text)."""
        raise NotImplementedError

    def encode(self, text: str) -> list[int]:
        """The reference library's ids for original (not yet normalized) text."""
        raise NotImplementedError

    def tokens(self, text: str, normalized: bool) -> Encoded:
        """Ids, lengths and joins of `text`: normalized text (a window) or original text."""
        raise NotImplementedError

    def window(
        self, text: str, skip: i64, ahead: str, final: bool, piece_end: i64
    ) -> Encoded | None:
        """The tokens of text[skip:], a window of normalized text that a pre-tokenizing family
        cuts from text's start, given the text after it (`final`: ahead runs to the end).

        The window's end must be a cut, or, when piece_end >= 0, lie inside a piece that ends
        exactly there (offsets in text). None when it is neither, or when text cuts at or
        before skip > 0 (the window was to start inside a piece)."""
        return self.tokens(text, True)

    def opening_joins(self, ids: list[int]) -> vec[u8]:
        """Join flags of a document's tokens from a full encode, piece starts not yet known."""
        raise NotImplementedError

    def sync_in(self, text: str, last: bool) -> i64:
        """The last (or first) offset in text, after its start, that is a cut whatever comes
        before it; -1 when there is none."""
        raise NotImplementedError

    def piece_joins(self, text: str, lens: vec[i32], joins: vec[u8]) -> vec[u8]:
        """The join flags of tokens (lengths `lens`, old flags `joins`) that start at text's
        start, a cut, and end where text ends or earlier, from text's pieces."""
        raise NotImplementedError

    def run_continues(self, before: str, new: str, after: str) -> bool:
        """Whether a long piece holding the characters either side of an edit stays one piece
        with `new` between them (see pretokens.run_continues)."""
        return False

    def inner_part(self, text: str) -> Encoded:
        """The tokens of text, a stretch inside a long piece, starting between its tokens."""
        raise NotImplementedError

    def reach_after(self, text: str) -> i64:
        """How far past a cut, followed by `text`, the segmentation may read to decide it (more
        than len(text) when text does not settle it)."""
        return self.edge_reach

    def token_bytes(self, token_id: i64) -> bytes:
        """The bytes of the text a token stands for (here its piece in UTF-8: families whose pieces
        are not plain text, such as SentencePiece's "▁" and byte pieces, override this)."""
        return self.vocab.piece(token_id).encode("utf-8")

    def lands_on(self, text: str, start: i64, target: i64) -> bool:
        """Whether the initial segmentation of `text`, cut from `start` (a known cut), cuts at
        `target`; text reaches `edge_reach` characters past target where it can."""
        return True

    def clean(self, text: str) -> bool:
        """Whether text holds no added token's text (always, for families without them)."""
        return True

    def added_id(self, token_id: i64) -> bool:
        """Whether the token is an added token (matched before pre-tokenizing)."""
        return False
