"""Choosing a model again after it failed to load loads it once it can be (issue 21).

With o200k_base not in tiktoken's cache and no network, choosing it keeps the bundled model, and
the status says why (`modelError`, `requestedModel`) for as long as that lasts. Once the cache is
filled (by the seeding tool, as `tokenline models fetch` would), choosing it again (the same
setting, sent again: what the VS Code extension does) loads it and the counts are tiktoken's.
Nothing is downloaded: a proxy that refuses every connection stands in for the network.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types as T

from tests import tiktokencache

from .harness import Session, bundled_model_path, sp_count

TEXT = "Switching models: 鬱 and 中文, then back.\nA second line.\n"
OFFLINE = {"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"}
BUNDLED = "mistral-7b-v0.1"


def _latest(s: Session, uri: str, pred: Any, what: str) -> dict[str, Any]:
    """The first status of uri, from now on, that pred accepts."""
    seen = len(s.statuses)
    return dict(
        s.wait_for(
            lambda: next((x for x in s.statuses[seen:] if x["uri"] == uri and pred(x)), None),
            what=what,
        )
    )


def _models(s: Session, uri: str) -> dict[str, dict[str, Any]]:
    return {m["value"]: m for m in s.request("tokenline/models", {"uri": uri})["models"]}


def test_choosing_an_encoding_again_after_the_cache_is_filled_loads_it(tmp_path: Path) -> None:
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    s = Session(env={"TIKTOKEN_CACHE_DIR": str(cache), **OFFLINE})
    try:
        uri = "file:///switch/prompt.md"
        s.open(uri, TEXT)
        first = s.status(uri)
        assert first["model"] == BUNDLED and "modelError" not in first
        assert first["tokens"] == sp_count(bundled_model_path(), TEXT)

        # Not cached, no network: the bundled model stays, and the status says why.
        s.configure({"model": "o200k_base"})
        failed = _latest(s, uri, lambda x: "modelError" in x, "the status with modelError")
        assert failed["model"] == BUNDLED and failed["requestedModel"] == "o200k_base"
        assert failed["tokens"] == first["tokens"]
        assert "o200k_base" in failed["modelError"]
        assert "tokenline models fetch o200k_base" in failed["modelError"]
        shown = s.wait_for(lambda: [m for m in s.client.messages if "o200k_base" in m.message])
        assert shown[0].type == T.MessageType.Error and f"Still using {BUNDLED}" in shown[0].message
        models = _models(s, uri)
        assert models["o200k_base"].get("download") is True
        assert models[BUNDLED].get("inUse") is True and "inUse" not in models["o200k_base"]

        # A document opened meanwhile gets the same model and the same warning.
        other = "file:///switch/other.md"
        s.open(other, TEXT)
        opened = s.status(other)
        assert opened["model"] == BUNDLED and opened["requestedModel"] == "o200k_base"

        # The cache filled, the same setting chosen again: o200k_base loads, the warning goes.
        tiktokencache.seed(cache)
        mark = len(s.statuses)
        s.configure({"model": "o200k_base"})
        loaded = _latest(s, uri, lambda x: x["model"] == "o200k_base", "the status on o200k_base")
        assert "modelError" not in loaded and "requestedModel" not in loaded
        o200k = tiktokencache.reference(cache, "o200k_base")
        assert loaded["tokens"] == len(o200k.encode_ordinary(TEXT)) != first["tokens"]
        # The other document's status comes in its own notification, maybe later.
        s.wait_for(
            lambda: next(
                (x for x in s.statuses[mark:] if x["uri"] == other and x["model"] == "o200k_base"),
                None,
            ),
            what="the other document's status on o200k_base",
        )
        models = _models(s, uri)
        assert models["o200k_base"].get("inUse") is True and "download" not in models["o200k_base"]
        assert models["o200k_base"]["description"] == f"cached in {cache}"
        assert "inUse" not in models[BUNDLED]
    finally:
        s.close()


def test_a_setting_that_fails_again_keeps_the_warning(tmp_path: Path) -> None:
    """A configuration change that leaves the model failing keeps the warning and the model in
    use; going back to a model that loads clears it."""
    s = Session(
        init={"model": "no/such-repo"},
        env={"HF_HUB_CACHE": str(tmp_path / "hub"), "TIKTOKEN_CACHE_DIR": str(tmp_path)},
    )
    try:
        uri = "file:///switch/repo.md"
        s.open(uri, TEXT)
        st = s.status(uri)
        assert st["model"] == BUNDLED and st["requestedModel"] == "no/such-repo"
        assert "not in the local Hugging Face cache" in st["modelError"]
        s.configure({"model": "no/such-repo", "contextWindow": 4096})
        again = _latest(s, uri, lambda x: x["contextWindow"] == 4096, "the new window")
        assert again["requestedModel"] == "no/such-repo" and again["model"] == BUNDLED
        s.configure({"model": BUNDLED, "contextWindow": 4096})
        fine = _latest(s, uri, lambda x: "modelError" not in x, "the status without the warning")
        assert fine["model"] == BUNDLED and "requestedModel" not in fine
    finally:
        s.close()


def test_a_saved_project_configuration_tries_its_model_again(tmp_path: Path) -> None:
    """The project's `model` failed to load; once the cache is filled, saving the configuration
    (a watched-file change, no client setting involved) loads it."""
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    ws = tmp_path / "ws"
    ws.mkdir()
    pyproject = ws / "pyproject.toml"
    pyproject.write_text('[tool.tokenline]\nmodel = "o200k_base"\n', encoding="utf-8")
    s = Session(folders=[ws.as_uri()], env={"TIKTOKEN_CACHE_DIR": str(cache), **OFFLINE})
    try:
        uri = (ws / "prompt.md").as_uri()
        s.open(uri, TEXT)
        failed = s.status(uri)
        assert failed["model"] == BUNDLED and failed["requestedModel"] == "o200k_base"
        tiktokencache.seed(cache)
        s.client.workspace_did_change_watched_files(
            T.DidChangeWatchedFilesParams(
                changes=[T.FileEvent(uri=pyproject.as_uri(), type=T.FileChangeType.Changed)]
            )
        )
        loaded = _latest(s, uri, lambda x: x["model"] == "o200k_base", "the status on o200k_base")
        assert "modelError" not in loaded
        o200k = tiktokencache.reference(cache, "o200k_base")
        assert loaded["tokens"] == len(o200k.encode_ordinary(TEXT))
    finally:
        s.close()
