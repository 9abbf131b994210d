"""What `tokenline count` and `check` print: aligned counts, one line per file over its limit,
and `--json` (a JSON array, one object per file, the same fields for both commands)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from tokenline.measure import Measurement


def fmt(n: int) -> str:
    return f"{n:,}"


def plural(n: int, word: str) -> str:
    return f"{fmt(n)} {word}{'' if n == 1 else 's'}"


def count_line(m: Measurement) -> str:
    """`     1,234  prompts/a.md`, with the budget after the path when one applies."""
    line = f"{m.tokens:>10,}  {m.path}"
    if m.budget is not None:
        state = f", {fmt(m.over)} over" if m.over else ""
        line += f"  (budget {fmt(m.budget)}{state})"
    return line


def limit_phrase(m: Measurement) -> str:
    if m.budget is not None:
        return f"the budget of {fmt(m.budget)} ({m.pattern})"
    return f"the context window of {fmt(m.context_window)}"


def check_line(m: Measurement) -> str:
    """`path: 2,345 tokens, 345 over the budget of 2,000 (prompts/system/*.md)`."""
    return f"{m.path}: {plural(m.tokens, 'token')}, {fmt(m.over)} over {limit_phrase(m)}"


def check_summary(checked: int, over: int, skipped: int, excluded: int = 0) -> str:
    """`2 files over budget; 120 files checked; 3 skipped (binary or not UTF-8), 4 excluded`."""
    files = f"{plural(checked, 'file')} checked"
    if over:
        head = f"{plural(over, 'file')} over budget; {files}"
    else:
        head = f"{files}, all within budget" if checked else "No files to check"
    extras = []
    if skipped:
        extras.append(f"{fmt(skipped)} skipped (binary or not UTF-8)")
    if excluded:
        extras.append(f"{fmt(excluded)} excluded")
    return head + (f"; {', '.join(extras)}" if extras else "")


def json_report(measurements: Sequence[Measurement]) -> str:
    return json.dumps([m.as_json() for m in measurements], indent=2, ensure_ascii=False) + "\n"
