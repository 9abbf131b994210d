"""Where a Metaspace-splitting tokenizer.json model may cut windows: before a plain space.

Metaspace with `split` turns each space into "▁" and starts a word there; the model (Unigram or
BPE) encodes each word alone. A window of the original text encodes as the whole text does when
its normalization, too, stops at its edges. Before a space that follows a "plain" character it
does, for the normalizers `hfloader` accepts (Unicode forms, case, accents, SentencePiece's
precompiled rules, right strips, runs of spaces, replacements without spaces):

- a space starts a grapheme unless the character before it is a Prepend one (the precompiled
  rules rewrite whole graphemes), and is one alone unless a mark or the like follows it, and
  nothing rewrites a space across characters before it;
- a plain character is not a mark, format or Prepend character, nor white space, and neither is
  the last character it normalizes to, so it ends its own grapheme (or one too long for the
  precompiled rules' whole-grapheme lookup), no right strip or run of spaces reaches past it, and
  it normalizes as it does alone: the normalizer itself, run on it once, tells.
"""

from __future__ import annotations

import unicodedata
from typing import Any, Final

from librt.vecs import append, vec
from mypy_extensions import i32, i64, u8

from tokenline.core.symboledges import CutTest
from tokenline.core.tokens import JOIN_EDGE

# Grapheme_Cluster_Break=Prepend (Unicode 14 to 16): such a character joins the next into one
# grapheme, even a space.
PREPEND: Final = frozenset(
    [
        *range(0x600, 0x606),
        0x6DD,
        0x70F,
        0x890,
        0x891,
        0x8E2,
        0xD4E,
        0x110BD,
        0x110CD,
        0x111C2,
        0x111C3,
        0x113D1,
        0x1193F,
        0x11941,
        0x11A3A,
        *range(0x11A84, 0x11A8A),
        0x11D46,
        0x11F02,
    ]
)
# Characters outside the categories below that continue a grapheme (Extend, SpacingMark).
EXTENDING: Final = frozenset([0xE33, 0xEB3, 0xFF9E, 0xFF9F, *range(0x1F3FB, 0x1F400)])
# White space to Rust's char::is_whitespace beyond Python's str.isspace (which has all of these
# but the first; both are unioned).
RUST_SPACE: Final = frozenset([0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000])
# Categories of characters that may continue a grapheme, or that a newer Unicode may give a
# grapheme property this Python does not know (unassigned, private use).
NOT_PLAIN: Final = frozenset(["Mn", "Mc", "Me", "Cf", "Cn", "Co", "Cs", "Zl", "Zp"])


# What a character is to the normalizer, found once per character (SpaceCuts.known).
PLAIN: Final = 1
DELETED: Final = 2


class SpaceCuts(CutTest):
    """The cut test and join flags of windows cut before plain spaces. A cut depends on the two
    characters before it, the space and the one after it (reach 3 keeps an edit from touching
    them unseen)."""

    # The file's normalizer (a tokenizers Normalizer), or None.
    normalizer: Any
    marker: str
    # What the normalizer makes of "a", the letter characters are looked at before.
    letter: str
    # Per character code: PLAIN and DELETED bits (found on first sight with the normalizer).
    known: dict[i64, u8]

    def __init__(self, normalizer: Any, marker: str) -> None:
        super().__init__(3)
        self.normalizer = normalizer
        self.marker = marker
        self.letter = "a" if normalizer is None else str(normalizer.normalize_str("a"))
        self.known = {}

    def lands_on(self, text: str, start: i64, target: i64) -> bool:
        return self.cuts_at(text, target)

    def cuts_at(self, text: str, p: i64) -> bool:
        """Whether a window may start at text[p], a space after a plain character that does not
        follow a Prepend one, and before a character that starts a grapheme (reads text[p - 2]
        to text[p + 1], those of them that text holds)."""
        n: i64 = len(text)
        if p < 1 or p >= n or text[p] != " ":
            return False
        if not self.plain(text[p - 1]):
            return False
        if p >= 2 and ord(text[p - 2]) in PREPEND:
            return False
        return p + 1 >= n or not _extends(text[p + 1])

    def plain(self, c: str) -> bool:
        return (self._class_of(c) & PLAIN) != 0

    def deletes(self, c: str) -> bool:
        """Whether the normalizer deletes c (looked at alone, before a letter)."""
        return (self._class_of(c) & DELETED) != 0

    def _class_of(self, c: str) -> i64:
        code: i64 = ord(c)
        got = self.known.get(code)
        if got is not None:
            return i64(got)
        found: i64 = self._classify(c)
        self.known[code] = u8(found)
        return found

    def _classify(self, c: str) -> i64:
        out: str = c
        if self.normalizer is not None:
            # Followed by a letter, so that a right strip cannot hide white space it ends in.
            tail = self.letter
            out = str(self.normalizer.normalize_str(c + "a"))
            if not out.endswith(tail):
                return 0
            out = out[: len(out) - len(tail)]
        if out == "":
            return DELETED
        if _blank(c) or c == self.marker or ord(c) in PREPEND or _extends(c):
            return 0
        last: str = out[len(out) - 1]
        if _blank(last) or last == self.marker or ord(last) in PREPEND:
            return 0
        return PLAIN

    def joins(
        self, text: str, ids: list[int], lens: vec[i32], inserted: vec[u8], placed: bool
    ) -> vec[u8]:
        """Per token of text: 0 where a window may start, else JOIN_EDGE. A window may start at
        the first token, and at the first token at a cut that holds a character or is an
        inserted marker (Metaspace's "▁" that yields its character to the token after it); a
        byte of a character split into several never starts one. Unless `placed`, the lengths
        are not known to be where the tokens lie, and only the first token may start one."""
        m: i64 = len(lens)
        out = vec[u8](capacity=m)
        pos: i64 = 0
        prev: i64 = -1
        i: i64 = 0
        while i < m:
            ln: i64 = i64(lens[i])
            free: bool = i == 0 or (
                placed
                and prev < pos
                and (ln > 0 or inserted[ids[i]] != 0)
                and self.cuts_at(text, pos)
            )
            out = append(out, u8(0) if free else u8(JOIN_EDGE))
            prev = pos
            pos += ln
            i += 1
        return out


def _extends(c: str) -> bool:
    """Whether c may continue a grapheme (or a newer Unicode may say so)."""
    return ord(c) in EXTENDING or unicodedata.category(c) in NOT_PLAIN


def _blank(c: str) -> bool:
    return c.isspace() or ord(c) in RUST_SPACE
