"""`tokenline count/show --model o200k_base`: tiktoken's encodings on the command line, from a
tiktoken cache the test seeds itself (nothing is downloaded)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .test_cli import tokenline

TEXT = "Counting with tiktoken: 鬱 🧿 丧美 中文.\nSecond line, plain ASCII.\n"


def test_count_with_a_tiktoken_encoding(
    tiktoken_cache: Path, o200k_encoding: Any, tmp_path: Path
) -> None:
    path = tmp_path / "prompt.md"
    path.write_text(TEXT, encoding="utf-8")
    env = {"TIKTOKEN_CACHE_DIR": str(tiktoken_cache)}
    result = tokenline("count", "--model", "o200k_base", str(path), env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [f"{len(o200k_encoding.encode_ordinary(TEXT)):,}", str(path)]
    result = tokenline("count", "--json", "--model", "gpt-4o", str(path), env=env)
    assert result.returncode == 0, result.stderr
    assert '"model": "gpt-4o (o200k_base)"' in result.stdout


def test_show_joins_tokens_that_share_a_character(
    tiktoken_cache: Path, o200k_encoding: Any, tmp_path: Path
) -> None:
    path = tmp_path / "prompt.md"
    path.write_text(TEXT, encoding="utf-8")
    result = tokenline(
        "show", "--color", "never", "--model", "o200k_base", str(path),
        env={"TIKTOKEN_CACHE_DIR": str(tiktoken_cache)},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    body, summary = result.stdout.rstrip("\n").rsplit("\n", 1)
    assert body.replace("|", "") == TEXT
    # " 丧" and "美" share 丧's last byte: one part, never cut between them.
    assert "| 丧美|" in body
    assert summary.startswith(f"{len(o200k_encoding.encode_ordinary(TEXT)):,} tokens · o200k_base")


def test_an_encoding_missing_from_the_cache_says_how_to_use_it_offline(tmp_path: Path) -> None:
    path = tmp_path / "prompt.md"
    path.write_text(TEXT, encoding="utf-8")
    # An empty cache and no network: tiktoken cannot load it, and the message says what to do.
    empty = tmp_path / "empty"
    env = {"TIKTOKEN_CACHE_DIR": str(empty), "HTTPS_PROXY": "http://127.0.0.1:9"}
    result = tokenline("count", "--model", "o200k_base", str(path), env=env)
    assert result.returncode == 3
    assert result.stdout == ""
    url = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
    assert result.stderr == (
        "tokenline: cannot load tokenizer model o200k_base: tiktoken could not load o200k_base: "
        f"it is not in tiktoken's cache {empty}, and downloading it failed (no connection to "
        "openaipublic.blob.core.windows.net: ProxyError); run `tokenline models fetch "
        f"o200k_base` where the network is reachable, or download {url} elsewhere and run "
        "`tokenline models fetch o200k_base --from o200k_base.tiktoken`\n"
    )


def test_a_misspelt_encoding_is_named_as_such(tmp_path: Path) -> None:
    path = tmp_path / "prompt.md"
    path.write_text(TEXT, encoding="utf-8")
    result = tokenline("count", "--model", "o200k_bas", str(path))
    assert result.returncode == 3
    assert "tiktoken encoding" in result.stderr
