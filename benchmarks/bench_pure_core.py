"""What the pure-Python core costs: the same edits on the compiled and the pure build, one run.

The VS Code extension falls back to the pure-Python core where no compiled wheel fits the user's
Python and none can be compiled, and its status-bar tooltip names the cost ("edits about N×
slower"): N is the median of this benchmark's per-edit ratios at 1 MB.

The pure build is installed with TOKENLINE_NO_MYPYC=1 into a scratch folder put first on
PYTHONPATH (the dependencies come from this interpreter's environment). Each build runs in a
child process of its own, alternately, three times; each child opens English prose (Botchan) of
each size and times the thesis's random token edit (bench_core.token_edit).

    python benchmarks/bench_pure_core.py [--quick] [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CORPUS = REPO / "tests" / "data" / "botchan.txt"
SIZES = (10_000, 1_000_000)


def child(sizes: list[int], edits: int) -> dict[str, object]:
    """Runs in a child process: per-edit latencies of this process's build."""
    sys.path.insert(0, str(HERE))
    from bench_core import percentile, token_edit

    from tokenline.core import COMPILED, Document, load_model

    model = load_model("mistral-7b-v0.1")
    prose = CORPUS.read_text(encoding="utf-8-sig").replace("\r\n", "\n")
    out: dict[str, object] = {"compiled": COMPILED}
    for size in sizes:
        text = (prose * (size // len(prose) + 1))[:size]
        doc = Document(model, text)
        rng = random.Random(size)
        lat = []
        for _ in range(edits):
            start, end, new = token_edit(doc, rng)
            t0 = time.perf_counter()
            doc.edit(start, end, new)
            lat.append(time.perf_counter() - t0)
        out[str(size)] = {
            "median_us": 1e6 * statistics.median(lat),
            "p99_us": 1e6 * percentile(lat, 0.99),
        }
    return out


def install_pure(target: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), REPO],
        check=True,
        env={**os.environ, "TOKENLINE_NO_MYPYC": "1"},
    )


def run_child(pythonpath: str | None, sizes: list[int], edits: int) -> dict[str, Any]:
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    code = f"import sys; sys.path.insert(0, {str(HERE)!r}); import bench_pure_core as b, json; "
    code += f"print(json.dumps(b.child({sizes!r}, {edits})))"
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env
    ).stdout
    result: dict[str, Any] = json.loads(out.splitlines()[-1])
    return result


def summarize(compiled: list[Any], pure: list[Any]) -> dict[str, float]:
    """Medians over the rounds, and the median of each round's pure / compiled ratio."""
    row = {
        f"{name}_{k}": statistics.median(r[k] for r in rows)
        for name, rows in (("compiled", compiled), ("pure", pure))
        for k in ("median_us", "p99_us")
    }
    pairs = zip(pure, compiled, strict=True)
    row["ratio"] = statistics.median(p["median_us"] / c["median_us"] for p, c in pairs)
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(HERE / "results"))
    parser.add_argument("--quick", action="store_true", help="fewer edits and rounds")
    args = parser.parse_args()
    edits, rounds = (300, 1) if args.quick else (2000, 3)
    sizes = list(SIZES)
    with tempfile.TemporaryDirectory() as tmp:
        install_pure(Path(tmp))
        runs: dict[str, list[dict[str, Any]]] = {"compiled": [], "pure": []}
        for _ in range(rounds):
            runs["compiled"].append(run_child(None, sizes, edits))
            runs["pure"].append(run_child(tmp, sizes, edits))
    if not all(r["compiled"] for r in runs["compiled"]) or any(r["compiled"] for r in runs["pure"]):
        print("the builds are not one compiled and one pure; install tokenline compiled first")
        return 1
    lines = [
        f"Python {sys.version.split()[0]}, {edits} random token edits per size, {rounds} rounds "
        "(each the median of its edits; the table gives the median round).",
        "",
        "| document | compiled median | compiled p99 | pure median | pure p99 | pure / compiled |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    summary: dict[str, dict[str, float]] = {}
    for size in sizes:
        key = str(size)
        row = summarize([r[key] for r in runs["compiled"]], [r[key] for r in runs["pure"]])
        summary[key] = row
        label = f"{size // 1_000_000} MB" if size >= 1_000_000 else f"{size // 1000} KB"
        lines.append(
            f"| {label} | {row['compiled_median_us']:.1f} µs | {row['compiled_p99_us']:.0f} µs "
            f"| {row['pure_median_us']:.1f} µs | {row['pure_p99_us']:.0f} µs "
            f"| {row['ratio']:.1f}× |"
        )
    text = "\n".join(lines)
    print(text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "pure_core.json").write_text(json.dumps(summary, indent=2) + "\n")
    (out / "pure_core.md").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
