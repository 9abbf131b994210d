"""Benchmark of opening documents by whitespace segments, beside SentencePiece's full encode.

1. Opening 1 MB and 10 MB of prose, code and CJK text with the bundled Mistral tokenizer: a full
   SentencePiece encode vs a Document opened with an empty segment cache (cold) and opened again
   (warm, as on a re-open or a model switch back), medians of interleaved runs.
2. Opening 50 MB of prose (cold), once.
3. The segment cache's memory: its own estimate and what tracemalloc sees, after 10 MB of prose
   and when filled to its bound with unique words.

Unigram models are not measured: they are re-encoded whole (SentencePiece sums their path
scores in 32-bit floats, so no window is exact; see docs/how-it-works.md).

Machines here are shared and noisy: times are CPU time of this process (see runinfo.py), and the
ratios compare numbers of the same run.

    python benchmarks/bench_open.py [--quick] [--no-50mb] [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

import runinfo
import sentencepiece as spm

from tokenline.core import COMPILED, Document, Model, load_model

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CORPUS = ROOT / "tests" / "data" / "botchan.txt"
MB = 1_000_000

TARGETS = {"prose_open_ratio": 0.2, "other_open_ratio": 1.0, "open_50mb_s": 10.0}
CACHE_LIMIT_MB = 64.0

CJK_WORDS = [
    "東京",
    "言語モデル",
    "の",
    "は",
    "を",
    "トークン",
    "数える",
    "文章",
    "書く",
    "中文",
    "字符",
    "测试",
    "我们",
    "模型",
    "上下文",
    "窗口",
    "한국어",
    "문장",
    "입니다",
    "、",
]


def texts(prose: str) -> dict[str, str]:
    code = "\n".join(
        p.read_text(encoding="utf-8")
        for d in ("core", "server", "cli", "tests", "benchmarks")
        for p in sorted((ROOT / d).rglob("*.py"))
    )
    rng = random.Random(9)
    lines = []
    for _ in range(4000):
        words = [rng.choice(CJK_WORDS) for _ in range(rng.randint(8, 30))]
        lines.append("".join(words) + "。")
    return {"prose": prose, "code": code, "CJK": "\n".join(lines)}


def repeat_to(text: str, size: int) -> str:
    """text repeated to `size` UTF-8 bytes (cut at a character)."""
    raw = (text * (size // max(1, len(text.encode("utf-8"))) + 1)).encode("utf-8")[:size]
    return raw.decode("utf-8", "ignore")


def timed(fn: object, *args: object) -> tuple[float, object]:
    """(CPU seconds, result) of fn(*args): see runinfo.py."""
    t0 = time.process_time()
    out = fn(*args)  # type: ignore[operator]
    return time.process_time() - t0, out


def open_experiment(model: Model, kind: str, text: str, runs: int) -> dict:
    sp = spm.SentencePieceProcessor(model_file=model.path)
    cache = model.family.cache
    full: list[float] = []
    cold: list[float] = []
    warm: list[float] = []
    exact = True
    for _ in range(runs):
        t, ids = timed(sp.encode, text)
        full.append(t)
        cache.clear()
        t, doc = timed(Document, model, text)
        cold.append(t)
        t, doc = timed(Document, model, text)
        warm.append(t)
        exact = exact and doc.ids() == ids  # type: ignore[attr-defined]
        del doc
        gc.collect()
    f = statistics.median(full)
    return {
        "kind": kind,
        "bytes": len(text.encode("utf-8")),
        "full_encode_s": f,
        "open_cold_s": statistics.median(cold),
        "open_warm_s": statistics.median(warm),
        "cold_ratio": statistics.median(cold) / f,
        "warm_ratio": statistics.median(warm) / f,
        "exact": exact,
    }


def cache_memory(model: Model, prose_10mb: str) -> dict:
    """The cache's own estimate and tracemalloc's count, after 10 MB of prose and when full."""
    cache = model.family.cache
    out: dict[str, float] = {}
    for label, text in (("after_10mb_prose", prose_10mb), ("filled", None)):
        cache.clear()
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        if text is not None:
            doc = Document(model, text)
            del doc
        else:
            rng = random.Random(1)
            while cache.bytes_used < cache.limit_bytes - 4096:
                words = " ".join(
                    "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(9))
                    for _ in range(20000)
                )
                doc = Document(model, words)
                del doc
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - base
        tracemalloc.stop()
        out[f"{label}_entries"] = cache.size()
        out[f"{label}_estimate_mb"] = cache.bytes_used / 2**20
        out[f"{label}_traced_mb"] = held / 2**20
    cache.clear()
    return out


def table(rows: list[dict]) -> str:
    lines = [
        "| text | size | full encode | open (cold cache) | ratio | open again (warm) | ratio |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r['kind']} | {r['bytes'] / MB:.0f} MB | {r['full_encode_s'] * 1e3:,.0f} ms "
            f"| {r['open_cold_s'] * 1e3:,.0f} ms | {r['cold_ratio']:.2f}× "
            f"| {r['open_warm_s'] * 1e3:,.0f} ms | {r['warm_ratio']:.2f}× |"
        )
    return "\n".join(lines)


def verdict(rows: list[dict], big: dict | None, mem: dict) -> list[str]:
    misses = []
    for r in rows:
        limit = TARGETS["prose_open_ratio"] if r["kind"] == "prose" else TARGETS["other_open_ratio"]
        if r["cold_ratio"] > limit or not r["exact"]:
            misses.append(f"{r['kind']} {r['bytes'] // MB} MB: {r['cold_ratio']:.2f}×")
    if big is not None and big["open_cold_s"] > TARGETS["open_50mb_s"]:
        misses.append(f"50 MB open {big['open_cold_s']:.1f} s")
    if mem["filled_traced_mb"] > CACHE_LIMIT_MB:
        misses.append(f"cache {mem['filled_traced_mb']:.1f} MB")
    return misses


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=str(CORPUS))
    parser.add_argument("--out", default=str(HERE / "results"))
    parser.add_argument("--quick", action="store_true", help="1 MB only, fewer runs")
    parser.add_argument("--no-50mb", action="store_true", help="skip the 50 MB document")
    args = parser.parse_args()
    run = runinfo.start()
    prose = Path(args.corpus).read_text(encoding="utf-8")
    model = load_model()
    sources = texts(prose)
    sizes = [MB] if args.quick else [MB, 10 * MB]
    runs = 3
    rows = []
    for size in sizes:
        for kind, source in sources.items():
            rows.append(open_experiment(model, kind, repeat_to(source, size), runs))
            print(table(rows[-1:]).splitlines()[-1], flush=True)
    big = None
    if not args.quick and not args.no_50mb:
        model.family.cache.clear()
        t, _ = timed(Document, model, repeat_to(prose, 50 * MB))
        big = {"open_cold_s": t}
        print(f"50 MB of prose opens in {t:.1f} s (cold cache)", flush=True)
    mem = cache_memory(model, repeat_to(prose, MB if args.quick else 10 * MB))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    result = {
        "run": runinfo.finish(run),
        "compiled": COMPILED,
        "open": rows,
        "open_50mb": big,
        "cache": mem,
    }
    (out / "open.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"\nCompiled core: {COMPILED}. sentencepiece {spm.__version__}.\n")
    print(table(rows))
    print(f"\ncache: {json.dumps(mem)}")
    misses = verdict(rows, big, mem)
    print("targets:", "all met" if not misses else "missed: " + "; ".join(misses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
