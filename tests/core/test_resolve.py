"""One model resolver for the server, the CLI and the library: every kind of spec it takes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tokenline.core import (
    BUNDLED_DEFAULT,
    ModelError,
    bundled_model_path,
    find_in_hf_cache,
    hf_cached_repos,
    hf_hub_cache,
    load_model,
    resolve_model,
)

BUNDLED = bundled_model_path()


def cache_repo(hub: Path, repo_id: str, snapshot: str, main: bool = True) -> Path:
    """A snapshot of repo_id in the Hub cache at hub, holding the bundled model as its tokenizer."""
    repo = hub / ("models--" + repo_id.replace("/", "--"))
    (repo / "snapshots" / snapshot).mkdir(parents=True)
    tokenizer = repo / "snapshots" / snapshot / "tokenizer.model"
    tokenizer.write_bytes(BUNDLED.read_bytes())
    if main:
        (repo / "refs").mkdir(exist_ok=True)
        (repo / "refs" / "main").write_text(snapshot)
    return tokenizer


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    (tmp_path / "hub").mkdir()
    return tmp_path / "hub"


@pytest.mark.parametrize("spec", [None, "", "  "])
def test_empty_spec_is_the_bundled_default(spec: str | None) -> None:
    source = resolve_model(spec)
    assert Path(source.path) == BUNDLED and source.name == BUNDLED_DEFAULT
    assert load_model(spec).name == BUNDLED_DEFAULT


def test_bundled_name() -> None:
    assert Path(resolve_model(BUNDLED_DEFAULT).path) == BUNDLED
    assert load_model(BUNDLED_DEFAULT).path == str(BUNDLED)


def test_paths_relative_to_a_base_directory_and_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "m").mkdir()
    copy = tmp_path / "m" / "mine.model"
    copy.write_bytes(BUNDLED.read_bytes())
    assert resolve_model("m/mine.model", tmp_path).path == str(copy)
    assert resolve_model(str(copy), "/elsewhere").path == str(copy)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert resolve_model("~/m/mine.model").path == str(copy)
    model = load_model("m/mine.model", str(tmp_path))
    assert model.name == "mine" and model.path == str(copy)


def test_a_path_object_is_always_a_path(tmp_path: Path) -> None:
    assert load_model(BUNDLED).path == str(BUNDLED)
    # A Path named like a bundled model is a file, not the bundled model.
    with pytest.raises(ModelError, match="no such file"):
        load_model(Path(BUNDLED_DEFAULT))


def test_missing_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(ModelError) as caught:
        load_model("nope.model", tmp_path)
    assert caught.value.path == str(tmp_path / "nope.model")
    assert caught.value.reason == "no such file"


def test_repo_id_from_the_local_cache(hub: Path) -> None:
    older = cache_repo(hub, "acme/tiny", "old", main=False)
    os.utime(older.parent, (1, 1))
    tokenizer = cache_repo(hub, "acme/tiny", "abc123")
    assert hf_hub_cache() == hub
    assert find_in_hf_cache("acme/tiny") == tokenizer
    source = resolve_model("acme/tiny")
    assert source.path == str(tokenizer) and source.name == "acme/tiny"
    assert load_model("acme/tiny").name == "acme/tiny"
    assert hf_cached_repos() == [("acme/tiny", tokenizer)]


def test_without_refs_main_the_newest_snapshot(hub: Path) -> None:
    old = cache_repo(hub, "acme/tiny", "one", main=False)
    new = cache_repo(hub, "acme/tiny", "two", main=False)
    os.utime(old.parent, (1, 1))
    os.utime(new.parent, (2, 2))
    assert find_in_hf_cache("acme/tiny") == new


def test_a_repo_id_not_in_the_cache_never_downloads(hub: Path) -> None:
    with pytest.raises(ModelError) as caught:
        resolve_model("acme/absent")
    assert caught.value.path == "acme/absent"
    assert str(hub) in caught.value.reason and "never downloads" in caught.value.reason


def test_an_existing_path_wins_over_a_repo_id(hub: Path, tmp_path: Path) -> None:
    cache_repo(hub, "acme/tiny", "abc123")
    (tmp_path / "acme").mkdir()
    local = tmp_path / "acme" / "tiny"
    local.write_bytes(BUNDLED.read_bytes())
    assert resolve_model("acme/tiny", tmp_path).path == str(local)


# -- which file a folder or a cached repo means, whatever the files' names -----------------------

CORPUS = Path(__file__).resolve().parents[1] / "data" / "tokenizers"
BERT = CORPUS / "bert-base-uncased" / "tokenizer.json"
RANKS = CORPUS / "whisper" / "gpt2.tiktoken"


def tekken_file() -> Path:
    import mistral_common

    return Path(mistral_common.__file__).parent / "data" / "tekken_240911.json"


def test_a_folder_loads_its_one_tokenizer_file_whatever_its_name(tmp_path: Path) -> None:
    for name, source in [
        ("llama-2.model", BUNDLED),
        ("o200k.tiktoken", RANKS),
        ("Tekken_240911.json", tekken_file()),
    ]:
        folder = tmp_path / name.replace(".", "-")
        folder.mkdir()
        (folder / name).symlink_to(source)
        (folder / "config.json").write_text("{}")
        assert resolve_model(str(folder)).path == str(folder / name)
    assert load_model(tmp_path / "llama-2-model").name == "llama-2"
    assert load_model(tmp_path / "o200k-tiktoken").name == "r50k_base"


def test_with_several_files_the_order_decides_and_the_log_says(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    files = {
        "tokenizer.json": BERT,
        "tekken.json": tekken_file(),
        "tokenizer.model": BUNDLED,
        "spiece.model": BUNDLED,
        "other.model": BUNDLED,
        "r50k.tiktoken": RANKS,
    }
    for name, source in files.items():
        (tmp_path / name).symlink_to(source)
    for name in files:
        with caplog.at_level("INFO", logger="tokenline.core"):
            caplog.clear()
            chosen = resolve_model(str(tmp_path)).path
        assert chosen == str(tmp_path / name)
        if name != "r50k.tiktoken":
            assert f"loading {name}" in caplog.text
        (tmp_path / name).unlink()


def test_tekken_is_known_by_content(tmp_path: Path) -> None:
    for name in ("Tekken_240911.json", "mytok.json", "tokenizer.model"):
        (tmp_path / name).symlink_to(tekken_file())
        model = load_model(tmp_path / name)
        assert model.model_type == "tekken", name


def test_a_cached_repo_of_any_tokenizer_file(hub: Path) -> None:
    repo = hub / "models--acme--ranks" / "snapshots" / "abc"
    repo.mkdir(parents=True)
    (repo / "r50k.tiktoken").symlink_to(RANKS)
    (repo / "tokenizer_config.json").write_text("{}")
    assert find_in_hf_cache("acme/ranks") == repo / "r50k.tiktoken"
    assert load_model("acme/ranks").name == "acme/ranks"
    assert hf_cached_repos() == [("acme/ranks", repo / "r50k.tiktoken")]
