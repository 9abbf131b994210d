"""The ASCII twins of the pre-token patterns (Python's `re`, which splits short windows faster)
cut ASCII text exactly where the `regex` module's patterns do: the engine takes the twin for
every ASCII window, so a difference would be a wrong token."""

from __future__ import annotations

import re
import string
import sys

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenline.core.pretokens import LOCAL_PATTERNS, PreTokenSegmenter, ascii_twin

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
