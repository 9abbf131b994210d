"""What a Llama 2 style tokenizer.json makes of a text before its BPE: added tokens found, and
markers inserted.

The library cuts the original text at its added tokens, normalizes each stretch between them
alone, and pre-tokenizes each piece left: a `Prepend("▁")` normalizer puts a marker before every
stretch that is not empty, `Replace(" ", "▁")` or Metaspace turns spaces into the marker, and
Metaspace (split false) puts one before a piece that does not start with it ("always"), or only
before the piece at the text's start ("first"). Added tokens keep their text as written. A
text's `Layout` is where its added matches lie and which characters get a marker before them
(original offsets); tokenline.core.prefixnorm keeps a document's in step.
"""

from __future__ import annotations

from typing import Final

from librt.vecs import append, vec
from mypy_extensions import i64

from tokenline.core.addedmatch import FIRST, SECOND, AddedTokens, Matches

# Metaspace's prepend scheme (NO_METASPACE: the file has no Metaspace pre-tokenizer).
NO_METASPACE: Final = 0
NEVER: Final = 1
FIRST_ONLY: Final = 2
ALWAYS: Final = 3
# What ends right before a place where finding added tokens starts again.
AT_START: Final = 0  # the text's start
AFTER_FIRST: Final = 1  # a match of the first pass: a stretch starts
AFTER_SECOND: Final = 2  # a match of the second pass: a piece starts
INSIDE: Final = 3  # nothing: the place is inside a piece


class StretchRules:
    """How the library normalizes each stretch between added tokens, and its added tokens."""

    marker: str
    prepend: bool  # a Prepend normalizer
    replace: bool  # the normalizer replaces spaces (second-pass contents are escaped)
    scheme: i64  # Metaspace's prepend scheme
    added: AddedTokens

    def __init__(
        self, marker: str, prepend: bool, replace: bool, scheme: i64, added: AddedTokens
    ) -> None:
        self.marker = marker
        self.prepend = prepend
        self.replace = replace
        self.scheme = scheme
        self.added = added

    def head(self, first: str) -> str:
        """The marker a text that starts with character `first` gets in front, alone."""
        if self.prepend:
            return self.marker
        if self.scheme in (FIRST_ONLY, ALWAYS) and first != " " and first != self.marker:
            return self.marker
        return ""


class Layout:
    """Added matches (original offsets, white space they strip included) and the original
    offsets a marker is inserted before, of a stretch of text or of all of it."""

    matches: Matches
    inserts: vec[i64]

    def __init__(self) -> None:
        self.matches = Matches()
        self.inserts = vec[i64]()


def scan_layout(rules: StretchRules, text: str, base: i64, at: i64, out: Layout) -> None:
    """The layout of original text (which starts at offset `base`, after what `at` says):
    first-pass matches in it, then each stretch between them normalized and searched by the
    second pass, with the markers the rules insert."""
    added = rules.added
    firsts = Matches()
    added.first.find(text, 0, len(text), firsts)
    pos: i64 = 0
    kind: i64 = at
    k: i64 = 0
    while k < firsts.size():
        scan_stretch(rules, text, base, pos, firsts.starts[k], kind, out)
        out.matches.add(base + firsts.starts[k], base + firsts.ends[k], i64(firsts.ids[k]), FIRST)
        pos = firsts.ends[k]
        kind = AFTER_FIRST
        k += 1
    scan_stretch(rules, text, base, pos, len(text), kind, out)


def scan_stretch(
    rules: StretchRules, text: str, base: i64, g0: i64, g1: i64, kind: i64, out: Layout
) -> None:
    """A stretch text[g0:g1] (or the part of one from g0): the normalizer's marker in front when
    it starts there, second-pass matches in what the normalizer makes of it, and the markers
    Metaspace puts before the pieces between those."""
    if g0 >= g1:
        return
    m = rules.marker
    body = text[g0:g1]
    norm = body.replace(" ", m) if rules.replace else body
    pre: i64 = 0
    if rules.prepend and kind in (AT_START, AFTER_FIRST):
        pre = 1
        norm = m + norm
        out.inserts = append(out.inserts, base + g0)
    origin: i64 = base + g0 - pre  # original offset of norm[i] is origin + i (i >= pre)
    seconds = Matches()
    rules.added.second.find(norm, 0, len(norm), seconds)
    # Whether norm[0] starts a piece (else the stretch began before the text scanned).
    starts: bool = kind != INSIDE
    pos: i64 = 0
    k: i64 = 0
    while k < seconds.size():
        s: i64 = seconds.starts[k]
        meta_marker(rules, norm, pos, s, origin, starts, out)
        end: i64 = origin + seconds.ends[k]
        out.matches.add(max(origin + s, base + g0), end, i64(seconds.ids[k]), SECOND)
        pos = seconds.ends[k]
        starts = True
        k += 1
    meta_marker(rules, norm, pos, len(norm), origin, starts, out)


def meta_marker(
    rules: StretchRules, norm: str, u0: i64, u1: i64, origin: i64, starts: bool, out: Layout
) -> None:
    """Metaspace's marker before the piece norm[u0:u1] (which starts a piece if `starts`), if
    it gets one."""
    if not starts or u0 >= u1 or rules.scheme == NO_METASPACE or rules.scheme == NEVER:
        return
    c = norm[u0]
    if c == " " or c == rules.marker:
        return
    if rules.scheme == ALWAYS or origin + u0 == 0:
        out.inserts = append(out.inserts, origin + u0)


def keep_before(layout: Layout, sync: i64, out: Layout) -> None:
    """What of a layout lies before sync (matches starting before it, markers up to it)."""
    ms = layout.matches
    copy_matches(ms, 0, lower(ms.starts, sync), 0, out.matches)
    for x in layout.inserts:
        if x <= sync:
            out.inserts = append(out.inserts, x)


def splice(v: vec[i64], i0: i64, i1: i64, new: vec[i64], delta: i64) -> vec[i64]:
    """v with [i0, i1) replaced by new and what follows shifted by delta (in place when new is
    as long as what it replaces)."""
    n: i64 = len(v)
    if len(new) == i1 - i0:
        k: i64 = 0
        while k < len(new):
            v[i0 + k] = new[k]
            k += 1
        if delta != 0:
            k = i1
            while k < n:
                v[k] = v[k] + delta
                k += 1
        return v
    out = vec[i64](capacity=n - (i1 - i0) + len(new))
    k = 0
    while k < i0:
        out = append(out, v[k])
        k += 1
    for x in new:
        out = append(out, x)
    k = i1
    while k < n:
        out = append(out, v[k] + delta)
        k += 1
    return out


def copy_matches(ms: Matches, k0: i64, k1: i64, delta: i64, out: Matches) -> None:
    k: i64 = k0
    while k < k1:
        out.add(ms.starts[k] + delta, ms.ends[k] + delta, i64(ms.ids[k]), i64(ms.passes[k]))
        k += 1


def first_changed_match(ms: Matches, restart: i64, limit: i64, start: i64, found: Matches) -> i64:
    """The start of the first match before `limit` (from restart) that `found` does not have as
    ms has it, or that reaches an edit at `start`; limit if none."""
    k: i64 = lower(ms.starts, restart)
    m: i64 = 0
    while True:
        old: bool = k < ms.size() and ms.starts[k] < limit
        new: bool = m < found.size() and found.starts[m] < limit
        if not old and not new:
            return limit
        if not old:
            return found.starts[m]
        if not new:
            return ms.starts[k]
        if not same_match(ms, k, found, m) or ms.ends[k] > start:
            return min(ms.starts[k], found.starts[m])
        k += 1
        m += 1


def same_match(ms: Matches, k: i64, other: Matches, m: i64) -> bool:
    return (
        ms.starts[k] == other.starts[m]
        and ms.ends[k] == other.ends[m]
        and ms.ids[k] == other.ids[m]
        and ms.passes[k] == other.passes[m]
    )


def lower(v: vec[i64], x: i64) -> i64:
    """How many of the sorted v are below x."""
    lo: i64 = 0
    hi: i64 = len(v)
    while lo < hi:
        mid: i64 = (lo + hi) // 2
        if v[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def match_before(ms: Matches, x: i64) -> i64:
    """The last match that starts before x, or -1."""
    return lower(ms.starts, x) - 1
