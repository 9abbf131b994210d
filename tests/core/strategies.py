"""Hypothesis strategies: documents of every kind a prompt writer types, and edit sequences."""

from __future__ import annotations

from hypothesis import strategies as st

PROSE = [
    "The quick brown fox jumps over the lazy dog. ",
    "I was a mischievous boy, and always full of fun.\n",
    "What's the difference between 'tokens' and “words”? ",
]
CODE = [
    "def tokenize(text: str) -> list[int]:\n    return [ord(c) for c in text]\n",
    "for (let i = 0; i < n; i++) {\n\tsum += a[i];\n}\n",
    "SELECT id, name FROM users WHERE id = 42;\r\n",
    "    if x == 0:\n        pass\n",
]
MARKDOWN = [
    "# Title\n\n",
    "## Section two\n",
    "- item one\n- item **two**\n",
    "> quoted *text* and `inline code`\n",
    "```python\nprint('hi')\n```\n",
    "[link](https://example.com) ",
]
CJK = ["中文字符测试，", "日本語のテキスト。", "한국어 문장", "漢字かなカナ", "全角　スペース"]
EMOJI = ["😀", "👨\u200d👩\u200d👧", "🇯🇵", "👍🏽", "❤️", "🧑\u200d💻", "😀😀😀"]
COMBINING = ["e\u0301", "a\u0308", "n\u0303o", "\u0915\u094d\u0937", "Z\u0351\u0362a\u034el"]
WHITESPACE = [
    " ",
    "  ",
    "    ",
    "\t",
    "\n",
    "\r\n",
    "\n\n",
    "\r",
    " \n ",
    "\u3000",
    "\u00a0",
    "\u2581",
]
SPECIAL = [
    "<s>",
    "</s>",
    "<unk>",
    "[REF]",
    "[REFERENCE_DOC_1]",
    "<tool>",
    "\u200b",
    "\x00",
    "ﬁ",
    "①",
    "Ｈ",
]
LETTERS = ["a", "b", "ab", "aaaa", "abcd", "xyz", "the", "x y", "ß", "--"]

FRAGMENTS = PROSE + CODE + MARKDOWN + CJK + EMOJI + COMBINING + WHITESPACE + SPECIAL + LETTERS

fragment = st.one_of(
    st.sampled_from(FRAGMENTS),
    st.text(alphabet=st.sampled_from("ab cd\n\t.,é中😀▁"), max_size=6),
    st.characters(codec="utf-8").map(str),
)


def texts(max_fragments: int = 30) -> st.SearchStrategy[str]:
    return st.lists(fragment, max_size=max_fragments).map("".join)


def unspaced(
    *extra: st.SearchStrategy[str], min_size: int, max_size: int
) -> st.SearchStrategy[str]:
    """A run with no space in it (CJK, emoji, marks, letters, code, any character, and `extra`):
    one long piece or word to the pre-tokenizing families, one long stretch to the rest."""
    return st.lists(
        st.one_of(
            st.sampled_from([f for f in CJK + EMOJI + COMBINING + LETTERS + CODE if " " not in f]),
            st.characters(codec="utf-8").map(str),
            *extra,
        ),
        min_size=min_size,
        max_size=max_size,
    ).map("".join)


@st.composite
def edit_ops(draw: st.DrawFn, length: int) -> tuple[int, int, str]:
    """One edit of a text of the given length: (start, end, new text)."""
    kind = draw(
        st.sampled_from(
            ["insert", "insert", "delete", "replace", "replace", "paste", "start", "end", "clear"]
        )
    )
    if kind == "clear":
        return 0, length, draw(st.sampled_from(["", "", "x", " a"]))
    if kind == "start":
        start = 0
    elif kind == "end":
        start = length
    else:
        start = draw(st.integers(0, length))
    if kind in ("insert", "paste", "end") or (kind == "start" and draw(st.booleans())):
        end = start
    else:
        end = draw(st.integers(start, min(length, start + draw(st.sampled_from([1, 2, 5, 40])))))
    if kind == "delete":
        new = ""
    elif kind == "paste":
        new = draw(texts(40))
    else:
        new = draw(st.one_of(fragment, texts(3)))
    return start, end, new
