"""`tokenline models`: what can be used here, with paths; `tokenline models fetch`: tiktoken's
cache filled by tiktoken's download or from a file brought from elsewhere. Nothing is downloaded:
subprocesses get a proxy that refuses every connection, and the in-process download is served
from ../shared by a stand-in for tiktoken's network reader."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import tiktoken
import tiktoken.load

from tests import tiktokencache
from tests.conftest import shared_file, tekken_path
from tokenline.cli import main
from tokenline.core import bundled_model_path
from tokenline.core.tiktokencache import tiktoken_cache_file

from .test_cli import tokenline

OFFLINE = {"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"}
O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
TEXT = "Fetched offline: 鬱 and 中文.\n"


def _env(tmp_path: Path, cache: Path) -> dict[str, str]:
    return {"TIKTOKEN_CACHE_DIR": str(cache), "HF_HUB_CACHE": str(tmp_path / "hub"), **OFFLINE}


def _workspace(tmp_path: Path) -> Path:
    """A folder with a Tekken file, and a Hugging Face cache with one repo."""
    ws = tmp_path / "ws"
    (ws / "tok").mkdir(parents=True)
    shutil.copyfile(tekken_path(), ws / "tok" / "tekken_240911.json")
    snapshot = tmp_path / "hub" / "models--acme--tiny" / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    shutil.copyfile(bundled_model_path(), snapshot / "tokenizer.model")
    return ws


def test_models_json_lists_everything_with_paths(tiktoken_cache: Path, tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    result = tokenline("models", "--json", "--folder", str(ws), env=_env(tmp_path, tiktoken_cache))
    assert result.returncode == 0, result.stderr
    listing = json.loads(result.stdout)
    assert listing["tiktokenCache"] == str(tiktoken_cache)
    assert listing["huggingFaceCache"] == str(tmp_path / "hub")
    by_value = {m["value"]: m for m in listing["models"]}
    assert by_value["mistral-7b-v0.1"]["path"] == str(bundled_model_path())
    tiktoken_names = [m["value"] for m in listing["models"] if m["kind"] == "tiktoken"]
    assert sorted(tiktoken_names) == sorted(tiktoken.list_encoding_names())
    for name in tiktokencache.SEEDED:
        assert by_value[name]["cached"] and Path(by_value[name]["path"]).parent == tiktoken_cache
    assert not by_value["r50k_base"]["cached"] and by_value["r50k_base"]["path"] == ""
    tekken = by_value["tok/tekken_240911.json"]
    assert (tekken["kind"], tekken["format"]) == ("workspace", "Tekken")
    assert tekken["path"] == str(ws / "tok" / "tekken_240911.json")
    repo = by_value["acme/tiny"]
    assert repo["kind"] == "huggingface"
    assert repo["path"] == str(tmp_path / "hub/models--acme--tiny/snapshots/abc/tokenizer.model")


def test_models_lists_each_kind_under_a_heading(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    cache = tmp_path / "empty-cache"
    result = tokenline("models", "--folder", str(ws), env=_env(tmp_path, cache))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "Bundled"
    assert lines[1].split()[:2] == ["mistral-7b-v0.1", "SentencePiece"]
    assert f"tiktoken encodings (cache: {cache})" in lines
    rows = {line.split(None, 1)[0]: line.split(None, 1)[1] for line in lines if line[:1] == " "}
    assert rows["o200k_base"] == (
        "not cached: downloaded on first use (tokenline models fetch o200k_base)"
    )
    assert f"Tokenizer files under {ws} (named relative to it)" in lines
    (tekken,) = [line for line in lines if "tekken_240911.json" in line]
    assert tekken.split() == [
        "tok/tekken_240911.json",
        "Tekken",
        str(ws / "tok/tekken_240911.json"),
    ]
    assert f"Hugging Face cache ({tmp_path / 'hub'})" in lines
    (repo,) = [line for line in lines if "acme/tiny" in line]
    assert repo.split()[1:] == ["SentencePiece", str(next((tmp_path / "hub").rglob("*.model")))]


def test_fetch_from_a_file_then_count_offline(tmp_path: Path, o200k_encoding: Any) -> None:
    cache = tmp_path / "cache"
    env = _env(tmp_path, cache)
    source = shared_file("models", "o200k_base.tiktoken")
    result = tokenline("models", "fetch", "gpt-4o", "--from", str(source), env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("o200k_base: put into tiktoken's cache: ")
    assert result.stdout.splitlines()[0].endswith(str(tiktoken_cache_file(O200K_URL, cache)))
    prompt = tmp_path / "prompt.md"
    prompt.write_text(TEXT, encoding="utf-8")
    counted = tokenline("count", "--model", "o200k_base", str(prompt), env=env)
    assert counted.returncode == 0, counted.stderr
    assert counted.stdout.split()[0] == f"{len(o200k_encoding.encode_ordinary(TEXT)):,}"
    # Now cached: fetching again needs no network.
    again = tokenline("models", "fetch", "o200k_base", env=env)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith(f"o200k_base: already in tiktoken's cache {cache}\n")


def _hashes(cache: Path) -> list[str]:
    return [p.name for p in cache.iterdir()]


def test_fetch_offline_says_how_to_bring_the_file(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    result = tokenline("models", "fetch", "o200k_base", env=_env(tmp_path, cache))
    assert result.returncode == 3
    said = f"tokenline: o200k_base: tiktoken could not download it into {cache}"
    assert result.stderr.startswith(said), result.stderr
    assert f"download {O200K_URL} elsewhere" in result.stderr
    assert "`tokenline models fetch o200k_base --from o200k_base.tiktoken`" in result.stderr
    assert not cache.exists() or _hashes(cache) == []


def test_fetch_refuses_a_wrong_file_and_an_unknown_name(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    env = _env(tmp_path, cache)
    wrong = shared_file("models", "cl100k_base.tiktoken")
    result = tokenline("models", "fetch", "o200k_base", "--from", str(wrong), env=env)
    assert result.returncode == 3 and "sha256" in result.stderr, result.stderr
    assert not cache.exists() or _hashes(cache) == []
    result = tokenline("models", "fetch", "o200k_bas", env=env)
    assert result.returncode == 3 and "not a tiktoken encoding" in result.stderr, result.stderr


def test_fetch_downloads_through_tiktoken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Online, as far as tiktoken can tell: its network reader serves the file from ../shared."""
    source = shared_file("models", "o200k_base.tiktoken")
    asked: list[str] = []

    def served(blobpath: str) -> bytes:
        asked.append(blobpath)
        return source.read_bytes()

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(tiktoken.load, "read_file", served)
    assert main(["models", "fetch", "o200k_base"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"o200k_base: downloaded into tiktoken's cache {tmp_path / 'cache'}\n")
    assert asked == [O200K_URL]
    (cached,) = (tmp_path / "cache").iterdir()
    assert cached.read_bytes() == source.read_bytes()
