"""Language-server benchmark: what a person typing in a large document waits for.

A real stdio client (a minimal JSON-RPC reader/writer on the server's pipes, timestamping every
message as it arrives) runs `python -m tokenline serve`, for this build and, with --baseline
PYTHON, for another build's interpreter in the same run (a venv of main's HEAD), one after the
other on the same texts:

- **Keystrokes behind idle work** (`o200k_base`, whose opening defers work to idle time): open a
  1 MB and a 10 MB document of prose (Botchan), base64 in 76-character lines and Japanese (kana
  and kanji generated with a fixed seed), the way VS Code does (didOpen, then semantic tokens
  full and the first screen's range at once); type keys while the idle work runs, each as soon
  as the last one's status arrived plus a random 0-10 ms, then again once it is done. Reported:
  open -> first status, open -> first colours, and didChange -> status while idle work runs
  (median, p99, max: the max is the longest a key waited) beside the same after it; and from
  the server's log (DEBUG), every idle step's time by kind (prepare, give back, ...), the
  longest of them, and the cyclic collector's runs. Each key's wait is set on the server's
  timeline (benchmarks/timeline.py): how long an idle step ran after the key was written and
  before its handling started (and how much of that was the step's own CPU time), and what
  the slowest keys' waits went to (an idle step, a collection, their own edit, a publish, the
  server or the client waiting for a core, the pipes).
- **Latency and memory** (the bundled Mistral model, prose, 1 MB and 10 MB): didChange -> status
  median and p99 over 200 edits (the server logging at DEBUG, its keys set on its timeline),
  and the server's resident memory per token (VmRSS after the document minus before it, the
  model loaded by a small document first), with its peak.
- **A model that re-encodes whole** (a SentencePiece unigram model trained on Botchan here): 60
  keys typed 100 ms apart into a 1 MB document; the time from the last key to the status that
  counts it, against one whole re-encode (this build's core re-encoding the same text in the
  benchmark's process, timed in the same run), and how long each key waited for its status
  (pending or not) while re-encodes ran; three bursts, their medians.

    python benchmarks/bench_server.py [--baseline PYTHON] [--quick] [--whole-only]

Prints Markdown tables; writes benchmarks/results/server.json. No assertions: these are
numbers to read beside the baseline measured in the same run.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import platform
import queue
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from bisect import bisect_right
from collections import Counter
from pathlib import Path
from typing import Any

import runinfo
import sentencepiece as spm
import timeline

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("TOKENLINE_SHARED", ROOT.parent / "shared"))
BOTCHAN = ROOT / "tests" / "data" / "botchan.txt"
T5 = ROOT / "tests" / "data" / "tokenizers" / "t5-small" / "tokenizer.json"
SEED_TIKTOKEN = SHARED / "tools" / "seed-tiktoken-cache"
RESULTS = ROOT / "benchmarks" / "results" / "server.json"
MB = 1_000_000


# -- texts -------------------------------------------------------------------------------------


def prose(n: int) -> str:
    """Botchan repeated to n characters, ASCII only (so UTF-16 columns are code points)."""
    base = BOTCHAN.read_text(encoding="utf-8").encode("ascii", "ignore").decode()
    return (base * (n // len(base) + 1))[:n]


def base64_lines(n: int, seed: int = 1) -> str:
    """Random bytes in base64, 76 characters a line (as MIME writes it)."""
    raw = random.Random(seed).randbytes(n * 3 // 4 + 76)
    flat = base64.b64encode(raw).decode()
    return "\n".join(flat[i : i + 76] for i in range(0, len(flat), 76))[:n]


def japanese(n: int, seed: int = 1) -> str:
    """Japanese-looking prose: words of kanji, hiragana and katakana, commas and quotes,
    paragraphs of 80-400 characters. Every character is in the BMP (one UTF-16 unit)."""
    r = random.Random(seed)
    hiragana = [chr(c) for c in range(0x3041, 0x3097)]
    katakana = [chr(c) for c in range(0x30A1, 0x30FB)]
    kanji = [chr(c) for c in range(0x4E00, 0x4E00 + 2500)]
    parts: list[str] = []
    total = paragraph = 0
    limit = r.randint(80, 400)
    while total < n:
        k = r.random()
        if k < 0.35:
            word = "".join(r.choice(kanji) for _ in range(r.randint(1, 3)))
        elif k < 0.8:
            word = "".join(r.choice(hiragana) for _ in range(r.randint(1, 5)))
        elif k < 0.9:
            word = "".join(r.choice(katakana) for _ in range(r.randint(2, 6)))
        else:
            word = r.choice("、、。「」")
        parts.append(word)
        total += len(word)
        paragraph += len(word)
        if paragraph > limit:
            parts.append("。\n")
            total += 2
            paragraph, limit = 0, r.randint(80, 400)
    return "".join(parts)[:n]


TEXTS = {"prose": prose, "base64 lines": base64_lines, "Japanese": japanese}


# -- the client --------------------------------------------------------------------------------


class Client:
    """JSON-RPC over a server's stdin/stdout; a thread timestamps every message on arrival."""

    def __init__(self, python: str, env: dict[str, str] | None = None, log: Any = None) -> None:
        """log: a file for the server's stderr (else this process's)."""
        full_env = {**os.environ, "TOKENLINE_LOG": "WARNING", **(env or {})}
        self.proc = subprocess.Popen(
            [python, "-m", "tokenline", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log or sys.stderr,
            env=full_env,
        )
        self.messages: queue.Queue[tuple[float, dict[str, Any], int]] = queue.Queue()
        self._id = 0
        self.statuses: list[tuple[float, dict[str, Any]]] = []
        self.answers: dict[int, tuple[float, dict[str, Any]]] = {}
        self._reader = 0  # the reading thread's id
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        self._reader = threading.get_native_id()
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
            at = time.monotonic()  # the clock of the server's log (CLOCK_MONOTONIC)
            self.messages.put((at, json.loads(body), len(body)))

    def send(self, msg: dict[str, Any]) -> float:
        body = json.dumps(msg).encode()
        assert self.proc.stdin is not None
        t = time.monotonic()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()
        return t

    def notify(self, method: str, params: Any) -> float:
        return self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def ask(self, method: str, params: Any) -> tuple[int, float]:
        """Sends a request without waiting: its id and when it was sent."""
        self._id += 1
        return self._id, self.send(
            {"jsonrpc": "2.0", "id": self._id, "method": method, "params": params}
        )

    def request(self, method: str, params: Any) -> Any:
        rid, _ = self.ask(method, params)
        return self.answer(rid)[1].get("result")

    def pump(self, timeout: float = 600) -> None:
        """Takes one message: a status or an answer is recorded, a request answered null."""
        t, msg, _ = self.messages.get(timeout=timeout)
        if msg.get("method") == "tokenline/status":
            self.statuses.append((t, msg["params"]))
        elif "id" in msg and "method" in msg:
            self.send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
        elif "id" in msg:
            self.answers[msg["id"]] = (t, msg)

    def answer(self, rid: int) -> tuple[float, dict[str, Any]]:
        while rid not in self.answers:
            self.pump()
        return self.answers.pop(rid)

    def status(self, uri: str, version: int, settled: bool = True) -> tuple[float, dict[str, Any]]:
        """When the status of `version` arrived (settled: once it no longer says pending)."""
        seen = 0
        while True:
            for t, p in self.statuses[seen:]:
                mine = p["uri"] == uri and p["version"] == version
                if mine and not (settled and p.get("pending")):
                    return t, p
            seen = len(self.statuses)
            self.pump()

    def initialize(self, options: dict[str, Any]) -> None:
        # As VS Code asks: full, delta and range, and ServerCancelled answers understood.
        sem = {"requests": {"full": {"delta": True}, "range": True}, "formats": ["relative"],
               "serverCancelSupport": True}  # fmt: skip
        caps = {"general": {"positionEncodings": ["utf-16"]}}
        caps["textDocument"] = {"semanticTokens": {**sem, "tokenTypes": [], "tokenModifiers": []}}
        self.request(
            "initialize",
            {"processId": os.getpid(), "rootUri": None, "capabilities": caps,
             "initializationOptions": options},
        )  # fmt: skip
        self.notify("initialized", {})

    def open(self, uri: str, text: str) -> float:
        item = {"uri": uri, "languageId": "plaintext", "version": 1, "text": text}
        return self.notify("textDocument/didOpen", {"textDocument": item})

    def waited(self) -> tuple[float, float]:
        """Seconds the server's main thread and this client's reading thread have spent so far
        ready to run but waiting for a core (Linux's schedstat: its second field, in ns); NaN
        where the kernel does not say."""
        out = []
        for path in (
            f"/proc/{self.proc.pid}/task/{self.proc.pid}/schedstat",
            f"/proc/self/task/{self._reader}/schedstat",
        ):
            try:
                out.append(int(Path(path).read_text().split()[1]) / 1e9)
            except (OSError, IndexError, ValueError):
                out.append(float("nan"))
        return out[0], out[1]

    def memory(self) -> tuple[int, int]:
        """(VmRSS, VmHWM) of the server, in bytes."""
        fields = {}
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0]) * 1024
        return fields["VmRSS"], fields["VmHWM"]

    def close(self) -> None:
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.proc.wait(timeout=60)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


# -- typing ------------------------------------------------------------------------------------


class Typist:
    """Keys typed into an open document: a letter inserted at a random place in its middle half,
    then deleted again, so the text keeps its size and lines (and positions stay valid)."""

    def __init__(self, client: Client, uri: str, text: str, seed: int) -> None:
        self.client, self.uri, self.n = client, uri, len(text)
        self.starts = [0]
        at = text.find("\n")
        while at >= 0:
            self.starts.append(at + 1)
            at = text.find("\n", at + 1)
        self.random = random.Random(seed)
        self.version = 1
        self.inserted: dict[str, int] | None = None
        # Every key: its version, when it was sent and its status arrived (the monotonic clock),
        # and how long the server and the client's reader waited for a core meanwhile.
        self.typed: list[timeline.Key] = []

    def _position(self, off: int) -> dict[str, int]:
        line = bisect_right(self.starts, off) - 1
        return {"line": line, "character": off - self.starts[line]}

    def send(self) -> float:
        """Sends the next key; when it was sent."""
        if self.inserted is None:
            pos = self._position(self.random.randrange(self.n // 4, 3 * self.n // 4))
            change = {"range": {"start": pos, "end": pos}, "text": "e"}
            self.inserted = pos
        else:
            pos, self.inserted = self.inserted, None
            end = {**pos, "character": pos["character"] + 1}
            change = {"range": {"start": pos, "end": end}, "text": ""}
        self.version += 1
        return self.client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": self.uri, "version": self.version},
                "contentChanges": [change],
            },
        )

    def key(self) -> float:
        """One key, then its status: the seconds between."""
        server, reader = self.client.waited()
        sent = self.send()
        arrived = self.client.status(self.uri, self.version)[0]
        server_after, reader_after = self.client.waited()
        queued = server_after - server + reader_after - reader
        self.typed.append(timeline.Key(self.version, sent, arrived, queued))
        return arrived - sent

    def keys(self, seconds: float | None = None, count: int | None = None) -> list[float]:
        """Keys for `seconds` (or `count` keys), each 0-10 ms after the last one's status."""
        out: list[float] = []
        end = time.monotonic() + (seconds or 0)
        while (count is None and time.monotonic() < end) or (count and len(out) < count):
            out.append(self.key())
            time.sleep(self.random.uniform(0, 0.01))
        return out


def summary(latencies: list[float]) -> dict[str, float]:
    """Median, p99 and max in milliseconds, and how many."""
    s = sorted(latencies)
    p99 = s[min(len(s) - 1, int(0.99 * len(s)))]
    return {
        "n": len(s),
        "median_ms": round(statistics.median(s) * 1e3, 3),
        "p99_ms": round(p99 * 1e3, 3),
        "max_ms": round(s[-1] * 1e3, 3),
    }


def open_like_vscode(client: Client, uri: str, text: str) -> dict[str, float]:
    """didOpen, then semantic tokens full and the first screen's range at once (as VS Code does):
    seconds to the first status and to the first colours (whichever answer carried tokens)."""
    doc = {"textDocument": {"uri": uri}}
    screen = {"start": {"line": 0, "character": 0}, "end": {"line": 60, "character": 0}}
    sent = client.open(uri, text)
    full_id, _ = client.ask("textDocument/semanticTokens/full", doc)
    range_id, _ = client.ask("textDocument/semanticTokens/range", {**doc, "range": screen})
    status_at = client.status(uri, 1)[0]
    firsts = []
    for rid in (full_id, range_id):
        t, msg = client.answer(rid)
        if (msg.get("result") or {}).get("data"):
            firsts.append(t)
    return {
        "open_to_status_s": round(status_at - sent, 3),
        "open_to_colours_s": round(min(firsts) - sent, 3) if firsts else float("nan"),
    }


# -- the benchmarks ----------------------------------------------------------------------------


def bench_idle(python: str, kind: str, size: int, cache: Path, work: Path) -> dict[str, Any]:
    """Keys typed while o200k_base's deferred opening work runs, and after it; and the idle
    slices the server logged (at DEBUG: wall and CPU time of each)."""
    text = TEXTS[kind](size)
    log_path = work / "server.log"
    with open(log_path, "w", encoding="utf-8") as log:
        env = {"TIKTOKEN_CACHE_DIR": str(cache), "TOKENLINE_LOG": "DEBUG"}
        client = Client(python, env, log)
        try:
            client.initialize({"model": "o200k_base"})
            client.open("file:///bench/warm.txt", "the model loads here")
            client.status("file:///bench/warm.txt", 1)
            uri = f"file:///bench/{size}.txt"
            open_at = time.monotonic()
            opened = open_like_vscode(client, uri, text)
            typist = Typist(client, uri, text, seed=size)
            during = typist.keys(seconds=1.2 * size / MB)
            typed_during = len(typist.typed)
            time.sleep(1.5 * size / MB)  # the idle work finishes
            after = typist.keys(count=100)
        finally:
            client.close()
    logged = log_path.read_text(encoding="utf-8")
    slices = logged_slices(logged)
    if slices is None:  # a build that logs no slices: its fixed slices, timed here
        slices = fixed_slices(text, 1 << 15, cache)
    line = timeline.Timeline(logged)
    if line.idle_done:
        slices["done_s"] = round(line.idle_done - open_at, 3)  # the last step's end
    return {
        "kind": kind,
        "size": size,
        **opened,
        "during": summary(during),
        "after": summary(after),
        "slices": slices,
        "waits": {
            "during": timeline.attributed(line, uri, typist.typed[:typed_during]),
            "after": timeline.attributed(line, uri, typist.typed[typed_during:]),
        },
    }


# A job's kind may hold a space ("give back", whose uri is empty).
SLICE_LINE = re.compile(r"idle slice (.+?) \S*: ([\d.]+) ms, cpu ([\d.]+) ms")
COLLECTION_LINE = re.compile(r"collection of generation (\d): ([\d.]+) ms")
EDIT_LINE = re.compile(r"didChange \S+: edited in ([\d.]+) ms")


def logged_slices(log: str) -> dict[str, Any] | None:
    """The server's idle steps of work (kind: count, max and p99 CPU ms, max wall ms), the
    longest of any kind, and the collector's runs (a build that logs them)."""
    found: dict[str, list[tuple[float, float]]] = {}
    for m in SLICE_LINE.finditer(log):
        found.setdefault(m.group(1), []).append((float(m.group(2)), float(m.group(3))))
    if not found:
        return None
    out: dict[str, Any] = {"timed": "in the server"}
    for kind, times in found.items():
        cpu = sorted(c for _, c in times)
        out[kind] = {
            "n": len(cpu),
            "cpu_total_ms": round(sum(cpu), 1),
            "cpu_p99_ms": round(cpu[min(len(cpu) - 1, int(0.99 * len(cpu)))], 2),
            "cpu_max_ms": round(cpu[-1], 2),
            "wall_max_ms": round(max(w for w, _ in times), 2),
        }
    # The step that did the most work (CPU: what the step itself costs), and the longest any
    # took by the clock (a loaded machine adds the time other processes ran meanwhile).
    longest = max(found, key=lambda kind: out[kind]["cpu_max_ms"])
    out["longest_step"] = {
        "kind": longest,
        "cpu_ms": out[longest]["cpu_max_ms"],
        "wall_ms": max(out[kind]["wall_max_ms"] for kind in found),
    }
    pauses = [float(m.group(2)) for m in COLLECTION_LINE.finditer(log)]
    if pauses:
        out["collections"] = {"n": len(pauses), "max_ms": round(max(pauses), 2)}
    edits = [float(m.group(1)) for m in EDIT_LINE.finditer(log)]
    if edits:  # what a key's own edit took in the core (the rest of its wait is elsewhere)
        out["edits"] = {"n": len(edits), "max_ms": round(max(edits), 2)}
    return out


def fixed_slices(text: str, budget: int, cache: Path) -> dict[str, Any]:
    """Document.prepare(budget) until done, CPU-timed here: what a build that always prepares
    `budget` characters per slice spends in each."""
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)  # the seeded cache: never a download
    from tokenline.core import Document, load_model

    doc = Document(load_model("o200k_base"), text)
    cpu: list[float] = []
    more = True
    while more:
        start = time.thread_time()
        more = bool(doc.prepare(budget))
        cpu.append((time.thread_time() - start) * 1e3)
    cpu.sort()
    p99 = cpu[min(len(cpu) - 1, int(0.99 * len(cpu)))]
    slices = {"n": len(cpu), "cpu_p99_ms": round(p99, 2), "cpu_max_ms": round(cpu[-1], 2)}
    return {"timed": f"{budget:,} characters a slice, here", "prepare": slices}


def bench_latency_memory(python: str, size: int, work: Path) -> dict[str, Any]:
    """didChange -> status over 200 keys, and resident memory per token (bundled model); each
    key's wait by what the server's log (DEBUG) says ran meanwhile."""
    log_path = work / "server.log"
    with open(log_path, "w", encoding="utf-8") as log:
        out = latency_memory(Client(python, {"TOKENLINE_LOG": "DEBUG"}, log), size)
    line = timeline.Timeline(log_path.read_text(encoding="utf-8"))
    typed = out.pop("typed")
    out["waits"] = timeline.attributed(line, f"file:///bench/{size}.txt", typed)
    return out


def latency_memory(client: Client, size: int) -> dict[str, Any]:
    text = prose(size)
    try:
        client.initialize({"contextWindow": 8192})
        client.open("file:///bench/warm.txt", "the model loads here")
        client.status("file:///bench/warm.txt", 1)
        time.sleep(1)
        rss_before, _ = client.memory()
        uri = f"file:///bench/{size}.txt"
        opened = open_like_vscode(client, uri, text)
        time.sleep(2)
        typist = Typist(client, uri, text, seed=size)
        latencies = typist.keys(count=200)
        rss_after, peak = client.memory()
        tokens = client.status(uri, 201)[1]["tokens"]
        return {
            "size": size,
            "tokens": tokens,
            **opened,
            **summary(latencies),
            "typed": typist.typed,
            "rss_bytes_per_token": round((rss_after - rss_before) / tokens, 1),
            "peak_rss_mb": round(peak / 1e6, 1),
        }
    finally:
        client.close()


def bench_whole(
    python: str, model: Path, text: str, keys: int = 60, rounds: int = 3
) -> dict[str, Any]:
    """A model that re-encodes whole (or keys its edits cannot bound: long_piece): single keys
    at the start of line 100 (median of 3), then `rounds` bursts of `keys` keys 100 ms apart
    (medians over the bursts; every key's wait pooled)."""
    client = Client(python)
    uri = "file:///bench/whole.txt"

    def key(version: int, col: int) -> float:
        pos = {"line": 100, "character": col}
        change = {"range": {"start": pos, "end": pos}, "text": "a"}
        doc = {"uri": uri, "version": version}
        return client.notify(
            "textDocument/didChange", {"textDocument": doc, "contentChanges": [change]}
        )

    try:
        client.initialize({"model": str(model)})
        client.open(uri, text)
        client.status(uri, 1)
        alone = []
        for version in (2, 3, 4):  # single keys, each once the last one is counted
            sent = key(version, 0)
            alone.append(client.status(uri, version)[0] - sent)
            time.sleep(0.3)
        bursts = [burst(client, uri, key, 5 + r * keys, keys) for r in range(rounds)]
        return {
            "one_key_s": round(statistics.median(alone), 3),
            "last_key_to_final_status_s": round(statistics.median(b[0] for b in bursts), 3),
            "bursts_s": [round(b[0], 3) for b in bursts],
            "reencodes": None if bursts[0][1] is None else statistics.median(b[1] for b in bursts),
            "statuses": statistics.median(b[2] for b in bursts),
            "key_status": summary([w for b in bursts for w in b[3]]),
        }
    finally:
        client.close()


def burst(
    client: Client, uri: str, key: Any, first: int, keys: int
) -> tuple[float, int | None, int, list[float]]:
    """`keys` keys 100 ms apart from version `first`: the last key -> its settled status, the
    statuses that settled (None: no status says pending), all of them, and each key's wait for
    its first status (pending or not), re-encodes running."""
    sent = []
    for i in range(keys):
        sent.append(key(first + i, 1 + (first + i) % 50))
        time.sleep(max(0.0, sent[-1] + 0.1 - time.monotonic()))
    final = client.status(uri, first + keys - 1)[0] - sent[-1]
    seen = [(t, p) for t, p in client.statuses if first <= p["version"] < first + keys]
    settled = [p for _, p in seen if "pending" in p and not p["pending"]]
    waits = [
        next(t for t, p in seen if p["version"] >= first + i) - at for i, at in enumerate(sent)
    ]
    time.sleep(0.5)
    return final, len(settled) if any("pending" in p for _, p in seen) else None, len(seen), waits


def core_reencode(model: Path, text: str) -> float:
    """Seconds of one whole re-encode by this build's core (an edit of a Document of a model that
    re-encodes whole, in this process; median of 3): what the server's catch-up does once."""
    from tokenline.core import Document, load_model

    doc = Document(load_model(str(model)), text)
    times = []
    for k in range(3):
        start = time.perf_counter()
        doc.edit(100 + k, 100 + k, "a")
        times.append(time.perf_counter() - start)
    return round(statistics.median(times), 3)


# -- the run -----------------------------------------------------------------------------------


def setup(work: Path) -> tuple[Path, Path]:
    """tiktoken's cache seeded from ../shared, and a unigram model trained on Botchan."""
    cache = work / "tiktoken"
    subprocess.run(
        [sys.executable, str(SEED_TIKTOKEN), str(cache)], check=True, capture_output=True
    )
    prefix = work / "unigram"
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(BOTCHAN.read_text(encoding="utf-8").splitlines()),
        model_prefix=str(prefix),
        model_type="unigram",
        vocab_size=4000,
        minloglevel=2,
        num_threads=1,
    )
    return cache, prefix.with_suffix(".model")


def run(builds: dict[str, str], quick: bool, work: Path, parts: list[str]) -> dict[str, Any]:
    cache, unigram = setup(work)
    sizes = [MB] if quick else [MB, 10 * MB]
    out: dict[str, Any] = {"idle": [], "latency": [], "whole": []}
    if "whole" in parts:
        out.update(bench_whole_part(builds, unigram))
    for size in sizes if parts != ["whole"] else []:
        for kind in ["prose"] if quick else list(TEXTS):
            for name, python in builds.items():
                print(f"... idle work: {kind}, {size:,} chars, {name}", file=sys.stderr, flush=True)
                out["idle"].append({"build": name, **bench_idle(python, kind, size, cache, work)})
        for name, python in builds.items():
            print(f"... latency and memory: {size:,} chars, {name}", file=sys.stderr, flush=True)
            out["latency"].append({"build": name, **bench_latency_memory(python, size, work)})
    return out


def bench_whole_part(builds: dict[str, str], unigram: Path) -> dict[str, Any]:
    """The whole re-encodes of each build, beside one by sentencepiece and by this build's core
    (medians of 3, timed here)."""
    text = prose(MB)
    sp = spm.SentencePieceProcessor(model_file=str(unigram))
    times = []
    for _ in range(3):
        start = time.perf_counter()
        sp.encode(text)
        times.append(time.perf_counter() - start)
    out: dict[str, Any] = {
        "sentencepiece_encode_s": round(statistics.median(times), 3),
        "core_reencode_s": core_reencode(unigram, text),
        "whole": [],
        "long_piece": [],
    }
    for name, python in builds.items():
        print(f"... whole re-encodes: {name}", file=sys.stderr, flush=True)
        out["whole"].append({"build": name, **bench_whole(python, unigram, prose(MB))})
    for name, python in builds.items():
        print(f"... keys in a long Unigram piece: {name}", file=sys.stderr, flush=True)
        out["long_piece"].append({"build": name, **bench_whole(python, T5, long_piece(MB), 30, 2)})
    return out


def long_piece(size: int) -> str:
    """Prose whose line 100 is one piece of `size` letters without a space (base64 or a
    minified blob, to a Metaspace model): keys at its start re-encode the piece whole."""
    lines = prose(20_000).splitlines(keepends=True)
    r = random.Random(7)
    piece = "".join(r.choice("abcdefghij") for _ in range(size))
    return "".join(lines[:100]) + piece + "\n" + "".join(lines[100:])


def longest_step(slices: dict[str, Any]) -> str:
    """The idle step of a run that did the most work (CPU), its kind, and the longest by the
    clock (older builds: not logged)."""
    step = slices.get("longest_step")
    if step is None:
        return "–"
    if "cpu_ms" not in step:
        return f"{step['wall_ms']} ms ({step['kind']})"
    return f"{step['cpu_ms']} ms CPU ({step['kind']}), {step['wall_ms']} ms wall"


def render_waits(runs: list[dict[str, Any]]) -> list[str]:
    """Where the keys of the idle runs waited, from the server's timeline (builds that log it)."""
    lines = [
        "| text | size | build | keys typed while idle work remained | waited behind an idle "
        "step: keys, p99 / max (the step's CPU in it) | read → status written, in the server "
        "(median / p99 / max) | keys > 5 ms, during and after idle work: what most of each "
        "one's wait went to |",
        "| --- | ---: | --- | ---: | ---: | ---: | --- |",
    ]
    for r in runs:
        during, after = (r.get("waits") or {}).get("during"), (r.get("waits") or {}).get("after")
        if not during or not after:
            continue
        behind = during["behind_idle"]
        over = Counter(during["over_ms"]["5"]) + Counter(after["over_ms"]["5"])
        slow = timeline.tail(dict(over), 5.0)
        lines.append(
            f"| {r['kind']} | {r['size'] // MB} MB | {r['build']} "
            f"| {during['while_idle']} of {during['keys']} | {during['keys_behind_idle']}, "
            f"{behind['p99_ms']:.1f} / {behind['max_ms']:.1f} ms "
            f"({during['longest_behind_idle_cpu_ms']:.1f} ms) | {ms3(during['in_server'])} "
            f"| {slow} |"
        )
    return lines


def ms3(s: dict[str, float]) -> str:
    return f"{s['median_ms']:.1f} / {s['p99_ms']:.1f} / {s['max_ms']:.1f} ms"


def render(out: dict[str, Any]) -> str:
    """The run's three tables (idle work, latency and memory, whole re-encodes) in Markdown;
    benchmarks/tables.py renders the documented ones with this too."""
    lines = [
        "| text | size | build | open → status | open → colours | prepare steps: CPU p99 / max "
        "(steps), all | idle work done | longest idle step | keys during idle work "
        "(median / p99 / max) | keys after it |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in out["idle"]:
        prep = r["slices"].get("prepare") or {"cpu_p99_ms": 0, "cpu_max_ms": 0, "n": 0}
        total = f", {prep['cpu_total_ms']:.0f} ms" if "cpu_total_ms" in prep else ""
        done = f"{r['slices']['done_s']} s" if "done_s" in r["slices"] else "–"
        lines.append(
            f"| {r['kind']} | {r['size'] // MB} MB | {r['build']} | {r['open_to_status_s']} s "
            f"| {r['open_to_colours_s']} s | {prep['cpu_p99_ms']} / {prep['cpu_max_ms']} ms "
            f"({prep['n']}){total} | {done} | {longest_step(r['slices'])} "
            f"| {ms3(r['during'])} ({r['during']['n']} keys) | {ms3(r['after'])} |"
        )
    lines += ["", *render_waits(out["idle"]), ""]
    lines += [
        "| size | build | open → status | didChange → status median | p99 | RSS per token "
        "| peak RSS | keys > 2 ms: what most of each one's wait went to |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in out["latency"]:
        waits = r.get("waits")
        slow = timeline.tail(waits["over_ms"]["2"], timeline.SLOW_MS) if waits else "–"
        lines.append(
            f"| {r['size'] // MB} MB | {r['build']} | {r['open_to_status_s']} s "
            f"| {r['median_ms']:.2f} ms | {r['p99_ms']:.2f} ms | {r['rss_bytes_per_token']} B "
            f"| {r['peak_rss_mb']} MB | {slow} |"
        )
    whole = {r["build"]: r for r in out["whole"]}
    # The core's own re-encode, timed in the run (older runs: a key of a baseline that
    # re-encoded on every change).
    reencode = (
        out.get("core_reencode_s")
        or whole.get("baseline", {}).get("one_key_s")
        or out["sentencepiece_encode_s"]
    )
    ran = out.get("whole_run", {}).get("run")
    alone = [f"Whole re-encodes, run on their own: {runinfo.label(ran)}.", ""] if ran else []
    lines += [
        "",
        *alone,
        f"One whole re-encode: {reencode} s (sentencepiece alone: "
        f"{out['sentencepiece_encode_s']} s)",
        "",
        "| build | one key alone | 60 keys, 100 ms apart: last key → its count "
        "| in whole re-encodes | re-encodes | each key → its status (median / p99 / max) |",
        # Medians of 3 bursts (runs before the key column: one burst); re-encodes per burst.
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, r in whole.items():
        n = "one per change" if r["reencodes"] is None else r["reencodes"]
        keys = ms3(r["key_status"]) if "key_status" in r else "—"
        lines.append(
            f"| {name} | {r['one_key_s']} s | {r['last_key_to_final_status_s']} s "
            f"| {r['last_key_to_final_status_s'] / reencode:.2f} | {n} | {keys} |"
        )
    return "\n".join(lines + render_long_piece(out.get("long_piece", [])))


def render_long_piece(runs: list[dict[str, Any]]) -> list[str]:
    """Keys typed into a 1 MB Unigram piece (t5-small): each build's waits."""
    if not runs:
        return []
    lines = [
        "",
        "Keys at the start of a 1 MB piece without spaces, t5-small's `tokenizer.json` (Unigram "
        "after a splitting Metaspace: each key encodes the whole piece); 30 keys 100 ms apart, "
        "medians of 2 bursts:",
        "",
        "| build | one key alone | last key → its count | each key → its status "
        "(median / p99 / max) |",
        "| --- | ---: | ---: | ---: |",
    ]
    for r in runs:
        lines.append(
            f"| {r['build']} | {r['one_key_s']} s | {r['last_key_to_final_status_s']} s "
            f"| {ms3(r['key_status'])} |"
        )
    return lines


def main() -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--baseline", help="another build's Python (e.g. a venv of main's HEAD)")
    p.add_argument("--quick", action="store_true", help="1 MB prose only")
    p.add_argument("--out", default=str(RESULTS))
    p.add_argument(
        "--whole-only",
        action="store_true",
        help="only the whole re-encodes, written over that part of an existing --out",
    )
    args = p.parse_args()
    started = runinfo.start()
    builds = {"this build": sys.executable}
    if args.baseline:
        builds["baseline"] = args.baseline
    parts = ["whole"] if args.whole_only else ["idle", "latency", "whole"]
    with tempfile.TemporaryDirectory() as work:
        out = run(builds, args.quick, Path(work), parts)
    info = {
        "run": runinfo.finish(started),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
    }
    if args.whole_only and Path(args.out).exists():
        # The other parts stay those of the last full run; this part says when it ran.
        kept = json.loads(Path(args.out).read_text(encoding="utf-8"))
        parts_kept = ("whole", "long_piece", "sentencepiece_encode_s", "core_reencode_s")
        kept.update({k: out[k] for k in parts_kept})
        kept["whole_run"] = info
        out = kept
    else:
        out.update(benchmark="server", **info)
    print(render(out))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(f"\nwritten to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
