"""Byte-level BPE tokenizer.json files whose normalizer is NFC, NFD, NFKC, NFKD, Lowercase or a
Sequence of them (GPT-NeoX-20B, Pythia, RWKV-4, StableLM: NFC), edited by pre-tokens.

The library normalizes the text, then pre-tokenizes the normalized text and encodes each
pre-token. The document's normalized text is kept in step with its edits (tokenline.core.stepnorm)
and the byte-level machinery (tokenline.core.bytelevel, tokenline.core.pretokenedges) works on it
unchanged. Added tokens are segments of their own here, matched as the library matches them
(tokenline.core.addedsplit): a window's cuts are those of the pre-tokens between added tokens,
and a cut's reach grows by what the matches that may be open at it, or begin where the pattern
reads, read on (`cut_reach`). So text full of added tokens (GPT-NeoX's runs of spaces, in every
indented line of code) is edited by windows like any other. Built by
tokenline.core.hfnormloader.
"""

from __future__ import annotations

from typing import Any, Final

from librt.vecs import vec
from mypy_extensions import i64, u8

from tokenline.core.addedsplit import AddedSplit
from tokenline.core.bytelevel import AHEAD_CHARS
from tokenline.core.hfbytelevel import HFByteLevelFamily, HFCoder, LibraryPreTokens
from tokenline.core.normalization import Normalization
from tokenline.core.pretokenedges import PreTokenEdges
from tokenline.core.pretokenfamily import FIRST_INSIDE, LAST_INSIDE
from tokenline.core.pretokens import reach_after
from tokenline.core.rope import TextRope
from tokenline.core.stepnorm import StepNorm
from tokenline.core.tokens import TokenRun, TokenStore, empty_run
from tokenline.core.unicodesteps import UnicodeSteps
from tokenline.core.vocab import Vocabulary
from tokenline.core.window import Edges, Stats, Window

# What reach_after answers for text that does not settle a cut (more than any text's length).
UNSETTLED: Final = 1 << 40
# Characters of a block past a segment's end read to decide it settled (more added tokens' own).
TAKE_AHEAD: Final = 64


def cut_reach(added: AddedSplit, before: str, after: str) -> i64:
    """How far past a cut, with `before` before it (added.longest - 1 characters, where there are
    so many) and `after` after it, the pre-tokens and added tokens may be read to decide it: the
    pattern's reach, and the matches it may meet there; UNSETTLED when after does not settle
    it."""
    base: i64 = reach_after(after, before[-1:])
    if base > len(after):
        return UNSETTLED
    out: i64 = added.reach(before, after, base)
    return UNSETTLED if out > len(after) else out


class AddedPreTokens(LibraryPreTokens):
    """The library's pre-tokens of the stretches between added tokens, each added token a
    segment of its own."""

    added: AddedSplit

    def __init__(self, pattern: str, pre: Any, added: AddedSplit) -> None:
        super().__init__(pattern, pre)
        self.added = added

    def split_ids(self, text: str) -> tuple[list[str], list[int]]:
        """text's segments and, per segment, its added token's id (-1 for a pre-token)."""
        texts, ids = self.added.split(text)
        out: list[str] = []
        out_ids: list[int] = []
        i: i64 = 0
        while i < len(texts):
            if ids[i] >= 0:
                out.append(texts[i])
                out_ids.append(ids[i])
            else:
                for pretoken in LibraryPreTokens.split(self, texts[i]):
                    out.append(pretoken)
                    out_ids.append(-1)
            i += 1
        return out, out_ids

    def split(self, text: str) -> list[str]:
        return self.split_ids(text)[0]

    def take(self, block: str, final: bool) -> list[str]:
        found = self.split(block)
        if final:
            return found
        n: i64 = len(block)
        end: i64 = n
        keep: i64 = len(found)
        back: i64 = max(0, self.added.longest - 1)
        while keep > 1:
            keep -= 1
            end -= len(found[keep])
            before = block[max(0, end - back) : end]
            if end + cut_reach(self.added, before, block[end : end + TAKE_AHEAD + back]) <= n:
                return found[:keep]
        return []


class NormalizedByteLevelFamily(HFByteLevelFamily):
    """Byte-level BPE after a Unicode normalizer (`steps`), added tokens as segments."""

    steps: UnicodeSteps
    pieces: AddedPreTokens

    def __init__(
        self,
        vocab: Vocabulary,
        coder: HFCoder,
        pieces: AddedPreTokens,
        added: vec[u8],
        steps: UnicodeSteps,
    ) -> None:
        super().__init__(vocab, coder, pieces, added)
        self.steps = steps
        self.pieces = pieces
        # No guard near added tokens: they are segments, found in every window.
        self.added_longest = 0
        self.added_ids = False
        self.ahead_chars = AHEAD_CHARS
        # A scan from inside a run sees the added tokens that may meet the edit (runcuts).
        self.run_margin = self.back()

    def normalization(self, rope: TextRope) -> Normalization:
        return StepNorm(rope, self.steps)

    def edges(self, norm: Normalization, toks: TokenStore, stats: Stats) -> Edges:
        return NormalizedEdges(self, norm, toks, stats)

    def clean(self, text: str) -> bool:
        return True

    def reach_after(self, text: str, before: str = "") -> i64:
        """With what precedes the cut unknown: a match may be open there."""
        out: i64 = self.cut_reach("", text)
        back: i64 = self.back()
        if out == UNSETTLED or back > len(text):
            return UNSETTLED
        return max(out, back)

    def cut_reach(self, before: str, after: str) -> i64:
        return cut_reach(self.pieces.added, before, after)

    def back(self) -> i64:
        """Characters before a cut that say which matches may be open at it."""
        return max(0, self.pieces.added.longest - 1)

    def tokens(self, text: str, normalized: bool) -> TokenRun:
        if not normalized:
            text = self.steps.normalize_text(text)
        found = self.window(text, 0, "", True, -1)
        assert found is not None
        return found

    def window(
        self, text: str, skip: i64, ahead: str, final: bool, pretoken_end: i64, inside: i64 = 0
    ) -> TokenRun | None:
        """As ByteLevelFamily.window, with added tokens as segments no window edge cuts."""
        n: i64 = len(text)
        full = text + ahead if ahead else text
        segments, ids = self.pieces.split_ids(full)
        last: i64 = len(segments) - 1 if (inside & LAST_INSIDE) != 0 else -1
        out = empty_run()
        pos: i64 = 0
        i: i64 = 0
        while i < len(segments) and pos < n:
            segment = segments[i]
            added: i64 = ids[i]
            start: i64 = pos
            pos += len(segment)
            first_in: bool = i == 0 and (inside & FIRST_INSIDE) != 0
            part: bool = first_in or i == last
            i += 1
            if pos <= skip or (part and added >= 0):
                return None  # the new text cuts inside what was one pre-token
            if pos > n:
                # The window ends inside this pre-token: only where an old one ended the same way.
                if added >= 0 or pos != pretoken_end or (not part and self.coder.whole(segment)):
                    return None
                before = full[max(0, pos - self.back()) : pos]
                if not part and not final and self.cut_reach(before, full[pos:]) > len(full) - pos:
                    return None
                self._add_part(segment, max(skip - start, 0), n - start, out, part, first_in)
                return out
            if skip > start or first_in:
                if added >= 0 or (not first_in and self.coder.whole(segment)):
                    return None
                self._add_part(segment, skip - start, len(segment), out, first_in, first_in)
            elif added >= 0:
                out.add_token(added, len(segment), 0, True)
            else:
                self.add_pretoken(segment, out)
        if pos != n or pretoken_end >= 0:
            return None
        if not final and self.cut_reach(text[max(0, n - self.back()) :], ahead) > len(ahead):
            return None
        return out

    def added_free(self, text: str) -> bool:
        texts, ids = self.pieces.added.split(text)
        return len(texts) <= 1 and (not ids or ids[0] < 0)


class NormalizedEdges(PreTokenEdges):
    """Pre-token edges, a cut's reach read with the matches that may be open at it."""

    fam: NormalizedByteLevelFamily

    def __init__(
        self, family: NormalizedByteLevelFamily, norm: Normalization, toks: TokenStore, stats: Stats
    ) -> None:
        super().__init__(family, norm, toks, stats)
        self.fam = family

    def _after(self, b: i64, end: i64, whole: bool) -> str:
        # Whether the window's end is a cut depends on the matches open at it too: the text
        # after it is read whole, as far as the window asked.
        return self.norm.slice(b, end)

    def _cut_before(self, w: Window, a: i64) -> bool:
        limit: i64 = w.ns if w.move_right else w.b_fixed
        fam = self.fam
        lo: i64 = max(0, a - fam.back())
        text = self.norm.slice(lo, min(limit, a + fam.ahead_chars))
        return a + fam.cut_reach(text[: a - lo], text[a - lo :]) <= limit
