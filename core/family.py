"""The seam through which a tokenizer family plugs into the engine.

The engine (tokenline.core.retokenize) owns everything families share: the token store, the
window loop, opening by segments, positions and counts. A family supplies only what differs:

- its normalization (original text <-> the text its encoder sees);
- its encoders: the reference library's ids of original text, and the tokens of a stretch of
  normalized text with their lengths and join flags;
- its edges: how a window's edges are proven (an `Edges` strategy per document: Algorithm 3's
  merge-symbol comparison with a cut test, cuts alone, or pre-token cuts), and the work around
  an edit that the proof needs;
- optionally a segmenter, where its text splits into independently tokenized segments.

The engine never asks which family it runs: what differs is behind these methods.
"""

from __future__ import annotations

from mypy_extensions import i64

from tokenline.core.normalization import Normalization
from tokenline.core.rope import TextRope
from tokenline.core.segments import SegmentCache, Segmenter
from tokenline.core.tokens import TokenRun, TokenStore
from tokenline.core.vocab import Vocabulary
from tokenline.core.window import Edges, Stats


class Family:
    """One tokenizer family: how it normalizes, encodes, and proves window edges."""

    vocab: Vocabulary
    # False when the family's tokens are not local (re-encoded whole on every edit), and why.
    incremental: bool
    mode_note: str
    # Whether tokens carry join flags (else only zero-length tokens continue the one before).
    keeps_joins: bool
    # Where the normalized text splits into independently tokenized segments (None: nowhere
    # known), and their tokens, shared by every document of the model.
    segmenter: Segmenter | None
    cache: SegmentCache

    def __init__(self, vocab: Vocabulary) -> None:
        self.vocab = vocab
        self.incremental = True
        self.mode_note = "incremental"
        self.keeps_joins = False
        self.segmenter = None
        self.cache = SegmentCache()

    def normalization(self, rope: TextRope) -> Normalization:
        """A normalization kept in step with `rope` (the document's original text)."""
        raise NotImplementedError

    def edges(self, norm: Normalization, toks: TokenStore, stats: Stats) -> Edges:
        """The strategy that proves window edges for one document (it may keep state there)."""
        raise NotImplementedError

    def encode(self, text: str) -> list[int]:
        """The reference library's ids for original (not yet normalized) text."""
        raise NotImplementedError

    def tokens(self, text: str, normalized: bool) -> TokenRun:
        """Ids, lengths and joins of `text`: normalized text (a window) or original text."""
        raise NotImplementedError

    def token_bytes(self, token_id: i64) -> bytes:
        """The bytes of the text a token stands for (here its piece in UTF-8: families whose pieces
        are not plain text, such as SentencePiece's "▁" and byte pieces, override this)."""
        return self.vocab.piece(token_id).encode("utf-8")
