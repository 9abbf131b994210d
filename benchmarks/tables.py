"""The benchmark tables of docs/benchmarks.md and the README, rendered from benchmarks/results/.

Each table comes from one results file, that is one run of one script, and is preceded by the
line naming that run (script, time, commit, load). A measurement appears in one table only: the
SentencePiece encode of prose is in the engine table; the others give ratios to the baseline
measured beside them in their own run. `--write` replaces the blocks between
`<!-- table: NAME -->` and `<!-- end: NAME -->` in the documents; tests/test_readme.py checks
that the documents hold what this renders.

    python benchmarks/tables.py [--write]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import bench_server  # renders its own tables: one renderer for the script and the documents
import runinfo

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
DOCUMENTS = [HERE.parent / "README.md", HERE.parent / "docs" / "benchmarks.md"]
BLOCK = re.compile(r"(<!-- table: (\S+) -->\n)(.*?)(<!-- end: \2 -->)", re.S)


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((RESULTS / name).read_text(encoding="utf-8"))
    return data


def size(n: int) -> str:
    return f"{n // 1_000_000} MB" if n >= 1_000_000 else f"{n // 1000} KB"


def us(value: float | None) -> str:
    """A time given in µs: in µs below 1 ms, in ms from there, in s from 10 s."""
    if value is None:
        return "—"
    if value < 1e3:
        return f"{value:.1f} µs" if value < 100 else f"{value:.0f} µs"
    if value < 1e7:
        return f"{value / 1e3:.1f} ms" if value < 1e5 else f"{value / 1e3:,.0f} ms"
    return f"{value / 1e6:.1f} s"


def ms(value: float) -> str:
    """A time given in ms."""
    return us(value * 1e3)


def sec(value: float) -> str:
    """A time given in s."""
    return us(value * 1e6)


def nbytes(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.1f} KB" if n >= 1e3 else f"{n} B"


def times(ratio: float) -> str:
    return f"{ratio:,.0f}×" if ratio >= 10 else f"{ratio:.2f}×"


def run_line(data: dict[str, Any]) -> str:
    return f"Run: {runinfo.label(data['run'])}."


def flatness(rows: list[dict[str, Any]]) -> str:
    """The median edit at the largest size over the one at the smallest."""
    by_size = sorted(rows, key=lambda r: r["size"])
    return times(by_size[-1]["median_us"] / by_size[0]["median_us"])


def spread_label(rows: list[dict[str, Any]]) -> str:
    """`Median at 10 MB / at 10 KB` for the sizes of `rows`."""
    sizes = sorted(r["size"] for r in rows)
    return f"Median at {size(sizes[-1])} / at {size(sizes[0])}"


def english(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of English prose (runs before other texts were measured hold only those)."""
    return [r for r in rows if r.get("text", "English") == "English"]


def engine() -> str:
    data = load("core.json")
    data["sizes"] = english(data["sizes"])
    lines = [
        run_line(data),
        "",
        "| document | tokens | edit median | edit p99 | full encode (SentencePiece) | speed-up "
        "| bytes per token |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in data["sizes"]:
        lines.append(
            f"| {size(r['size'])} | {r['tokens']:,} | {us(r['median_us'])} | {us(r['p99_us'])} "
            f"| {ms(r['full_encode_ms'])} | {times(r['speedup'])} "
            f"| {r['bytes_per_token']:.1f} |"
        )
    lines += ["", f"{spread_label(data['sizes'])}: {flatness(data['sizes'])}."]
    return "\n".join(lines)


def crossover(series: dict[str, list[float]]) -> int:
    """The first text length (bytes) at which an edit costs less than a full encode."""
    return next(
        b
        for b, f, i in zip(
            series["bytes"], series["full_us"], series["incremental_us"], strict=True
        )
        if i < f
    )


def clocks() -> str:
    """The 1 MB speed-up in CPU time and in wall-clock time, from the engine's run."""
    data = load("core.json")
    r = next(r for r in english(data["sizes"]) if r["size"] == 1_000_000)
    return (
        f"In the engine run below (load average {data['run']['load_before']} → "
        f"{data['run']['load_after']}), the 1 MB speed-up is {times(r['speedup'])} in CPU time "
        f"and {times(r['wall_speedup'])} in wall-clock time, measured on the same calls."
    )


def thesis() -> str:
    """Where the incremental update overtakes a full encode on short texts (the thesis's
    Figure 1), from the engine's run."""
    data = load("core.json")
    return (
        f"{run_line(data)} An edit costs less than a full encode from "
        f"{crossover(data['thesis']['prose'])} bytes of prose on, and from "
        f"{crossover(data['thesis']['random'])} bytes of random letters on."
    )


def opening() -> str:
    data = load("open.json")
    lines = [
        run_line(data),
        "",
        "| text | size | open (cold cache) | / encode | open again (warm) | / encode |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in data["open"]:
        lines.append(
            f"| {r['kind']} | {size(r['bytes'])} | {sec(r['open_cold_s'])} "
            f"| {times(r['cold_ratio'])} | {sec(r['open_warm_s'])} | {times(r['warm_ratio'])} |"
        )
    cache = data["cache"]
    lines.append("")
    if data.get("open_50mb"):
        lines.append(
            f"50 MB of prose opens in {data['open_50mb']['open_cold_s']:.1f} s (cold cache)."
        )
    lines.append(
        f"The segment cache holds {cache['after_10mb_prose_traced_mb']:.1f} MB after 10 MB of "
        f"prose ({cache['after_10mb_prose_entries']:,} segments, tracemalloc) and "
        f"{cache['filled_traced_mb']:.1f} MB when filled with unique words (its bound: 64 MB)."
    )
    return "\n".join(lines)


def families(tokenizer_json: bool) -> str:
    data = load("bench_families.json")
    hf = [m for m in data["modes"] if "tokenizer.json" in m]
    names = {m.split(":", 1)[0] for m in hf}
    rows = [r for r in data["sizes"] if (r["model"] in names) == tokenizer_json]
    blobs = [b for b in data["blobs"] if (b["model"] in names) == tokenizer_json]
    lines = [
        run_line(data),
        "",
        "| model | size | edit median | p99 | full encode (reference) | speed-up | open / encode "
        "| idle prepare | first edits in untouched parts |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r['model']} | {size(r['size'])} | {us(r['median_us'])} | {us(r['p99_us'])} "
            f"| {ms(r['full_ms'])} | {times(r['speedup'])} | {times(r['open_ratio'])} "
            f"| {ms(r['prepare_ms'])} | {us(r['cold_median_us'])} |"
        )
    models = list(dict.fromkeys(r["model"] for r in rows))
    spread = ", ".join(f"{m} {flatness([r for r in rows if r['model'] == m])}" for m in models)
    lines += ["", f"{spread_label(rows)}: {spread}.", "", *_blob_table(blobs)]
    return "\n".join(lines)


def _blob_table(blobs: list[dict[str, Any]]) -> list[str]:
    """Edits in 1 MB pre-tokens; with the split and join columns when the run timed them."""
    keys = [k for k in ("space_ms", "comma_ms", "join_ms") if any(k in b for b in blobs)]
    extra = "".join(f" | {SPLIT_COLUMNS[k]}" for k in keys)
    lines = [
        "| model | edit inside a 1 MB pre-token | first edit there, right after opening "
        f"| full encode (reference){extra} |",
        "| --- | ---: | ---: | ---:" + " | ---:" * len(keys) + " |",
    ]
    for b in blobs:
        if "skipped" in b:
            lines.append(
                f"| {b['model']} | not measured: {b['skipped']} | |" + " |" * (len(keys) + 1)
            )
            continue
        cells = "".join(f" | {ms(b[k])}" if k in b else " | —" for k in keys)
        lines.append(
            f"| {b['model']} | {ms(b['blob_ms'])} | {ms(b['first_ms'])} | {ms(b['full_ms'])}"
            f"{cells} |"
        )
    return lines


# Headers of bench_families' split and join timings in a 1 MB pre-token.
SPLIT_COLUMNS = {
    "space_ms": "space typed there",
    "comma_ms": "comma typed",
    "join_ms": "join (their undo)",
}


def series(r: dict[str, Any], prefix: str) -> str:
    """`median / p99 / p99.9 / max` of one series of edits (µs, or ms from 1 ms)."""
    keys = ("median_us", "p99_us", "p999_us", "max_us")
    return " / ".join(us(r[prefix + k]) for k in keys)


def tail_table(data: dict[str, Any], full_key: str) -> list[str]:
    """Per-edit latency by text and size, after idle work and right after opening, beside the
    reference's full encode (`full_key`, in ms) measured in the same run."""
    lines = [
        run_line(data),
        "",
        "| text | size | after idle work: median / p99 / p99.9 / max "
        "| right after opening: median / p99 / p99.9 / max | full encode (reference) "
        "| median speed-up |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in data["sizes"]:
        lines.append(
            f"| {r['text']} | {size(r['size'])} | {series(r, '')} | {series(r, 'cold_')} "
            f"| {ms(r[full_key])} | {times(r['speedup'])} |"
        )
    return lines


def tails_sentencepiece() -> str:
    return "\n".join(tail_table(load("core.json"), "full_encode_ms"))


def tails_tiktoken() -> str:
    data = load("families_tails.json")
    lines = tail_table(data, "full_ms")
    lines += [
        "",
        "| 1 MB line without breaks | edit median | p99 | max | first edit there, right after "
        "opening | full encode (reference) |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for b in data["blobs"]:
        lines.append(
            f"| {b['line']} | {ms(b['blob_ms'])} | {ms(b['p99_ms'])} | {ms(b['max_ms'])} "
            f"| {ms(b['first_ms'])} | {ms(b['full_ms'])} |"
        )
    return "\n".join(lines)


def server() -> str:
    data = load("server.json")
    head = [run_line(data), ""] if "run" in data else []
    return "\n".join([*head, bench_server.render(data)])


LIBRARIES = {"sentencepiece": "sentencepiece (Mistral 7B)", "tiktoken": "tiktoken (o200k_base)"}


def check_big_file(big: dict[str, Any]) -> list[str]:
    """`tokenline count` of the large file beside each library's encode of it."""
    lines = [
        f"| {big['megabytes']} MB of prose, counted with | `tokenline count`: CPU, wall "
        "| library's encode: CPU, wall | ratio: CPU, wall | peak memory: count, encoding process |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for lib, r in big["models"].items():
        lines.append(
            f"| {LIBRARIES.get(lib, lib)}, {int(r['tokens']):,} tokens "
            f"| {r['count_cpu_s']:.2f} s, {r['count_wall_s']:.2f} s "
            f"| {r['encode_cpu_s']:.2f} s, {r['encode_wall_s']:.2f} s "
            f"| {r['ratio_cpu']:.2f}×, {r['ratio_wall']:.2f}× "
            f"| {r['count_rss_mb']:.0f} MB, {r['encode_process_rss_mb']:.0f} MB |"
        )
    return lines


def check_files(data: dict[str, Any]) -> list[str]:
    """`tokenline check` of the generated repository beside the read-and-encode loop."""
    return [
        f"| on 2,000 prompt files, {data['cores']} cores | CPU time | wall clock |",
        "| --- | ---: | ---: |",
        f"| `tokenline check` as a command (workers, start and model load included) "
        f"| {data['check_command_cpu_s']:.2f} s | {data['check_command_wall_s']:.2f} s |",
        f"| baseline: one process reading each file and encoding it with sentencepiece "
        f"| {data['loop_command_cpu_s']:.2f} s | {data['loop_command_wall_s']:.2f} s |",
        f"| ratio (median of the per-run ratios) | {data['command_ratio_cpu']:.2f}× "
        f"| {data['command_ratio_wall']:.2f}× |",
        f"| `tokenline check --jobs 1` in process (walk, `.gitignore`, configuration, budgets, "
        f"counts) | {data['check_in_process_s']:.2f} s | |",
        f"| baseline: read + `sentencepiece.encode` of each file, in process "
        f"| {data['baseline_sentencepiece_s']:.2f} s | |",
        f"| ratio (median of the per-run ratios) | {data['ratio']:.2f}× | |",
    ]


def check() -> str:
    data = load("check.json")
    pre = data["precommit"]
    n = pre["files"]
    return "\n".join(
        [
            run_line(data),
            "",
            *check_big_file(data["big_file"]),
            "",
            *check_files(data),
            "",
            f"| on {n} staged prompt files | CPU time | wall clock (under the run's load) |",
            "| --- | ---: | ---: |",
            f"| `pre-commit run` of the local hook | {pre['pre_commit_run_cpu_s']:.2f} s "
            f"| {pre['pre_commit_run_wall_s']:.2f} s |",
            f"| `tokenline check` of those files as a command | {pre['check_command_cpu_s']:.2f} s "
            f"| {pre['check_command_wall_s']:.2f} s |",
            f"| Python starting, importing `tokenline.cli` and loading the model "
            f"| {pre['start_and_load_cpu_s']:.2f} s | {pre['start_and_load_wall_s']:.2f} s |",
        ]
    )


def chat_server() -> str:
    """A large JSONL chat file in the server: first hints, totals beside the reference, edits."""
    data = load("chat_server.json")
    chat = data["chat"]
    return "\n".join(
        [
            run_line(data),
            "",
            f"| {data['conversations']:,} conversations, {data['megabytes']:.0f} MB of JSON Lines, "
            f"{data['model']} ({chat['mode']}) | measured | target |",
            "| --- | ---: | ---: |",
            f"| first hints: didOpen → the inlay hints of lines 0-60 | "
            f"{data['first_hints_s']:.2f} s | ≤ 1 s |",
            f"| totals: every conversation counted in idle slices ({chat['total']:,} tokens), "
            f"server CPU | {data['totals_cpu_s']:.2f} s | |",
            f"| reference: sentencepiece's encode of every message's content, CPU | "
            f"{data['reference_cpu_s']:.2f} s | |",
            f"| totals over the reference | {data['totals_over_reference']:.2f}× | "
            f"≤ {data['target_totals_ratio']}× |",
            f"| an edit inside a message → the hints around it: median (max) | "
            f"{data['edit_to_hints_ms_median']:.2f} ms ({data['edit_to_hints_ms_max']:.1f} ms) | "
            f"≤ {data['target_edit_ms']:.0f} ms |",
        ]
    )


def vscode() -> str:
    """Tokenline in code-server: open → first count, typing echo and status latency."""
    data = load("vscode.json")
    t = data["targets"]

    def stat(row: dict[str, Any], key: str, which: str) -> str:
        return ms(row[key][which]) if row.get(key) else "—"

    lines = [
        run_line(data),
        "",
        "| file | colours | open → first count | typing echo median | echo p90 "
        "| status median | status p90 | colours shown |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    rows = data["summary"]
    for r in rows:
        opened = ms(r["open_ms"]) if r["open_ms"] is not None else "never"
        lines.append(
            f"| {r['file']} | {'on' if r['colours'] else 'off'} | {opened} "
            f"| {stat(r, 'echo', 'median')} | {stat(r, 'echo', 'p90')} "
            f"| {stat(r, 'status', 'median')} | {stat(r, 'status', 'p90')} "
            f"| {'yes' if r['coloured'] else 'no'} |"
        )
    steps = [r for r in rows if r.get("open_steps", {}).get("status_sent_ms") is not None]
    if steps:
        lines += [
            "",
            "| file | colours | the server sends the status counted ahead | the editor shows "
            "the text | didOpen reaches the server | the server sends the didOpen's status "
            "| the count shows | the server's CPU: ahead / didOpen |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for r in steps:
            at = r["open_steps"]

            def step(key: str, at: dict[str, Any] = at) -> str:
                return ms(at[key]) if at.get(key) is not None else "—"

            lines.append(
                f"| {r['file']} | {'on' if r['colours'] else 'off'} | {step('ahead_sent_ms')} "
                f"| {step('editor_ms')} | {step('at_server_ms')} | {step('status_sent_ms')} "
                f"| {ms(r['open_ms'])} | {step('ahead_cpu_ms')} / {step('server_cpu_ms')} |"
            )
    p90 = {r["colours"]: r["echo"]["p90"] for r in rows if r["file"] == "1 MB" and r["echo"]}
    ratio = times(p90[True] / p90[False]) if len(p90) == 2 else "—"
    lines += [
        "",
        f"{data['keys']} keys typed {data['interval_ms']} ms apart per file and round, "
        f"{max(r['rounds'] for r in rows)} rounds; medians and p90 over every key. Typing echo "
        f"p90 at 1 MB, colours on / off: {ratio} (target ≤ {t['echo_p90_colours_ratio']}×). "
        f"Targets for open → first count: ≤ {sec(t['open_1mb_s'])} at 1 MB, "
        f"≤ {sec(t['open_5mb_s'])} at 5 MB.",
    ]
    return "\n".join(lines)


TABLES: dict[str, Callable[[], str]] = {
    "engine": engine,
    "thesis": thesis,
    "clocks": clocks,
    "opening": opening,
    "tails-sentencepiece": tails_sentencepiece,
    "tails-tiktoken": tails_tiktoken,
    "tiktoken": lambda: families(tokenizer_json=False),
    "tokenizer-json": lambda: families(tokenizer_json=True),
    "server": server,
    "chat-server": chat_server,
    "check": check,
    "vscode": vscode,
}


def render(text: str) -> str:
    """`text` with every table block rendered anew from the results."""
    return BLOCK.sub(lambda m: f"{m.group(1)}{TABLES[m.group(2)]()}\n{m.group(4)}", text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update the documents in place")
    args = parser.parse_args()
    for doc in DOCUMENTS:
        text = doc.read_text(encoding="utf-8")
        new = render(text)
        if args.write and new != text:
            doc.write_text(new, encoding="utf-8")
            print(f"updated {doc}", file=sys.stderr)
    if not args.write:
        for name, table in TABLES.items():
            print(f"<!-- table: {name} -->\n{table()}\n<!-- end: {name} -->\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
