"""The catalog of what can be used here, and tiktoken's cache: which encodings it holds, where,
and filling it from tiktoken's download or from files brought from elsewhere. Nothing is
downloaded: tiktoken's network reader is replaced by one that fails the test or serves a file."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
import tiktoken
import tiktoken.load

from tests import tiktokencache
from tests.conftest import shared_file
from tokenline.core import BUNDLED_DEFAULT, ModelError, bundled_model_path, load_model
from tokenline.core.catalog import model_catalog, workspace_tokenizers
from tokenline.core.tiktokencache import (
    fetch_encoding,
    install_encoding_files,
    tiktoken_cache_file,
    tiktoken_encoding,
    tiktoken_encodings,
)

O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"


def _no_network(blobpath: str) -> bytes:
    raise AssertionError(f"tests never download: tiktoken asked for {blobpath}")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty tiktoken cache, no Hugging Face cache, and no network."""
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tiktoken"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr(tiktoken.load, "read_file", _no_network)
    return tmp_path / "tiktoken"


def test_every_encoding_tiktoken_knows_is_listed_and_none_is_cached(cache: Path) -> None:
    entries = model_catalog()
    assert entries[0].value == BUNDLED_DEFAULT and entries[0].default
    assert entries[0].path == str(bundled_model_path())
    listed = [e for e in entries if e.section == "tiktoken"]
    assert [e.value for e in listed] == list(reversed(tiktoken.list_encoding_names()))
    assert all(not e.cached and e.path == "" for e in listed)
    (o200k,) = [e for e in listed if e.value == "o200k_base"]
    assert o200k.url == O200K_URL


def test_seeded_encodings_are_cached_in_tiktokens_own_file(
    tiktoken_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tiktoken_cache))
    by_value = {e.value: e for e in model_catalog() if e.section == "tiktoken"}
    for name in tiktokencache.SEEDED:
        entry = by_value[name]
        assert entry.cached
        # tiktoken's own cache key: the sha1 of the URL, and the file has the sha256 it checks.
        assert entry.path == str(tiktoken_cache / hashlib.sha1(entry.url.encode()).hexdigest())
        (wanted,) = tiktoken_encoding(name).files
        assert hashlib.sha256(Path(entry.path).read_bytes()).hexdigest() == wanted.sha256
    assert not by_value["r50k_base"].cached and not by_value["gpt2"].cached


def test_gpt2_reads_two_files_with_their_hashes() -> None:
    (gpt2,) = [e for e in tiktoken_encodings() if e.name == "gpt2"]
    assert [f.file_name for f in gpt2.files] == ["vocab.bpe", "encoder.json"]
    assert all(f.sha256 and len(f.sha256) == 64 for f in gpt2.files)


def test_workspace_tokenizer_files_are_listed_relative_to_one_folder(
    cache: Path, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    (ws / "a" / "b").mkdir(parents=True)
    (ws / "a" / "tokenizer.json").write_text("{}", encoding="utf-8")
    (ws / "a" / "b" / "tokenizer.model").write_bytes(b"")
    (ws / "tekken_v3.json").write_text("{}", encoding="utf-8")
    (ws / "notes.json").write_text("{}", encoding="utf-8")
    for skipped in ("node_modules/x", ".git/y", ".hidden"):
        (ws / skipped).mkdir(parents=True)
        (ws / skipped / "tokenizer.json").write_text("{}", encoding="utf-8")
    entries = [e for e in model_catalog([ws]) if e.section == "workspace"]
    assert [(e.value, e.format) for e in entries] == [
        ("tekken_v3.json", "Tekken"),
        ("a/tokenizer.json", "tokenizer.json"),
        ("a/b/tokenizer.model", "SentencePiece"),
    ]
    assert all(Path(e.path) == ws / e.value and e.folder == str(ws) for e in entries)
    # Two folders: absolute values, since no one folder is what a relative path is taken against.
    other = tmp_path / "other"
    other.mkdir()
    values = [e.value for e in model_catalog([ws, other]) if e.section == "workspace"]
    relative = ("tekken_v3.json", "a/tokenizer.json", "a/b/tokenizer.model")
    assert values == [str(ws / rel) for rel in relative]


def test_the_workspace_walk_is_bounded(tmp_path: Path) -> None:
    for i in range(60):
        (tmp_path / f"d{i:02}").mkdir()
        (tmp_path / f"d{i:02}" / "tokenizer.json").write_text("{}", encoding="utf-8")
    found = workspace_tokenizers(tmp_path)
    assert len(found) == 50 and found[0] == tmp_path / "d00" / "tokenizer.json"


def test_hugging_face_cache_repos_with_their_paths(cache: Path, tmp_path: Path) -> None:
    snapshot = tmp_path / "hub" / "models--acme--tiny" / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    shutil.copyfile(bundled_model_path(), snapshot / "tokenizer.model")
    (entry,) = [e for e in model_catalog() if e.section == "huggingface"]
    assert (entry.value, entry.path, entry.format) == (
        "acme/tiny",
        str(snapshot / "tokenizer.model"),
        "SentencePiece",
    )
    assert load_model(entry.value).encode("Hello") == load_model(BUNDLED_DEFAULT).encode("Hello")


def test_installing_a_downloaded_file_makes_the_encoding_load_offline(cache: Path) -> None:
    source = shared_file("models", "o200k_base.tiktoken")
    (written,) = install_encoding_files("o200k_base", [source])
    assert written == tiktoken_cache_file(O200K_URL, cache)
    assert written.read_bytes() == source.read_bytes()
    assert "o200k_base" in [
        e.value for e in model_catalog() if e.section == "tiktoken" and e.cached
    ]
    # tiktoken's own cached read finds it there (its network reader fails the test).
    (wanted,) = tiktoken_encoding("o200k_base").files
    assert tiktoken.load.read_file_cached(wanted.url, wanted.sha256) == source.read_bytes()


def test_installing_the_wrong_file_says_so_and_writes_nothing(cache: Path) -> None:
    wrong = shared_file("models", "cl100k_base.tiktoken")
    with pytest.raises(ModelError, match="sha256"):
        install_encoding_files("o200k_base", [wrong])
    assert not cache.exists() or not any(cache.iterdir())
    with pytest.raises(ModelError, match=r"needs encoder\.json"):
        install_encoding_files("gpt2", [wrong.with_name("vocab.bpe")])
    with pytest.raises(ModelError, match="not a tiktoken encoding"):
        install_encoding_files("o200k_bas", [wrong])


def test_fetch_offline_says_what_to_do(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def offline(blobpath: str) -> bytes:
        raise ConnectionError(f"cannot reach {blobpath}")

    monkeypatch.setattr(tiktoken.load, "read_file", offline)
    with pytest.raises(ModelError) as caught:
        fetch_encoding("o200k_base")
    message = str(caught.value)
    # Said in a few words, not as the connection library's paragraph.
    assert "no connection to openaipublic.blob.core.windows.net: ConnectionError" in message
    assert "cannot reach" not in message and str(cache) in message
    assert f"download {O200K_URL}" in message
    assert "tokenline models fetch o200k_base --from o200k_base.tiktoken" in message


def test_fetch_downloads_through_tiktoken_into_its_cache(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = shared_file("models", "o200k_base.tiktoken")
    asked: list[str] = []

    def served(blobpath: str) -> bytes:
        asked.append(blobpath)
        return source.read_bytes()

    monkeypatch.setattr(tiktoken.load, "read_file", served)
    encoding = fetch_encoding("o200k_base")
    assert asked == [O200K_URL]
    assert encoding.cached(cache)
    fetch_encoding("o200k_base")  # already there: nothing asked
    assert asked == [O200K_URL]


def test_fetch_with_caching_off_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    monkeypatch.setattr(tiktoken.load, "read_file", _no_network)
    with pytest.raises(ModelError, match="cache is off"):
        fetch_encoding("o200k_base")
