"""Language-server benchmark: didChange -> tokenline/status latency, and semantic-token payloads.

A real stdio client (a minimal JSON-RPC reader/writer on the server's pipes) runs
`python -m tokenline serve` with the interpreter running this script, opens Botchan repeated to
10 KB, 100 KB, 1 MB and 10 MB, and for each size sends one-character edits one at a time, timing
each from the write of the didChange to the arrival of the tokenline/status of that version. Then
it measures the semantic tokens: the full result, and the delta after a one-character edit (the
JSON bytes of the response). Documents over 1,000,000 characters are served by range only, so for
them it measures a 50-line range instead.

    python benchmarks/bench_server.py [--edits 200] [--sizes 10000,100000,1000000,10000000]

Prints a Markdown table; writes benchmarks/results/server.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import queue
import random
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import runinfo
import sentencepiece as spm

from tokenline.core import load_model

ROOT = Path(__file__).resolve().parent.parent
BOTCHAN = ROOT / "tests" / "data" / "botchan.txt"
RESULTS = ROOT / "benchmarks" / "results" / "server.json"


class Client:
    """JSON-RPC over the server's stdin/stdout; a thread timestamps every message on arrival."""

    def __init__(self, cmd: list[str]) -> None:
        env = dict(os.environ, TOKENLINE_LOG="WARNING")
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=sys.stderr, env=env
        )
        self.messages: queue.Queue[tuple[float, dict[str, Any], int]] = queue.Queue()
        self._id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = 0
            while True:
                line = out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            body = out.read(length)
            t = time.perf_counter()
            self.messages.put((t, json.loads(body), len(body)))

    def send(self, msg: dict[str, Any]) -> float:
        body = json.dumps(msg).encode()
        data = b"Content-Length: %d\r\n\r\n" % len(body) + body
        assert self.proc.stdin is not None
        t = time.perf_counter()
        self.proc.stdin.write(data)
        self.proc.stdin.flush()
        return t

    def notify(self, method: str, params: Any) -> float:
        return self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: Any) -> tuple[Any, int, float]:
        """(result, JSON bytes of the response, seconds)."""
        self._id += 1
        rid = self._id
        t0 = self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            t, msg, size = self.messages.get(timeout=600)
            if msg.get("id") == rid and "method" not in msg:
                if "error" in msg:
                    raise RuntimeError(msg["error"])
                return msg.get("result"), size, t - t0
            self._handle(msg)

    def _handle(self, msg: dict[str, Any]) -> None:
        if "id" in msg and "method" in msg:  # a request from the server: answer null
            self.send({"jsonrpc": "2.0", "id": msg["id"], "result": None})

    def wait_status(self, uri: str, version: int) -> float:
        while True:
            t, msg, _ = self.messages.get(timeout=600)
            if msg.get("method") == "tokenline/status":
                p = msg["params"]
                if p["uri"] == uri and p["version"] == version:
                    return t
            else:
                self._handle(msg)

    def close(self) -> None:
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


def position(line_starts: list[int], off: int) -> dict[str, int]:
    # Botchan is ASCII apart from a few characters; the benchmark edits only ASCII lines.
    import bisect

    line = bisect.bisect_right(line_starts, off) - 1
    return {"line": line, "character": off - line_starts[line]}


def bench_size(size: int, edits: int, seed: int) -> dict[str, Any]:
    base = BOTCHAN.read_text(encoding="utf-8")
    # ASCII only, so UTF-16 columns are code-point columns here.
    base = base.encode("ascii", "ignore").decode()
    text = (base * (size // len(base) + 1))[:size]
    # The baseline, in the same run: what re-encoding the whole document per change costs.
    sp = spm.SentencePieceProcessor(model_file=load_model().path)
    full_runs = []
    for _ in range(1 if size >= 5_000_000 else 3):
        t0 = time.perf_counter()
        sp.encode(text)
        full_runs.append(time.perf_counter() - t0)
    full_encode_s = statistics.median(full_runs)
    client = Client([sys.executable, "-m", "tokenline", "serve"])
    try:
        init, _, _ = client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": None,
                "capabilities": {
                    "general": {"positionEncodings": ["utf-16"]},
                    "textDocument": {
                        "semanticTokens": {
                            "requests": {"full": {"delta": True}, "range": True},
                            "tokenTypes": [],
                            "tokenModifiers": [],
                            "formats": ["relative"],
                        }
                    },
                },
                "initializationOptions": {"contextWindow": 8192},
            },
        )
        client.notify("initialized", {})
        uri = f"file:///bench/{size}.txt"
        t0 = client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "plaintext", "version": 1, "text": text}},
        )
        t_open = client.wait_status(uri, 1) - t0
        r = random.Random(seed)
        starts = [0]
        for i, ch in enumerate(text):
            if ch == "\n":
                starts.append(i + 1)
        latencies: list[float] = []
        version = 1
        inserted: list[int] = []
        for i in range(edits):
            off = r.randrange(len(text) // 4, 3 * len(text) // 4)
            pos = position(starts, off)
            # Alternate inserting a letter and deleting it again: the text stays the same size
            # and line index, so positions stay valid without re-scanning.
            if i % 2 == 0:
                change = {"range": {"start": pos, "end": pos}, "text": "e"}
                inserted.append(off)
            else:
                off = inserted.pop()
                p = position(starts, off)
                change = {
                    "range": {"start": p, "end": {**p, "character": p["character"] + 1}},
                    "text": "",
                }
            version += 1
            t0 = client.notify(
                "textDocument/didChange",
                {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]},
            )
            latencies.append(client.wait_status(uri, version) - t0)
        latencies.sort()
        p99 = latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))]
        result: dict[str, Any] = {
            "size_chars": len(text),
            "open_to_status_s": round(t_open, 3),
            "edits": edits,
            "median_ms": round(statistics.median(latencies) * 1e3, 3),
            "p99_ms": round(p99 * 1e3, 3),
            "max_ms": round(latencies[-1] * 1e3, 3),
            "full_encode_ms": round(full_encode_s * 1e3, 1),
            "speedup": round(full_encode_s / statistics.median(latencies), 1),
        }
        doc = {"textDocument": {"uri": uri}}
        full, full_bytes, full_s = client.request("textDocument/semanticTokens/full", doc)
        if full is None:
            rng = {"start": {"line": 1000, "character": 0}, "end": {"line": 1050, "character": 0}}
            _, rbytes, rs = client.request(
                "textDocument/semanticTokens/range", {**doc, "range": rng}
            )
            result.update(
                semantic="range only",
                range_50_lines_bytes=rbytes,
                range_50_lines_ms=round(rs * 1e3, 2),
            )
        else:
            off = len(text) // 2
            pos = position(starts, off)
            version += 1
            client.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": version},
                    "contentChanges": [{"range": {"start": pos, "end": pos}, "text": "x"}],
                },
            )
            client.wait_status(uri, version)
            delta, delta_bytes, delta_s = client.request(
                "textDocument/semanticTokens/full/delta",
                {**doc, "previousResultId": full["resultId"]},
            )
            assert "edits" in delta, "expected a delta"
            result.update(
                semantic="full+delta",
                full_bytes=full_bytes,
                full_ms=round(full_s * 1e3, 1),
                delta_bytes=delta_bytes,
                delta_ms=round(delta_s * 1e3, 2),
                delta_ints=sum(len(e.get("data") or []) for e in delta["edits"]),
            )
        result["compiled"] = bool(init and _compiled())
        return result
    finally:
        client.close()


def _compiled() -> bool:
    import tokenline.core

    return bool(tokenline.core.COMPILED)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--edits", type=int, default=200)
    p.add_argument("--sizes", default="10000,100000,1000000,10000000")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default=str(RESULTS))
    args = p.parse_args()
    run = runinfo.start()
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        print(f"... {size:,} characters", file=sys.stderr, flush=True)
        rows.append(bench_size(size, args.edits, args.seed))
    print(
        "| document | open → status | didChange → status median | p99 | max "
        "| full re-encode (baseline) | speed-up | semantic tokens |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for r in rows:
        if r["semantic"] == "range only":
            sem = (
                f"range only; 50 lines: {r['range_50_lines_bytes']:,} B "
                f"in {r['range_50_lines_ms']} ms"
            )
        else:
            sem = (
                f"full {r['full_bytes']:,} B in {r['full_ms']} ms; delta after 1 char: "
                f"{r['delta_bytes']:,} B in {r['delta_ms']} ms"
            )
        print(
            f"| {r['size_chars']:,} chars | {r['open_to_status_s']} s | {r['median_ms']} ms | "
            f"{r['p99_ms']} ms | {r['max_ms']} ms | {r['full_encode_ms']:,} ms "
            f"| {r['speedup']:,.0f}× | {sem} |"
        )
    out = {
        "benchmark": "server",
        "run": runinfo.finish(run),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "compiled_core": _compiled(),
        "edits_per_size": args.edits,
        "results": rows,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(f"\nwritten to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
