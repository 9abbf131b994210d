"""Model.token_bytes per family, and which tiktoken encodings the cache holds (for pickers)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import tekken_path
from tokenline.core import cached_tiktoken_encodings, load_model


def test_sentencepiece_bytes() -> None:
    model = load_model()
    text = "Hello 🧿 wörld"
    ids = model.encode(text)
    raw = [model.token_bytes(i) for i in ids]
    assert b"".join(raw) == (" " + text).encode("utf-8")  # the dummy prefix is a space
    byte_ids = [i for i in ids if model.piece(i).startswith("<0x")]
    assert [model.token_bytes(i) for i in byte_ids] == [bytes([b]) for b in "🧿".encode()]


def test_tiktoken_bytes(
    tiktoken_cache: Path, o200k_encoding: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tiktoken_cache))
    model = load_model("o200k_base")
    text = "Tokens: 鬱 🧿 丧美"
    ids = model.encode(text)
    assert ids == o200k_encoding.encode_ordinary(text)
    assert [model.token_bytes(i) for i in ids] == [
        o200k_encoding.decode_single_token_bytes(i) for i in ids
    ]
    assert model.token_bytes(o200k_encoding.eot_token) == b"<|endoftext|>"


def test_tekken_bytes_skip_the_special_ids() -> None:
    model = load_model(tekken_path())
    text = "Tekken: 鬱 丧美"
    ids = model.encode(text)
    assert min(ids) >= 1000
    assert b"".join(model.token_bytes(i) for i in ids) == text.encode("utf-8")


def test_cached_encodings(
    tiktoken_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tiktoken_cache))
    names = [name for name, _ in cached_tiktoken_encodings()]
    assert {"o200k_base", "cl100k_base"} <= set(names)
    assert "r50k_base" not in names and "gpt2" not in names
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    assert cached_tiktoken_encodings() == []
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # tiktoken's "no caching"
    assert cached_tiktoken_encodings() == []
