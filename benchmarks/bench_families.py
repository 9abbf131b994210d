"""Benchmark of the byte-level family (tiktoken encodings, Tekken) beside the reference library.

For each model: the per-edit latency (a random token loses a character and the rest is shuffled,
as in bench_core) at 10 KB, 1 MB and 10 MB of English prose, beside the reference's full encode
of the same text; an edit inside one 1 MB pre-token (a line of base64, where tiktoken's BPE of
the piece is the whole cost); and opening a document beside one full encode. Medians over many
runs, ratios taken in the same run (the machines are shared and noisy).

    TIKTOKEN_CACHE_DIR=... python benchmarks/bench_families.py [--quick] [--models o200k_base,...]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import string
import sys
from pathlib import Path

from bench_core import time_once as timed
from bench_core import token_edit
from bench_open import repeat_to

from tokenline.core import COMPILED, Document, load_model

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared"
CORPUS = SHARED / "corpora" / "botchan.txt"
DEFAULT_MODELS = f"o200k_base,cl100k_base,{SHARED / 'models' / 'tekken_240911.json'}"
TARGETS = {"median_us": 30.0, "flatness": 1.5, "speedup_1mb": 1000.0, "blob_ms": 1.0, "open": 1.3}


def edits_us(doc: Document, rng: random.Random, n: int) -> list[float]:
    out = []
    for _ in range(n):
        start, end, new = token_edit(doc, rng)
        old = doc.slice(start, end)
        out.append(timed(doc.edit, start, end, new) * 1e6)
        doc.edit(start, start + len(new), old)  # undo, so the text stays prose
    return out


def _prepare_all(doc: Document) -> None:
    while doc.prepare():
        pass


def size_row(spec: str, prose: str, size: int, edits: int, runs: int) -> dict:
    model = load_model(spec)
    text = repeat_to(prose, size)
    opens, fulls = [], []
    for _ in range(runs):  # interleaved, so that load changes hit both alike
        opens.append(timed(Document, model, text))
        fulls.append(timed(model.encode, text))
    # Edits right after opening, each in a part of the document no edit has touched yet: they
    # also find where pieces start there (what opening deferred).
    cold = edits_us(Document(model, text), random.Random(size + 1), min(edits, 300))
    doc = Document(model, text)
    prepare = timed(_prepare_all, doc)  # what an editor does in idle time after opening
    lat = edits_us(doc, random.Random(size), edits)
    assert doc.ids() == model.encode(doc.text), "benchmark edits left the document inexact"
    full = statistics.median(fulls)
    return {
        "cold_median_us": statistics.median(cold),
        "prepare_ms": prepare * 1e3,
        "model": model.name,
        "size": size,
        "median_us": statistics.median(lat),
        "p99_us": sorted(lat)[int(0.99 * (len(lat) - 1))],
        "full_ms": full * 1e3,
        "speedup": full * 1e6 / statistics.median(lat),
        "open_ratio": statistics.median(opens) / full,
    }


def blob_row(spec: str, edits: int) -> dict:
    """Edits inside one 1 MB pre-token: a run of lower-case letters (base64 would not do: its
    digits and signs cut it into short pieces)."""
    model = load_model(spec)
    rng = random.Random(7)
    blob = "".join(rng.choice(string.ascii_lowercase) for _ in range(1_000_000))
    text = f"data = '{blob}'\n"
    first = Document(model, text)
    cold = timed(first.edit, 500_000, 500_001, "q")  # right after opening: finds piece starts
    doc = Document(model, text)
    _prepare_all(doc)
    full = timed(lambda: model.encode(doc.text))
    lat = []
    for _ in range(edits):
        at = rng.randrange(10, len(blob))
        new = rng.choice(string.ascii_lowercase)
        old = doc.slice(at, at + 1)
        lat.append(timed(doc.edit, at, at + 1, new) * 1e3)
        doc.edit(at, at + 1, old)
    assert doc.ids() == model.encode(doc.text)
    return {
        "model": model.name,
        "blob_ms": statistics.median(lat),
        "first_ms": cold * 1e3,
        "full_ms": full * 1e3,
    }


def report(rows: list[dict], blobs: list[dict]) -> str:
    lines = [
        "| model | size | edit median | p99 | full encode | speed-up | open / encode |"
        " idle prepare | first edits in untouched parts |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r['model']} | {r['size'] // 1000:,} KB | {r['median_us']:.1f} µs | "
            f"{r['p99_us']:.0f} µs | {r['full_ms']:.1f} ms | {r['speedup']:,.0f}× | "
            f"{r['open_ratio']:.2f}× | {r['prepare_ms']:.0f} ms | {r['cold_median_us']:.0f} µs |"
        )
    lines += [
        "",
        "| model | edit inside a 1 MB pre-token | first edit there, right after opening |"
        " full encode |",
        "| --- | --- | --- | --- |",
    ]
    for b in blobs:
        lines.append(
            f"| {b['model']} | {b['blob_ms'] * 1e3:.0f} µs | {b['first_ms']:.1f} ms |"
            f" {b['full_ms']:.0f} ms |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=DEFAULT_MODELS)
    parser.add_argument("--out", default=str(HERE / "results"))
    parser.add_argument("--quick", action="store_true", help="10 KB and 1 MB, fewer runs")
    args = parser.parse_args()
    prose = CORPUS.read_text(encoding="utf-8")
    sizes = [10_000, 1_000_000] if args.quick else [10_000, 1_000_000, 10_000_000]
    edits, runs = (300, 3) if args.quick else (2000, 5)
    rows, blobs = [], []
    for spec in args.models.split(","):
        for size in sizes:
            rows.append(size_row(spec, prose, size, edits, runs if size < 5_000_000 else 3))
            print(json.dumps(rows[-1]), file=sys.stderr)
        blobs.append(blob_row(spec, 20 if args.quick else 50))
        print(json.dumps(blobs[-1]), file=sys.stderr)
    text = report(rows, blobs)
    print(f"compiled core: {COMPILED}\n\n{text}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_families.json").write_text(json.dumps({"sizes": rows, "blobs": blobs}, indent=1))
    (out / "bench_families.md").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
