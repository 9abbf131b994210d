"""Benchmark of several models side by side (`tokenline.compareModels`): the server's cost per
edit with three models against one.

The language server runs in this process (its features and publishing, without a client: each
notification is counted, not written). A 100 KB document of Botchan gets the same series of
one-character edits (a letter typed, or one deleted, at random places) under each configuration;
each edit is timed from the didChange to the end of the publishing after it (status and
diagnostics), in CPU time of this process and in wall-clock time. Configurations, interleaved in
rounds so that the machine's load falls on all of them alike:

- each model alone as the document's model: the bundled Mistral, o200k_base, a Llama 3 style
  tokenizer.json trained at the start (see trained_models);
- the three together: Mistral as the document's model, the other two as `compareModels`.

Medians; the ratios are taken in the same run. The target: three models cost at most 3.5 times
one model's edit.

    TIKTOKEN_CACHE_DIR=... python benchmarks/bench_compare.py [--edits 400] [--size 100000]

Prints a Markdown table; writes benchmarks/results/compare.json.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import string
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import trained_models
from lsprotocol import types as T

from tokenline.core import COMPILED
from tokenline.server.app import TokenlineServer

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent / "tests" / "data" / "botchan.txt"
RESULTS = HERE / "results" / "compare.json"
TARGET_RATIO = 3.5
ROUNDS = 4


class QuietServer(TokenlineServer):
    """The server without a client: notifications and messages are counted, not sent."""

    def __init__(self, settings: dict[str, Any]) -> None:
        super().__init__()
        self.configuration.init_raw = settings
        self.sent = 0

    def notify(self, method: str, params: object) -> None:
        self.sent += 1

    def show(self, kind: T.MessageType, message: str) -> None:
        raise SystemExit(f"the server said: {message}")


def edits(text: str, n: int, seed: int) -> list[tuple[int, int, str]]:
    """n one-character edits as (start, end, text) in code points, each valid after the ones
    before: a letter typed, or one deleted, at a random place of the middle half."""
    rng = random.Random(seed)
    length = len(text)
    out = []
    for _ in range(n):
        at = rng.randrange(length // 4, 3 * length // 4)
        if rng.random() < 0.5:
            out.append((at, at, rng.choice(string.ascii_lowercase)))
            length += 1
        else:
            out.append((at, at + 1, ""))
            length -= 1
    return out


def position(text: str, offset: int) -> T.Position:
    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    return T.Position(line=line, character=offset - start)


def run(
    settings: dict[str, Any], text: str, series: list[tuple[int, int, str]]
) -> list[tuple[float, float]]:
    """(CPU seconds, wall seconds) of each edit of the series on a server with these settings
    (a `selection` entry: a selection of that many characters, counted after every edit)."""
    settings = dict(settings)
    selected = settings.pop("selection", 0)
    server = QuietServer(settings)
    uri = "file:///bench/compare.txt"
    item = T.TextDocumentItem(uri=uri, language_id="plaintext", version=1, text=text)
    server.did_open(T.DidOpenTextDocumentParams(text_document=item))
    server.flush()
    st = server.store.require(uri)
    while st.doc.prepare(1 << 20):  # the idle work opening defers, done before timing
        pass
    for doc in server.compare._docs[uri].docs.values():
        while doc.prepare(1 << 20):
            pass
    if selected:
        start = len(text) // 10
        a, b = position(text, start), position(text, start + selected)
        ranges = [T.Range(start=a, end=b)]
        server.compare.selection({"uri": uri, "ranges": ranges})
        server.flush()
    mirror = text
    times = []
    for version, (a, b, new) in enumerate(series, start=2):
        rng = T.Range(start=position(mirror, a), end=position(mirror, b))
        params = T.DidChangeTextDocumentParams(
            text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[T.TextDocumentContentChangePartial(range=rng, text=new)],
        )
        c0, w0 = time.process_time(), time.perf_counter()
        server.did_change(params)
        server.flush()
        times.append((time.process_time() - c0, time.perf_counter() - w0))
        mirror = mirror[:a] + new + mirror[b:]
    assert st.doc.text == mirror, "the server's text drifted from the edits"
    # Each compared count is still its model's one-shot encode of the text.
    specs = settings.get("compareModels", [])
    for count, spec in zip(server.compare.compared(st), specs, strict=True):
        assert count.tokens == len(server.models.load(spec, uri).encode(mirror)), spec
    return times


def configurations(hf: str) -> dict[str, dict[str, Any]]:
    return {
        "mistral-7b-v0.1 alone": {"model": "mistral-7b-v0.1"},
        "o200k_base alone": {"model": "o200k_base"},
        "llama3-style alone": {"model": hf},
        "three (mistral + compare o200k_base, llama3-style)": {
            "model": "mistral-7b-v0.1",
            "compareModels": ["o200k_base", hf],
        },
        "three, a 1,000-character selection counted under each": {
            "model": "mistral-7b-v0.1",
            "compareModels": ["o200k_base", hf],
            "selection": 1000,
        },
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--edits", type=int, default=400, help="edits per configuration (default 400)")
    p.add_argument("--size", type=int, default=100_000, help="characters (default 100,000)")
    args = p.parse_args()
    base = CORPUS.read_text(encoding="utf-8")
    text = (base * (args.size // len(base) + 1))[: args.size]
    with tempfile.TemporaryDirectory() as tmp:
        hf = str(trained_models.train("llama3-style", CORPUS, Path(tmp)))
        configs = configurations(hf)
        per_round = max(1, args.edits // ROUNDS)
        cpu: dict[str, list[float]] = {name: [] for name in configs}
        wall: dict[str, list[float]] = {name: [] for name in configs}
        for r in range(ROUNDS):
            series = edits(text, per_round, seed=2024 + r)
            for name, settings in configs.items():
                for c, w in run(settings, text, series):
                    cpu[name].append(c)
                    wall[name].append(w)
    rows = {
        name: {
            "cpu_us": 1e6 * statistics.median(cpu[name]),
            "wall_us": 1e6 * statistics.median(wall[name]),
        }
        for name in configs
    }
    names = list(configs)
    singles, three, selected = names[:3], names[3], names[4]
    one = rows[singles[0]]["cpu_us"]
    mean_single = statistics.mean(rows[n]["cpu_us"] for n in singles)
    summary = {
        "three_over_mistral_alone": rows[three]["cpu_us"] / one,
        "three_over_mean_single": rows[three]["cpu_us"] / mean_single,
        "three_over_sum_of_singles": rows[three]["cpu_us"]
        / sum(rows[n]["cpu_us"] for n in singles),
        "three_with_selection_over_mistral_alone": rows[selected]["cpu_us"] / one,
        "target_ratio": TARGET_RATIO,
    }
    print(
        f"Per-edit cost, {args.size:,} characters, {per_round * ROUNDS} edits each, "
        f"core {'compiled' if COMPILED else 'pure Python'} (medians)\n"
    )
    print("| configuration | CPU per edit | wall per edit |")
    print("| --- | ---: | ---: |")
    for name in names:
        print(f"| {name} | {rows[name]['cpu_us']:.0f} us | {rows[name]['wall_us']:.0f} us |")
    print()
    print(
        f"three models / Mistral alone: {summary['three_over_mistral_alone']:.2f}x "
        f"(target <= {TARGET_RATIO}x); / the mean single model: "
        f"{summary['three_over_mean_single']:.2f}x; / the three singles' sum: "
        f"{summary['three_over_sum_of_singles']:.2f}x; with a selection / Mistral alone: "
        f"{summary['three_with_selection_over_mistral_alone']:.2f}x"
    )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "size": args.size,
                "edits": per_round * ROUNDS,
                "compiled": COMPILED,
                "python": sys.version.split()[0],
                "medians": rows,
                "ratios": summary,
            },
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
