"""What the engine asks of a family's normalization: the text its encoder sees, kept in step with
the document's original text, and the offsets between the two.

The engine re-tokenizes normalized text; editors speak in original offsets. Families supply the
implementation (SentencePiece's rules live in tokenline.core.normalizer); `IdentityNorm` serves
the families whose library normalizes inside its own encode, so that the text they are given is
the original text.
"""

from __future__ import annotations

from mypy_extensions import i64

from tokenline.core.rope import TextRope


class Normalization:
    """Original text <-> normalized text."""

    orig: TextRope

    def __init__(self, orig: TextRope) -> None:
        self.orig = orig

    def length(self) -> i64:
        raise NotImplementedError

    def slice(self, start: i64, end: i64) -> str:
        raise NotImplementedError

    def to_orig(self, pos: i64) -> i64:
        """Original offset of normalized offset pos (SentencePiece's norm_to_orig)."""
        raise NotImplementedError

    def to_norm(self, off: i64) -> i64:
        """Normalized offset where the characters from original offset off on begin."""
        raise NotImplementedError

    def apply(self, start: i64, end: i64, text: str) -> tuple[i64, i64, i64]:
        """Edits the original text; returns the normalized edit (start, old end, new end)."""
        raise NotImplementedError

    def split_range(self, start: i64, end: i64) -> tuple[str, i64, i64, str]:
        """The normalization of text[start:end] on its own, as head + norm[q0:q1] + tail.

        Returns (head, q0, q1, tail); q0 < 0 when no stretch of the document's normalized text
        can be reused (the range is short, or never falls in step with the document).
        """
        raise NotImplementedError

    def streams(self) -> bool:
        """Whether the normalized text of any stretch of original text depends on that stretch
        alone (and on whether it starts or ends the text), so that a text can be normalized a
        chunk at a time, cut anywhere (tokenline.core.counting)."""
        return False

    def normalize_part(self, text: str, first: bool, last: bool) -> str:
        """The normalized text of `text`, a stretch of a longer original text (`first`: the
        stretch starts it; `last`: it ends it), when streams(); the text itself need not be
        this normalization's."""
        raise NotImplementedError


class IdentityNorm(Normalization):
    """The normalized text is the original text."""

    def __init__(self, orig: TextRope) -> None:
        super().__init__(orig)

    def length(self) -> i64:
        return self.orig.length()

    def slice(self, start: i64, end: i64) -> str:
        if start >= end:
            return ""
        return self.orig.slice(start, end)

    def to_orig(self, pos: i64) -> i64:
        n: i64 = self.orig.length()
        if pos < 0:
            return 0
        return pos if pos < n else n

    def to_norm(self, off: i64) -> i64:
        if self.orig.length() == 0:
            return 0
        return off

    def apply(self, start: i64, end: i64, text: str) -> tuple[i64, i64, i64]:
        self.orig.replace(start, end, text)
        return start, end, start + len(text)

    def split_range(self, start: i64, end: i64) -> tuple[str, i64, i64, str]:
        return "", start, end, ""

    def streams(self) -> bool:
        return True

    def normalize_part(self, text: str, first: bool, last: bool) -> str:
        return text
