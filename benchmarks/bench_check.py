"""Benchmark of `tokenline check` on a generated repository of 2,000 prompt files, against a
baseline measured in the same run: reading the same files and encoding each with sentencepiece
directly (no configuration, no walk, no .gitignore).

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

    python benchmarks/bench_check.py [--files 2000] [--runs 5] [--out benchmarks/results]
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
from collections.abc import Callable
from pathlib import Path

import runinfo
import sentencepiece as spm

from tokenline.cli import main
from tokenline.core import COMPILED, load_model

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


def check_in_process(root: Path) -> list[dict[str, object]]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["check", "--json", str(root)])
    assert code in (0, 1), code
    result: list[dict[str, object]] = json.loads(out.getvalue())
    return result


def baseline(paths: list[str], sp: spm.SentencePieceProcessor) -> int:
    total = 0
    for p in paths:
        with open(p, encoding="utf-8") as fh:
            total += len(sp.encode(fh.read()))
    return total


def run(n_files: int, runs: int) -> dict[str, object]:
    corpus = CORPUS.read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_repo(root, n_files, corpus)
        results = check_in_process(root)
        paths = [str(r["path"]) for r in results]
        # The prompts and .gitignore; not pyproject.toml (a configuration file no budget
        # names), build/ (ignored) nor the images.
        assert len(paths) == n_files + 1, f"check saw {len(paths)} files, not {n_files} + 1"
        sp = spm.SentencePieceProcessor(model_file=load_model().path)
        # The counts are sentencepiece's, file by file.
        for r in results[:: max(1, n_files // 100)]:
            text = Path(str(r["path"])).read_text(encoding="utf-8")
            assert r["tokens"] == len(sp.encode(text)), r["path"]
        cmd = [sys.executable, "-m", "tokenline", "check", str(root)]
        version = [sys.executable, "-m", "tokenline", "--version"]
        # Interleaved, so that both sides of each ratio see the same load on a shared machine.
        t_check, t_base, t_cli, t_start = [], [], [], []
        for _ in range(runs):
            t_check.append(seconds(lambda: check_in_process(root)))
            t_base.append(seconds(lambda: baseline(paths, sp)))
            t_cli.append(runinfo.command_seconds(cmd)[0])
            t_start.append(runinfo.command_seconds(version)[0])
    med = statistics.median
    return {
        "files": len(paths),
        "characters": sum(int(r["characters"]) for r in results),
        "tokens": sum(int(r["tokens"]) for r in results),
        "over": sum(1 for r in results if r["over"]),
        "compiled": COMPILED,
        "runs": runs,
        "check_in_process_s": round(med(t_check), 3),
        "baseline_sentencepiece_s": round(med(t_base), 3),
        "ratio": round(med(c / b for c, b in zip(t_check, t_base, strict=True)), 2),
        "check_command_cpu_s": round(med(t_cli), 3),
        "version_command_cpu_s": round(med(t_start), 3),
    }


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
    ap.add_argument("--out", type=Path, default=HERE / "results")
    args = ap.parse_args()
    record = runinfo.start()
    r = run(args.files, args.runs)
    r["precommit"] = precommit(3, max(args.runs, 9))
    r = {"run": runinfo.finish(record), **r}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "check.json").write_text(json.dumps(r, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(r, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main_())
