"""A tokenizer.json file's added tokens in normalized text, matched as the library matches them.

The library matches added tokens in two passes: those not normalized (normalized: false) in the
original text, before normalizing (here they are already sentinels in the normalized text, see
tokenline.core.unicodesteps), then, in each stretch of normalized text between them, the others
by their normalized contents, leftmost-longest. Each stretch between matches is pre-tokenized
alone. Matching from any place that no match covers finds what matching from the text's start
finds after it, so a window that begins at a cut sees the matches the whole text has.
"""

from __future__ import annotations

import re
from typing import Any, Final

from mypy_extensions import i64

from tokenline.core.unicodesteps import SENTINEL, SENTINELS

SENTINEL_RX: Final = re.compile(SENTINELS)


class AddedSplit:
    """Added tokens matched in normalized text: sentinels, then normalized contents."""

    # Sentinel k's id.
    raw_ids: list[int]
    # Normalized content -> id, their pattern (longest first; None when there are none) and the
    # longest one's length (0: none).
    ids: dict[str, int]
    rx: Any
    longest: i64
    # Every content's proper prefixes, and those and the contents.
    prefixes: set[str]
    begun: set[str]

    def __init__(self, raw_ids: list[int], contents: dict[str, int]) -> None:
        self.raw_ids = raw_ids
        self.ids = {}
        escaped: list[str] = []
        longest: i64 = 0
        for content in sorted(contents, key=len, reverse=True):
            if content:
                self.ids[content] = contents[content]
                escaped.append(re.escape(content))
                longest = max(longest, len(content))
        self.rx = re.compile("|".join(escaped)) if escaped else None
        self.longest = longest
        self.prefixes = set()
        self.begun = set()
        for content in self.ids:
            self.begun.add(content)
            for k in range(1, len(content)):
                self.prefixes.add(content[:k])
                self.begun.add(content[:k])

    def split(self, text: str) -> tuple[list[str], list[int]]:
        """text cut into added tokens and the stretches between them, in order, with each added
        token's id (-1 for a stretch)."""
        texts: list[str] = []
        ids: list[int] = []
        if not self.raw_ids:
            self._normalized(text, texts, ids)
            return texts, ids
        pos: i64 = 0
        for m in SENTINEL_RX.finditer(text):
            s: i64 = m.start()
            self._normalized(text[pos:s], texts, ids)
            k: i64 = ord(text[s]) - SENTINEL
            texts.append(text[s])
            ids.append(self.raw_ids[k] if k < len(self.raw_ids) else -1)
            pos = s + 1
        self._normalized(text[pos:], texts, ids)
        return texts, ids

    def _normalized(self, text: str, texts: list[str], ids: list[int]) -> None:
        """Appends text's stretches and the normalized added tokens matched in it."""
        if not text:
            return
        rx = self.rx
        if rx is None:
            texts.append(text)
            ids.append(-1)
            return
        pos: i64 = 0
        for m in rx.finditer(text):
            s: i64 = m.start()
            if s > pos:
                texts.append(text[pos:s])
                ids.append(-1)
            found: str = m.group()
            texts.append(found)
            ids.append(self.ids[found])
            pos = m.end()
        if pos < len(text):
            texts.append(text[pos:])
            ids.append(-1)

    def reach(self, before: str, after: str, base: i64) -> i64:
        """How far past a cut, with `before` (the longest - 1 characters before it, where there
        are so many) and `after` after it, matches may read when the pattern reads `base`
        characters past it: a match that may still be open at the cut reads on to `longest`
        from its start; one that may begin within those `base` characters reads until no
        content is still being matched. More than len(after) when after does not settle it."""
        longest: i64 = self.longest
        if longest == 0:
            return base
        out: i64 = base
        k: i64 = 1
        n: i64 = len(before)
        while k <= n and k < longest:
            # The shortest suffix that begins a longer content reads the furthest.
            if before[n - k : n - k + 1] in self.prefixes and before[n - k :] in self.prefixes:
                out = max(out, longest - k)
                break
            k += 1
        j: i64 = 0
        while j < base and j < len(after):
            if after[j] in self.begun:
                out = max(out, j + self._decided(after, j))
            j += 1
        return out

    def _decided(self, text: str, j: i64) -> i64:
        """Characters from text[j] on that decide the longest match there, if any: those that
        still begin a content, and one more when a longer content could go on (more than what
        text holds when it ends first)."""
        m: i64 = 1
        while j + m < len(text) and text[j : j + m + 1] in self.begun:
            m += 1
        if text[j : j + m] not in self.prefixes:
            return m  # a content matched whole, none longer begins so
        if j + m >= len(text):
            return len(text) - j + 1  # still open where text ends
        return m + 1  # the character that differs decides it
