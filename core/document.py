"""A document whose SentencePiece tokenization is updated on every edit, never re-encoded whole.

The algorithm is Algorithm 3 of Hellsten (2024): re-tokenize the edited text with the tokens on
either side of it, and widen the window until its first and last tokens are the old tokens at the
same places. Why that is exact, for SentencePiece's BPE (merges by score, leftmost first): if the
window's first token equals the old token there, every merge that could cross the window's left
edge sees the same symbols, in the same order, as in the old run, where none crossed; the same
holds at the right edge. What the comparison must include to make that true:

- position and length, not the id alone (the window starts and ends at old token boundaries);
- whole merge symbols: all byte-fallback tokens of one character together, and all parts of an
  UNUSED piece that SentencePiece merged and re-split at the end (a window edge never sits inside
  a symbol, where the tokens are not boundaries of the merges);
- the greedy matching of USER_DEFINED pieces, which can reach past a window's edge: the matcher is
  re-run across each edge to prove the edge is a symbol boundary of the whole text.

The window widens geometrically (1, 2, 4, ... tokens per side), so a change that really ripples
through a long stretch costs a small multiple of one encode of that stretch. Models for which
tokens are not local (non-BPE types; BPE with UNUSED pieces whose split depends on the whole
text) re-encode the whole normalized text instead, which is exact by definition.
"""

from __future__ import annotations

from typing import Final

from librt.vecs import append, vec
from mypy_extensions import i32, i64, u8

from tokenline.core.model import FLAG_BYTE, Model
from tokenline.core.normalizer import GeneralNorm, Normalization, TrivialNorm
from tokenline.core.pairs import PairStore
from tokenline.core.rope import UTF16, TextRope, check_text

# Selections up to this many characters are simply encoded; longer ones reuse document tokens.
DIRECT_COUNT_LIMIT: Final = 4096


class Document:
    """The text of one document and its token ids, kept identical to a full encode."""

    model: Model
    rope: TextRope
    norm: Normalization
    toks: PairStore
    # Counters for benchmarks and tests: encoder calls and characters sent to them.
    encode_calls: i64
    encoded_chars: i64

    def __init__(self, model: Model, text: str = "") -> None:
        check_text(text)
        self.model = model
        self.rope = TextRope(text)
        if model.trivial_normalizer:
            self.norm = TrivialNorm(self.rope, model)
        else:
            self.norm = GeneralNorm(self.rope, model)
        self.toks = PairStore(has_c=model.splits_unused)
        self.encode_calls = 0
        self.encoded_chars = 0
        self._encode_all_full(text)

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
        return self.toks.slice_a(0, self.toks.size())

    def ids_between(self, first: i64, last: i64) -> list[int]:
        return self.toks.slice_a(first, last)

    def token_id(self, k: i64) -> i64:
        return self.toks.get_a(k)

    def edit(self, start: int, end: int, new_text: str) -> None:
        """Replaces text[start:end] (code-point offsets) with new_text."""
        n: i64 = self.rope.length()
        if not (0 <= start <= end <= n):
            raise ValueError(
                f"edit [{start}, {end}) is outside the text, which has {n} characters "
                "(need 0 <= start <= end <= length)"
            )
        check_text(new_text)
        if start == end and not new_text:
            return
        ns, ne_old, ne_new = self.norm.apply(start, end, new_text)
        self._retokenize(ns, ne_old, ne_new)

    def set_text(self, text: str) -> None:
        """Replaces the whole text (a full encode)."""
        check_text(text)
        self.norm.apply(0, self.rope.length(), text)
        self._encode_all_full(text)

    # -- token positions (original code-point offsets) ----------------------------------------

    def token_span(self, k: i64) -> tuple[i64, i64]:
        s: i64 = self.toks.start_b(k)
        e: i64 = s + self.toks.get_b(k)
        return self.norm.to_orig(s), self.norm.to_orig(e)

    def token_start(self, k: i64) -> i64:
        return self.norm.to_orig(self.toks.start_b(k))

    def group(self, k: i64) -> tuple[i64, i64]:
        """Tokens [first, end) that hold one character together with token k.

        One token unless a character is split over several tokens (byte-fallback bytes of one
        character): editors show and count such a group as one unit.
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
        """Token k holds no character of its own: it continues the previous token's."""
        return self.toks.get_b(k) == 0 and (self.model.flags[self.toks.get_a(k)] & FLAG_BYTE) != 0

    def token_at(self, offset: i64) -> i64:
        """Index of the token holding the character at offset (len(self) past the end)."""
        if offset >= self.rope.length():
            return self.toks.size()
        return self.toks.at_b(self.norm.to_norm(offset))

    def spans(self, first: i64, last: i64) -> list[int]:
        """Original [start, end) of tokens first..last-1, flattened: [s0, e0, s1, e1, ...]."""
        out: list[int] = []
        if last > self.toks.size():
            last = self.toks.size()
        if first >= last:
            return out
        lens = self.toks.slice_b(first, last)
        pos: i64 = self.toks.start_b(first)
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
        out.extend(self.toks.slice_a(k0, k1))
        out.extend(tail)
        return out

    def _encode_range(self, start: i64, end: i64) -> tuple[list[int], i64, i64, list[int]]:
        """text[start:end] encoded alone, as (ids, document tokens [k0, k1), ids).

        A long selection reuses the document's tokens in its middle and encodes only windows at
        its two edges, checked like an edit's.
        """
        n: i64 = self.rope.length()
        if start < 0:
            start = 0
        if end > n:
            end = n
        if start >= end:
            return [], 0, 0, []
        model = self.model
        if end - start <= DIRECT_COUNT_LIMIT or not model.incremental:
            return self._encode_full(self.rope.slice(start, end)), 0, 0, []
        head, a, b, tail = self.norm.split_range(start, end)
        if a < 0:
            return self._encode_full(self.rope.slice(start, end)), 0, 0, []
        toks = self.toks
        ntok: i64 = toks.size()
        um = model.bpe_matcher
        # First document token entirely after a, last one entirely before b.
        ka: i64 = toks.at_b(a)
        if ka < ntok and toks.start_b(ka) < a:
            ka += 1
        kb: i64 = toks.at_b(b)
        near_l = Neighborhood(toks, ka, ka + 16)
        near_r = Neighborhood(toks, kb - 16, kb + 1)
        step_l: i64 = 1
        step_r: i64 = 1
        while True:
            e_idx: i64 = near_l.boundary_up(ka + step_l)
            f_idx: i64 = near_r.boundary_down(kb - step_r)
            if e_idx >= f_idx:
                return self._encode_full(self.rope.slice(start, end)), 0, 0, []
            if um is not None:
                # Past f the selection's symbols are cut as the document's only if no
                # USER_DEFINED match from before f can see the selection's end.
                while f_idx > e_idx and near_r.start(f_idx) + um.longest - 1 > b:
                    f_idx = near_r.boundary_down(f_idx - 1)
                if e_idx >= f_idx:
                    return self._encode_full(self.rope.slice(start, end)), 0, 0, []
            e_pos: i64 = near_l.start(e_idx)
            f_pos: i64 = near_r.start(f_idx)
            left_text = head + self.norm.slice(a, e_pos)
            right_text = self.norm.slice(f_pos, b) + tail
            left_ids = self._encode_window(left_text)
            left_lens = model.lengths(left_ids, left_text, True)
            left_joins = self._joins(left_lens, left_text, True)
            right_ids = self._encode_window(right_text)
            right_lens = model.lengths(right_ids, right_text, True)
            right_joins = self._joins(right_lens, right_text, True)
            ok_l = self._right_edge_matches(
                left_ids, left_lens, left_joins, e_idx, near_l
            ) and self._segments_ok(left_text, len(left_text), e_pos, None)
            ok_r = self._left_edge_matches(right_ids, right_lens, right_joins, f_idx, near_r)
            if ok_l and ok_r:
                return left_ids, e_idx, f_idx, right_ids
            if not ok_l:
                step_l *= 2
            if not ok_r:
                step_r *= 2

    # -- the engine ----------------------------------------------------------------------------

    def _encode_full(self, text: str) -> list[int]:
        self.encode_calls += 1
        self.encoded_chars += len(text)
        ids: list[int] = self.model.encode_full(text)
        return ids

    def _encode_window(self, text: str) -> list[int]:
        self.encode_calls += 1
        self.encoded_chars += len(text)
        ids: list[int] = self.model.encode_window(text)
        return ids

    def _encode_all_full(self, text: str) -> None:
        ids = self._encode_full(text)
        lens = self.model.lengths(ids, text, False)
        self.toks.load(_to_vec(ids), lens, self._joins(lens, text, False))
        if self.toks.total_b != self.norm.length():
            raise AssertionError(
                f"tokens cover {self.toks.total_b} normalized characters but the normalized text "
                f"has {self.norm.length()}: the normalizer disagrees with SentencePiece"
            )

    def _retokenize(self, ns: i64, ne_old: i64, ne_new: i64) -> None:
        toks = self.toks
        ntok: i64 = toks.size()
        delta: i64 = ne_new - ne_old
        model = self.model
        if not model.incremental or ntok == 0:
            text = self.norm.slice(0, self.norm.length())
            ids = self._encode_window(text)
            lens = model.lengths(ids, text, True)
            toks.load(_to_vec(ids), lens, self._joins(lens, text, True))
            return
        # Tokens [0, kl) end at or before ns; tokens [kr, ntok) start at or after ne_old.
        kl: i64 = toks.at_b(ns)
        t: i64 = toks.at_b(ne_old)
        # The old tokens around the edit, fetched once; widened when the window outgrows them.
        near = Neighborhood(toks, kl - 8, t + 9)
        kr: i64 = t
        if t < ntok and near.start(t) < ne_old:
            kr = t + 1
        kr = near.boundary_up(kr)
        if kr < kl:
            kr = kl
        step_l: i64 = 1
        step_r: i64 = 1
        while True:
            wl: i64 = near.boundary_down(kl - step_l)
            wr: i64 = near.boundary_up(kr + step_r)
            a: i64 = near.start(wl)
            b: i64 = near.start(wr) + delta
            text = self.norm.slice(a, b)
            ids = self._encode_window(text)
            lens = model.lengths(ids, text, True)
            joins = self._joins(lens, text, True)
            ok_l: bool = wl == 0 or (
                self._left_edge_matches(ids, lens, joins, wl, near) and self._user_edge_ok(a, ns)
            )
            ok_r: bool = wr >= ntok or (
                self._right_edge_matches(ids, lens, joins, wr, near)
                and self._segments_ok(text, b - a, b, lens)
            )
            if ok_l and ok_r:
                toks.replace(wl, wr, _to_vec(ids), lens, joins)
                return
            if not ok_l:
                step_l *= 2
            if not ok_r:
                step_r *= 2

    def _joins(self, lens: vec[i32], text: str, window: bool) -> vec[u8]:
        """The symbol-continuation flags of new tokens, for stores that keep them."""
        if not self.model.splits_unused:
            return vec[u8]()
        return self.model.joins(lens, text, window)

    def _left_edge_matches(
        self, ids: list[int], lens: vec[i32], joins: vec[u8], k: i64, near: Neighborhood
    ) -> bool:
        """The window's first merge symbol equals the old one starting at token k."""
        n: i64 = len(ids)
        if n == 0:
            return False
        g: i64 = 1
        while g < n and _joined(lens, joins, g):
            g += 1
        return self._same_group(ids, lens, 0, k, g, near)

    def _right_edge_matches(
        self, ids: list[int], lens: vec[i32], joins: vec[u8], k: i64, near: Neighborhood
    ) -> bool:
        """The window's last merge symbol equals the old one ending before token k."""
        n: i64 = len(ids)
        if n == 0:
            return False
        g: i64 = 1
        while g < n and _joined(lens, joins, n - g):
            g += 1
        return self._same_group(ids, lens, n - g, k - g, g, near)

    def _same_group(
        self, ids: list[int], lens: vec[i32], first: i64, k: i64, g: i64, near: Neighborhood
    ) -> bool:
        """New tokens first..first+g-1 (one symbol) have the ids and lengths of old tokens
        k..k+g-1, and those old tokens are one symbol too (a symbol starts at k and at k+g)."""
        if k < 0 or k + g > self.toks.size():
            return False
        if near.joined(k) or (k + g < self.toks.size() and near.joined(k + g)):
            return False
        i: i64 = 0
        while i < g:
            if near.id(k + i) != ids[first + i] or near.length(k + i) != i64(lens[first + i]):
                return False
            if i > 0 and not near.joined(k + i):
                return False
            i += 1
        return True

    def _user_edge_ok(self, a: i64, ns: i64 = -1) -> bool:
        """True if normalized offset a (an old token boundary before any change) is also a symbol
        boundary of the new text, as USER_DEFINED matching cuts it."""
        um = self.model.bpe_matcher
        if um is None:
            return True
        longest: i64 = um.longest
        if ns >= 0 and a + longest - 1 <= ns:
            return True
        # A token boundary far enough before a that no match from before it can reach a.
        base_pos: i64 = a - longest
        start: i64 = 0
        if base_pos > 0:
            start = self.toks.start_b(self.toks.at_b(base_pos))
        text = self.norm.slice(start, a + longest)
        return um.lands_on(text, 0, a - start)

    def _segments_ok(
        self, text: str, end_in_text: i64, end_norm: i64, lens: vec[i32] | None
    ) -> bool:
        """True if the window text's end (normalized offset end_norm) is a symbol boundary of the
        whole text: re-runs USER_DEFINED matching from a token boundary well before it, reading
        the text that follows the window."""
        um = self.model.bpe_matcher
        if um is None:
            return True
        longest: i64 = um.longest
        # Last boundary of the window's own tokens at least `longest` before its end.
        p: i64 = 0
        if lens is not None:
            acc: i64 = 0
            i: i64 = 0
            n: i64 = len(lens)
            while i < n:
                nxt: i64 = acc + i64(lens[i])
                if nxt > end_in_text - longest:
                    break
                acc = nxt
                i += 1
            p = acc
        after = self.norm.slice(end_norm, end_norm + longest)
        probe = text[p:end_in_text] + after
        return um.lands_on(probe, 0, end_in_text - p)


def _joined(lens: vec[i32], joins: vec[u8], i: i64) -> bool:
    """New token i continues the symbol before it (joins kept: read them; else a zero length)."""
    if len(joins) > 0:
        return joins[i] != 0
    return lens[i] == 0


def _to_vec(ids: list[int]) -> vec[i32]:
    out = vec[i32](capacity=len(ids))
    for x in ids:
        out = append(out, i32(x))
    return out


class Neighborhood:
    """A copy of the old tokens around an edit, so the window loop does not go back to the
    token store (and its Fenwick trees) for every index and offset it looks at."""

    toks: PairStore
    k0: i64
    k1: i64
    ids: vec[i32]
    lens: vec[i32]
    joins: vec[u8]  # empty when the store keeps no symbol flags
    starts: vec[i64]  # normalized start of tokens k0..k1 (k1 included)

    def __init__(self, toks: PairStore, k0: i64, k1: i64) -> None:
        self.toks = toks
        self.k0 = 0
        self.k1 = 0
        self.ids = vec[i32]()
        self.lens = vec[i32]()
        self.joins = vec[u8]()
        self.starts = vec[i64]()
        self._fetch(k0, k1)

    def _fetch(self, k0: i64, k1: i64) -> None:
        n: i64 = self.toks.size()
        k0 = max(0, k0)
        k1 = min(n, max(k1, k0))
        ids, lens, joins, base = self.toks.window(k0, k1)
        starts = vec[i64](capacity=len(lens) + 1)
        pos: i64 = base
        i: i64 = 0
        m: i64 = len(lens)
        while i < m:
            starts = append(starts, pos)
            pos += i64(lens[i])
            i += 1
        starts = append(starts, pos)
        self.k0 = k0
        self.k1 = k1
        self.ids = ids
        self.lens = lens
        self.joins = joins
        self.starts = starts

    def _cover(self, k: i64) -> None:
        """Widens the copy (geometrically) until it holds index k (k == size() allowed)."""
        if self.k0 <= k <= self.k1:
            return
        width: i64 = max(16, 2 * (self.k1 - self.k0))
        lo: i64 = self.k0
        hi: i64 = self.k1
        if k < lo:
            lo = min(k, lo - width)
        if k > hi:
            hi = max(k, hi + width)
        self._fetch(lo, hi)

    def start(self, k: i64) -> i64:
        self._cover(k)
        return self.starts[k - self.k0]

    def id(self, k: i64) -> i64:
        self._cover(k + 1)
        self._cover(k)
        return i64(self.ids[k - self.k0])

    def length(self, k: i64) -> i64:
        self._cover(k + 1)
        self._cover(k)
        return i64(self.lens[k - self.k0])

    def joined(self, k: i64) -> bool:
        """Old token k continues the merge symbol of token k - 1 (no window edge before it)."""
        self._cover(k + 1)
        self._cover(k)
        if len(self.joins) > 0:
            return self.joins[k - self.k0] != 0
        return self.lens[k - self.k0] == 0

    def boundary_down(self, k: i64) -> i64:
        """k moved down until a merge symbol starts at token k (no character or symbol split)."""
        if k <= 0:
            return 0
        n: i64 = self.toks.size()
        if k >= n:
            return n
        while k > 0 and self.joined(k):
            k -= 1
        return k

    def boundary_up(self, k: i64) -> i64:
        n: i64 = self.toks.size()
        if k >= n:
            return n
        if k < 0:
            k = 0
        while k < n and self.joined(k):
            k += 1
        return k
