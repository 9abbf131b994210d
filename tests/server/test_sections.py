"""Markdown heading detection, checked against a plain line-by-line reading of the text."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from tokenline.server.sections import headings

_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")


def reference(text: str) -> list[tuple[int, int, int]]:
    """Every line, one at a time: the definition headings() must keep."""
    out: list[tuple[int, int, int]] = []
    fence: str | None = None
    for line, m in enumerate(_LINE.finditer(text)):
        s, e = m.span()
        if s == e and s == len(text):
            break
        body = m.group(0).rstrip("\r\n")
        f = _FENCE.match(body)
        if fence is not None:
            if (
                f
                and f.group(1)[0] == fence[0]
                and len(f.group(1)) >= len(fence)
                and body.strip() == f.group(1)
            ):
                fence = None
        elif f:
            fence = f.group(1)
        elif _HEADING.match(body):
            out.append((line, s, s + len(body)))
    return out


lines = st.sampled_from(
    [
        "# Title",
        "## Two",
        "   ### three",
        "    # code",
        "#no",
        "####### seven",
        "#",
        "## ",
        "```",
        "```python",
        "~~~",
        "````",
        "text",
        "",
        " ",
        "\t# tab",
        "> # quote",
        "``` x",
        "~~~~",
    ]
)
breaks = st.sampled_from(["\n", "\r\n", "\r"])


@given(st.lists(st.tuples(lines, breaks), max_size=40), st.booleans())
def test_headings_match_a_line_by_line_reading(rows: list[tuple[str, str]], tail: bool) -> None:
    text = "".join(a + b for a, b in rows)
    if tail and rows:
        text = text[: -len(rows[-1][1])]
    assert headings(text) == reference(text)
