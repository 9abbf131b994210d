"""Counting the tokens of a text that arrives in chunks, through the model's segment cache, in
memory bounded by the longest stretch without a safe cut rather than by the text.

`tokenline count` of a 20 MB file used to hold the whole text and all its ids from one encode. The
counter normalizes each chunk as it comes (only normalizations that work character by character
stream: the identity, SentencePiece's escaped spaces and dummy prefix) and counts the normalized
text up to the last place where the family's segmenter proves a segment begins whatever follows
(`Segmenter.take`, as a document opens): the tokens before such a place are the whole text's.
Byte-level families, which open a document by one encode of their library (faster than a cache
lookup per pre-token), count each stretch up to such a place by that encode instead. A
chunk may end anywhere (inside a word, a CRLF, a long line); what follows the last proven cut waits
for the next chunk. So the count equals the reference library's encode of the whole text.

Where that premise cannot be checked chunk by chunk (no segmenter, a normalization that looks
across characters, text holding an added token's text), the counter says so and the caller counts
the whole text by one encode.
"""

from __future__ import annotations

from typing import Final

from mypy_extensions import i64

from tokenline.core.family import Family
from tokenline.core.model import Model
from tokenline.core.normalization import IdentityNorm, Normalization
from tokenline.core.opening import LOAD_BLOCK, SegmentReader
from tokenline.core.pretokenedges import PreTokenFamily
from tokenline.core.rope import TextRope
from tokenline.core.segments import Segmenter
from tokenline.core.tokens import TokenStore
from tokenline.core.window import Edges, Stats

# Original characters kept from earlier chunks for the check that the text holds no added token
# (an added token's text may straddle chunks); at least the family's longest added token.
CLEAN_OVERLAP: Final = 256
# A count that cannot stream.
UNCOUNTED: Final = -1


class TokenCounter:
    """The token count of a text fed a chunk at a time: feed() every chunk, then finish()."""

    family: Family
    segmenter: Segmenter | None
    norm: Normalization
    edges: Edges
    stats: Stats
    reader: SegmentReader
    # Normalized text after the last proven cut, not yet counted: `pending`, then `parts` (the
    # chunks since, joined when they are worth a look, so that tiny chunks cost no copying).
    pending: str
    parts: list[str]
    buffered: i64
    # The last original characters fed (for the added-token check across chunks).
    tail: str
    overlap: i64
    # Families that open a document by one library encode (byte-level BPE, whose library is
    # faster than a cache lookup per pre-token): blocks go to that encode, cut where a pre-token
    # starts whatever surrounds the cut (PreTokenFamily.sync_in); None: by segments.
    encoder: PreTokenFamily | None
    # Pending characters that make it worth looking for a cut (doubled while none is found).
    block: i64
    total: i64
    started: bool
    failed: bool

    def __init__(self, model: Model) -> None:
        fam = model.family
        self.family = fam
        self.segmenter = fam.segmenter
        self.norm = fam.normalization(TextRope(""))
        self.stats = Stats()
        self.edges = fam.edges(self.norm, TokenStore(keeps_joins=fam.keeps_joins), self.stats)
        self.reader = SegmentReader(fam, self.stats)
        self.pending = ""
        self.parts = []
        self.buffered = 0
        self.tail = ""
        self.overlap = CLEAN_OVERLAP
        if isinstance(fam, PreTokenFamily) and fam.added_longest > CLEAN_OVERLAP:
            self.overlap = fam.added_longest
        self.encoder = None
        if (
            isinstance(fam, PreTokenFamily)
            and fam.lazy_cuts
            and isinstance(self.norm, IdentityNorm)
        ):
            self.encoder = fam
        self.block = LOAD_BLOCK
        self.total = 0
        self.started = False
        self.failed = not self.streams()

    def streams(self) -> bool:
        """Whether the model's texts can be counted in chunks (else finish() says UNCOUNTED)."""
        return self.segmenter is not None and self.norm.streams()

    def feed(self, text: str) -> None:
        """The next chunk of original text (cut anywhere)."""
        if self.failed or len(text) == 0:
            return
        seen = self.tail + text
        if not self.edges.segmentable(seen):
            self.failed = True
            self.pending = ""
            self.parts = []
            return
        self.tail = seen[len(seen) - self.overlap :] if len(seen) > self.overlap else seen
        part = self.norm.normalize_part(text, not self.started, False)
        self.started = True
        self.parts.append(part)
        self.buffered += len(part)
        if len(self.pending) + self.buffered >= self.block:
            self._count_pending(False)

    def count_alone(self, text: str) -> i64:
        """The tokens of `text` as a whole text of its own (a chat message's contents), as a new
        counter would count it from feed(text) and finish(), without the setup of one:
        UNCOUNTED where it cannot stream. The counter is left as new, ready for the next."""
        if not self.streams():
            return UNCOUNTED
        self.pending = ""
        self.parts = []
        self.buffered = 0
        self.tail = ""
        self.block = LOAD_BLOCK
        self.total = 0
        self.started = False
        self.failed = False
        if len(text) == 0:
            return 0
        if not self.edges.segmentable(text):
            return UNCOUNTED
        normalized = self.norm.normalize_part(text, True, True)
        enc = self.encoder
        if enc is not None:
            self.stats.encoded(len(normalized))
            return len(enc.encode(normalized))
        seg = self.segmenter
        assert seg is not None
        return self.reader.count(seg, seg.take(normalized, True))

    def finish(self) -> i64:
        """The text's token count, or UNCOUNTED when it could not be counted in chunks."""
        if self.failed:
            return UNCOUNTED
        if self.started:
            self.parts.append(self.norm.normalize_part("", False, True))
            self._count_pending(True)
        return self.total

    def _count_pending(self, final: bool) -> None:
        """Counts the pending text up to its last proven cut (all of it when `final`)."""
        seg = self.segmenter
        assert seg is not None
        self.parts.insert(0, self.pending)
        pending = "".join(self.parts)
        self.parts = []
        self.buffered = 0
        self.pending = pending
        enc = self.encoder
        if enc is not None:
            cut: i64 = len(pending) if final else enc.sync_in(pending, True)
            if cut > 0:
                self.stats.encoded(cut)
                self.total += len(enc.encode(pending[:cut]))
                self.pending = pending[cut:]
                self.block = LOAD_BLOCK
                return
        segments = seg.take(pending, final)
        if len(segments) == 0:
            self.block = 2 * len(pending)
            return
        used: i64 = 0
        for segment in segments:
            used += len(segment)
        self.total += self.reader.count(seg, segments)
        self.pending = pending[used:]
        self.block = LOAD_BLOCK


def count_text(model: Model, text: str) -> i64:
    """The tokens of a whole text: through the segment cache where the model streams, else by
    the reference library's encode."""
    counter = TokenCounter(model)
    counter.feed(text)
    n: i64 = counter.finish()
    if n == UNCOUNTED:
        n = len(model.encode(text)) if text else 0
    return n
