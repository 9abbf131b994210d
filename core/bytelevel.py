"""Byte-level BPE after a regex pre-tokenizer: tiktoken's encodings, Mistral's Tekken, and
byte-level BPE tokenizer.json files (through tokenline.core.hfbytelevel).

Each pre-token the pattern cuts is encoded alone by the reference library itself (its BPE of one
pre-token, behind a `PreTokenCoder`), so the ids are the library's. A token covers bytes, not
characters: its length is the number of characters that start in it, and a token that starts
inside a character continues it (JOIN_CHARACTER), which also keeps window edges off it. Built by
tokenline.core.tiktokenloader and tokenline.core.hfloader.
"""

from __future__ import annotations

from typing import Any, Final

from librt.vecs import append, vec
from mypy_extensions import i32, i64, u8

from tokenline.core.normalization import IdentityNorm, Normalization
from tokenline.core.pretokenedges import PreTokenFamily
from tokenline.core.pretokenfamily import FIRST_INSIDE, LAST_INSIDE
from tokenline.core.pretokenflags import inner_edges
from tokenline.core.pretokens import (
    NEWER_MARGIN,
    READ_PAST,
    PreTokenSegmenter,
    holds_newer,
    near_sync,
    newer_characters,
    reach_after,
    run_chars,
    run_continues,
    sync_in,
)
from tokenline.core.rope import TextRope
from tokenline.core.segments import CACHED_SEGMENT_CHARS
from tokenline.core.tokens import (
    JOIN_CHARACTER,
    JOIN_EDGE,
    JOIN_INNER,
    JOIN_UNKNOWN,
    TokenRun,
    empty_run,
    to_vec,
)
from tokenline.core.vocab import FLAG_CONTINUATION, Vocabulary

# Characters of the text after a window read to prove its end is a cut (more only if that fails).
AHEAD_CHARS: Final = 24


class PreTokenCoder:
    """The reference library's BPE of one pre-token: what differs between tiktoken and the
    tokenizers library behind one ByteLevelFamily (ids are final: the vocabulary's)."""

    def encode(self, text: str) -> list[int]:
        """The library's ids of a whole text."""
        raise NotImplementedError

    def pretoken(self, pretoken: str) -> list[int]:
        """The ids the library gives one pre-token."""
        raise NotImplementedError

    def part(self, part: str) -> list[int]:
        """The merges alone of `part`, a part of a long pre-token that a window edge cuts (never
        the library's shortcut that takes a pre-token found in the vocabulary as one token)."""
        raise NotImplementedError

    def whole(self, pretoken: str) -> bool:
        """Whether the library takes the pre-token as one token without merging it: then none
        of its parts may stand for it."""
        raise NotImplementedError

    def token_bytes(self, token_id: i64) -> bytes | None:
        """The bytes of a token (None: not a token of merges, such as a special token)."""
        raise NotImplementedError


class TiktokenCoder(PreTokenCoder):
    """A tiktoken Encoding (`enc`), whose ids are shifted by `id_offset` (Tekken's specials)."""

    enc: Any
    # tiktoken's ranks (bytes -> rank, before id_offset), for the merges of parts of pre-tokens.
    ranks: dict[bytes, int]
    id_offset: i64

    def __init__(self, enc: Any, ranks: dict[bytes, int], id_offset: i64) -> None:
        self.enc = enc
        self.ranks = ranks
        self.id_offset = id_offset

    def encode(self, text: str) -> list[int]:
        return self._shifted(self.enc.encode_ordinary(text))

    def pretoken(self, pretoken: str) -> list[int]:
        return self._shifted(self.enc._encode_single_piece(pretoken))

    def part(self, part: str) -> list[int]:
        # tiktoken returns a pre-token that is a token as that token without merging; a part is
        # not a pre-token, so it gets the merges alone.
        data = part.encode("utf-8")
        if data in self.ranks:
            return self._shifted(self.ranks_bpe(data))
        return self.pretoken(part)

    def whole(self, pretoken: str) -> bool:
        return pretoken.encode("utf-8") in self.ranks

    def token_bytes(self, token_id: i64) -> bytes | None:
        try:
            return bytes(self.enc.decode_single_token_bytes(token_id - self.id_offset))
        except (KeyError, ValueError):
            return None

    def _shifted(self, ids: list[int]) -> list[int]:
        if self.id_offset:
            off: i64 = self.id_offset
            return [x + off for x in ids]
        return ids

    def ranks_bpe(self, data: bytes) -> list[int]:
        """tiktoken's byte-pair merge of data (the lowest-ranked pair first, leftmost on ties),
        for the short parts where tiktoken would take the whole as one token instead."""
        parts: list[bytes] = [data[i : i + 1] for i in range(len(data))]
        ranks = self.ranks
        while len(parts) > 1:
            best: i64 = -1
            best_rank: i64 = 1 << 62
            i: i64 = 0
            while i + 1 < len(parts):
                r = ranks.get(parts[i] + parts[i + 1])
                if r is not None and r < best_rank:
                    best_rank = r
                    best = i
                i += 1
            if best < 0:
                break
            parts[best : best + 2] = [parts[best] + parts[best + 1]]
        return [ranks[p] for p in parts]


class ByteLevelFamily(PreTokenFamily):
    """Pre-tokens cut by `splitter`, each encoded by `coder`."""

    coder: PreTokenCoder
    splitter: PreTokenSegmenter
    # Characters whose pre-tokens only the reference library decides (empty: none such).
    newer: dict[str, bool]

    def __init__(
        self, vocab: Vocabulary, coder: PreTokenCoder, splitter: PreTokenSegmenter
    ) -> None:
        super().__init__(vocab)
        self.coder = coder
        self.splitter = splitter
        self.keeps_joins = True
        self.newer = {}
        self.read_past = READ_PAST

    def use_runs(self, run_class: i64) -> None:
        """Edits inside long letter pre-tokens need no scan of them (tiktoken's engine only:
        the class tests are Python's regex, which is the reference's engine's twin here)."""
        self.run_class = run_class
        longest: i64 = 0
        for n in self.vocab.piece_len:
            longest = max(longest, i64(n))
        self.longest_token = longest

    def guard_newer_characters(self) -> None:
        """Windows that read near a character newer than the tables our regex engine shares
        with the reference's re-encode the whole text instead (the guard of added tokens)."""
        self.newer = newer_characters()
        self.added_longest = NEWER_MARGIN

    def clean(self, text: str) -> bool:
        return not holds_newer(self.newer, text)

    def use_pretokens(self) -> None:
        """The pattern reads little past its cuts: edit and open pre-token by pre-token."""
        self.ahead_chars = AHEAD_CHARS
        self.segmenter = self.splitter
        self.lazy_cuts = True

    # -- the seam ------------------------------------------------------------------------------

    def normalization(self, rope: TextRope) -> Normalization:
        return IdentityNorm(rope)

    def encode(self, text: str) -> list[int]:
        return self.coder.encode(text)

    def token_bytes(self, token_id: i64) -> bytes:
        """The token's bytes, from the library (a special token or a hole: its name in UTF-8)."""
        if 0 <= token_id < self.vocab.size() and not self.vocab.is_special(token_id):
            found = self.coder.token_bytes(token_id)
            if found is not None:
                return found
        return self.vocab.piece(token_id).encode("utf-8")

    def tokens(self, text: str, normalized: bool) -> TokenRun:
        if not self.clean(text):
            # The reference's own encode; where its pre-tokens start is found later.
            ids = self.encode(text)
            lens, _ = self.vocab.fixed_lengths(ids)
            return TokenRun(to_vec(ids), lens, self.opening_joins(ids))
        found = self.window(text, 0, "", True, -1)
        assert found is not None
        return found

    def window(
        self, text: str, skip: i64, ahead: str, final: bool, pretoken_end: i64, inside: i64 = 0
    ) -> TokenRun | None:
        n: i64 = len(text)
        full = text + ahead if ahead else text
        pieces = self.splitter.split(full)
        last: i64 = len(pieces) - 1 if (inside & LAST_INSIDE) != 0 else -1
        out = empty_run()
        pos: i64 = 0
        i: i64 = 0
        while i < len(pieces) and pos < n:
            pretoken = pieces[i]
            start: i64 = pos
            pos += len(pretoken)
            # Whether this piece continues a long pre-token before text, or after it.
            first_in: bool = i == 0 and (inside & FIRST_INSIDE) != 0
            part: bool = first_in or i == last
            i += 1
            if pos <= skip:
                return None  # the new text cuts inside what was one pre-token
            if pos > n:
                # The window ends inside this pre-token: only where an old one ended the same way.
                if pos != pretoken_end:
                    return None
                if (
                    not part
                    and not final
                    and reach_after(full[pos:], full[pos - 1 : pos]) > len(full) - pos
                ):
                    return None
                if not part and self.coder.whole(pretoken):
                    return None  # the library takes the new pre-token as one token
                self._add_part(pretoken, max(skip - start, 0), n - start, out, part, first_in)
                return out
            if skip > start or first_in:
                if not first_in and self.coder.whole(pretoken):
                    return None
                self._add_part(pretoken, skip - start, len(pretoken), out, first_in, first_in)
            else:
                self.add_pretoken(pretoken, out)
        if (
            pos != n
            or pretoken_end >= 0
            or (not final and reach_after(ahead, text[n - 1 :]) > len(ahead))
        ):
            return None
        return out

    def reach_after(self, text: str, before: str = "") -> i64:
        return reach_after(text, before)

    # -- pre-token starts found late ---------------------------------------------------------------

    def opening_joins(self, ids: list[int]) -> vec[u8]:
        flags = self.vocab.flags
        n: i64 = len(ids)
        out = vec[u8](capacity=n)
        i: i64 = 0
        while i < n:
            j: i64 = JOIN_UNKNOWN | JOIN_EDGE
            if (flags[ids[i]] & FLAG_CONTINUATION) != 0:
                j |= JOIN_CHARACTER
            out = append(out, u8(j))
            i += 1
        return out

    def sync_in(self, text: str, last: bool) -> i64:
        return sync_in(text, last)

    def near_sync(self, text: str, last: bool) -> i64:
        return near_sync(text, last)

    def pretoken_joins(self, text: str, lens: vec[i32], joins: vec[u8]) -> vec[u8]:
        out = vec[u8](capacity=len(lens))
        pretokens = self.splitter.split(text)
        np: i64 = len(pretokens)
        j: i64 = 0  # the pre-token [p0, p1) holding the current token
        p0: i64 = 0
        p1: i64 = len(pretokens[0]) if np > 0 else 0
        pos: i64 = 0
        i: i64 = 0
        while i < len(lens):
            while pos >= p1 and j + 1 < np:
                j += 1
                p0 = p1
                p1 += len(pretokens[j])
            flag: i64 = 0
            if (joins[i] & JOIN_CHARACTER) != 0:
                flag = JOIN_EDGE | JOIN_CHARACTER
            elif pos != p0:
                flag = JOIN_INNER if inner_edges(pretokens[j]) else JOIN_EDGE
            out = append(out, u8(flag))
            pos += i64(lens[i])
            i += 1
        if holds_newer(self.newer, text):
            self._distrust_newer(text, lens, out)
        return out

    def _distrust_newer(self, text: str, lens: vec[i32], out: vec[u8]) -> None:
        """Tokens near a newer character keep their pre-token starts unknown (never window
        edges)."""
        newer = self.newer
        at: i64 = -1
        for ch in text:
            at += 1
            if ch not in newer:
                continue
            lo: i64 = at - NEWER_MARGIN
            hi: i64 = at + 1 + NEWER_MARGIN
            pos: i64 = 0
            i: i64 = 0
            while i < len(lens) and pos < hi:
                if pos >= lo:
                    out[i] = u8(out[i] | JOIN_UNKNOWN | JOIN_EDGE)
                pos += i64(lens[i])
                i += 1

    # -- pre-tokens --------------------------------------------------------------------------------

    def add_pretoken(self, pretoken: str, out: TokenRun) -> None:
        """Appends the tokens of one pre-token: the model's cache's, or the library's BPE of it
        (cached)."""
        short: bool = len(pretoken) <= CACHED_SEGMENT_CHARS
        if short and self.cache.add_to(pretoken, out) >= 0:
            return
        found = self._columns(self.coder.pretoken(pretoken), False, inner_edges(pretoken))
        if short:
            self.cache.put(pretoken, found)
        out.add(found)

    def run_continues(self, before: str, new: str, after: str) -> bool:
        return run_continues(self.run_class, before, new, after)

    def in_run(self, text: str) -> bool:
        return run_chars(self.run_class, text)

    def inner_part(self, text: str) -> TokenRun:
        return self._columns(self.coder.part(text), True, True)

    def _add_part(
        self, pretoken: str, lo: i64, hi: i64, out: TokenRun, long: bool, after_start: bool
    ) -> None:
        """Appends the BPE of pretoken[lo:hi], a part of a long pre-token that a window edge
        cuts (`long`: a piece of a longer pre-token, known long; `after_start`: that pre-token
        starts before the piece)."""
        raw = self.coder.part(pretoken[lo:hi])
        out.add(self._columns(raw, lo > 0 or after_start, long or inner_edges(pretoken)))

    def _columns(self, raw: list[int], starts_inside: bool, long: bool) -> TokenRun:
        """The token store's columns for the ids of (a part of) one pre-token."""
        table = self.vocab.piece_len
        flags = self.vocab.flags
        later: i64 = JOIN_INNER if long else JOIN_EDGE
        m: i64 = len(raw)
        ids = vec[i32](capacity=m)
        lens = vec[i32](capacity=m)
        joins = vec[u8](capacity=m)
        i: i64 = 0
        while i < m:
            t: i64 = raw[i]
            ids = append(ids, i32(t))
            lens = append(lens, table[t])
            join: i64 = 0
            if (flags[t] & FLAG_CONTINUATION) != 0:
                join = JOIN_EDGE | JOIN_CHARACTER
            elif i > 0 or starts_inside:
                join = later
            joins = append(joins, u8(join))
            i += 1
        return TokenRun(ids, lens, joins)
