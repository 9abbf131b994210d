"""A tokenizer.json's added tokens, found in text as the `tokenizers` library finds them.

The library cuts text at its added tokens before anything else (added_vocabulary.rs), in two
passes: the tokens that are not normalized, in the original text; then the normalized ones, in
each normalized stretch between those. Each pass is leftmost-longest over its contents, and a
token with lstrip or rstrip takes the white space beside it (Rust's `\\s`), but none a match
before it took. `AddedMatcher` is one pass; `AddedTokens` both, over normalized text (where,
for the layouts tokenline.core.hfbpeloader accepts, the first pass finds what it finds in the
original text: no content holds a space or the marker, and the white space a strip takes stays
as written).
"""

from __future__ import annotations

import re
from typing import Final

from librt.vecs import append, vec
from mypy_extensions import i32, i64

# White space to Rust's regex `\s` (Unicode White_Space), what a strip takes.
WHITE_SPACE: Final = frozenset(
    {*range(0x9, 0xE), 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029}
    | {0x202F, 0x205F, 0x3000}
)


def is_white(c: str) -> bool:
    return ord(c) in WHITE_SPACE


class Matches:
    """Added tokens found in a text: [start, end) (their stripped white space included), id,
    and which pass found each (FIRST or SECOND), in text order."""

    starts: vec[i64]
    ends: vec[i64]
    ids: vec[i32]
    passes: vec[i32]

    def __init__(self) -> None:
        self.starts = vec[i64]()
        self.ends = vec[i64]()
        self.ids = vec[i32]()
        self.passes = vec[i32]()

    def size(self) -> i64:
        return len(self.starts)

    def add(self, start: i64, end: i64, token_id: i64, found_by: i64) -> None:
        self.starts = append(self.starts, start)
        self.ends = append(self.ends, end)
        self.ids = append(self.ids, i32(token_id))
        self.passes = append(self.passes, i32(found_by))


# Which pass found a match.
FIRST: Final = 1
SECOND: Final = 2


class AddedMatcher:
    """One pass: contents matched leftmost-longest (a regular expression of the contents,
    longest first, finds the leftmost place and there the longest), with their strips."""

    pattern: re.Pattern[str] | None
    ids: dict[str, int]
    lstrip: set[str]
    rstrip: set[str]
    longest: i64
    found_by: i64

    def __init__(
        self,
        contents: list[str],
        ids: list[int],
        lstrip: list[bool],
        rstrip: list[bool],
        found_by: i64,
    ) -> None:
        self.ids = {}
        self.lstrip = set()
        self.rstrip = set()
        self.longest = 0
        self.found_by = found_by
        for i in range(len(contents)):
            c = contents[i]
            self.ids[c] = ids[i]
            if lstrip[i]:
                self.lstrip.add(c)
            if rstrip[i]:
                self.rstrip.add(c)
            self.longest = max(self.longest, len(c))
        ordered = sorted(contents, key=len, reverse=True)
        self.pattern = re.compile("|".join(re.escape(c) for c in ordered)) if ordered else None

    def strips(self) -> bool:
        return len(self.lstrip) > 0 or len(self.rstrip) > 0

    def find(self, text: str, lo: i64, hi: i64, out: Matches) -> None:
        """Appends the matches inside text[lo:hi] (lo: a place where matching starts afresh,
        as at the start of what the library matches in); a strip stays inside [lo, hi)."""
        pat = self.pattern
        if pat is None or lo >= hi:
            return
        pos: i64 = lo
        taken: i64 = lo  # where the last match (with its white space) ended
        while True:
            m = pat.search(text, pos, hi)
            if m is None:
                return
            s: i64 = m.start()
            e: i64 = m.end()
            content = m.group()
            start: i64 = s
            end: i64 = e
            if content in self.lstrip:
                while start > taken and is_white(text[start - 1]):
                    start -= 1
            if content in self.rstrip:
                while end < hi and is_white(text[end]):
                    end += 1
            out.add(start, end, self.ids[content], self.found_by)
            taken = end
            # The library goes on from the match itself (a content holds no white space, so
            # nothing starts inside the white space a strip took).
            pos = e


class AddedTokens:
    """Both passes over normalized text: the first finds the tokens that are not normalized,
    the second the normalized ones between them (as their normalized contents)."""

    first: AddedMatcher
    second: AddedMatcher
    # Characters past a place the passes read to decide it (the longest content).
    reach: i64
    empty: bool

    def __init__(self, first: AddedMatcher, second: AddedMatcher) -> None:
        self.first = first
        self.second = second
        self.reach = max(first.longest, second.longest)
        self.empty = first.pattern is None and second.pattern is None

    def strips(self) -> bool:
        return self.first.strips() or self.second.strips()

    def find(self, text: str, lo: i64, hi: i64, out: Matches) -> None:
        """The matches of both passes inside text[lo:hi], in text order (lo: a cut)."""
        if self.empty:
            return
        firsts = Matches()
        self.first.find(text, lo, hi, firsts)
        pos: i64 = lo
        k: i64 = 0
        while k < firsts.size():
            self.second.find(text, pos, firsts.starts[k], out)
            out.add(firsts.starts[k], firsts.ends[k], i64(firsts.ids[k]), FIRST)
            pos = firsts.ends[k]
            k += 1
        self.second.find(text, pos, hi, out)
