"""`tokenline count --model A --model B ...`: one column per model, `models` in `--json`; and
budgets that name a model in `check`, `count` and `show`. Each count is its reference library's:
sentencepiece (the bundled Mistral), tiktoken's o200k_base (a seeded cache, no download) and a
tokenizer.json trained here (`tokenizers`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tokenizers import Tokenizer

from tests.core import hfkit
from tokenline.core import bundled_model_path

from .test_cli import sp_count, tokenline

TRAINED = "bl-gpt4"
PROMPT = "Prompts are written once and sent to many models.\n我们今天讨论的是如何回答。 😀\n"
NOTE = "A short note, in English only.\n"
CHINESE = "我们今天讨论的是如何用简短的句子回答每一个问题。\n"


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory, botchan: str) -> Path:
    return hfkit.train(TRAINED, tmp_path_factory.mktemp("compare-cli"), botchan)


@pytest.fixture
def env(tiktoken_cache: Path) -> dict[str, str]:
    return {"TIKTOKEN_CACHE_DIR": str(tiktoken_cache)}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_count_prints_one_column_per_model(
    tmp_path: Path, trained: Path, env: dict[str, str], o200k_encoding: Any
) -> None:
    a, b = write(tmp_path / "a.md", PROMPT), write(tmp_path / "b.md", NOTE)
    hf = Tokenizer.from_file(str(trained))
    models = ["mistral-7b-v0.1", "o200k_base", str(trained)]
    args = [x for m in models for x in ("--model", m)]
    result = tokenline("count", *args, str(a), str(b), env=env)
    assert result.returncode == 0, result.stderr
    header, *rows, total = result.stdout.splitlines()
    assert header.split() == ["mistral-7b-v0.1", "o200k_base", TRAINED]
    expected = {}
    for path in (a, b):
        text = path.read_text(encoding="utf-8")
        expected[str(path)] = [
            sp_count(path, bundled_model_path()),
            len(o200k_encoding.encode_ordinary(text)),
            len(hf.encode(text, add_special_tokens=False).ids),
        ]
    assert {r.split()[-1]: [int(n.replace(",", "")) for n in r.split()[:-1]] for r in rows} == (
        expected
    )
    assert total.split() == [f"{sum(c):,}" for c in zip(*expected.values(), strict=True)] + [
        "total"
    ]
    # Columns line up under the header's names (each right-aligned to its name's end).
    ends = [header.index(name) + len(name) for name in header.split()]
    for row in [*rows, total]:
        assert [row.index(n) + len(n) for n in row.split()[:3]] == ends, row


def test_count_json_lists_the_models_in_the_order_given(
    tmp_path: Path, trained: Path, env: dict[str, str], o200k_encoding: Any
) -> None:
    a = write(tmp_path / "a.md", PROMPT)
    result = tokenline(
        "count", "--json", "--model", "o200k_base", "--model", str(trained), str(a), env=env
    )
    assert result.returncode == 0, result.stderr
    [entry] = json.loads(result.stdout)
    hf = Tokenizer.from_file(str(trained))
    o200k = len(o200k_encoding.encode_ordinary(PROMPT))
    assert entry["models"] == [
        {"model": "o200k_base", "tokens": o200k},
        {"model": TRAINED, "tokens": len(hf.encode(PROMPT, add_special_tokens=False).ids)},
    ]
    # The first model fills the fields a single model fills.
    assert (entry["model"], entry["tokens"]) == ("o200k_base", o200k)
    one = json.loads(tokenline("count", "--json", str(a)).stdout)[0]
    assert one["models"] == [{"model": "mistral-7b-v0.1", "tokens": one["tokens"]}]


def test_a_model_that_cannot_be_loaded_stops_count(tmp_path: Path) -> None:
    a = write(tmp_path / "a.md", PROMPT)
    result = tokenline("count", "--model", "mistral-7b-v0.1", "--model", "nope.model", str(a))
    assert result.returncode == 3
    assert "nope.model" in result.stderr and result.stdout == ""


def test_check_holds_each_file_to_one_model(tmp_path: Path) -> None:
    a = write(tmp_path / "a.md", PROMPT)
    result = tokenline("check", "--model", "mistral-7b-v0.1", "--model", "o200k_base", str(a))
    assert result.returncode == 2
    assert "one model" in result.stderr


BUDGETS = """[budgets]
"prompts/*.md" = { tokens = 40, model = "o200k_base" }
"mistral/*.md" = 40
"""


def test_a_budget_that_names_a_model_is_held_to_its_tokens(
    tmp_path: Path, env: dict[str, str], o200k_encoding: Any
) -> None:
    write(tmp_path / "tokenline.toml", BUDGETS)
    two = write(tmp_path / "prompts" / "two.md", CHINESE * 2)
    three = write(tmp_path / "prompts" / "three.md", CHINESE * 3)
    same = write(tmp_path / "mistral" / "two.md", CHINESE * 2)
    o200k = [len(o200k_encoding.encode_ordinary(p.read_text("utf-8"))) for p in (two, three)]
    mistral = sp_count(two, bundled_model_path())
    # Within 40 o200k_base tokens, over 40 of Mistral's: the budget of o200k_base passes it.
    assert o200k[0] <= 40 < min(o200k[1], mistral)
    result = tokenline("check", str(tmp_path), env=env)
    assert result.returncode == 1, result.stderr
    assert sorted(result.stdout.splitlines()) == [
        f"{same}: {mistral} tokens, {mistral - 40} over the budget of 40 (mistral/*.md)",
        f"{three}: {o200k[1]} o200k_base tokens, {o200k[1] - 40} over the budget of 40 "
        "(prompts/*.md)",
    ]
    [entry] = json.loads(tokenline("count", "--json", str(two), env=env).stdout)
    assert (entry["budget_model"], entry["budget_tokens"], entry["over"]) == (
        "o200k_base",
        o200k[0],
        0,
    )
    assert (entry["model"], entry["tokens"]) == ("mistral-7b-v0.1", mistral)
    result = tokenline("count", str(three), env=env)
    assert result.stdout.split("  (")[1] == f"budget 40 o200k_base tokens, {o200k[1] - 40} over)\n"
    shown = tokenline("show", "--color", "never", str(two), env=env)
    summary = shown.stdout.rstrip("\n").rsplit("\n", 1)[1]
    assert summary.endswith(f"budget (prompts/*.md): {o200k[0]} o200k_base tokens")
    assert f"· {100 * o200k[0] / 40:.1f}% of" in summary


def test_a_budget_model_that_cannot_be_loaded_is_a_configuration_error(tmp_path: Path) -> None:
    config = write(
        tmp_path / "tokenline.toml", '[budgets]\n"*.md" = { tokens = 5, model = "x.model" }\n'
    )
    a = write(tmp_path / "a.md", NOTE)
    result = tokenline("check", str(a))
    assert result.returncode == 3
    assert f'{config}: budgets "*.md" model = "x.model"' in result.stderr
