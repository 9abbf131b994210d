"""The README keeps its promises: the Quick start's two commands are the ones that work (the first
is run as written on a fresh clone, the second is what CI runs), its links lead somewhere, its
benchmark table is the one docs/benchmarks.md has from the same run, and it stays short."""

from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import sentencepiece as spm

from tests.conftest import IN_CI, ROOT
from tokenline.core import load_model

README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md")), ROOT / "tests" / "data" / "README.md"]


def quick_start() -> list[str]:
    """The commands of the Quick start's shell block (comments and blank lines left out)."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Quick start\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None, "the Quick start has no sh block"
    lines = [line.strip() for line in block.group(1).splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def test_the_quick_start_is_two_commands_and_the_second_is_what_ci_runs() -> None:
    setup, tests = quick_start()
    assert setup.startswith("python3 -m venv .venv && ")
    assert tests == "bash tests/run.sh"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert ci.rstrip().splitlines()[-1] == f"exec {tests}"


def test_the_first_command_works_on_a_fresh_clone(tmp_path: Path) -> None:
    """Run as written, in a clone of the committed tree (its own venv, pip install, show)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        message = f"{ROOT} is not a git checkout with git installed: it cannot be cloned"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    clone = tmp_path / "tokenline"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, timeout=300)
    setup = quick_start()[0]
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    done = subprocess.run(
        ["bash", "-c", setup], cwd=clone, env=env, capture_output=True, text=True, timeout=1800
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    prompt = (clone / "examples" / "prompt.md").read_text(encoding="utf-8")
    n = len(spm.SentencePieceProcessor(model_file=load_model().path).encode(prompt))
    # pip's lines, then what `show` prints: the text, then the count.
    shown, summary = done.stdout.rstrip("\n").rsplit("\n", 1)
    assert summary == (
        f"{n:,} tokens · mistral-7b-v0.1 · {100 * n / 8192:.1f}% of the 8,192-token context window"
    )
    # Not a terminal: token boundaries as '|', the text itself unchanged.
    text = prompt.rstrip("\n")
    assert shown.endswith("|") and shown.replace("|", "").rstrip("\n").endswith(text), shown[-500:]
    assert shown.count("|") > n // 2  # the boundaries are there (byte pieces of one character
    # and a lone dummy prefix are not separated)


def test_the_benchmark_table_is_the_one_in_docs_benchmarks() -> None:
    readme = README.read_text(encoding="utf-8")
    section = readme.split("## Benchmark\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    assert len(rows) >= 4, section
    assert "\n".join(rows) in (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")


def benchmark_tables() -> Any:
    """benchmarks/tables.py, which renders the documented tables from benchmarks/results/."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        return importlib.import_module("tables")
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


def test_benchmark_tables_are_the_results_of_their_runs() -> None:
    tables = benchmark_tables()
    for doc in tables.DOCUMENTS:
        text = doc.read_text(encoding="utf-8")
        blocks = tables.BLOCK.findall(text)
        assert blocks, f"{doc} has no benchmark table"
        assert tables.render(text) == text, f"run python benchmarks/tables.py --write ({doc})"


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(ROOT)) for d in DOCS])
def test_relative_links_lead_to_files(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    missing = [t for t in targets if "://" not in t and not (doc.parent / t).resolve().exists()]
    assert not missing, missing


def test_the_readme_is_read_in_five_minutes() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 155, len(lines)  # "at most about 150"
