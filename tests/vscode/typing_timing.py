"""Typing in real VS Code as a user feels it: the files, the expected counts, and the timings.

driver.mjs's "typing" mode opens each target file with Quick Open and types at the end of a line
in its middle, one key every `interval` ms, while recorder.js notes on the page's clock every
keydown, every change of the status bar and of the typed line's rendered text. From those records
this module reads: open → first count (Quick Open's Enter to the status bar's count), typing echo
(keydown → the character on screen) and status latency (keydown → the count after that key on
screen). Typing " a1" makes o200k_base's count only rise, so each key that changes it can be
timed. Used by tests/vscode/test_vscode_typing.py (correctness asserted, timings logged) and by
benchmarks/bench_vscode.py (timings reported).
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass
from typing import Any

from tests.conftest import read_botchan

TYPED = " a1"
FIRST_LINE = "# Botchan (Master Darling)"
COUNT = re.compile(r"^(?:Sel [\d,]+ · )?([\d,]+)(…?) / [\d,]+")


def markdown(size: int) -> str:
    """About `size` bytes of Markdown: Botchan in paragraphs (one ends at a short line that ends
    a sentence) with its chapters as headings, repeated under `# Part N` headings."""
    story = read_botchan().lstrip("\ufeff").replace("\r\n", "\n").strip("\n")
    lines = []
    for line in story.split("\n"):
        if re.fullmatch(r"CHAPTER [IVXLC]+", line.strip()):
            lines += ["", f"## {line.strip().title()}", ""]
            continue
        lines.append(line)
        if len(line) < 60 and re.search(r"[.!?\"')]$", line.strip()):
            lines.append("")
    story = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")
    parts = [FIRST_LINE + "\n"]
    n = 0
    while sum(len(p) for p in parts) < size:  # Botchan is ASCII: characters are bytes
        n += 1
        parts.append(f"\n# Part {n}\n\n{story}\n")
    text = "".join(parts)
    return text[: text.rindex("\n\n", 0, size) + 1]


@dataclass
class Plan:
    """Where to type in a text and the count after every key (counts[k]: after k keys)."""

    line: int  # 1-based, as Go to Line takes it
    line_text: str
    typed: str
    counts: list[int]

    def final_text(self, text: str) -> str:
        at = _line_end(text, self.line - 1)
        return text[:at] + self.typed + text[at:]


def _line_end(text: str, line0: int) -> int:
    at = -1
    for _ in range(line0 + 1):
        at = text.index("\n", at + 1)
    return at


def plan(text: str, keys: int, encoding: Any) -> Plan:
    """Typing `keys` keys of " a1 a1..." at the end of the paragraph nearest the middle.

    The paragraph is followed by a blank line and a line that starts with a letter: o200k_base's
    pre-tokenizer never joins text across such a line start, so the count after each key is the
    text's count with the paragraph's end re-counted (checked against whole encodes at both ends).
    """
    lines = text.split("\n")
    mid = len(lines) // 2
    line0 = next(
        i
        for d in range(len(lines))
        for i in (mid + d, mid - d)
        if 0 < i < len(lines) - 2
        and lines[i][:1].isalpha()
        and re.search(r"\w.{18,}[.!?\"]$", lines[i])
        and not lines[i + 1]
        and lines[i + 2][:1].isalpha()
    )
    typed = (TYPED * keys)[:keys]
    start = _line_end(text, line0 - 1) + 1
    end = _line_end(text, line0 + 1) + 1
    window = text[start:end]
    cut = len(lines[line0])
    rest = len(encoding.encode_ordinary(text)) - len(encoding.encode_ordinary(window))
    counts = [
        rest + len(encoding.encode_ordinary(window[:cut] + typed[:k] + window[cut:]))
        for k in range(keys + 1)
    ]
    p = Plan(line0 + 1, lines[line0], typed, counts)
    assert len(encoding.encode_ordinary(p.final_text(text))) == counts[-1]
    return p


def count_of(status: str | None) -> int | None:
    """The document's count a status bar text shows; None for none or one still catching up."""
    m = COUNT.match(status or "")
    return int(m.group(1).replace(",", "")) if m and not m.group(2) else None


def stats(values: list[float]) -> dict[str, float] | None:
    """Median, p90 and max (ms) of the values, with how many there were."""
    if not values:
        return None
    s = sorted(values)
    p90 = s[min(len(s) - 1, round(0.9 * (len(s) - 1)))]
    return {"n": len(s), "median": statistics.median(s), "p90": p90, "max": s[-1]}


def open_times(record: dict[str, Any], initial: int) -> dict[str, float | None]:
    """ms from Quick Open's Enter to the editor's text, to a count, and to the right count."""
    enters = [k[0] for k in record["keys"] if k[2] == "Enter"]
    if not enters:
        return {"editor_ms": None, "first_count_ms": None, "correct_count_ms": None}
    t0 = enters[-1]
    editor = next((t - t0 for t, n, _ in record["echo"] if t >= t0 and n >= 0), None)
    shown = [(t, count_of(s)) for t, s, _ in record["status"] if t >= t0]
    first = next((t - t0 for t, c in shown if c is not None), None)
    correct = next((t - t0 for t, c in shown if c == initial), None)
    return {
        "editor_ms": editor,
        "first_count_ms": first,
        "correct_count_ms": correct,
        "enter_epoch_ms": record["origin"] + t0,  # to set beside the server's log
    }


def typing_times(record: dict[str, Any], p: Plan) -> dict[str, Any]:
    """Each key's echo and, for keys that change the count, status latency (ms)."""
    keys = [k for k in record["keys"] if k[2] in p.typed and len(k[2]) == 1]
    assert len(keys) == len(p.typed), (len(keys), len(p.typed))
    shown = [(t, count_of(s)) for t, s, _ in record["status"]]
    echo, status, missing = [], [], 0
    for k, (kt, _, _) in enumerate(keys, start=1):
        e = next((t - kt for t, n, _ in record["echo"] if t >= kt and n >= k), None)
        if e is not None:
            echo.append(e)
        if p.counts[k] > p.counts[k - 1]:
            s = next(
                (t - kt for t, c in shown if t >= kt and c is not None and c >= p.counts[k]), None
            )
            if s is None:
                missing += 1
            else:
                status.append(s)
    return {
        "keys": len(keys),
        "echo_all_ms": [round(e, 1) for e in echo],
        "status_all_ms": [round(s, 1) for s in status],
        "echo_ms": stats(echo),
        "echo_missing": len(keys) - len(echo),
        "status_ms": stats(status),
        "status_missing": missing,
    }
