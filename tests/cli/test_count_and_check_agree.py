"""`tokenline count` and `check` treat the same inputs the same way: an empty selection is said
so, a named file that is not text is an error, every broken configuration is reported in one run;
and `check` leaves configuration files alone unless a budget names them."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from .test_check import n_tokens, prose, tokenline

COMMANDS = ["count", "check"]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("command", COMMANDS)
def test_an_empty_folder_is_said_to_be_empty(command: str, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = tokenline(command, "empty", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert result.stderr == f"No files to {command}\n"


@pytest.mark.parametrize("command", COMMANDS)
def test_a_folder_whose_files_are_all_left_out_is_said_to_be_empty(
    command: str, tmp_path: Path
) -> None:
    write(tmp_path / "ignored" / ".gitignore", "*.md\n.gitignore\n")
    write(tmp_path / "ignored" / "a.md", prose(20))
    (tmp_path / "ignored" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    write(tmp_path / "ignored" / "vendor" / "b.txt", prose(20))
    write(tmp_path / "tokenline.toml", 'exclude = ["vendor/"]\n')
    result = tokenline(command, "ignored", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert result.stderr == f"No files to {command}; 1 skipped (binary or not UTF-8), 1 excluded\n"


@pytest.mark.parametrize("command", COMMANDS)
def test_an_empty_selection_in_json_is_an_empty_array(command: str, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = tokenline(command, "--json", "empty", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []
    assert result.stderr == f"No files to {command}\n"


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(
    "name,content,message",
    [
        ("bin.dat", b"a\x00b", "bin.dat: binary file (it contains NUL bytes), not text"),
        ("latin1.txt", "café".encode("latin-1"), "latin1.txt: not UTF-8 text"),
    ],
)
def test_a_named_file_that_is_not_text_is_an_error(
    command: str, name: str, content: bytes, message: str, tmp_path: Path
) -> None:
    (tmp_path / name).write_bytes(content)
    write(tmp_path / "good.md", prose(10))
    result = tokenline(command, name, "good.md", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"tokenline: {message}" in result.stderr
    if command == "count":  # the good file is still counted
        assert result.stdout.split()[:2] == [f"{n_tokens(prose(10)):,}", "good.md"]
    else:
        assert result.stdout == ""
        assert result.stderr.endswith("1 file checked, all within budget; 1 could not be read\n")


def test_a_binary_file_found_in_a_walk_is_skipped_not_an_error(tmp_path: Path) -> None:
    (tmp_path / "bin.dat").write_bytes(b"a\x00b")
    write(tmp_path / "good.md", prose(10))
    for command in COMMANDS:
        result = tokenline(command, ".", cwd=tmp_path)
        assert result.returncode == 0, result.stderr
    assert result.stderr == "1 file checked, all within budget; 1 skipped (binary or not UTF-8)\n"


@pytest.fixture
def configured(tmp_path: Path) -> Path:
    """A project whose configuration files are longer than its tiny context window."""
    write(
        tmp_path / "pyproject.toml",
        '[project]\nname = "demo"\ndescription = "a project with prompts"\n\n'
        "[tool.tokenline]\ncontext-window = 20\n",
    )
    write(tmp_path / "sub" / "tokenline.toml", "context-window = 20\n" + "# a comment\n" * 10)
    write(tmp_path / "sub" / "prompt.md", prose(5))
    write(tmp_path / "prompt.md", prose(5))
    return tmp_path


def test_check_leaves_configuration_files_alone(configured: Path) -> None:
    result = tokenline("check", "--json", cwd=configured)
    assert result.returncode == 0, result.stdout
    assert sorted(row["path"] for row in json.loads(result.stdout)) == [
        "prompt.md",
        os.path.join("sub", "prompt.md"),
    ]
    named = tokenline("check", "pyproject.toml", "sub/tokenline.toml", cwd=configured)
    assert named.returncode == 0, named.stdout
    assert named.stderr.splitlines() == [
        "tokenline: pyproject.toml: a configuration file, not checked (no budget names it)",
        "tokenline: sub/tokenline.toml: a configuration file, not checked (no budget names it)",
        "No files to check",
    ]
    # count counts what it is given, configuration files too.
    counted = tokenline("count", "pyproject.toml", cwd=configured)
    assert counted.returncode == 0 and counted.stdout.split()[1] == "pyproject.toml"


def test_check_holds_a_configuration_file_to_a_budget_that_names_it(configured: Path) -> None:
    pyproject = configured / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8") + '\n[tool.tokenline.budgets]\n"*.toml" = 10\n'
    pyproject.write_text(text, encoding="utf-8")
    result = tokenline("check", cwd=configured)
    assert result.returncode == 1
    n = n_tokens(text)
    # sub/ has its own configuration, without budgets: its tokenline.toml stays unchecked.
    assert result.stdout.splitlines() == [
        f"pyproject.toml: {n:,} tokens, {n - 10:,} over the budget of 10 (*.toml)"
    ]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_configuration_error_is_reported_in_one_run(command: str, tmp_path: Path) -> None:
    a = write(
        tmp_path / "a" / "pyproject.toml",
        '[tool.tokenline]\nmodel = "nope.model"\ncontext-window = -5\nwarn_at = 0.5\n',
    )
    b = write(tmp_path / "b" / "tokenline.toml", '[budgets]\n"*.md" = "2k"\n')
    write(tmp_path / "a" / "x.md", prose(5))
    write(tmp_path / "a" / "y.md", prose(6))
    write(tmp_path / "b" / "z.md", prose(7))
    write(tmp_path / "c" / "fine.md", prose(8))
    result = tokenline(command, "a", "b", "c", cwd=tmp_path)
    assert result.returncode == 3, result.stdout + result.stderr
    assert result.stderr.splitlines() == [
        f'tokenline: {a}: [tool.tokenline] "context-window" must be a positive whole number of '
        "tokens, not -5",
        f'tokenline: {a}: [tool.tokenline] unknown key "warn_at" (did you mean "warn-at"?); '
        "the keys are: model, context-window, warn-at, budgets, exclude",
        f'tokenline: {a}: [tool.tokenline] "model" = "nope.model": no such file: '
        f"{a.parent / 'nope.model'} (read as a SentencePiece .model file)",
        f'tokenline: {b}: [budgets] "*.md" must be a positive whole number of tokens or a table '
        '{ tokens = N, model = "..." }, not "2k"',
    ]
    # The file under no broken configuration is still measured.
    if command == "count":
        assert result.stdout.split() == [f"{n_tokens(prose(8)):,}", os.path.join("c", "fine.md")]


def test_a_broken_configuration_named_by_config_stops_the_run(tmp_path: Path) -> None:
    config = write(tmp_path / "tokenline.toml", 'model = "nope.model"\nwarn-at = 2\n')
    write(tmp_path / "x.md", prose(5))
    for command in COMMANDS:
        result = tokenline(command, "--config", str(config), "x.md", cwd=tmp_path)
        assert result.returncode == 3
        assert result.stdout == ""
        assert result.stderr.splitlines() == [
            f'tokenline: {config}: "warn-at" must be a fraction between 0 and 1, not 2',
            f'tokenline: {config}: "model" = "nope.model": no such file: '
            f"{tmp_path / 'nope.model'} (read as a SentencePiece .model file)",
        ]
