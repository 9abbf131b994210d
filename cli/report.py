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


# The narrowest column of counts (a count of up to a billion tokens, grouped).
COLUMN = 10


def widths(names: Sequence[str]) -> list[int]:
    """The width of each model's column: its name, or a count, whichever is wider."""
    return [max(COLUMN, len(name)) for name in names]


def count_header(m: Measurement) -> str:
    """The line above counts under several models: each column's model name."""
    names = [name for name, _ in m.counts]
    return "  ".join(f"{name:>{w}}" for name, w in zip(names, widths(names), strict=True))


def columns(counts: Sequence[int], names: Sequence[str]) -> str:
    """`     1,234       1,100`: one right-aligned column per model."""
    return "  ".join(f"{n:>{w},}" for n, w in zip(counts, widths(names), strict=True))


def count_line(m: Measurement) -> str:
    """`     1,234  prompts/a.md` (one column per model when counted under several), with the
    budget after the path when one applies."""
    names = [name for name, _ in m.counts]
    line = f"{columns([n for _, n in m.counts], names)}  {m.path}"
    if m.budget is not None:
        of = f" {m.budget_model} tokens" if m.budget_model is not None else ""
        state = f", {fmt(m.over)} over" if m.over else ""
        line += f"  (budget {fmt(m.budget)}{of}{state})"
    return line


def total_line(measured: Sequence[Measurement]) -> str:
    """`     2,468       2,200  total`: each model's column summed."""
    names = [name for name, _ in measured[0].counts]
    totals = [sum(m.counts[i][1] for m in measured) for i in range(len(names))]
    return f"{columns(totals, names)}  total"


def limit_phrase(m: Measurement) -> str:
    if m.budget is not None:
        return f"the budget of {fmt(m.budget)} ({m.pattern})"
    return f"the context window of {fmt(m.context_window)}"


def check_line(m: Measurement) -> str:
    """`path: 2,345 tokens, 345 over the budget of 2,000 (prompts/system/*.md)`; the tokens are
    the budget's model's when it names one (`2,345 o200k_base tokens`)."""
    what = plural(m.held, "token")
    if m.budget_model is not None:
        what = f"{fmt(m.held)} {m.budget_model} token{'' if m.held == 1 else 's'}"
    return f"{m.path}: {what}, {fmt(m.over)} over {limit_phrase(m)}"


def left_out(skipped: int, excluded: int, unreadable: int = 0) -> str:
    """`; 3 skipped (binary or not UTF-8), 4 excluded, 1 could not be read`, or "" for none."""
    extras = []
    if skipped:
        extras.append(f"{fmt(skipped)} skipped (binary or not UTF-8)")
    if excluded:
        extras.append(f"{fmt(excluded)} excluded")
    if unreadable:
        extras.append(f"{fmt(unreadable)} could not be read")
    return f"; {', '.join(extras)}" if extras else ""


def check_summary(
    checked: int, over: int, skipped: int, excluded: int = 0, unreadable: int = 0
) -> str:
    """`2 files over budget; 120 files checked; 3 skipped (binary or not UTF-8), 4 excluded`."""
    files = f"{plural(checked, 'file')} checked"
    if over:
        head = f"{plural(over, 'file')} over budget; {files}"
    else:
        head = f"{files}, all within budget" if checked else "No files to check"
    return head + left_out(skipped, excluded, unreadable)


def empty_summary(command: str, skipped: int, excluded: int) -> str:
    """What `count` or `check` says when the paths hold no file to measure (an empty folder,
    or one whose files are all ignored, binary or excluded)."""
    return f"No files to {command}" + left_out(skipped, excluded)


def json_report(measurements: Sequence[Measurement]) -> str:
    return json.dumps([m.as_json() for m in measurements], indent=2, ensure_ascii=False) + "\n"
