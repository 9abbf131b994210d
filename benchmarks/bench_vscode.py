"""Tokenline in real VS Code as a user feels it: open → first count, typing echo, status latency.

code-server in Debian's headless Chromium (the harness of tests/vscode/test_vscode_e2e.py and
driver.mjs's "typing" mode, playwright-core), the extension's .vsix, the server from this
Python, `tokenline.model` = o200k_base from a tiktoken cache seeded from ../shared. Each session
opens a 10 KB Markdown file first (the server starts), then 1 MB and 5 MB ones: Quick Open's Enter
→ the count in the status bar; then 60 keys (" a1 a1...") typed 120 ms apart at the end of a
paragraph in the middle: keydown → the character on screen (echo) and keydown → the count after
that key on screen (status latency), timed on the page's clock (tests/vscode/typing_timing.py).
Sessions alternate boundary colours on and off, each `--rounds` times; the colours-on sessions
also open a 10 MB file and check its colours show. Medians and p90 are over every key of every
round. Prerequisites: tests/vscode/setup.sh (code-server in the CI cache; no download).

    python benchmarks/bench_vscode.py [--rounds 2] [--vsix PATH] [--port 18731]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import runinfo
import tiktoken

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from tests.vscode import typing_timing  # noqa: E402
from tests.vscode.test_vscode_e2e import (  # noqa: E402
    ARTIFACTS,
    DARK_A,
    DARK_B,
    EXT_DIR,
    CodeServer,
    Env,
    rgb,
    run_driver,
)

SEED_TIKTOKEN = ROOT.parent / "shared" / "tools" / "seed-tiktoken-cache"
SIZES = {"1 MB": 1_000_000, "5 MB": 5_000_000}
LARGE = 10_000_000
KEYS = 60
INTERVAL_MS = 120
SERVER_LINE = re.compile(
    r"^(\S+ \S+) DEBUG tokenline.server: (?:Content length: (\d+)"
    r"|(didOpen|willOpen) \S+/([^/\s]+): \d+ characters, status sent in [\d.]+ ms, cpu ([\d.]+) ms)"
)
# The steps of an open, each from Quick Open's Enter (ms), and the server's CPU of its two steps.
OPEN_STEPS = ("editor", "ahead_sent", "ahead_cpu", "at_server", "status_sent", "server_cpu")
TARGETS = {"open_1mb_s": 0.4, "open_5mb_s": 1.3, "echo_p90_colours_ratio": 1.2}


def build_vsix(work: Path) -> Path:
    """The universal .vsix of vscode-extension/ as it is (no bundled wheels: the server runs
    from this Python through tokenline.python)."""
    out = work / "tokenline.vsix"
    subprocess.run(
        ["npx", "vsce", "package", "--no-dependencies", "--skip-license",
         "--allow-missing-repository", "-o", str(out)],
        cwd=EXT_DIR, check=True, capture_output=True,
    )  # fmt: skip
    return out


class Files:
    """The Markdown files, their typing plans and counts (o200k_base, from tiktoken)."""

    def __init__(self, cache: Path) -> None:
        os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
        enc = tiktoken.get_encoding("o200k_base")
        self.texts = {
            "warmup": typing_timing.markdown(10_000),
            "10 MB": typing_timing.markdown(LARGE),
        }
        self.plans = {}
        for name, size in SIZES.items():
            self.texts[name] = typing_timing.markdown(size)
            self.plans[name] = typing_timing.plan(self.texts[name], KEYS, enc)
        self.counts = {
            name: len(enc.encode_ordinary(self.texts[name])) for name in ("warmup", "10 MB")
        }

    def file(self, name: str) -> str:
        return "file-" + name.replace(" ", "").lower() + ".md"

    def targets(self, colours: bool) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = [
            {"name": "warmup", "file": self.file("warmup"), "colours": colours,
             "initial": self.counts["warmup"], "openTimeoutMs": 120_000},
        ]  # fmt: skip
        for name, p in self.plans.items():
            out.append(
                {"name": name, "file": self.file(name), "colours": colours,
                 "initial": p.counts[0], "line": p.line, "lineText": p.line_text,
                 "typed": p.typed, "final": p.counts[-1], "openTimeoutMs": 120_000}
            )  # fmt: skip
        if colours:
            out.append(
                {"name": "10 MB", "file": self.file("10 MB"), "colours": True,
                 "initial": self.counts["10 MB"], "openTimeoutMs": 180_000}
            )  # fmt: skip
        return out


def session(
    work: Path, vsix: Path, cache: Path, files: Files, colours: bool, port: int, debug: bool
) -> Any:
    """One code-server with colours on or off: the driver's record of every target (with
    `debug`, the server logs at DEBUG into the extension's log, copied to the artifacts)."""
    env = Env(Path(tempfile.mkdtemp(prefix="session-", dir=work)))
    env.port = port
    env.config.write_text(f"bind-addr: 127.0.0.1:{port}\nauth: none\ncert: false\n")
    env.env["TIKTOKEN_CACHE_DIR"] = str(cache)
    if debug:
        env.env["TOKENLINE_LOG"] = "DEBUG"
    for name, text in files.texts.items():
        (env.workspace / files.file(name)).write_text(text, encoding="utf-8")
    tag = "vscode-bench-" + ("on" if colours else "off")
    # With `debug`, the server's stderr (DEBUG lines included) goes to a file of its own.
    server_log = ARTIFACTS / f"tokenline-server-{tag}.log"
    command = ["sh", "-c", f'exec "$0" -m tokenline serve 2>>"{server_log}"', sys.executable]
    env.install(
        vsix,
        {
            **({"tokenline.server.command": command} if debug else {}),
            "tokenline.python": sys.executable,
            "tokenline.model": "o200k_base",
            # No document is over its window: no error diagnostics drawn under the text.
            "tokenline.contextWindow": 100_000_000,
            "tokenline.boundaries.enabled": colours,
        },
    )
    config = {
        "targets": files.targets(colours),
        "interval": INTERVAL_MS,
        "boundaryColours": [rgb(DARK_A), rgb(DARK_B)],
        "firstLine": typing_timing.FIRST_LINE,
        "shotPrefix": tag,
        "timeoutMs": 120_000,
    }
    server_log.unlink(missing_ok=True)
    with CodeServer(env, ARTIFACTS / f"code-server-{tag}.log"):
        steps = run_driver(env, "typing", env.url(), config, tag=tag)["steps"]
    (ARTIFACTS / f"tokenline-output-{tag}.log").write_text(env.extension_log())
    return steps, server_times(server_log)


def server_times(log: Path) -> dict[str, dict[str, float]]:
    """From the server's DEBUG log: per file opened, when (epoch ms) the header of its didOpen
    came in and when its status went out, and the CPU time its handler took (ms); when the file
    was counted from disk as its tab opened (willOpen), when that status went out and its CPU."""
    out: dict[str, dict[str, float]] = {}
    header = 0.0
    for line in log.read_text(errors="replace").splitlines() if log.is_file() else []:
        m = SERVER_LINE.match(line)
        if not m:
            continue
        when = datetime.datetime.strptime(m[1], "%Y-%m-%d %H:%M:%S,%f").timestamp() * 1e3
        if m[2]:
            header = when
        elif m[3] == "willOpen":
            out[m[4]] = {"ahead_sent": when, "ahead_cpu": float(m[5])}
        else:
            out[m[4]] = {**out.get(m[4], {}), "header": header, "sent": when, "cpu": float(m[5])}
    return out


def coloured(step: dict[str, Any]) -> bool:
    """Both boundary colours on the lines the driver read."""
    seen = {span["color"] for line in step.get("colours", []) for span in line}
    return rgb(DARK_A) in seen and rgb(DARK_B) in seen


def measure(steps: dict[str, Any], server: dict[str, Any], files: Files) -> dict[str, Any]:
    """Per file: open times (with the server's log, when its didOpen came in and its status
    went out), typing times, whether the final count came and colours showed."""
    out: dict[str, Any] = {}
    for name, step in steps.items():
        if name == "warmup":
            continue
        if not step["ok"]:
            out[name] = {"error": step["error"]}
            continue
        initial = files.plans[name].counts[0] if name in files.plans else files.counts[name]
        opened = typing_timing.open_times(step["open"], initial)
        at = server.get(files.file(name))
        if at and "sent" in at and opened["enter_epoch_ms"] is not None:
            if at["header"]:  # else the server's log named no message's arrival
                opened["at_server_ms"] = at["header"] - opened["enter_epoch_ms"]
            opened["status_sent_ms"] = at["sent"] - opened["enter_epoch_ms"]
            opened["server_cpu_ms"] = at["cpu"]
            if "ahead_sent" in at:
                opened["ahead_sent_ms"] = at["ahead_sent"] - opened["enter_epoch_ms"]
                opened["ahead_cpu_ms"] = at["ahead_cpu"]
        row: dict[str, Any] = {"open": opened, "coloured": coloured(step)}
        if name in files.plans:
            row["typing"] = typing_timing.typing_times(step["typing"], files.plans[name])
            row["final_count_shown"] = step["final"] is not None
        out[name] = row
    return out


def summary(rounds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per file and colours: the median open time over rounds, echo and status over all keys."""
    rows = []
    for name in [*SIZES, "10 MB"]:
        for colours in (True, False):
            runs = [r[name] for r in rounds if r["colours"] == colours and name in r]
            runs = [r for r in runs if "error" not in r]
            if not runs:
                continue
            opens = [r["open"]["correct_count_ms"] for r in runs]
            steps = {
                f"{k}_ms": _median([r["open"].get(f"{k}_ms") for r in runs]) for k in OPEN_STEPS
            }
            typed = [r["typing"] for r in runs if "typing" in r]
            rows.append(
                {
                    "file": name,
                    "colours": colours,
                    "rounds": len(runs),
                    "open_ms": _median(opens),
                    "open_steps": steps,
                    "coloured": all(r["coloured"] for r in runs),
                    "final_count_shown": all(r.get("final_count_shown", True) for r in runs),
                    "echo": typing_timing.stats([x for t in typed for x in t["echo_all_ms"]]),
                    "status": typing_timing.stats([x for t in typed for x in t["status_all_ms"]]),
                    "missing": sum(t["echo_missing"] + t["status_missing"] for t in typed),
                }
            )
    return rows


def _median(values: list[float | None]) -> float | None:
    return statistics.median(values) if values and None not in values else None  # type: ignore[type-var]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--vsix", type=Path, help="the .vsix to install (default: built here)")
    ap.add_argument("--port", type=int, default=18731)
    ap.add_argument("--debug", action="store_true", help="the server logs at DEBUG")
    ap.add_argument("--only", choices=["on", "off"], help="colours on or off only")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "vscode.json")
    args = ap.parse_args()
    run = runinfo.start()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-vscode-") as tmp:
        work = Path(tmp)
        cache = work / "tiktoken"
        subprocess.run([sys.executable, str(SEED_TIKTOKEN), str(cache)], check=True)
        vsix = args.vsix or build_vsix(work)
        files = Files(cache)
        rounds = []
        for r in range(args.rounds):
            for colours in [c for c in (True, False) if args.only in (None, "on" if c else "off")]:
                print(f"... round {r + 1}, colours {'on' if colours else 'off'}", flush=True)
                steps, server = session(work, vsix, cache, files, colours, args.port, args.debug)
                rounds.append({"round": r + 1, "colours": colours, **measure(steps, server, files)})
    data = {
        "run": runinfo.finish(run),
        "keys": KEYS,
        "interval_ms": INTERVAL_MS,
        "targets": TARGETS,
        "summary": summary(rounds),
        "rounds": rounds,
    }
    args.out.write_text(json.dumps(data, indent=1) + "\n")
    print(json.dumps(data["summary"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
