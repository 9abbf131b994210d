"""A document: its text, its normalized text, and its tokens, kept equal to a full encode.

The public API editors use: edits in code points, tokens and their spans, lines and code units,
selection counts. The engine that keeps the tokens exact is tokenline.core.retokenize.
"""

from __future__ import annotations

from typing import Final

from mypy_extensions import i64

from tokenline.core.model import Model
from tokenline.core.normalization import Normalization
from tokenline.core.retokenize import Retokenizer
from tokenline.core.rope import UTF16, TextRope, check_text
from tokenline.core.tokens import JOIN_CHARACTER, TokenRun, TokenStore, continues

# Selections up to this many characters are simply encoded; longer ones reuse document tokens.
DIRECT_COUNT_LIMIT: Final = 4096


def whole_tokens(model: Model, normalized: str) -> TokenRun:
    """The tokens of a whole normalized text (Document.edit_text's). It reads only the model,
    which no edit changes: safe on another thread while the document's thread goes on."""
    return model.family.tokens(normalized, True)


class Document:
    """The text of one document and its token ids, kept identical to a full encode."""

    model: Model
    rope: TextRope
    norm: Normalization
    engine: Retokenizer
    toks: TokenStore
    # edit_text changed the text; the tokens are an older text's until take_tokens.
    stale: bool

    def __init__(
        self, model: Model, text: str = "", whole: bool = True, rope: TextRope | None = None
    ) -> None:
        """The document of `text`; `whole` False: its tokens are read by later calls of
        load(), a slice at a time (an editor opening a large file in idle time). `rope`: the
        text's rope, already built (RopeBuilder, which checked the text) in slices too."""
        if rope is None:
            check_text(text)
            rope = TextRope(text)
        self.model = model
        self.rope = rope
        self.norm = model.family.normalization(self.rope)
        self.engine = Retokenizer(model.family, self.norm)
        self.toks = self.engine.toks
        self.stale = False
        if whole:
            self.engine.load_original(text)
        else:
            self.engine.begin_load(text)

    # -- public API ----------------------------------------------------------------------------

    @property
    def text(self) -> str:
        return self.rope.text()

    def __len__(self) -> int:
        return int(self.toks.size())

    def length(self) -> i64:
        """Number of characters (code points) of the text."""
        return self.rope.length()

    def ids(self) -> list[int]:
        return self.toks.ids(0, self.toks.size())

    def ids_between(self, first: i64, last: i64) -> list[int]:
        return self.toks.ids(first, last)

    def token_id(self, k: i64) -> i64:
        self._check_index(k)
        return self.toks.id(k)

    def _check_index(self, k: i64) -> None:
        if not 0 <= k < self.toks.size():
            raise IndexError(f"token {k} does not exist: the document has {self.toks.size()}")

    def edit(self, start: int, end: int, new_text: str) -> None:
        """Replaces text[start:end] (code-point offsets) with new_text."""
        n: i64 = self.rope.length()
        if not (0 <= start <= end <= n):
            raise ValueError(
                f"edit [{start}, {end}) is outside the text, which has {n} characters "
                "(need 0 <= start <= end <= length)"
            )
        check_text(new_text)
        if self.engine.loading is not None:
            raise RuntimeError("the document is still loading: call load() until it is False")
        if self.stale:
            raise RuntimeError("the tokens wait for take_tokens after edit_text")
        if start == end and not new_text:
            return
        self.engine.before_edit(start, end)
        ns, ne_old, ne_new = self.norm.apply(start, end, new_text)
        self.engine.after_edit(ns, ne_old, ne_new)

    def encodes_long(self, start: int, end: int, new_text: str = "") -> bool:
        """Whether edit() of [start, end) to new_text would encode a long stretch at once
        (milliseconds of work: a long Unigram piece, which its family encodes whole, typed in or
        pasted). A caller that must stay responsive edits such a text with edit_text and encodes
        it whole elsewhere."""
        if self.stale or self.engine.loading is not None:
            return False
        n: i64 = self.rope.length()
        a: i64 = min(max(start, 0), n)
        b: i64 = min(max(end, a), n)
        return self.engine.edges.encodes_long(self.norm.to_norm(a), self.norm.to_norm(b), new_text)

    def edit_text(self, start: int, end: int, new_text: str) -> str:
        """Replaces text[start:end] with new_text in the text alone and returns the normalized
        text to encode, so that the encode (whole_tokens) can run elsewhere, on another thread,
        while the text takes more edits: a model that re-encodes whole, or an edit that would
        encode a long stretch (encodes_long). The tokens stay an older text's until take_tokens
        gets the newest's."""
        n: i64 = self.rope.length()
        if not (0 <= start <= end <= n):
            raise ValueError(
                f"edit [{start}, {end}) is outside the text, which has {n} characters "
                "(need 0 <= start <= end <= length)"
            )
        check_text(new_text)
        if self.engine.loading is not None:
            raise RuntimeError("the document is still loading: call load() until it is False")
        if not self.stale:
            # Hooks that read the tokens around the edit, while they still match the text.
            self.engine.before_edit(start, end)
        self.stale = True
        ns, ne_old, ne_new = self.norm.apply(start, end, new_text)
        self.engine.edges.edited(ns, ne_old, ne_new)
        return self.norm.slice(0, self.norm.length())

    def take_tokens(self, run: TokenRun) -> None:
        """The tokens of the normalized text edit_text last returned (whole_tokens of it)."""
        if run.total() != self.norm.length():
            raise ValueError(
                f"tokens of {run.total()} normalized characters for a text of "
                f"{self.norm.length()}: not the newest text's"
            )
        self.engine.reload_with(run)
        self.stale = False

    def load(self, budget: i64 = 1 << 16) -> bool:
        """Reads the tokens of about `budget` more characters of a document made with `whole`
        False (at most twice that, unless a stretch has no place to cut); True while more
        remain. Until it returns False the document has no tokens and takes no edit."""
        return self.engine.load_some(budget)

    def loading(self) -> bool:
        """Whether load() has tokens left to read."""
        return self.engine.loading is not None

    def prepare(self, budget: i64 = 1 << 16) -> bool:
        """Does up to `budget` characters of the work opening deferred (byte-level models open
        from one full encode and find where pieces start later); True while work remains.
        Editors call it when idle, so that edits far from earlier ones stay fast. Nothing is
        done while the tokens wait for take_tokens (a model that re-encodes whole has no use
        for it: its edits encode the whole text)."""
        if self.stale:
            return False
        return self.engine.prepare(budget)

    def set_text(self, text: str) -> None:
        """Replaces the whole text (a full encode)."""
        check_text(text)
        self.norm.apply(0, self.rope.length(), text)
        self.engine.load_original(text)
        self.stale = False

    # -- token positions (original code-point offsets) ----------------------------------------

    def token_span(self, k: i64) -> tuple[i64, i64]:
        self._check_index(k)
        s: i64 = self.toks.start(k)
        e: i64 = s + self.toks.length(k)
        return self.norm.to_orig(s), self.norm.to_orig(e)

    def token_start(self, k: i64) -> i64:
        return self.norm.to_orig(self.toks.start(k))

    def first_token_from(self, offset: i64) -> i64:
        """Index of the first token that starts at or after offset (len(self) when none does)."""
        k: i64 = self.token_at(offset)
        if k < self.toks.size() and self.token_start(k) < offset:
            k += 1
        return k

    def group(self, k: i64) -> tuple[i64, i64]:
        """Tokens [first, end) that hold one character together with token k.

        One token unless a character is split over several tokens (byte-fallback bytes of one
        character): editors show and count such a group as one.
        """
        n: i64 = self.toks.size()
        if k < 0 or k >= n:
            return k, k
        first: i64 = k
        while first > 0 and self._continues(first):
            first -= 1
        end: i64 = k + 1
        while end < n and self._continues(end):
            end += 1
        return first, end

    def _continues(self, k: i64) -> bool:
        """Token k continues a character of the previous token's (byte fallback, byte-level)."""
        toks = self.toks
        return continues(toks.keeps_joins, toks.flag(k), toks.length(k), JOIN_CHARACTER)

    def token_at(self, offset: i64) -> i64:
        """Index of the token holding the character at offset (len(self) past the end)."""
        if offset >= self.rope.length():
            return self.toks.size()
        return self.toks.at(self.norm.to_norm(offset))

    def spans(self, first: i64, last: i64) -> list[int]:
        """Original [start, end) of tokens first..last-1, flattened: [s0, e0, s1, e1, ...]."""
        out: list[int] = []
        if last > self.toks.size():
            last = self.toks.size()
        if first >= last:
            return out
        lens = self.toks.lengths(first, last)
        pos: i64 = self.toks.start(first)
        norm = self.norm
        prev: i64 = norm.to_orig(pos)
        for ln in lens:
            pos += ln
            cur: i64 = norm.to_orig(pos)
            out.append(int(prev))
            out.append(int(cur))
            prev = cur
        return out

    # -- lines and code units (for editors) ----------------------------------------------------

    def line_count(self) -> i64:
        return self.rope.line_count()

    def position(self, offset: i64, unit: i64 = UTF16) -> tuple[i64, i64]:
        """(line, column) of offset; columns in code units of UTF-8 (8), UTF-16 (16) or UTF-32."""
        return self.rope.position(offset, unit)

    def offset(self, line: i64, column: i64, unit: i64 = UTF16) -> i64:
        """Offset of (line, column), clamped to the text as LSP asks."""
        return self.rope.offset(line, column, unit)

    def line_start(self, line: i64) -> i64:
        return self.rope.line_start(line)

    def line_end(self, line: i64) -> i64:
        return self.rope.line_end(line)

    def slice(self, start: i64, end: i64) -> str:
        return self.rope.slice(start, end)

    # -- selection counts ----------------------------------------------------------------------

    def count(self, start: i64, end: i64) -> i64:
        """Tokens of text[start:end] encoded alone (a selection count)."""
        head, k0, k1, tail = self._encode_range(start, end)
        return len(head) + (k1 - k0) + len(tail)

    def encode_range(self, start: i64, end: i64) -> list[int]:
        """Token ids of text[start:end] encoded alone."""
        head, k0, k1, tail = self._encode_range(start, end)
        out: list[int] = head
        out.extend(self.toks.ids(k0, k1))
        out.extend(tail)
        return out

    def _encode_range(self, start: i64, end: i64) -> tuple[list[int], i64, i64, list[int]]:
        """text[start:end] encoded alone, as (ids, document tokens [k0, k1), ids).

        A long selection reuses the document's tokens in its middle and encodes only windows at
        its two edges, checked like an edit's.
        """
        start = max(start, 0)
        end = min(end, self.rope.length())
        if start >= end:
            return [], 0, 0, []
        long: bool = end - start > DIRECT_COUNT_LIMIT
        if self.model.incremental and (long or self.model.family.segmenter is not None):
            head, a, b, tail = self.norm.split_range(start, end)
            if a >= 0 and not long:
                return self.engine.encode_segments(head + self.norm.slice(a, b) + tail), 0, 0, []
            if a >= 0:
                left, k0, k1, right = self.engine.encode_range(head, a, b, tail)
                if k0 >= 0:
                    return left, k0, k1, right
        return self.engine.encode_original(self.rope.slice(start, end)), 0, 0, []
