"""`count` and `check` read files in chunks and count many files on workers: what they print and
the exit code are the same as counting each whole file in one process, wherever the reads end
(inside a character's bytes, between CR and LF), and a file that is not text is reported the same
way."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from tests.conftest import read_botchan
from tokenline.cli import main as cli_main
from tokenline.config import Budget, ProjectConfig
from tokenline.core import load_model
from tokenline.measure import count_file
from tokenline.walk import CHUNK_BYTES, InputError, read_chunks, read_text

from .test_check import n_tokens, prose, tokenline


def write_bytes(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("size", [1, 2, 3, 5, 4096])
def test_chunks_join_to_the_whole_text(size: int, tmp_path: Path) -> None:
    text = "\ufeffé的🐈 line\r\nnext\r" + "吾輩は猫である。\r\n" * 900 + "end"
    path = write_bytes(tmp_path / "t.txt", text.encode("utf-8"))
    parts = list(read_chunks(str(path), size))
    assert "".join(parts) == text == read_text(str(path))
    assert len(parts) > 1


@pytest.mark.parametrize("size", [1, 3, 8192])
@pytest.mark.parametrize(
    "data",
    [
        "é".encode() * 5000 + b"\xff" + b"tail",
        b"a" * 9000 + "的".encode()[:2],  # a character cut off by the end of the file
        b"ok " * 3000 + b"\xe4\xb8" + b"x",
    ],
)
def test_bad_bytes_are_reported_as_a_whole_read_reports_them(
    size: int, data: bytes, tmp_path: Path
) -> None:
    path = str(write_bytes(tmp_path / "bad.txt", data))
    with pytest.raises(InputError) as whole:
        read_text(path)
    with pytest.raises(InputError) as chunked:
        list(read_chunks(path, size))
    assert str(chunked.value) == str(whole.value)


def test_a_binary_file_is_reported_before_any_chunk(tmp_path: Path) -> None:
    path = str(write_bytes(tmp_path / "x.bin", b"text" * 100 + b"\x00" + b"more" * 10))
    with pytest.raises(InputError, match="binary file"):
        next(read_chunks(path, 1))


def test_a_large_file_counts_as_one_encode_across_its_reads(tmp_path: Path) -> None:
    """Reads end inside a three-byte character and between CR and LF."""
    botchan = read_botchan().replace("\n", "\r\n")
    head = "猫" * ((CHUNK_BYTES - 1) // 3) + "x"  # the first read ends inside a character
    body = botchan[: CHUNK_BYTES - 1] + "\r\n" + botchan  # the second between CR and LF
    text = head + body[len(head.encode()) % 7 :]
    path = write_bytes(tmp_path / "big.txt", text.encode("utf-8"))
    model = load_model("mistral-7b-v0.1")
    characters, counts = count_file(str(path), [model, model])
    assert characters == len(text)
    assert counts == [n_tokens(text), n_tokens(text)]


def tree(root: Path) -> None:
    """Files of every kind a walk meets: within and over budget, excluded, binary, not UTF-8, a
    folder whose configuration is broken."""
    (root / "tokenline.toml").write_text(
        'exclude = ["skip/"]\n[budgets]\n"big/*.md" = 50\n', encoding="utf-8"
    )
    for i in range(40):
        folder = root / ("big" if i % 3 == 0 else "docs") / f"g{i % 4}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{i:02d}.md").write_text(prose(5 + 7 * i, seed=i), encoding="utf-8")
    write_bytes(root / "skip" / "a.md", prose(10).encode())
    write_bytes(root / "docs" / "logo.png", b"\x89PNG\x00\x00")
    write_bytes(root / "docs" / "latin1.txt", "caf\xe9".encode("latin-1"))
    write_bytes(root / "broken" / "tokenline.toml", b"context-window = 'many'\n")
    write_bytes(root / "broken" / "x.md", prose(10).encode())


@pytest.mark.parametrize("command", ["count", "check"])
@pytest.mark.parametrize("extra", [[], ["--json"]])
def test_workers_print_what_one_process_prints(
    command: str, extra: list[str], tmp_path: Path
) -> None:
    tree(tmp_path)
    named = ["docs/latin1.txt"] if command == "count" else []
    args = [command, *extra, ".", *named]
    serial = tokenline(*args, "--jobs", "1", cwd=tmp_path)
    pooled = tokenline(*args, "--jobs", "2", cwd=tmp_path)
    assert serial.returncode != 0  # over budget, or the broken configuration
    assert (pooled.returncode, pooled.stdout, pooled.stderr) == (
        serial.returncode,
        serial.stdout,
        serial.stderr,
    )
    if extra:
        counts = {r["path"]: r["tokens"] for r in json.loads(pooled.stdout)}
        assert counts["docs/g1/f01.md"] == n_tokens(prose(12, seed=1))


def test_jobs_must_be_a_number_of_processes(tmp_path: Path) -> None:
    result = tokenline("count", "--jobs", "0", ".", cwd=tmp_path)
    assert result.returncode == 2
    assert "must be a number of processes" in result.stderr


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_each_file_budget_is_looked_up_once(
    jobs: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Planning the workers' jobs and measuring each file share one lookup of its
    configuration's budget (they were two, a fifth of `check`'s own work on many files)."""
    tree(tmp_path)
    asked: list[str] = []
    budget_for = ProjectConfig.budget_for

    def counted(self: ProjectConfig, file: Path) -> Budget | None:
        asked.append(str(file))
        return budget_for(self, file)

    monkeypatch.setattr(ProjectConfig, "budget_for", counted)
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert cli_main(["check", "--json", "--jobs", jobs, "."]) != 0
    checked = [r["path"] for r in json.loads(out.getvalue())]
    assert len(checked) == 40  # the prompts (neither excluded, broken nor binary)
    assert sorted(asked) == sorted(set(asked))
    assert {p for p in checked if p.endswith(".md")} <= set(asked)
