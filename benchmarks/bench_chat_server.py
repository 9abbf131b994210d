"""Benchmark of a large chat file in the language server: a generated JSONL file of 100,000
conversations (about 100 MB, Botchan's words in system, user and assistant turns).

The server runs as a subprocess (`tokenline serve`), driven over stdio as VS Code drives it:

- first hints: from sending the didOpen to the answer of an inlay-hint request for the first
  screen (lines 0-60) sent right behind it;
- totals: from the didOpen until the status's `chat` is no longer pending (every conversation
  counted in idle slices), in CPU time of the server process (the machine is shared: CPU time is
  what other processes do not slow) and in wall-clock time; beside it, encoding every rendered
  conversation with the reference library in this process (sentencepiece for the bundled model,
  which has no chat template: the contents; tiktoken's `encode_ordinary` of every value, OpenAI's
  rule, for an o200k_base run), in CPU time. The target: totals at most 0.3 times the reference.
  The totals must equal the reference's sum;
- an edit inside one message (a letter typed into a visible conversation, once the file is
  settled): from sending the didChange to the answer of the inlay-hint request for the screen
  around it (target: 5 ms).

Medians over the repetitions. Writes benchmarks/results/chat_server.json (bench_chat.py measures
the billing itself, beside transformers).

    python benchmarks/bench_chat_server.py [--conversations 100000] [--edits 200] [--model M]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import runinfo
from bench_server import Client

from tokenline.core import bundled_model_path

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent / "tests" / "data" / "botchan.txt"
RESULTS = HERE / "results" / "chat_server.json"
TARGET_TOTALS_RATIO = 0.3
TARGET_EDIT_MS = 5.0
SCREEN = 60
CLK_TCK = os.sysconf("SC_CLK_TCK")


def generate(n: int, seed: int = 7) -> str:
    """n conversations, one per line, about 1,000 characters each."""
    words = CORPUS.read_text(encoding="utf-8").lstrip("\ufeff").split()
    rng = random.Random(seed)

    def piece(k: int) -> str:
        i = rng.randrange(0, len(words) - k)
        return " ".join(words[i : i + k])

    lines = []
    for _ in range(n):
        messages = [{"role": "system", "content": "You are a careful reader of Botchan."}]
        for _turn in range(rng.randint(1, 3)):
            messages.append({"role": "user", "content": piece(rng.randint(8, 45))})
            messages.append({"role": "assistant", "content": piece(rng.randint(15, 90))})
        lines.append(json.dumps({"messages": messages}, ensure_ascii=False))
    return "\n".join(lines) + "\n"


def reference(text: str, model: str) -> tuple[float, int]:
    """(CPU seconds, total) of counting every conversation with the reference library."""
    if model == "o200k_base":
        import tiktoken

        enc = tiktoken.get_encoding("o200k_base")
        t0 = time.process_time()
        total = 0
        for line in text.splitlines():
            total += 3
            for m in json.loads(line)["messages"]:
                total += 3 + sum(len(enc.encode_ordinary(v)) for v in m.values())
        return time.process_time() - t0, total
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=str(bundled_model_path()))
    t0 = time.process_time()
    total = 0
    for line in text.splitlines():
        total += sum(len(sp.encode(m["content"])) for m in json.loads(line)["messages"])
    return time.process_time() - t0, total


def server_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def hints(c: Client, uri: str, first: int, last: int) -> tuple[int, float]:
    rng = {"start": {"line": first, "character": 0}, "end": {"line": last, "character": 0}}
    return c.ask("textDocument/inlayHint", {"textDocument": {"uri": uri}, "range": rng})


def wait_status(c: Client, uri: str, done: Any) -> tuple[float, dict[str, Any]]:
    while True:
        for t, p in c.statuses:
            if p["uri"] == uri and done(p):
                return t, p
        c.pump()


def open_and_count(c: Client, uri: str, text: str) -> dict[str, Any]:
    cpu0 = server_cpu(c.proc.pid)
    sent = c.open(uri, text)
    rid, _ = hints(c, uri, 0, SCREEN)
    t_hints, answer = c.answer(rid)
    assert answer.get("result"), answer
    t_totals, status = wait_status(c, uri, lambda p: p.get("chat") and not p["chat"]["pending"])
    cpu_totals = server_cpu(c.proc.pid) - cpu0
    t_raw, _ = wait_status(c, uri, lambda p: not p["pending"])
    return {
        "first_hints_s": t_hints - sent,
        "totals_wall_s": t_totals - sent,
        "totals_cpu_s": cpu_totals,
        "raw_tokens_wall_s": t_raw - sent,
        "chat": status["chat"],
    }


def edit_times(c: Client, uri: str, text: str, n: int) -> tuple[list[float], float]:
    """Seconds from each didChange (a letter typed in a message of line 1000 + i) to the hints of
    the screen around it; and the server's CPU seconds per edit (its clock ticks are 10 ms: the
    mean over all of them)."""
    lines = text.split("\n")
    out = []
    cpu0 = server_cpu(c.proc.pid)
    for i in range(n):
        line = 1000 + i
        at = lines[line].index('"content": "', 80) + len('"content": "') + 3
        here = {"line": line, "character": at}
        change = {"range": {"start": here, "end": here}, "text": "x"}
        sent = c.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": 2 + i}, "contentChanges": [change]},
        )
        rid, _ = hints(c, uri, line - SCREEN // 2, line + SCREEN // 2)
        t, answer = c.answer(rid)
        assert answer.get("result"), answer
        out.append(t - sent)
    return out, (server_cpu(c.proc.pid) - cpu0) / n


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--conversations", type=int, default=100_000)
    p.add_argument("--edits", type=int, default=200)
    p.add_argument("--model", default="", help="the document's model (default: the bundled one)")
    args = p.parse_args()
    run = runinfo.start()
    text = generate(args.conversations)
    ref_cpu, ref_total = reference(text, args.model)
    c = Client(sys.executable)
    try:
        c.initialize({"model": args.model} if args.model else {})
        uri = "file:///bench/chat.jsonl"
        opened = open_and_count(c, uri, text)
        edits, edit_cpu = edit_times(c, uri, text, args.edits)
    finally:
        c.close()
    assert opened["chat"]["total"] == ref_total, (opened["chat"], ref_total)
    result = {
        "run": runinfo.finish(run),
        "model": args.model or "mistral-7b-v0.1",
        "conversations": args.conversations,
        "megabytes": round(len(text.encode()) / 1e6, 1),
        **{k: round(v, 4) if isinstance(v, float) else v for k, v in opened.items()},
        "reference_cpu_s": round(ref_cpu, 3),
        "totals_over_reference": round(opened["totals_cpu_s"] / ref_cpu, 3),
        "target_totals_ratio": TARGET_TOTALS_RATIO,
        "edit_to_hints_ms_median": round(1e3 * statistics.median(edits), 3),
        "edit_to_hints_ms_max": round(1e3 * max(edits), 3),
        "edit_server_cpu_ms_mean": round(1e3 * edit_cpu, 3),
        "target_edit_ms": TARGET_EDIT_MS,
    }
    print(json.dumps(result, indent=2))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
