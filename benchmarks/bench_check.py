"""Benchmark of `tokenline count` on a 20 MB prose file and `tokenline check` on a generated
repository of 2,000 prompt files, against baselines measured in the same run: the reference
libraries (sentencepiece, tiktoken) encoding the same text, and reading the same files and
encoding each with sentencepiece directly (no configuration, no walk, no .gitignore).

The large file: Botchan's paragraphs in a seeded random order until 20 MB. `tokenline count` of it
runs as a command (start and model load included) and is timed in CPU (its own and its workers')
and wall-clock time, with its peak resident memory; each baseline is a Python process that loads
its library, reads the file and encodes it whole, reporting the encode's own CPU and wall time
(start, load and read excluded), and its peak memory. The targets (issue 19): count at most 0.25x
sentencepiece's encode time in at most 200 MB; check at most 0.5x the read-and-encode loop's wall
time on 2 cores (both as commands, the loop in one process).

The repository: 2,000 UTF-8 files of English prose (slices of Botchan, 200 B to 16 KB, log-uniform)
in nested folders, a pyproject.toml with four budgets, a .gitignore that hides a build/ folder of
200 more files, and 50 binary files. Every figure is a median over several runs, taken
interleaved; the machine is shared and noisy, so the ratio (check / baseline, per run) is what to
read. In-process work is timed in CPU time, commands in the CPU time of their processes (see
runinfo.py): other work on the machine slows neither.

Then what a commit waits for: `pre-commit run` with the documented `repo: local` hook on three
staged prompt files, beside `tokenline check` of the same files as a command and Python starting,
importing the command and loading the model (no file read), interleaved: CPU time and the
wall-clock time a user waits (which grows with the machine's load).

    TIKTOKEN_CACHE_DIR=... python benchmarks/bench_check.py [--files 2000] [--runs 5]
        [--big-mb 20] [--big-runs 3] [--out benchmarks/results]

Without o200k_base in tiktoken's cache (TIKTOKEN_CACHE_DIR) the tiktoken rows are left out.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import runinfo
import sentencepiece as spm

from tokenline.cli import main
from tokenline.core import COMPILED, ModelError, load_model
from tokenline.workers import cores

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent / "tests" / "data" / "botchan.txt"
FOLDERS = ["prompts/system", "prompts/fewshot/en", "prompts/fewshot/ja", "rag/chunks", "notes"]
PYPROJECT = """[tool.tokenline]
context-window = 8192

[tool.tokenline.budgets]
"prompts/system/*.md" = 2000
"prompts/**/*.md" = 3000
"rag/chunks/*.txt" = 1500
"*.md" = 4000
"""


def make_repo(root: Path, n_files: int, corpus: str, seed: int = 7) -> None:
    """The repository described in the module docstring."""
    rng = random.Random(seed)
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (root / ".gitignore").write_text("build/\n*.bin\n", encoding="utf-8")
    for i in range(n_files):
        folder = root / FOLDERS[i % len(FOLDERS)] / f"group{i % 17}"
        folder.mkdir(parents=True, exist_ok=True)
        size = int(math.exp(rng.uniform(math.log(200), math.log(16_000))))
        start = rng.randrange(0, len(corpus) - size)
        ext = ".txt" if folder.parts[-2] == "chunks" else ".md"
        (folder / f"file{i:04d}{ext}").write_text(corpus[start : start + size], encoding="utf-8")
    build = root / "build"
    build.mkdir()
    for i in range(200):
        (build / f"generated{i}.md").write_text(corpus[:2000], encoding="utf-8")
    for i in range(50):
        (root / "notes" / f"image{i}.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00" + bytes(range(256)))


def seconds(fn: Callable[[], object]) -> float:
    """CPU seconds of fn() in this process (see runinfo.py)."""
    return runinfo.cpu_seconds(fn)


def check_in_process(root: Path, jobs: str = "1") -> list[dict[str, object]]:
    """`check --json` in this process (one process: its CPU time is all the work)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["check", "--json", "--jobs", jobs, str(root)])
    assert code in (0, 1), code
    result: list[dict[str, object]] = json.loads(out.getvalue())
    return result


def baseline(paths: list[str], sp: spm.SentencePieceProcessor) -> int:
    total = 0
    for p in paths:
        with open(p, encoding="utf-8") as fh:
            total += len(sp.encode(fh.read()))
    return total


# A baseline: a process that loads its library, reads a file and encodes it whole, and reports
# the encode's own time; or ("loop") reads each file of a list and encodes each.
ENCODE = """
import json, sys, time
lib, model, path = sys.argv[1:4]
if lib == "sentencepiece":
    import sentencepiece
    encode = sentencepiece.SentencePieceProcessor(model_file=model).encode
else:
    import tiktoken
    encode = tiktoken.get_encoding(model).encode_ordinary
c0, w0 = time.process_time(), time.perf_counter()
if sys.argv[4:] == ["loop"]:
    n = 0
    for p in open(path, encoding="utf-8").read().splitlines():
        with open(p, encoding="utf-8") as fh:
            n += len(encode(fh.read()))
    read_cpu = read_wall = 0.0
else:
    with open(path, encoding="utf-8", newline="") as fh:
        text = fh.read()
    read_cpu, read_wall = time.process_time() - c0, time.perf_counter() - w0
    c0, w0 = time.process_time(), time.perf_counter()
    n = len(encode(text))
cpu, wall = time.process_time() - c0, time.perf_counter() - w0
print(json.dumps({"cpu": cpu, "wall": wall, "tokens": n}))
"""


# Runs a command and writes its rusage to a file: from this small process, so that the peak
# memory the command inherits at fork (Linux keeps a process's high-water mark across exec) is
# this launcher's few MB, not the benchmark's hundreds.
LAUNCH = """
import json, os, subprocess, sys
proc = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(proc.pid, 0)
with open(sys.argv[1], "w") as fh:
    json.dump({"code": os.waitstatus_to_exitcode(status), "cpu": usage.ru_utime + usage.ru_stime,
               "maxrss_kb": usage.ru_maxrss}, fh)
"""


def measured(cmd: list[str], codes: tuple[int, ...] = (0,)) -> dict[str, Any]:
    """Runs cmd to its end: CPU seconds (its own and every process it waited for, such as
    workers), wall seconds, peak resident memory in MB (of the largest of those processes), and
    its standard output."""
    with tempfile.TemporaryDirectory() as tmp:
        usage_file = Path(tmp) / "usage.json"
        t0 = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", LAUNCH, str(usage_file), *cmd], capture_output=True, text=True
        )
        wall = time.perf_counter() - t0
        usage = json.loads(usage_file.read_text(encoding="utf-8"))
    assert usage["code"] in codes, (cmd, usage["code"], done.stderr)
    return {
        "cpu": usage["cpu"],
        "wall": wall,
        "rss_mb": usage["maxrss_kb"] / 1024,
        "out": done.stdout,
    }


def big_prose(path: Path, megabytes: int, corpus: str, seed: int = 11) -> int:
    """Botchan's paragraphs in a seeded random order until `megabytes` MB; its characters."""
    paragraphs = [p.strip("\ufeff") for p in corpus.split("\n\n") if p.strip()]
    rng = random.Random(seed)
    parts: list[str] = []
    size = 0
    while size < megabytes * 1_000_000:
        p = rng.choice(paragraphs) + "\n\n"
        parts.append(p)
        size += len(p.encode("utf-8"))
    text = "".join(parts)
    path.write_text(text, encoding="utf-8", newline="")
    return len(text)


def counted(out: str) -> int:
    """The count `tokenline count FILE` printed."""
    return int(out.split()[0].replace(",", ""))


def tiktoken_ready() -> bool:
    try:
        load_model("o200k_base")
    except ModelError:
        return False
    return True


def big_file(megabytes: int, runs: int) -> dict[str, object]:
    """`tokenline count` of a large prose file beside sentencepiece and tiktoken encoding it."""
    corpus = CORPUS.read_text(encoding="utf-8")
    sides: dict[str, tuple[list[str], list[str]]] = {
        "sentencepiece": (
            [sys.executable, "-m", "tokenline", "count"],
            ["sentencepiece", load_model().path],
        )
    }
    if tiktoken_ready():
        sides["tiktoken"] = (
            [sys.executable, "-m", "tokenline", "count", "--model", "o200k_base"],
            ["tiktoken", "o200k_base"],
        )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "prose.txt"
        characters = big_prose(path, megabytes, corpus)
        got: dict[str, dict[str, list[float]]] = {}
        for _ in range(runs):  # interleaved: each ratio's two sides see the same load
            for lib, (count_cmd, base) in sides.items():
                mine = measured([*count_cmd, str(path)])
                ref = measured([sys.executable, "-c", ENCODE, *base, str(path)])
                encode = json.loads(ref["out"])
                assert counted(mine["out"]) == encode["tokens"], (lib, mine["out"], encode)
                row = got.setdefault(lib, {})
                for key, value in (
                    ("count_cpu_s", mine["cpu"]),
                    ("count_wall_s", mine["wall"]),
                    ("count_rss_mb", mine["rss_mb"]),
                    ("encode_cpu_s", encode["cpu"]),
                    ("encode_wall_s", encode["wall"]),
                    ("encode_process_rss_mb", ref["rss_mb"]),
                    ("ratio_cpu", mine["cpu"] / encode["cpu"]),
                    ("ratio_wall", mine["wall"] / encode["wall"]),
                    ("tokens", encode["tokens"]),
                ):
                    row.setdefault(key, []).append(value)
    med = statistics.median
    return {
        "megabytes": megabytes,
        "characters": characters,
        "runs": runs,
        "models": {
            lib: {
                k: round(med(v), 3 if "ratio" in k or k.endswith("_s") else 1)
                for k, v in row.items()
            }
            for lib, row in got.items()
        },
    }


def run(n_files: int, runs: int) -> dict[str, object]:
    corpus = CORPUS.read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        make_repo(root, n_files, corpus)
        results = check_in_process(root)
        assert check_in_process(root, "2") == results  # workers report what one process does
        paths = [str(r["path"]) for r in results]
        # The prompts and .gitignore; not pyproject.toml (a configuration file no budget
        # names), build/ (ignored) nor the images.
        assert len(paths) == n_files + 1, f"check saw {len(paths)} files, not {n_files} + 1"
        sp = spm.SentencePieceProcessor(model_file=load_model().path)
        # The counts are sentencepiece's, file by file.
        for r in results[:: max(1, n_files // 100)]:
            text = Path(str(r["path"])).read_text(encoding="utf-8")
            assert r["tokens"] == len(sp.encode(text)), r["path"]
        listing = Path(tmp) / "paths.txt"
        listing.write_text("\n".join(paths), encoding="utf-8")
        cmd = [sys.executable, "-m", "tokenline", "check", str(root)]
        loop = [sys.executable, "-c", ENCODE, "sentencepiece", load_model().path, str(listing)]
        version = [sys.executable, "-m", "tokenline", "--version"]
        # Interleaved, so that both sides of each ratio see the same load on a shared machine.
        t: dict[str, list[float]] = {}
        for _ in range(runs):
            inproc = seconds(lambda: check_in_process(root))
            base = seconds(lambda: baseline(paths, sp))
            command = measured(cmd, (0, 1))
            looped = measured([*loop, "loop"])
            for key, value in (
                ("check_in_process_s", inproc),
                ("baseline_sentencepiece_s", base),
                ("ratio", inproc / base),
                ("check_command_cpu_s", command["cpu"]),
                ("check_command_wall_s", command["wall"]),
                ("loop_command_cpu_s", looped["cpu"]),
                ("loop_command_wall_s", looped["wall"]),
                ("command_ratio_wall", command["wall"] / looped["wall"]),
                ("command_ratio_cpu", command["cpu"] / looped["cpu"]),
                ("version_command_cpu_s", runinfo.command_seconds(version)[0]),
            ):
                t.setdefault(key, []).append(value)
    med = statistics.median
    return {
        "files": len(paths),
        "characters": sum(int(r["characters"]) for r in results),
        "tokens": sum(int(r["tokens"]) for r in results),
        "over": sum(1 for r in results if r["over"]),
        "compiled": COMPILED,
        "runs": runs,
        "cores": cores(),
    } | {k: round(med(v), 2 if "ratio" in k else 3) for k, v in t.items()}


HOOK = """repos:
  - repo: local
    hooks:
      - id: tokenline-check
        name: tokenline check (token budgets)
        entry: tokenline check
        language: system
        types: [text]
        files: '\\.(md|txt)$'
"""


START_AND_LOAD = "import tokenline.cli; from tokenline.core import load_model; load_model()"


def precommit(n_files: int, runs: int) -> dict[str, object]:
    """Medians of a pre-commit run on `n_files` prompt files, the hook's command alone, and
    the command's start and model load alone, interleaved."""
    corpus = CORPUS.read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_repo(root, 20, corpus)
        (root / ".pre-commit-config.yaml").write_text(HOOK, encoding="utf-8")
        env = dict(
            os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
        )
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        files = [str(p.relative_to(root)) for p in sorted(root.glob("prompts/**/*.md"))[:n_files]]
        subprocess.run(["git", "add", *files, ".pre-commit-config.yaml"], cwd=root, check=True)
        commands = {
            "pre_commit_run": [sys.executable, "-m", "pre_commit", "run", "--files", *files],
            "check_command": [sys.executable, "-m", "tokenline", "check", *files],
            # Starting Python, importing the command and loading the model: no file read.
            "start_and_load": [sys.executable, "-c", START_AND_LOAD],
        }
        first = subprocess.run(
            commands["pre_commit_run"], cwd=root, env=env, capture_output=True, text=True
        )
        assert "tokenline check" in first.stdout and "Passed" in first.stdout, (
            first.stdout + first.stderr
        )
        cpu: dict[str, list[float]] = {name: [] for name in commands}
        wall: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(runs):
            for name, cmd in commands.items():
                c, w = runinfo.command_seconds(cmd, cwd=root, env=env)
                cpu[name].append(c)
                wall[name].append(w)
    return {"files": n_files, "runs": runs} | {
        f"{name}_{clock}": round(statistics.median(t[name]), 3)
        for name in commands
        for clock, t in (("cpu_s", cpu), ("wall_s", wall))
    }


def main_() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--big-mb", type=int, default=20)
    ap.add_argument("--big-runs", type=int, default=3)
    ap.add_argument("--out", type=Path, default=HERE / "results")
    args = ap.parse_args()
    record = runinfo.start()
    r = run(args.files, args.runs)
    r["big_file"] = big_file(args.big_mb, args.big_runs)
    r["precommit"] = precommit(3, max(args.runs, 9))
    r = {"run": runinfo.finish(record), **r}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "check.json").write_text(json.dumps(r, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(r, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main_())
