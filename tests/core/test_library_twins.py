"""The ASCII twins of the pre-token patterns cut ASCII text where the `tokenizers` library's own
pre-tokenizer does: tokenizer.json byte-level files split ASCII windows with the twin instead of
calling the library, so a difference would be a wrong token."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenline.core.hfbytelevel import LibraryPreTokens
from tokenline.core.pretokens import GPT2_HF, LOCAL_PATTERNS

tokenizers = pytest.importorskip("tokenizers")
pre_tokenizers = tokenizers.pre_tokenizers

# As test_pretoken_twins: every ASCII character, weighted towards what the patterns tell apart.
ALPHABET = "".join(chr(c) for c in range(128)) + "aAsStTdDmMlLvVrReE'' \n\r\t/0" * 3
ASCII_TEXT = st.text(alphabet=st.sampled_from(ALPHABET), max_size=40)


def library(pattern: str) -> object:
    """The library's pre-tokenizer that hfloader accepts for the pattern."""
    if pattern == GPT2_HF:
        return pre_tokenizers.ByteLevel(add_prefix_space=False)
    split = pre_tokenizers.Split(tokenizers.Regex(pattern), "isolated")
    level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    return pre_tokenizers.Sequence([split, level])


def pieces(pre: object, text: str) -> list[str]:
    return [text[s:e] for _, (s, e) in pre.pre_tokenize_str(text)]  # type: ignore[attr-defined]


# The patterns whose twin the library path takes ($ is read differently by the engines).
PATTERNS = sorted(p for p in LOCAL_PATTERNS if "$" not in p)


@pytest.mark.parametrize("pattern", PATTERNS)
@settings(max_examples=max(300, settings().max_examples))
@given(text=ASCII_TEXT)
def test_the_twin_cuts_ascii_text_where_the_library_does(pattern: str, text: str) -> None:
    seg = LibraryPreTokens(pattern, library(pattern))
    assert seg.ascii_rx is not None
    assert seg.split(text) == pieces(library(pattern), text)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_twin_agrees_with_the_library_on_every_pair(pattern: str) -> None:
    seg = LibraryPreTokens(pattern, library(pattern))
    pre = library(pattern)
    chars = [chr(c) for c in range(128)]
    texts = [a + b for a in chars for b in chars]
    texts += [a + tail for a in chars for tail in ("'s", "'LL", "'re ", "  x", " \n\n", "12345")]
    for text in texts:
        assert seg.split(text) == pieces(pre, text), repr(text)


def test_patterns_with_an_end_anchor_stay_with_the_library() -> None:
    for pattern in LOCAL_PATTERNS:
        if "$" in pattern:
            assert LibraryPreTokens(pattern, None).ascii_rx is None
