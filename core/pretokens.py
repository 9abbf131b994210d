"""Regex pre-tokenizers: where a pattern cuts text, and how far past a cut it reads.

Byte-level BPE tokenizers (tiktoken's encodings, Tekken, GPT-2 style tokenizer.json files) cut the
text with a regex and encode each pre-token alone, so its tokens depend only on its text. The
scan from a cut depends only on the text after it, but whether a place is a cut depends on what
the scan read past it: for the patterns below, the white space that follows it and at most three
more characters (a contraction such as 're after a word, or the character after a run of white
space). `reach_after` bounds that, so an old cut is proven to survive an edit that lies further
on. Patterns outside this list are not known to read so little: they re-encode whole.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Final

import regex  # type: ignore[import-untyped,unused-ignore]
from mypy_extensions import i64

from tokenline.core.segments import Segmenter

_LETTER: Final = regex.compile(r"\p{L}")
# A letter, then a character that is neither a letter, a mark, nor an apostrophe (see sync_in),
# and the same pair in reversed text; the first window searched backwards for one. Letters: ASCII,
# kana, CJK ideographs (to U+9FD5, Unicode 8) and Hangul syllables, letters to every engine's
# tables; the others: ASCII, and the CJK and full-width punctuation Japanese and Chinese use.
_SYNC_LETTERS: Final = r"A-Za-z\u3041-\u3096\u30a1-\u30fa\u4e00-\u9fd5\uac00-\ud7a3"
_SYNC_OTHERS: Final = (
    r"\x00-\x26\x28-\x40\x5b-\x60\x7b-\x7f\u3001\u3002\u300c-\u3011"
    r"\uff01\uff08\uff09\uff0c\uff0e\uff1a\uff1b\uff1f"
)
_LETTER_CUT: Final = re.compile(f"[{_SYNC_LETTERS}][{_SYNC_OTHERS}]")
_LETTER_CUT_REVERSED: Final = re.compile(f"[{_SYNC_OTHERS}][{_SYNC_LETTERS}]")
# The same pairs, and a line break before such a letter, in one scan of `re` (near_sync).
_NEAR_CUT: Final = re.compile(f"[{_SYNC_LETTERS}][{_SYNC_OTHERS}]|\n[{_SYNC_LETTERS}]")
_NEAR_CUT_REVERSED: Final = re.compile(f"[{_SYNC_OTHERS}][{_SYNC_LETTERS}]|[{_SYNC_LETTERS}]\n")
SYNC_WINDOW: Final = 256
# Characters a match may read past its end besides a run of white space.
READ_PAST: Final = 4

GPT2: Final = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
# r50k_base and p50k_base as tiktoken 0.8 and later write GPT2 (possessive, like CL100K).
R50K: Final = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
GPT2_HF: Final = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
CL100K: Final = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
# cl100k_base before tiktoken 0.8, and Llama 3's pre-tokenizer.
CL100K_OLD: Final = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"""
    r"""| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
QWEN2: Final = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
_UPPER: Final = r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"
_LOWER: Final = r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"
_CONTRACTION: Final = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
O200K: Final = "|".join(
    [
        rf"[^\r\n\p{{L}}\p{{N}}]?{_UPPER}*{_LOWER}+{_CONTRACTION}",
        rf"[^\r\n\p{{L}}\p{{N}}]?{_UPPER}+{_LOWER}*{_CONTRACTION}",
        r"\p{N}{1,3}",
        r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
        r"\s*[\r\n]+",
        r"\s+(?!\S)",
        r"\s+",
    ]
)
TEKKEN: Final = "|".join(
    [
        rf"[^\r\n\p{{L}}\p{{N}}]?{_UPPER}*{_LOWER}+",
        rf"[^\r\n\p{{L}}\p{{N}}]?{_UPPER}+{_LOWER}*",
        r"\p{N}",
        r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
        r"\s*[\r\n]+",
        r"\s+(?!\S)",
        r"\s+",
    ]
)
LOCAL_PATTERNS: Final = frozenset({GPT2, R50K, GPT2_HF, CL100K, CL100K_OLD, QWEN2, O200K, TEKKEN})
# How a long pre-token of letters runs on (for edits inside one that keep it one): LETTERS,
# a run of \p{L} (after at most one prefix character); CASED, o200k's upper-case part then a
# lower-case part, a letter of category Ll being in the lower part.
NO_RUNS: Final = 0
LETTERS: Final = 1
CASED: Final = 2
_LETTERS_RX: Final = regex.compile(r"\p{L}*")
_LOWER_RX: Final = regex.compile(r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]*")
_LL_RX: Final = regex.compile(r"\p{Ll}")
# What a letter pre-token's loop surely runs on through (run_chars): LETTERS' \p{L}, CASED's Ll
# (its lower-case part; the upper-case part takes none of them).
_LETTER_RUN_RX: Final = regex.compile(r"\p{L}+")
_LL_RUN_RX: Final = regex.compile(r"\p{Ll}+")


def run_class(pattern: str) -> i64:
    if pattern in (O200K, TEKKEN):
        return CASED
    if pattern in LOCAL_PATTERNS:
        return LETTERS
    return NO_RUNS


def run_continues(run_class: i64, before: str, new: str, after: str) -> bool:
    """Whether a letter pre-token holding `before` and `after` (the characters either side of an
    edit, inside it) stays one pre-token with `new` between them: the run the pattern matches goes
    on through the new characters to where it ended."""
    if run_class == LETTERS:
        rx = _LETTERS_RX
        first_ok: bool = rx.fullmatch(before) is not None
    elif run_class == CASED:
        rx = _LOWER_RX
        first_ok = _LL_RX.fullmatch(before) is not None
    else:
        return False
    return (
        len(before) == 1
        and len(after) == 1
        and first_ok
        and rx.fullmatch(new) is not None
        and rx.fullmatch(after) is not None
    )


def run_chars(run_class: i64, text: str) -> bool:
    """Whether every character of text is one a letter pre-token's loop goes on through, whatever
    follows: any letter for LETTERS, a lower-case one (Ll) for CASED (tokenline.core.runcuts)."""
    if run_class == LETTERS:
        return _LETTER_RUN_RX.fullmatch(text) is not None
    if run_class == CASED:
        return _LL_RUN_RX.fullmatch(text) is not None
    return False


# Characters on either side of a character newer than Python's Unicode tables whose pre-tokens
# are not trusted (see newer_characters): the engines disagree only on those next to it.
NEWER_MARGIN: Final = 64
# A dict, not a set: the garbage collector never walks a dict of strings (CPython does not track
# it), and walked a set of these 28,000 characters in whatever edit met the first collection.
_NEWER: list[dict[str, bool]] = []
_SUSPECTS: list[Any] = []


def newer_characters() -> dict[str, bool]:
    """The characters Python's `regex` knows but Python's own Unicode tables do not (Unicode
    15 and later): tiktoken's regex engine may be on an older Unicode and cut around them
    otherwise (U+18D80, new in 17.0, is a letter to `regex` and unassigned to tiktoken 0.14).
    Pieces near them are left to the reference library. Built once per process."""
    if not _NEWER:
        every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
        found: list[str] = regex.findall(r"\P{Cn}", every)
        newer = dict.fromkeys((c for c in found if unicodedata.category(c) == "Cn"), True)
        _NEWER.append(newer)
        _SUSPECTS.append(re.compile(_suspects_class(newer)))
    return _NEWER[0]


def _suspects_class(newer: dict[str, bool]) -> str:
    """A class of `re` that holds every character of `newer` and few others: the newer ones in
    the Basic Multilingual Plane, each (`re` looks one up in a table: a class of what `re` calls
    word characters and white space cost twice as much on CJK text, 1.6 µs of 160 characters),
    and every character beyond it (emoji and rarer scripts), looked up one by one."""
    bmp = "".join(re.escape(c) for c in sorted(newer) if ord(c) < 0x10000)
    return f"[{bmp}\U00010000-\U0010ffff]"


def holds_newer(newer: dict[str, bool], text: str) -> bool:
    """Whether text holds one of `newer` (newer_characters(), or empty). A scan in `re` finds
    the few characters that could be one (none in ASCII text, known in O(1), nor in most prose);
    only those are looked up."""
    if not newer or text.isascii():
        return False
    suspects: list[str] = _SUSPECTS[0].findall(text)
    return any(c in newer for c in suspects)


def reads_little(pattern: str) -> bool:
    """Whether the pattern is one whose reads past a cut `reach_after` bounds."""
    return pattern in LOCAL_PATTERNS


def reach_after(text: str, before: str = "") -> i64:
    """How many characters past a cut followed by `text` the scan may have read to decide it:
    its run of white space, or of upper- and title-case letters after `before` (the character
    before the cut; "" when not known), and READ_PAST more; more than len(text) when the run
    fills text. The run of capitals: in o200k's and Tekken's patterns a pre-token ending in a
    letter of both its classes (kanji, hangul, a mark: `[...\\p{Lo}...]*` then
    `[...\\p{Lo}...]+`; none is ASCII) stops before capitals only because no lower-case letter
    follows them (`문장SELECT id` cuts before `S`, `문장SELEThe` does not)."""
    n: i64 = len(text)
    i: i64 = 0
    while i < n and text[i].isspace():
        i += 1
    if i == 0 and (before == "" or not before.isascii()):
        while i < n and (text[i].isupper() or text[i].istitle()):
            i += 1
    if i >= n:
        return n + 1
    return i + READ_PAST


def sync_in(text: str, last: bool) -> i64:
    """The last (or first) offset i > 0 in text that is a cut whatever precedes it, for every
    pattern above: after a line break before a letter (no pre-token holds both), or after a
    letter before a character that is neither a letter, a mark nor an apostrophe (no pattern's
    run of letters takes it, and contractions start with an apostrophe): ASCII ones, and kana,
    kanji, hangul and CJK punctuation (Japanese has no spaces: its pre-tokens run to the
    punctuation, and a line break may be a paragraph away). -1: none."""
    at_break: i64 = _break_sync(text, last)
    at_letter: i64 = _letter_sync(text, last)
    if at_break < 0 or at_letter < 0:
        return max(at_break, at_letter)
    return max(at_break, at_letter) if last else min(at_break, at_letter)


def near_sync(text: str, last: bool) -> i64:
    """Places sync_in finds, in a short text, one scan of `re` (sync_in's line breaks before
    any letter of `regex`'s tables take two scans, one in `regex`: 0.9 µs of 64 characters):
    only a line break before a letter of the ranges _LETTER_CUT trusts counts. -1: none."""
    if not last:
        m = _NEAR_CUT.search(text)
        return -1 if m is None else m.start() + 1
    r = _NEAR_CUT_REVERSED.search(text[::-1])
    return -1 if r is None else len(text) - 1 - r.start()


def _break_sync(text: str, last: bool) -> i64:
    i: i64 = text.rfind("\n") if last else text.find("\n")
    while i >= 0:
        if i + 1 < len(text) and _LETTER.match(text, i + 1) is not None:
            return i + 1
        i = text.rfind("\n", 0, i) if last else text.find("\n", i + 1)
    return -1


def _letter_sync(text: str, last: bool) -> i64:
    """Where a letter meets a character that no letter run takes (_LETTER_CUT). Searched
    backwards in growing windows of the reversed text, so that prose finds one near its end at
    once and a long line without one costs a few fast scans (the regex module's scan is slow)."""
    if not last:
        m = _LETTER_CUT.search(text)
        return -1 if m is None else m.start() + 1
    n: i64 = len(text)
    width: i64 = SYNC_WINDOW
    hi: i64 = n
    while hi > 1:
        lo: i64 = max(0, hi - width)
        r = _LETTER_CUT_REVERSED.search(text[lo:hi][::-1])
        if r is not None:
            return hi - r.start() - 1
        if lo == 0:
            break
        hi = lo + 1  # the pair across the windows' meeting point is seen too
        width *= 2
    return -1


# What the patterns' classes hold of ASCII, for their twins in Python's `re` (ascii_twin):
# Unicode's White_Space (not str.isspace, which takes \x1c-\x1f too), letters, digits; the
# other letter and mark categories hold no ASCII character.
_ASCII_CLASSES: Final = {
    r"\s": r"\t\n\x0b\x0c\r ",
    r"\p{L}": "A-Za-z",
    r"\p{Lu}": "A-Z",
    r"\p{Ll}": "a-z",
    r"\p{N}": "0-9",
    r"\p{Lt}": "",
    r"\p{Lm}": "",
    r"\p{Lo}": "",
    r"\p{M}": "",
}
_CLASS_TOKEN: Final = re.compile(r"\\p\{\w+\}|\\[sS]|\\.|\[\^?|\]|.", re.S)


def ascii_twin(pattern: str) -> str:
    """`pattern` (one of LOCAL_PATTERNS) with its Unicode classes narrowed to ASCII, for Python's
    `re`: on ASCII text it cuts where the `regex` module does (tests/core/test_bytelevel.py
    compares them), at a fraction of the call's cost."""
    return _spelt_out(pattern, _ASCII_CLASSES)


def _spelt_out(pattern: str, classes: dict[str, str]) -> str:
    """`pattern` with each class token it uses (\\p{L}, \\s, ...) replaced by `classes`' characters
    for it (inside a bracket as they are, outside in one; \\S as the complement of \\s)."""
    out: list[str] = []
    inside: bool = False
    for m in _CLASS_TOKEN.finditer(pattern):
        tok = m.group()
        if tok in ("[", "[^"):
            inside = True
            out.append(tok)
        elif tok == "]" and inside:
            inside = False
            out.append(tok)
        elif tok == r"\S":
            out.append("[^" + classes[r"\s"] + "]")
        elif tok in classes:
            chars = classes[tok]
            out.append(chars if inside else "[" + chars + "]")
        else:
            out.append(tok)
    return "".join(out)


def _ascii_rx(pattern: str) -> Any:
    """The compiled ASCII twin of a local pattern; None for other patterns, and where Python's
    `re` lacks what the twin uses (possessive quantifiers, before Python 3.11)."""
    if pattern not in LOCAL_PATTERNS:
        return None
    try:
        return re.compile(ascii_twin(pattern))
    except re.error:
        return None


# The Basic Multilingual Plane in two strings either side of the surrogates, and each class's part
# of it in `regex`'s tables (for bmp_twin), built when first asked for.
_BMP: list[str] = []
_BMP_CLASSES: dict[str, str] = {}
# Compiled BMP twins by pattern (None: the pattern has none).
_BMP_TWINS: dict[str, Any] = {}


def _bmp_class(token: str) -> str:
    """The characters of the BMP that a class (\\p{L}, \\s, ...) holds to `regex`, as ranges
    of a class of `re` (found as the runs of the class in the BMP's code points, in order)."""
    found = _BMP_CLASSES.get(token)
    if found is not None:
        return found
    if not _BMP:
        _BMP.append("".join(chr(c) for c in range(0xD800)))
        _BMP.append("".join(chr(c) for c in range(0xE000, 0x10000)))
    parts: list[str] = []
    base: i64 = 0
    for plane in _BMP:
        for m in regex.finditer(token + "+", plane):
            parts.append(re.escape(chr(base + m.start())))
            if m.end() - m.start() > 1:
                parts.append("-" + re.escape(chr(base + m.end() - 1)))
        base = 0xE000
    found = "".join(parts)
    _BMP_CLASSES[token] = found
    return found


def bmp_twin(pattern: str) -> str:
    """`pattern` (one of LOCAL_PATTERNS) with its Unicode classes spelt out as the characters of
    the BMP that `regex` puts in them, for Python's `re`: on text without characters beyond the
    BMP it cuts where the `regex` module does (tests/core/test_pretoken_twins.py compares them
    on every character), at a fifth of the cost on CJK text (`re` looks a class up in a table)."""
    used = {
        tok: _bmp_class(tok)
        for tok in _ASCII_CLASSES
        if tok in pattern or (tok == r"\s" and r"\S" in pattern)
    }
    return _spelt_out(pattern, used)


def bmp_rx(pattern: str) -> Any:
    """The compiled BMP twin of a local pattern (built once per process); None as _ascii_rx."""
    if pattern in _BMP_TWINS:
        return _BMP_TWINS[pattern]
    found: Any = None
    if pattern in LOCAL_PATTERNS:
        try:
            found = re.compile(bmp_twin(pattern))
        except re.error:
            found = None
    _BMP_TWINS[pattern] = found
    return found


def in_bmp(text: str) -> bool:
    """Whether every character of text lies in the BMP (one UTF-16 unit each)."""
    return len(text.encode("utf-16-le", "surrogatepass")) == 2 * len(text)


class PreTokenSegmenter(Segmenter):
    """Cuts text into a regex pre-tokenizer's pre-tokens."""

    pattern: str
    rx: Any
    # The pattern's twins in Python's `re` for ASCII text and for text within the BMP (None: the
    # pattern has none).
    ascii_rx: Any
    bmp_rx: Any

    def __init__(self, pattern: str, bmp: bool = True) -> None:
        self.pattern = pattern
        self.rx = regex.compile(pattern)
        self.ascii_rx = _ascii_rx(pattern)
        # Built here, once per process and pattern (tens of ms), not in an edit.
        self.bmp_rx = bmp_rx(pattern) if bmp else None

    def split(self, text: str) -> list[str]:
        # The `regex` module's call costs several µs more than `re`'s, most of a short window,
        # and its class tests are slow on CJK text.
        if self.ascii_rx is not None and text.isascii():
            found: list[str] = self.ascii_rx.findall(text)
            return found
        if self.bmp_rx is not None and in_bmp(text):
            found = self.bmp_rx.findall(text)
            return found
        found = self.rx.findall(text)
        return found

    def take(self, block: str, final: bool) -> list[str]:
        found = self.split(block)
        if final:
            return found
        return found[: _safe_prefix(found, block)]


def _safe_prefix(pretokens: list[str], block: str) -> i64:
    """How many leading pre-tokens end at a cut that no text after block can move."""
    n: i64 = len(block)
    keep: i64 = len(pretokens)
    end: i64 = n
    while keep > 1:
        keep -= 1
        end -= len(pretokens[keep])
        if end + reach_after(block[end : end + 64], block[end - 1 : end]) <= n:
            return keep
    return 0
