"""Places inside a long letter pre-token from which a scan of the new text cuts as the whole
text's scan does, so a window that splits a run of letters, or joins two, reads only near the edit.

Inside a long letter pre-token the pattern's match is in its loop of letters (`\\p{L}+`, or the
lower-case part of o200k's and Tekken's): at a place p whose character and the one before it are
letters that loop goes on through whatever follows (pretokens.run_chars), and it got there the same
way in the old and the new text when all before p is the old text. A scan started at p (its first
match the loop's tail: no prefix or upper-case part takes a lower-case letter) cuts after p where
the whole text's scan does, as far as what it read. The same at a place q after the edit, inside
the old long pre-token and inside the last pre-token of the scan from p (no shorter than
RUN_FAR, so not a contraction): both texts' matches are in the loop there, and from there on the
texts are equal, so their cuts are. The window then encodes [p, q)'s pre-tokens, the first and
last as parts of pre-tokens longer than any token (Algorithm 3's edges inside them), instead of
scanning to the run's ends (a space typed into a 1 MB run scanned 2 to 3 million characters).
"""

from __future__ import annotations

from typing import Final

from mypy_extensions import i64

from tokenline.core.normalization import Normalization
from tokenline.core.pretokenfamily import PreTokenRules
from tokenline.core.pretokenflags import INNER_PRETOKEN_CHARS, in_known_pretoken
from tokenline.core.window import NO_EDIT, Neighborhood, Window

# Characters of the old pre-token kept before a place (the scan before the pre-token's start reads
# no further than its white space and READ_PAST), and a scan's last pre-token at least (longer
# than any contraction, and than what the scan before it reads past its start).
RUN_FAR: Final = 8
# Characters of the old pre-token after a place (it is not in a contraction ending the match).
RUN_AFTER: Final = 4
# Places tried for one whose two characters are letters of the loop.
RUN_SEARCH: Final = 8


def run_start(
    fam: PreTokenRules, norm: Normalization, near: Neighborhood, w: Window, wl: i64, a: i64
) -> i64:
    """A place p <= a, before the edit and inside the long pre-token holding old token wl (which
    continues it), from which the new text's scan cuts as the whole text's does after p, its
    first pre-token continuing one longer than any token; -1 when none is proven (the
    pre-token's start is near: the window reads from there)."""
    if fam.run_class == 0 or w.ns == NO_EDIT:
        return -1
    top: i64 = min(a - RUN_AFTER, w.ns - 1 - fam.run_margin)
    low: i64 = top - RUN_SEARCH
    floor: i64 = min(low - RUN_FAR, a - max(fam.longest_token, INNER_PRETOKEN_CHARS) - 1)
    if floor <= 0:
        return -1
    # Old tokens from the one holding floor up to wl are one pre-token.
    k: i64 = wl
    while near.start(k) > floor:
        if not in_known_pretoken(near, k):
            return -1
        k -= 1
    chars = norm.slice(low - 1, top + 1)
    p: i64 = top
    while p >= low:
        if fam.in_run(chars[p - low : p - low + 2]):
            return p
        p -= 1
    return -1


def run_end(
    fam: PreTokenRules, norm: Normalization, near: Neighborhood, w: Window, wr: i64, b: i64
) -> i64:
    """A place q >= b (new offsets), after the edit and inside the long pre-token holding old
    token wr (which continues it), where the new text's scan is in the loop of a pre-token that
    started before b and the old text's in the old pre-token's: up to q, a scan from a place
    run_start proves cuts as the whole text's does, and the pre-token it ends in goes on as the
    old one did, longer than any token; -1 when none is proven."""
    if fam.run_class == 0 or w.ns == NO_EDIT:
        return -1
    n: i64 = near.toks.size()
    low: i64 = max(b + RUN_FAR, w.ne_old + w.delta + 1 + fam.run_margin)
    top: i64 = low + RUN_SEARCH
    # Old tokens after wr up to the one holding `reach` (old offsets) continue its pre-token.
    reach: i64 = max(top + RUN_AFTER, b + max(fam.longest_token, INNER_PRETOKEN_CHARS) + 1)
    reach -= w.delta
    k: i64 = wr + 1
    while k < n and near.start(k) <= reach:
        if not in_known_pretoken(near, k):
            return -1
        k += 1
    if k >= n:
        return -1
    chars = norm.slice(low - 1, top + 1)
    q: i64 = low
    while q <= top:
        if fam.in_run(chars[q - low : q - low + 2]):
            return q
        q += 1
    return -1


def run_places(
    fam: PreTokenRules,
    norm: Normalization,
    near: Neighborhood,
    w: Window,
    wl: i64,
    wr: i64,
    a: i64,
    b: i64,
    inner_l: bool,
    inner_r: bool,
) -> tuple[i64, i64]:
    """Where a window [wl, wr) (normalized [a, b)) whose edges lie inside long pre-tokens
    (`inner_l`, `inner_r`) scans from and to when not from those pre-tokens' ends: run_start and
    run_end, -1 for an end. Neither where an added token matched as a segment lies near."""
    p: i64 = run_start(fam, norm, near, w, wl, a) if inner_l else -1
    q: i64 = run_end(fam, norm, near, w, wr, b) if inner_r else -1
    if p >= 0 or q >= 0:
        lo: i64 = p if p >= 0 else a
        hi: i64 = q if q >= 0 else b
        margin: i64 = fam.run_margin
        if not fam.added_free(norm.slice(max(0, lo - margin), min(norm.length(), hi + margin))):
            return -1, -1
    return p, q
