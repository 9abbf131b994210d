"""Opening a document segment by segment, through the model's segment cache.

Prose repeats its words, so most of a document's segments are found in the cache that every
document of the model shares; only the segments it lacks are encoded (and cached). The text is
cut a block at a time, so that no list of all its segments is ever built.
"""

from __future__ import annotations

from typing import Final

from mypy_extensions import i64

from tokenline.core.family import Family
from tokenline.core.normalization import Normalization
from tokenline.core.segments import CACHED_SEGMENT_CHARS, Segmenter
from tokenline.core.tokens import TokenRun, empty_run
from tokenline.core.window import Stats

# Normalized characters cut into segments at a time when a document opens (doubled while a
# block holds no segment start).
LOAD_BLOCK: Final = 1 << 16


class SegmentReader:
    """Tokens of normalized text from its segments, cached or encoded."""

    family: Family
    stats: Stats
    kept: bool

    def __init__(self, family: Family, stats: Stats) -> None:
        self.family = family
        self.stats = stats
        self.kept = family.keeps_joins

    def read_some(
        self, seg: Segmenter, norm: Normalization, load: SegmentLoad, budget: i64
    ) -> bool:
        """Reads on into `load` (the tokens of the normalized text from load.pos), in blocks of
        at most `budget` characters (larger only while a block holds no segment start) until
        `budget` characters are read; True while text remains."""
        total: i64 = norm.length()
        stop: i64 = load.pos + budget
        block: i64 = min(LOAD_BLOCK, max(budget, 1))
        while load.pos < total and load.pos < stop:
            size: i64 = max(block, load.grown)
            end: i64 = min(total, load.pos + size)
            segments = seg.take(norm.slice(load.pos, end), end >= total)
            if len(segments) == 0:
                load.grown = 2 * size
                continue
            load.pos += self._add_all(seg, segments, load.run)
            load.grown = 0
        return load.pos < total

    def encode(self, seg: Segmenter, text: str) -> TokenRun:
        """The tokens of normalized text that begins at a segment start."""
        run = empty_run()
        self._add_all(seg, seg.split(text), run)
        return run

    def _add_all(self, seg: Segmenter, segments: list[str], run: TokenRun) -> i64:
        """Appends the tokens of segments to run: from the model's cache where it has them,
        encoding (and caching) only the segments it lacks. Returns their length."""
        total: i64 = 0
        for segment in segments:
            total += len(segment)
            if len(segment) <= CACHED_SEGMENT_CHARS:
                self._add_segment(segment, run)
            else:
                self._add_long(seg, segment, run)
        return total

    def count(self, seg: Segmenter, segments: list[str]) -> i64:
        """How many tokens `segments` have (the tokens _add_all would append), keeping only the
        cache's: a count of a long text holds none of its tokens."""
        total: i64 = 0
        for segment in segments:
            if len(segment) <= CACHED_SEGMENT_CHARS:
                found: i64 = self.family.cache.count_of(segment)
                if found < 0:
                    found = len(self._encoded(segment).ids)
                total += found
            else:
                run = empty_run()
                self._add_long(seg, segment, run)
                total += len(run.ids)
        return total

    def _add_long(self, seg: Segmenter, segment: str, run: TokenRun) -> None:
        """A long segment cut finer where a character starts every token it is in; the parts
        go through the cache like segments (the characters of CJK text repeat)."""
        n: i64 = len(segment)
        start: i64 = 0
        i: i64 = 1
        while i <= n:
            if i == n or seg.cut_before(ord(segment[i])):
                single: i64 = seg.single_token(ord(segment[start])) if i - start == 1 else -1
                if single >= 0:
                    # A token of one character that starts a merge symbol.
                    run.add_token(single, 1, 0, self.kept)
                else:
                    self._add_segment(segment[start:i], run)
                start = i
            i += 1

    def _add_segment(self, segment: str, run: TokenRun) -> None:
        """Appends the tokens of one segment: the cache's, or encoded (and cached)."""
        # Long segments are never cached: do not even hash them.
        if len(segment) > CACHED_SEGMENT_CHARS or self.family.cache.add_to(segment, run) < 0:
            run.add(self._encoded(segment))

    def _encoded(self, segment: str) -> TokenRun:
        """The tokens of a segment the cache lacks, encoded (and cached)."""
        self.stats.encoded(len(segment))
        found = self.family.tokens(segment, True)
        self.family.cache.put(segment, found)
        return found


class SegmentLoad:
    """An opening read in slices (SegmentReader.read_some): the tokens so far, where the next
    block starts, and the size a block without a segment start has grown to (0: none)."""

    run: TokenRun
    pos: i64
    grown: i64

    def __init__(self) -> None:
        self.run = empty_run()
        self.pos = 0
        self.grown = 0
