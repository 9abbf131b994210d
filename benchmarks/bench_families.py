"""Benchmark of tiktoken encodings, Tekken and tokenizer.json files beside their own libraries.

For each model: the per-edit latency (a random token loses a character and the rest is shuffled,
as in bench_core; median, p99, p99.9 and max, right after opening and after idle work) at 10 KB,
1 MB and 10 MB of English prose (and with --texts, of Japanese prose and Python source), beside
the reference's full encode of the same text; edits inside one 1 MB line without breaks (a run of
letters, one pre-token where the library's BPE of the piece is the whole cost; with --blobs,
base64 and `aB3+/` repeated too), and a space or a comma typed there and undone (a split and a
join); and opening a document beside one full encode. Medians over many runs in CPU time of this
process (see runinfo.py), ratios taken in the same run (the machines are shared and noisy).

Models are tiktoken names, Tekken files, tokenizer.json files (by default the real Phi-3 mini
file of tests/data: Llama 2's pieces and layout), or `hf:<layout>`: a tokenizer.json trained at
the start of the run (see trained_models), against the `tokenizers` library's own encode. A
model Tokenline re-encodes whole on every edit gets fewer edits: each series of edits stops
after `--budget` seconds.

    TIKTOKEN_CACHE_DIR=... python benchmarks/bench_families.py [--quick] [--models o200k_base,...]
        [--corpus text.txt] [--texts English,Japanese,code] [--blobs letters,base64,aB3+/]
        [--results bench_families]
"""

from __future__ import annotations

import argparse
import base64
import importlib.util
import json
import random
import statistics
import string
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import runinfo
import trained_models
from bench_core import TEXTS, tails, text_of, token_edit
from bench_core import time_once as timed

from tokenline.core import COMPILED, Document, Model, load_model

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent / "tests" / "data" / "botchan.txt"
# GPT-NeoX-20B's own tokenizer.json (Apache-2.0), a real file of the NFC byte-level layout.
NEOX = HERE.parent / "tests" / "data" / "tokenizers" / "gpt-neox-20b" / "tokenizer.json"
PHI3 = HERE.parent / "tests" / "data" / "tokenizers" / "phi-3-mini" / "tokenizer.json"
# Qwen2.5's (Apache-2.0): NFC, then a Split by Qwen 2's pattern, byte-level BPE of 151,643 pieces.
QWEN25 = HERE.parent / "tests" / "data" / "tokenizers" / "qwen2.5" / "tokenizer.json"


def tekken_file() -> Path:
    """Mistral's Tekken file, from mistral-common's package data (a test dependency)."""
    spec = importlib.util.find_spec("mistral_common")
    if spec is None or spec.origin is None:
        raise SystemExit("bench_families needs mistral-common (pip install '.[test]')")
    return Path(spec.origin).parent / "data" / "tekken_240911.json"


DEFAULT_MODELS = ",".join(
    [
        "o200k_base",
        "cl100k_base",
        str(tekken_file()),
        *(f"hf:{name}" for name in trained_models.LAYOUTS),
        str(PHI3),
        str(NEOX),
        str(QWEN25),
    ]
)
TARGETS = {"median_us": 30.0, "flatness": 1.5, "speedup_1mb": 1000.0, "blob_ms": 1.0, "open": 1.3}
# Edits timed at least, however long they take (a model re-encoded whole on every edit).
MIN_EDITS = 5
# A 1 MB pre-token whose reference encode takes longer than this is not edited (noted instead).
BLOB_CAP_S = 60.0


def reference(model: Model) -> Callable[[str], object]:
    """The reference library's own encode of a whole text: for a tokenizer.json, a Tokenizer the
    `tokenizers` library loads from the file (encode without special tokens); otherwise
    Model.encode, which is tiktoken's encode_ordinary (Tekken's ids shifted past its special
    tokens, as mistral-common does)."""
    if model.model_type.endswith("(tokenizer.json)"):
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(model.path)
        return lambda text: tok.encode(text, add_special_tokens=False)
    return model.encode


def mode(model: Model) -> str:
    return "incremental" if model.incremental else "full re-encode"


def edits_us(doc: Document, rng: random.Random, n: int, budget_s: float) -> list[float]:
    """n edits' times in µs, or fewer once budget_s has passed (but at least MIN_EDITS)."""
    out: list[float] = []
    stop = time.perf_counter() + budget_s
    for _ in range(n):
        if len(out) >= MIN_EDITS and time.perf_counter() > stop:
            break
        start, end, new = token_edit(doc, rng)
        old = doc.slice(start, end)
        out.append(timed(doc.edit, start, end, new) * 1e6)
        doc.edit(start, start + len(new), old)  # undo, so the text stays prose
    return out


def _prepare_all(doc: Document) -> None:
    while doc.prepare():
        pass


def size_row(
    spec: str, kind: str, prose: str, size: int, edits: int, runs: int, budget_s: float
) -> dict:
    model = load_model(spec)
    encode = reference(model)
    text = text_of(kind, size, prose)
    opens, fulls = [], []
    for _ in range(runs):  # interleaved, so that load changes hit both alike
        opens.append(timed(Document, model, text))
        fulls.append(timed(encode, text))
    # Edits right after opening, each in a part of the document no edit has touched yet: they
    # also find where pieces start there (what opening deferred). A model re-encoded whole has
    # nothing deferred: its first edits are its edits.
    cold = None
    if model.incremental:
        first = Document(model, text)
        cold = edits_us(first, random.Random(size + 1), edits, budget_s)
    doc = Document(model, text)
    prepare = timed(_prepare_all, doc)  # what an editor does in idle time after opening
    lat = edits_us(doc, random.Random(size), edits, budget_s)
    assert doc.ids() == model.encode(doc.text), "benchmark edits left the document inexact"
    full = statistics.median(fulls)
    return {
        **(tails([t / 1e6 for t in cold], "cold_") if cold else {"cold_median_us": None}),
        "prepare_ms": prepare * 1e3,
        "model": model.name,
        "mode": mode(model),
        "text": kind,
        "size": size,
        "edits": len(lat),
        **tails([t / 1e6 for t in lat]),
        "full_ms": full * 1e3,
        "speedup": full * 1e6 / statistics.median(lat),
        "open_ratio": statistics.median(opens) / full,
    }


BLOBS = ("letters", "base64", "aB3+/")


def blob_text(kind: str, rng: random.Random) -> str:
    """1 MB without a line break: a run of lower-case letters (one pre-token; for WordPiece one
    word, longer than any it splits ([UNK]); for Unigram after Metaspace, one piece), base64 (its
    digits and signs cut it into short pieces), or `aB3+/` repeated."""
    if kind == "letters":
        return "".join(rng.choice(string.ascii_lowercase) for _ in range(1_000_000))
    if kind == "base64":
        return base64.b64encode(rng.randbytes(750_000)).decode()
    if kind == "aB3+/":
        return "aB3+/" * 200_000
    raise SystemExit(f"unknown line {kind!r} (known: {', '.join(BLOBS)})")


def blob_row(spec: str, kind: str, edits: int, budget_s: float) -> dict:
    """Edits inside one 1 MB line without breaks (see blob_text): one character replaced by one
    of the same kind, so that the line stays what it is."""
    model = load_model(spec)
    rng = random.Random(7)
    blob = blob_text(kind, rng)
    text = f"data = '{blob}'\n"
    row: dict = {"model": model.name, "mode": mode(model), "line": kind}
    full = timed(reference(model), text)
    row["full_ms"] = full * 1e3
    if full > BLOB_CAP_S:
        row["skipped"] = f"the reference's encode took {full:.0f} s"
        return row
    first = Document(model, text)
    cold = timed(first.edit, 500_000, 500_001, "q")  # right after opening: finds piece starts
    doc = Document(model, text)
    _prepare_all(doc)
    lat: list[float] = []
    stop = time.perf_counter() + budget_s
    for _ in range(edits):
        if len(lat) >= MIN_EDITS and time.perf_counter() > stop:
            break
        at = rng.randrange(10, len(blob))
        old = doc.slice(at, at + 1)
        new = rng.choice(string.ascii_lowercase if old.islower() else blob[:64])
        lat.append(timed(doc.edit, at, at + 1, new) * 1e3)
        doc.edit(at, at + 1, old)
    ordered = sorted(lat)
    row.update(
        blob_ms=statistics.median(lat),
        p99_ms=ordered[int(0.99 * (len(lat) - 1))],
        max_ms=ordered[-1],
        edits=len(lat),
        first_ms=cold * 1e3,
    )
    row.update(split_row(doc, rng, len(blob), max(MIN_EDITS, edits // 4), budget_s))
    assert doc.ids() == model.encode(doc.text)
    return row


def split_row(
    doc: Document, rng: random.Random, size: int, edits: int, budget_s: float
) -> dict[str, float]:
    """A space, then a comma, typed inside the line (splitting it in two), each undone at once
    (joining the two again): the median ms of each, by series of `edits` (or `budget_s`)."""
    out: dict[str, float] = {}
    joins: list[float] = []
    for key, mark in (("space_ms", " "), ("comma_ms", ",")):
        lat: list[float] = []
        stop = time.perf_counter() + budget_s
        while len(lat) < edits and (len(lat) < MIN_EDITS or time.perf_counter() < stop):
            at = rng.randrange(10, size)
            lat.append(timed(doc.edit, at, at, mark) * 1e3)
            joins.append(timed(doc.edit, at, at + 1, "") * 1e3)
        out[key] = statistics.median(lat)
    out["join_ms"] = statistics.median(joins)
    return out


def _us(value: float | None) -> str:
    """A time in µs as the tables show it (in ms from 1 ms up, "—" for none)."""
    if value is None:
        return "—"
    if value < 1e3:
        return f"{value:.1f} µs"
    return f"{value / 1e3:.2f} ms" if value < 1e4 else f"{value / 1e3:,.0f} ms"


def _times(ratio: float) -> str:
    return f"{ratio:,.0f}×" if ratio >= 10 else f"{ratio:.2f}×"


def report(rows: list[dict], blobs: list[dict]) -> str:
    lines = [
        "| model | mode | text | size | edits | edit median | p99 | p99.9 | max | full encode |"
        " speed-up | open / encode | idle prepare | right after opening: median | p99 | p99.9 |"
        " max |",
        "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
        " ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r['model']} | {r['mode']} | {r['text']} | {r['size'] // 1000:,} KB |"
            f" {r['edits']:,} | {_us(r['median_us'])} | {_us(r['p99_us'])} |"
            f" {_us(r['p999_us'])} | {_us(r['max_us'])} | {r['full_ms']:,.1f} ms |"
            f" {_times(r['speedup'])} | {r['open_ratio']:.2f}× | {r['prepare_ms']:.0f} ms |"
            f" {_us(r['cold_median_us'])} | {_us(r.get('cold_p99_us'))} |"
            f" {_us(r.get('cold_p999_us'))} | {_us(r.get('cold_max_us'))} |"
        )
    lines += [
        "",
        "| model | 1 MB line | edit median | p99 | max | edits | first edit there, right after"
        " opening | full encode | space typed | comma typed | join |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for b in blobs:
        if "skipped" in b:
            lines.append(
                f"| {b['model']} | {b['line']} | not measured: {b['skipped']} | | | | | | | | |"
            )
            continue
        lines.append(
            f"| {b['model']} | {b['line']} | {_us(b['blob_ms'] * 1e3)} | {_us(b['p99_ms'] * 1e3)}"
            f" | {_us(b['max_ms'] * 1e3)} | {b['edits']} | {b['first_ms']:.1f} ms |"
            f" {b['full_ms']:,.0f} ms | {_us(b['space_ms'] * 1e3)} | {_us(b['comma_ms'] * 1e3)} |"
            f" {_us(b['join_ms'] * 1e3)} |"
        )
    return "\n".join(lines)


def resolve(spec: str, trained: Path) -> str:
    """A model spec load_model takes: `hf:<layout>` is trained into `trained` first."""
    if not spec.startswith("hf:"):
        return spec
    name = spec[len("hf:") :]
    if name not in trained_models.LAYOUTS:
        raise SystemExit(f"unknown layout {name!r} (known: {', '.join(trained_models.LAYOUTS)})")
    return str(trained_models.train(name, CORPUS, trained))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=DEFAULT_MODELS)
    parser.add_argument("--out", default=str(HERE / "results"))
    parser.add_argument("--quick", action="store_true", help="10 KB and 1 MB, fewer runs")
    parser.add_argument(
        "--corpus", default=str(CORPUS), help="the text documents repeat (default: Botchan)"
    )
    parser.add_argument(
        "--budget", type=float, default=60.0, help="seconds per series of edits (at least 5)"
    )
    parser.add_argument("--texts", default="English", help=", ".join(TEXTS))
    parser.add_argument(
        "--blobs", default="letters", help="lines without breaks: " + ", ".join(BLOBS)
    )
    parser.add_argument("--results", default="bench_families", help="name of the results files")
    args = parser.parse_args()
    run = runinfo.start()
    prose = Path(args.corpus).read_text(encoding="utf-8")
    sizes = [10_000, 1_000_000] if args.quick else [10_000, 1_000_000, 10_000_000]
    edits, runs = (300, 3) if args.quick else (2000, 5)
    rows, blobs, modes = [], [], []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-families-") as trained:
        for spec in args.models.split(","):
            path = resolve(spec, Path(trained))
            model = load_model(path)
            modes.append(f"{model.name}: {model.model_type}, {model.mode_note}")
            print(modes[-1], file=sys.stderr)
            for kind in args.texts.split(","):
                for size in sizes:
                    n_runs = runs if size < 5_000_000 else 3
                    rows.append(size_row(path, kind, prose, size, edits, n_runs, args.budget))
                    print(json.dumps(rows[-1]), file=sys.stderr)
            for line in args.blobs.split(","):
                blobs.append(blob_row(path, line, 20 if args.quick else 200, args.budget))
                print(json.dumps(blobs[-1]), file=sys.stderr)
    minutes = (time.perf_counter() - started) / 60
    text = report(rows, blobs)
    print(f"compiled core: {COMPILED}; ran {minutes:.1f} min\n")
    print("\n".join(modes) + f"\n\n{text}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = {
        "run": runinfo.finish(run),
        "modes": modes,
        "minutes": minutes,
        "sizes": rows,
        "blobs": blobs,
    }
    (out / f"{args.results}.json").write_text(json.dumps(results, indent=1))
    (out / f"{args.results}.md").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
