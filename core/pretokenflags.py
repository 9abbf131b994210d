"""The old tokens' pre-tokens, read from their join flags, and marks put on them inside runs of
letters.

A token that starts no pre-token has JOIN_EDGE (or JOIN_INNER, in a long pre-token: see
`inner_edges`) set; JOIN_UNKNOWN, where a document opened from one encode has not yet found out
(tokenline.core.pretokenedges). Inside a run of lower-case ASCII letters no local pattern cuts
(every one's letters run on through it, as run_continues relies on), so the tokens that start in
such a run after its first letter continue one long pre-token: `mark_run` marks them so without
finding where the run starts, and `forget_marks` takes the marks back once an edit is done, since
no sure cut bounds them.
"""

from __future__ import annotations

from typing import Final

from librt.vecs import append, vec
from mypy_extensions import i64, u8

from tokenline.core.normalization import Normalization
from tokenline.core.pretokenfamily import PreTokenRules
from tokenline.core.segments import CACHED_SEGMENT_CHARS, SegmentCache
from tokenline.core.tokens import (
    JOIN_CHARACTER,
    JOIN_EDGE,
    JOIN_INNER,
    JOIN_UNKNOWN,
    TokenRun,
    TokenStore,
)
from tokenline.core.window import Neighborhood, Window

# Pre-tokens longer than this have window edges between their tokens (JOIN_INNER: Algorithm 3
# within the pre-token); shorter ones are re-encoded whole. Apart from the segment cache's limit:
# a whole pre-token's BPE costs by its bytes (quadratically), and an edit in a 40 to 64 character
# Japanese clause (about 190 bytes) cost twice one in a longer pre-token while this was 64. Text
# not all ASCII (3 bytes a character in CJK) has them from INNER_WIDE_CHARS on.
INNER_PRETOKEN_CHARS: Final = 16
INNER_WIDE_CHARS: Final = 8

# Characters beyond the longest token on each side of an edit inside a long run of letters whose
# tokens are marked (at least KNOW_AHEAD: see PreTokenEdges._learn_left).
RUN_KNOW: Final = 256


def inner_edges(pretoken: str) -> bool:
    """Whether the tokens of a pre-token after its first are JOIN_INNER (else JOIN_EDGE)."""
    n: i64 = len(pretoken)
    return n > INNER_PRETOKEN_CHARS or (n > INNER_WIDE_CHARS and not pretoken.isascii())


def mark_run(toks: TokenStore, lo: i64, hi: i64) -> tuple[i64, i64]:
    """Marks the tokens that start inside normalized (lo, hi), a stretch of a run of lower-case
    ASCII letters, as continuing a long pre-token; their first and last index."""
    k0: i64 = toks.at(lo) + 1  # starts after lo: a letter of the run lies before it
    k1: i64 = toks.at(hi - 1)
    ids, lens, joins, _ = toks.window(k0, k1 + 1)
    marks = vec[u8](capacity=len(joins))
    for _j in joins:
        marks = append(marks, u8(JOIN_INNER))
    toks.replace(k0, k1 + 1, ids, lens, marks)
    return k0, k1


def forget_marks(toks: TokenStore, k0: i64, k1: i64) -> None:
    """Tokens [k0, k1) no longer know whether they start a pre-token (as opening left them)."""
    ids, lens, joins, _ = toks.window(k0, k1)
    marks = vec[u8](capacity=len(joins))
    for j in joins:
        marks = append(marks, u8(JOIN_UNKNOWN | JOIN_EDGE | (j & JOIN_CHARACTER)))
    toks.replace(k0, k1, ids, lens, marks)


def continue_first(joins: vec[u8]) -> None:
    """Flags of tokens whose first pre-token continues a long one: its tokens are inner."""
    i: i64 = 0
    while i < len(joins) and (i == 0 or (joins[i] & (JOIN_EDGE | JOIN_INNER)) != 0):
        if (joins[i] & JOIN_CHARACTER) == 0:
            joins[i] = u8(JOIN_INNER)
        i += 1


def in_pretoken(near: Neighborhood, k: i64) -> bool:
    return (near.flag(k) & (JOIN_EDGE | JOIN_INNER)) != 0


def in_known_pretoken(near: Neighborhood, k: i64) -> bool:
    """Old token k continues a pre-token (starts none), and that is known."""
    j: i64 = near.flag(k)
    return (j & (JOIN_EDGE | JOIN_INNER)) != 0 and (j & JOIN_UNKNOWN) == 0


def one_pretoken(near: Neighborhood, k0: i64, k1: i64) -> bool:
    """Old tokens k0 + 1 .. k1 all continue the pre-token of token k0."""
    k: i64 = k0 + 1
    while k <= k1:
        if not in_known_pretoken(near, k):
            return False
        k += 1
    return True


def pretoken_span(near: Neighborhood, k0: i64, k1: i64, enough: i64) -> i64:
    """Characters of the pre-token holding old tokens k0..k1 (one pre-token), counted outward
    from them until there are more than `enough` or the pre-token ends."""
    n: i64 = near.toks.size()
    lo: i64 = k0
    while lo > 0 and in_known_pretoken(near, lo) and near.start(k1 + 1) - near.start(lo) <= enough:
        lo -= 1
    hi: i64 = k1 + 1
    while hi < n and in_known_pretoken(near, hi) and near.start(hi) - near.start(lo) <= enough:
        hi += 1
    return near.start(hi) - near.start(lo)


def pretoken_start(near: Neighborhood, k: i64) -> i64:
    """The first token of the pre-token that holds old token k."""
    while k > 0 and in_pretoken(near, k):
        k -= 1
    return k


def next_pretoken(near: Neighborhood, k: i64) -> i64:
    """The first token of the next pre-token after old token k's (size() at the end)."""
    n: i64 = near.toks.size()
    k += 1
    while k < n and in_pretoken(near, k):
        k += 1
    return k


def keeps_run(
    fam: PreTokenRules, norm: Normalization, near: Neighborhood, ns: i64, ne_old: i64, ne_new: i64
) -> bool:
    """Whether the edit lies inside one long letter pre-token (from `read_past` characters
    before it to the character after it) that stays one, as long as any token could be, so
    windows inside it need not scan it for its start and end."""
    total: i64 = norm.length()
    if fam.run_class == 0 or ns < fam.read_past or ne_new >= total:
        return False
    toks = near.toks
    k0: i64 = toks.at(ns - fam.read_past)
    k1: i64 = toks.at(ne_old)
    inner: bool = False
    k: i64 = k0 + 1
    while k <= k1:
        if not in_known_pretoken(near, k):
            return False
        inner = inner or (near.flag(k) & JOIN_INNER) != 0
        k += 1
    if not inner:
        return False
    # Asked before the pre-token's length, which walks its tokens (most Japanese edits fail
    # here: a kanji may sit in the upper-case part of o200k's pattern).
    text = norm.slice(ns - 1, ne_new + 1)
    if not fam.run_continues(text[:1], text[1:-1], text[-1:]):
        return False
    # Long enough that the library cannot take the new pre-token as one token.
    enough: i64 = fam.longest_token + max(0, ne_old - ne_new)
    span: i64 = pretoken_span(near, k0, k1, enough) + ne_new - ne_old
    return span > fam.longest_token


def kept_right(near: Neighborhood, w: Window, wr: i64, lo: i64) -> i64:
    """The first token of the pre-token holding old token wr, when it starts at or after the
    edit's old end (and after old token lo): the window may end there if the new text still cuts
    there, old tokens [it, wr) kept (the text after a cut is the old one, so its scan and
    pre-tokens are). -1 otherwise."""
    floor: i64 = max(lo, w.kr - 1)  # tokens from w.kr on start at or after the edit's end
    k: i64 = wr
    while k > floor and in_pretoken(near, k):
        k -= 1
    if k <= floor or near.flag(k) != 0 or near.start(k) < w.ne_old:
        return -1
    return k


def short_now(
    w: Window, near: Neighborhood, wl: i64, wr: i64, span: i64, left: bool, right: bool
) -> None:
    """A window whose edges inside a long pre-token failed, over `span` new characters from its
    start to its end: a pre-token the edit made short (INNER_WIDE_CHARS or fewer) has no edges
    inside it (its tokens all continue its first), so the next try reaches its cuts at once
    instead of doubling its way there a try at a time."""
    if span > INNER_WIDE_CHARS:
        return
    if left:
        w.reach_l = pretoken_start(near, wl)
    if right:
        w.reach_r = next_pretoken(near, wr)


def seed_known(
    cache: SegmentCache, near: Neighborhood, k: i64, wr: i64, keep: KeptText, text: str
) -> None:
    """Puts the old tokens of each whole pre-token among old tokens [k, wr) that the edit left
    alone (`keep`) into the segment cache, under its text: a window re-encodes its pre-tokens,
    and those the library would otherwise encode again (a document that opened from one encode
    caches none) are the same text, so the same tokens. Only pre-tokens whose start and end are
    known cuts, none of whose tokens is unknown, whose flags are the ones a pre-token of their
    length gets when it is encoded (so a cached run reads the same whoever put it there), and
    short enough to cache."""
    n: i64 = near.toks.size()
    if len(near.joins) == 0:
        return
    while k < wr:
        if near.flag(k) != 0:
            k += 1  # not a known pre-token start
            continue
        e: i64 = k + 1
        inner: i64 = 0  # tokens after the first with JOIN_INNER; those without, not in a character
        plain: i64 = 0
        unknown: bool = False
        while e < wr and near.flag(e) != 0:
            f: i64 = near.flag(e)
            unknown = unknown or (f & JOIN_UNKNOWN) != 0
            if (f & JOIN_INNER) != 0:
                inner += 1
            elif (f & JOIN_CHARACTER) == 0:
                plain += 1
            e += 1
        if not unknown and (e == n or near.flag(e) == 0):
            keep.put(cache, near, k, e, text, inner, plain)
        k = e


class KeptText:
    """Where the text an edit left alone lies in a window's new text: old offsets before `ns`
    and from `ne_old` on (the latter moved by `delta`), the window's text starting at `base`."""

    ns: i64
    ne_old: i64
    delta: i64
    base: i64

    def __init__(self, ns: i64, ne_old: i64, delta: i64, base: i64) -> None:
        self.ns = ns
        self.ne_old = ne_old
        self.delta = delta
        self.base = base

    def put(
        self,
        cache: SegmentCache,
        near: Neighborhood,
        k: i64,
        e: i64,
        text: str,
        inner: i64,
        plain: i64,
    ) -> None:
        """Caches old tokens [k, e), one pre-token, if the edit left its text alone and their
        flags are those its length gives (`inner` of them after the first are JOIN_INNER,
        `plain` neither that nor a character's continuation)."""
        lo: i64 = near.start(k)
        hi: i64 = near.start(e)
        length: i64 = hi - lo
        if length > CACHED_SEGMENT_CHARS:
            return
        if hi <= self.ns:
            lo -= self.base
        elif lo >= self.ne_old:
            lo += self.delta - self.base
        else:
            return
        hi = lo + length
        if lo < 0 or hi > len(text):
            return
        key = text[lo:hi]
        if (plain if inner_edges(key) else inner) != 0 or cache.holds(key):
            return  # most are, once a few edits went by: copy no tokens
        i: i64 = k - near.k0
        j: i64 = e - near.k0
        cache.put(key, TokenRun(near.ids[i:j], near.lens[i:j], near.joins[i:j]))
