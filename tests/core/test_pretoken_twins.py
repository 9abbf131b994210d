"""The twins of the pre-token patterns in Python's `re`, which splits short windows faster: the
ASCII twins cut ASCII text, and the BMP twins text without characters beyond the BMP, exactly
where the `regex` module's patterns do: the engine takes a twin for every such window, so a
difference would be a wrong token."""

from __future__ import annotations

import re
import string
import sys

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenline.core.pretokens import (
    LOCAL_PATTERNS,
    PreTokenSegmenter,
    ascii_twin,
    bmp_rx,
    in_bmp,
)

PATTERNS = sorted(LOCAL_PATTERNS)
# Every ASCII character, weighted towards what the patterns tell apart: letters of both cases,
# digits, white space of every kind (\x1c-\x1f are str.isspace() but not Unicode White_Space),
# apostrophes (contractions), line breaks and slashes.
ALPHABET = "".join(chr(c) for c in range(128)) + "aAsStTdDmMlLvVrReE'' \n\r\t/0" * 3
ASCII_TEXT = st.text(alphabet=st.sampled_from(ALPHABET), max_size=40)


@pytest.mark.parametrize("pattern", PATTERNS)
@settings(max_examples=max(300, settings().max_examples))
@given(text=ASCII_TEXT)
def test_the_twin_cuts_ascii_text_where_the_pattern_does(pattern: str, text: str) -> None:
    twin = re.compile(ascii_twin(pattern))
    assert twin.findall(text) == regex.findall(pattern, text)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_twin_agrees_on_every_pair_and_contraction(pattern: str) -> None:
    """Exhaustively: every pair of ASCII characters, and each before a contraction and a run
    of white space."""
    twin = re.compile(ascii_twin(pattern))
    chars = [chr(c) for c in range(128)]
    texts = [a + b for a in chars for b in chars]
    texts += [a + tail for a in chars for tail in ("'s", "'LL", "'re ", "  x", " \n\n", "12345")]
    for text in texts:
        assert twin.findall(text) == regex.findall(pattern, text), repr(text)


def test_the_segmenter_splits_ascii_and_other_text_alike() -> None:
    """ASCII text goes to the twin, other text to the pattern: both give the pattern's cuts."""
    for pattern in PATTERNS:
        seg = PreTokenSegmenter(pattern)
        for text in ("Hello, World's 1234 end\n\n  x", "naïve café — 東京タワー 123", ""):
            assert seg.split(text) == regex.findall(pattern, text)
    if sys.version_info >= (3, 11):  # possessive quantifiers in `re`
        assert all(PreTokenSegmenter(p).ascii_rx is not None for p in PATTERNS)


def test_other_patterns_have_no_twin() -> None:
    assert PreTokenSegmenter(r"\p{L}+|" + string.digits).ascii_rx is None


# Characters the BMP twins' classes tell apart: letters of every case category, marks, digits and
# other numbers, Unicode white space, punctuation and symbols, and the characters case-insensitive
# contractions fold ('ſ' is an 's', 'K' a Kelvin sign).
BMP_SAMPLES = (
    "aZ'sStTlLvVrReEdDmM ſK\u0130\u0131ǅᾈʰ々ー日本語カタカナひらがな中文한국어\u0301\u093f"
    "0٣૪Ⅻ½\u00a0\u2003\u3000\u2028\u0085\x1c\t\n\r、。「」，！？—…“”€+/-_.,;:"
)
BMP_TEXT = st.text(alphabet=st.sampled_from(BMP_SAMPLES), max_size=40)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="possessive quantifiers in re")
@pytest.mark.parametrize("pattern", PATTERNS)
@settings(max_examples=max(300, settings().max_examples))
@given(text=BMP_TEXT)
def test_the_bmp_twin_cuts_text_where_the_pattern_does(pattern: str, text: str) -> None:
    assert bmp_rx(pattern).findall(text) == regex.findall(pattern, text)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="possessive quantifiers in re")
@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_bmp_twin_agrees_on_every_character(pattern: str) -> None:
    """Exhaustively: every character of the BMP alone, between letters, doubled before a
    contraction, before line breaks and white space, and after a digit and an apostrophe."""
    twin = bmp_rx(pattern)
    rx = regex.compile(pattern)
    for code in range(0x10000):
        if 0xD800 <= code < 0xE000:
            continue
        c = chr(code)
        text = f"{c}a{c}B {c}{c}'s\n{c}  {c}\r\n1{c}'{c}A"
        assert twin.findall(text) == rx.findall(text), hex(code)


def test_the_segmenter_splits_beyond_the_bmp_with_the_pattern() -> None:
    seg = PreTokenSegmenter(sorted(LOCAL_PATTERNS)[0])
    for text in ("日本語😀テキスト", "\U00018d80x", "a\U00010000'S"):
        assert not in_bmp(text)
        assert seg.split(text) == regex.findall(seg.pattern, text)
    assert in_bmp("日本語、テキスト\uffff") and in_bmp("")
