"""`tokenline count --chat` and `check` on chat files, as a user runs them: a model folder laid out
as a Hub repo (tokenizer.json beside tokenizer_config.json), counts per conversation that equal
transformers' apply_chat_template, bad lines reported and skipped, budgets per conversation."""

from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path
from typing import Any

import pytest
from transformers import PreTrainedTokenizerFast

from tests.cli.test_cli import tokenline
from tests.conftest import DATA

CONVERSATIONS: list[dict[str, Any]] = [
    {
        "messages": [
            {"role": "user", "content": "Hi there"},
            {"role": "assistant", "content": "Hello!"},
        ]
    },
    {
        "messages": [
            {"role": "system", "content": "Answer in French."},
            {"role": "user", "content": "Where is the station? " * 12},
            {"role": "assistant", "content": "À gauche, puis tout droit."},
        ]
    },
    {"messages": [{"role": "user", "content": "😀 " * 5}]},
]


@pytest.fixture
def phi3(tmp_path: Path) -> Path:
    folder = tmp_path / "phi-3-mini"
    folder.mkdir()
    shutil.copy(DATA / "tokenizers" / "phi-3-mini" / "tokenizer.json", folder)
    shutil.copy(DATA / "chat_templates" / "phi-3-mini" / "tokenizer_config.json", folder)
    return folder


def _reference(folder: Path) -> PreTrainedTokenizerFast:
    config = json.loads((folder / "tokenizer_config.json").read_text("utf-8"))
    return PreTrainedTokenizerFast(
        tokenizer_file=str(folder / "tokenizer.json"),
        chat_template=config["chat_template"],
        bos_token=config["bos_token"],
        eos_token=config["eos_token"],
        unk_token=config["unk_token"],
        pad_token=config["pad_token"],
    )


def _jsonl(path: Path, bad_line: str = "{not json") -> Path:
    lines = [json.dumps(c, ensure_ascii=False) for c in CONVERSATIONS]
    lines.insert(1, bad_line)
    lines.insert(2, "")
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def test_count_chat_json_equals_transformers_per_conversation(phi3: Path, tmp_path: Path) -> None:
    data = _jsonl(tmp_path / "train.jsonl")
    result = tokenline("count", "--chat", "--json", "--model", str(phi3), str(data))
    assert result.returncode == 0, result.stderr
    [report] = json.loads(result.stdout)
    assert report["chat_mode"] == "template"
    reference = _reference(phi3)
    records = report["records"]
    assert [r["line"] for r in records] == [1, 2, 4, 5]
    bad = records[1]
    assert bad["tokens"] is None and bad["error"].startswith("bad JSON")
    good = [r for r in records if r["error"] is None]
    for record, conv in zip(good, CONVERSATIONS, strict=True):
        ids = reference.apply_chat_template(conv["messages"], return_dict=False)
        assert record["tokens"] == len(ids)
        assert not record["estimate"]
        texts = [m["content"] for m in conv["messages"]]
        assert record["contents"] == sum(
            len(reference.encode(t, add_special_tokens=False)) for t in texts
        )


def test_count_chat_prints_each_record_and_the_summary(phi3: Path, tmp_path: Path) -> None:
    data = _jsonl(tmp_path / "train.jsonl")
    as_json = json.loads(
        tokenline("count", "--chat", "--json", "--model", str(phi3), str(data)).stdout
    )
    tokens = [r["tokens"] for r in as_json[0]["records"] if r["tokens"] is not None]
    result = tokenline(
        "count", "--chat", "--model", str(phi3), "--context-window", str(tokens[1] - 1), str(data)
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"{data}: phi-3-mini, the chat template of ")
    rows = [line.split() for line in lines[2:-1]]
    assert [row[0] for row in rows] == ["1", "2", "4", "5"]
    assert rows[1][1:3] == ["-", "-"] and "bad JSON" in lines[3]
    assert [int(row[1].replace(",", "")) for row in rows if row[1] != "-"] == tokens
    assert rows[2][-1] == "over"
    ordered = sorted(tokens)
    median = statistics.median(ordered)
    assert lines[-1].strip() == (
        f"4 conversations: min {ordered[0]:,}, median {median:,.0f}, p95 {ordered[-1]:,}, "
        f"max {ordered[-1]:,}; 1 over the context window of {tokens[1] - 1:,}; 1 not counted"
    )


def test_check_holds_each_conversation_to_the_limit(phi3: Path, tmp_path: Path) -> None:
    data = _jsonl(tmp_path / "train.jsonl")
    [report] = json.loads(
        tokenline("count", "--chat", "--json", "--model", str(phi3), str(data)).stdout
    )
    largest = max(r["tokens"] for r in report["records"] if r["tokens"] is not None)
    line = next(r["line"] for r in report["records"] if r["tokens"] == largest)
    within = tokenline("check", "--model", str(phi3), "--context-window", str(largest), str(data))
    assert within.returncode == 0, within.stdout + within.stderr
    over = tokenline("check", "--model", str(phi3), "--context-window", str(largest - 3), str(data))
    assert over.returncode == 1
    assert over.stdout.splitlines() == [
        f"{data}:{line}: {largest:,} tokens, 3 over the context window of {largest - 3:,}"
    ]
    # The raw text of the file is far larger than any conversation: it is not what is held.
    assert report["tokens"] > largest


def test_count_chat_refuses_a_file_that_is_not_one(phi3: Path, tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("just text\n", "utf-8")
    result = tokenline("count", "--chat", "--model", str(phi3), str(text))
    assert result.returncode == 1
    assert "not a chat file" in result.stderr


def test_yaml_prompt_file_and_tiktoken_estimate(
    tmp_path: Path, tiktoken_cache: Path, o200k_encoding: Any
) -> None:
    prompt = tmp_path / "prompt.yaml"
    prompt.write_text(
        "messages:\n  - role: system\n    content: Be brief.\n  - role: user\n    name: bob\n"
        "    content: Hello there\n",
        "utf-8",
    )
    env = {"TIKTOKEN_CACHE_DIR": str(tiktoken_cache)}
    result = tokenline("count", "--chat", "--json", "--model", "o200k_base", str(prompt), env=env)
    assert result.returncode == 0, result.stderr
    [record] = json.loads(result.stdout)[0]["records"]
    enc = o200k_encoding
    values = ["system", "Be brief.", "user", "bob", "Hello there"]
    # The cookbook's rule: 3 per message, 1 more for the name, 3 to prime the reply.
    expected = 3 * 2 + 1 + 3 + sum(len(enc.encode_ordinary(v)) for v in values)
    assert record == {
        "line": 1,
        "tokens": expected,
        "contents": len(enc.encode_ordinary("Be brief.")) + len(enc.encode_ordinary("Hello there")),
        "estimate": True,
        "error": None,
    }
    text = tokenline("count", "--chat", "--model", "o200k_base", str(prompt), env=env)
    assert f"≈{expected:,}" in text.stdout
