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
from tokenline.core.normalizer import SPACE_SYMBOL, TrivialNorm
from tokenline.core.opening import LOAD_BLOCK, SegmentReader
from tokenline.core.pretokenedges import PreTokenFamily
from tokenline.core.rope import TextRope
from tokenline.core.segments import CACHED_SEGMENT_CHARS, Segmenter
from tokenline.core.spsegments import WhitespaceSegmenter
from tokenline.core.tokens import TokenStore
from tokenline.core.window import Edges, Stats

# Original characters kept from earlier chunks for the check that the text holds no added token
# (an added token's text may straddle chunks); at least the family's longest added token.
CLEAN_OVERLAP: Final = 256
# A count that cannot stream.
UNCOUNTED: Final = -1
# Words whose counts count_alone keeps (see TokenCounter.words).
WORDS_KEPT: Final = 1 << 17


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
    # count_alone's way through prose for a whitespace segmenter with the space as prefix (a
    # segment is a run of space symbols and the characters up to the next one): the text split
    # at its space symbols by str.split, at C speed, instead of cut into segments by the
    # segmenter's regex (most of the time a count took); "" for other segmenters. `words` keeps
    # the tokens of a space symbol and a word by the word: prose repeats its words, so most of
    # them cost one lookup.
    space: str
    words: dict[str, i64]
    # The original text's spaces are the space symbols count_alone splits at (SentencePiece's
    # escaped spaces with its dummy prefix): it splits the text itself, never normalized.
    splits_raw: bool

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
        self.space = ""
        self.words = {}
        seg = self.segmenter
        if isinstance(seg, WhitespaceSegmenter) and not seg.suffix and len(seg.space) == 1:
            self.space = seg.space
        norm = self.norm
        self.splits_raw = (
            isinstance(norm, TrivialNorm)
            and norm.escape
            and norm.prefix == 1
            and norm.suffix == 0
            and self.space == SPACE_SYMBOL
        )

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
        seg = self.segmenter
        assert seg is not None
        if self.splits_raw and SPACE_SYMBOL not in text:
            # The normalized text is a space symbol (the dummy prefix), then the text with
            # each space escaped: its pieces after the first, empty one are the text's.
            return self._count_words(seg, text.split(" "), 1)
        normalized = self.norm.normalize_part(text, True, True)
        enc = self.encoder
        if enc is not None:
            self.stats.encoded(len(normalized))
            return len(enc.encode(normalized))
        if len(self.space) > 0:
            return self._count_words(seg, normalized.split(self.space), 0)
        return self.reader.count(seg, seg.take(normalized, True))

    def _count_words(self, seg: Segmenter, pieces: list[str], lead: i64) -> i64:
        """The tokens of normalized text given as its pieces between space symbols (`lead`
        symbols before the first piece): each segment is the symbols before a piece and the
        piece, and the symbols after the last piece are one more. A segment of one symbol and a
        word is counted through `words`, any other through the segment cache."""
        space = self.space
        words = self.words
        total: i64 = 0
        spaces: i64 = lead - 1
        for piece in pieces:
            spaces += 1
            if len(piece) == 0:
                continue
            if spaces == 1 and len(piece) < CACHED_SEGMENT_CHARS:
                found: i64 = words.get(piece, -1)
                if found < 0:
                    found = self._segment_count(seg, space + piece)
                    if len(words) < WORDS_KEPT:
                        words[piece] = found
                total += found
            else:
                total += self._segment_count(seg, space * spaces + piece)
            spaces = 0
        if spaces > 0:
            total += self._segment_count(seg, space * spaces)
        return total

    def _segment_count(self, seg: Segmenter, segment: str) -> i64:
        return self.reader.count(seg, [segment])

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
