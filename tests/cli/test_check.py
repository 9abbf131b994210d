"""`tokenline check` and `count` on files and directories, with the project configuration, as a
user runs them: a subprocess in a generated repository, its output and its exit code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import sentencepiece as spm

from tests.conftest import shared_file
from tokenline.core import load_model

SP = spm.SentencePieceProcessor(model_file=load_model().path)


def n_tokens(text: str, sp: spm.SentencePieceProcessor = SP) -> int:
    return len(sp.encode(text))


def tokenline(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, NO_COLOR="1")
    return subprocess.run(
        [sys.executable, "-m", "tokenline", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=cwd,
    )


def prose(words: int, seed: int = 0) -> str:
    vocabulary = [
        "the",
        "model",
        "reads",
        "a",
        "prompt",
        "and",
        "answers",
        "every",
        "question",
        "with",
        "care",
    ]
    return " ".join(vocabulary[(i * 7 + seed) % len(vocabulary)] for i in range(words)) + "\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A project: budgets in pyproject.toml, nested prompts, ignored and binary files."""
    files = {
        "pyproject.toml": (
            '[project]\nname = "demo"\n\n[tool.tokenline]\ncontext-window = 400\n\n'
            '[tool.tokenline.budgets]\n"prompts/system/*.md" = 50\n"prompts/**/*.md" = 200\n'
        ),
        ".gitignore": "build/\n*.log\n!keep.log\n",
        "prompts/system/short.md": prose(10),
        "prompts/system/long.md": prose(120, seed=1),
        "prompts/fewshot/en/examples.md": prose(150, seed=2),
        "notes/big.txt": prose(500, seed=3),
        "notes/small.txt": prose(20, seed=4),
        "build/generated.md": prose(900),
        "debug.log": prose(900),
        "keep.log": prose(5),
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "notes" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 50)
    (tmp_path / ".git").mkdir()  # a repository: its internals are never walked
    (tmp_path / ".git" / "HEAD").write_text(prose(900), encoding="utf-8")
    return tmp_path


def text_of(repo: Path, name: str) -> str:
    return (repo / name).read_text(encoding="utf-8")


def test_check_fails_on_files_over_their_budget_or_window(repo: Path) -> None:
    result = tokenline("check", cwd=repo)
    assert result.returncode == 1, result.stderr
    long_n = n_tokens(text_of(repo, "prompts/system/long.md"))
    big_n = n_tokens(text_of(repo, "notes/big.txt"))
    assert long_n > 50 and big_n > 400  # the fixture is what the test assumes
    path = os.path.join("prompts", "system", "long.md")
    assert result.stdout.splitlines() == [
        f"{os.path.join('notes', 'big.txt')}: {big_n:,} tokens, {big_n - 400:,} over the "
        "context window of 400",
        f"{path}: {long_n:,} tokens, {long_n - 50:,} over the budget of 50 (prompts/system/*.md)",
    ]
    assert "2 files over budget" in result.stderr and "1 skipped" in result.stderr


def test_check_json_lists_every_file_git_would_see(repo: Path) -> None:
    result = tokenline("check", "--json", ".", cwd=repo)
    assert result.returncode == 1, result.stderr
    rows = {r["path"]: r for r in json.loads(result.stdout)}
    # Not build/ nor *.log (.gitignore) except keep.log (re-included), not .git/, not the PNG,
    # not pyproject.toml (a configuration file no budget names).
    assert sorted(rows) == sorted(
        os.path.normpath(p)
        for p in [
            ".gitignore",
            "keep.log",
            "notes/big.txt",
            "notes/small.txt",
            "prompts/fewshot/en/examples.md",
            "prompts/system/long.md",
            "prompts/system/short.md",
        ]
    )
    for path, row in rows.items():
        text = text_of(repo, path)
        assert row["tokens"] == n_tokens(text)
        assert row["characters"] == len(text)
        assert row["model"] == "mistral-7b-v0.1"
        assert row["over"] == max(0, row["tokens"] - (row["budget"] or 400))
    fewshot = rows[os.path.normpath("prompts/fewshot/en/examples.md")]
    assert (fewshot["budget"], fewshot["pattern"]) == (200, "prompts/**/*.md")
    assert rows[os.path.normpath("notes/small.txt")]["budget"] is None


def test_check_passes_when_everything_fits(repo: Path) -> None:
    result = tokenline("check", "prompts/fewshot", "prompts/system/short.md", cwd=repo)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == ""
    assert result.stderr == "2 files checked, all within budget\n"


def test_command_line_overrides_the_configuration(repo: Path) -> None:
    result = tokenline("check", "--context-window", "100000", "notes", cwd=repo)
    assert result.returncode == 0, result.stdout


def test_an_explicit_config_replaces_the_one_found(repo: Path, tmp_path_factory: Any) -> None:
    other = tmp_path_factory.mktemp("elsewhere") / "tokenline.toml"
    other.write_text("context-window = 100000\n", encoding="utf-8")
    result = tokenline("check", "--config", str(other), "notes", "prompts", cwd=repo)
    # No budget (the patterns of `other` are relative to its own folder), a large window.
    assert result.returncode == 0, result.stdout
    assert result.stderr == "5 files checked, all within budget; 1 skipped (binary or not UTF-8)\n"


def test_an_explicit_ignored_file_is_still_checked(repo: Path) -> None:
    result = tokenline("check", "debug.log", cwd=repo)
    assert result.returncode == 1
    assert result.stdout.startswith("debug.log: ")


def test_exit_codes_for_usage_and_configuration(repo: Path) -> None:
    missing = tokenline("check", "no/such/dir", cwd=repo)
    assert missing.returncode == 2
    assert "no/such/dir: no such file or directory" in missing.stderr
    assert missing.stdout == ""  # nothing checked: a typo must not pass as "all within budget"
    # count says so and counts the rest.
    partly = tokenline("count", "no/such.md", "notes/small.txt", cwd=repo)
    assert partly.returncode == 1
    assert "no/such.md: no such file" in partly.stderr
    assert partly.stdout.split()[1] == os.path.normpath("notes/small.txt")
    (repo / "pyproject.toml").write_text(
        '[tool.tokenline.budgets]\n"prompts/*.md" = -1\n', encoding="utf-8"
    )
    bad = tokenline("check", cwd=repo)
    assert bad.returncode == 3
    assert str(repo / "pyproject.toml") in bad.stderr
    assert '[tool.tokenline.budgets] "prompts/*.md"' in bad.stderr and "not -1" in bad.stderr
    (repo / "pyproject.toml").write_text('[tool.tokenline]\nmodel = "nope.model"\n')
    bad_model = tokenline("count", "notes", cwd=repo)
    assert bad_model.returncode == 3
    assert '[tool.tokenline] "model" = "nope.model": no such file' in bad_model.stderr


def test_the_configured_model_is_used(repo: Path) -> None:
    llama = shared_file("models", "llama-2.model")
    (repo / "tokenline.toml").write_text(f'model = "{llama}"\n', encoding="utf-8")
    result = tokenline("count", "--json", "notes/small.txt", cwd=repo)
    assert result.returncode == 0, result.stderr
    [row] = json.loads(result.stdout)
    sp = spm.SentencePieceProcessor(model_file=str(llama))
    assert row["tokens"] == n_tokens(text_of(repo, "notes/small.txt"), sp)
    assert row["model"] == "llama-2"


def test_count_walks_directories_and_shows_budgets(repo: Path) -> None:
    result = tokenline("count", "prompts", cwd=repo)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    names = ["prompts/fewshot/en/examples.md", "prompts/system/long.md", "prompts/system/short.md"]
    counts = [n_tokens(text_of(repo, n)) for n in names]
    assert [line.split()[:2] for line in lines[:3]] == [
        [f"{c:,}", os.path.normpath(n)] for c, n in zip(counts, names, strict=True)
    ]
    assert f"(budget 50, {counts[1] - 50:,} over)" in lines[1]
    assert lines[3].split() == [f"{sum(counts):,}", "total"]


def test_version_says_whether_the_core_is_compiled(tmp_path: Path) -> None:
    result = tokenline("--version", cwd=tmp_path)
    assert result.returncode == 0
    first, second, _ = result.stdout.splitlines()
    assert first.startswith("tokenline 0.") and "(compiled: " in first
    assert second == f"sentencepiece {spm.__version__}"


def test_show_closes_with_the_budget_of_the_file(repo: Path) -> None:
    result = tokenline("show", "--color", "never", "prompts/system/long.md", cwd=repo)
    assert result.returncode == 0, result.stderr
    n = n_tokens(text_of(repo, "prompts/system/long.md"))
    assert result.stdout.splitlines()[-1] == (
        f"{n:,} tokens · mistral-7b-v0.1 · {100 * n / 50:.1f}% of the 50-token budget "
        "(prompts/system/*.md)"
    )


def test_exclude_leaves_files_out_of_walks_and_of_named_checks(repo: Path) -> None:
    pyproject = repo / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text(encoding="utf-8").replace(
            "context-window = 400\n", 'context-window = 400\nexclude = ["notes/"]\n'
        ),
        encoding="utf-8",
    )
    walked = tokenline("check", cwd=repo)
    assert os.path.join("notes", "big.txt") not in walked.stdout
    # notes/ holds two text files and the PNG: excluded before they are read.
    assert "prompts" in walked.stdout and "3 excluded" in walked.stderr
    assert "skipped" not in walked.stderr
    named = tokenline("check", "notes/big.txt", cwd=repo)
    assert named.returncode == 0, named.stdout
    assert f"notes/big.txt: excluded by {pyproject}" in named.stderr
