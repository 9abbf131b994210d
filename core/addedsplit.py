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
