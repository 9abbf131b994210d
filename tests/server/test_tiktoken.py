"""The server on tiktoken's o200k_base, end to end: status, counts, semantic tokens of characters
split over byte-level tokens, hover bytes, and `tokenline/models` (tiktoken's cache, the
workspace's tokenizer files, the Hugging Face cache). tiktoken itself is the reference.

The tiktoken cache is seeded from ../shared for these tests and given to the server; nothing is
ever downloaded.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tiktoken

from tests.conftest import tekken_path

from .harness import (
    Session,
    apply_semantic_edits,
    check_semantic_spans,
    decode_semantic,
    position,
    rng,
)

# Characters o200k_base writes as several tokens (checked below, against tiktoken). In "丧美" the
# second token holds the last byte of 丧 and all of 美: the two characters are one group, so the
# server must join tokens (leaving out zero-width ones is not enough).
SPLIT = ("鬱", "\U0001f9ff", "\U0002a6a5", "丧")
JOINED = "丧美"
TEXT = "Tokens: 鬱 and \U0001f9ff, 中文 丧美 too.\n\U0002a6a5x 😀\nend"


@pytest.fixture(scope="module")
def o200k(tiktoken_cache: Path) -> Iterator[Session]:
    s = Session(init={"model": "o200k_base"}, env={"TIKTOKEN_CACHE_DIR": str(tiktoken_cache)})
    try:
        yield s
    finally:
        s.close()


def units(o200k_encoding: Any, text: str) -> list[tuple[int, int, list[int], bool]]:
    """(start, end, ids, shares a character) of tiktoken's tokens, with the tokens that split a
    character's UTF-8 bytes taken together; offsets in code points."""
    char_at: dict[int, int] = {}
    at = 0
    for i, ch in enumerate(text):
        char_at[at] = i
        at += len(ch.encode("utf-8"))
    char_at[at] = len(text)
    out: list[tuple[int, int, list[int], bool]] = []
    start = pos = 0
    ids: list[int] = []
    for token in o200k_encoding.encode_ordinary(text):
        ids.append(token)
        pos += len(o200k_encoding.decode_single_token_bytes(token))
        if pos in char_at:
            out.append((char_at[start], char_at[pos], ids, len(ids) > 1))
            start, ids = pos, []
    assert not ids and pos == at
    return out


def test_o200k_splits_the_test_characters(o200k_encoding: Any) -> None:
    for ch in SPLIT:
        ids = o200k_encoding.encode_ordinary(ch)
        assert len(ids) > 1, ch
        assert any(_invalid(o200k_encoding.decode_single_token_bytes(i)) for i in ids), ch


def test_o200k_joins_two_characters_in_one_group(o200k_encoding: Any) -> None:
    at = TEXT.index(JOINED)
    (_, end, ids, _) = next(u for u in units(o200k_encoding, TEXT) if u[0] <= at < u[1])
    assert end == at + 2 and len(ids) == 2  # " 丧" and "美" share 丧's last byte


def _invalid(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def test_status_names_the_model_and_counts_like_tiktoken(
    o200k: Session, o200k_encoding: Any
) -> None:
    uri = "file:///tiktoken/status.md"
    o200k.open(uri, TEXT)
    st = o200k.status(uri)
    assert st["model"] == "o200k_base"
    assert st["tokens"] == len(o200k_encoding.encode_ordinary(TEXT))
    at = TEXT.index("中")
    new = TEXT[:at] + "鬱\U0001f9ff" + TEXT[at + 1 :]
    v = o200k.change(uri, [(rng(position(TEXT, at), position(TEXT, at + 1)), "鬱\U0001f9ff")])
    assert o200k.status(uri, v)["tokens"] == len(o200k_encoding.encode_ordinary(new))
    a, b = new.index("鬱"), new.index("x")
    counts = o200k.request("tokenline/count", {"uri": uri, "ranges": [_json_range(new, a, b)]})[
        "counts"
    ]
    assert counts == [len(o200k_encoding.encode_ordinary(new[a:b]))]
    o200k.close_doc(uri)


def _json_range(text: str, a: int, b: int) -> dict[str, Any]:
    (la, ca), (lb, cb) = position(text, a), position(text, b)
    return {"start": {"line": la, "character": ca}, "end": {"line": lb, "character": cb}}


def test_split_characters_are_one_semantic_token(o200k: Session, o200k_encoding: Any) -> None:
    uri = "file:///tiktoken/semantic.md"
    o200k.open(uri, TEXT)
    full = o200k.semantic_full(uri)
    assert full is not None and full.result_id is not None
    want = units(o200k_encoding, TEXT)
    check_semantic_spans(want, TEXT, full.data)
    got = decode_semantic(full.data)
    # Each split character is inside one semantic token, with the bytes modifier.
    for ch in SPLIT:
        line, col = position(TEXT, TEXT.index(ch))
        (tok,) = [t for t in got if t[0] == line and t[1] <= col < t[1] + t[2]]
        assert tok[4] & 2, (ch, tok)
    # An edit that splits more characters: the delta gives the same as a full request.
    at = TEXT.index("and")
    new = TEXT[:at] + "\U0002a6a5丮信鬱" + TEXT[at:]
    o200k.change(uri, [(rng(position(TEXT, at), position(TEXT, at)), "\U0002a6a5丮信鬱")])
    delta = o200k.semantic_delta(uri, full.result_id)
    data = apply_semantic_edits(full.data, delta.edits)
    check_semantic_spans(units(o200k_encoding, new), new, data)
    o200k.close_doc(uri)


def test_hover_shows_the_bytes_and_ids_of_a_split_character(
    o200k: Session, o200k_encoding: Any
) -> None:
    uri = "file:///tiktoken/hover.md"
    o200k.open(uri, TEXT)
    for ch in (*SPLIT, "美"):
        at = TEXT.index(ch)
        (start, end, ids, _) = next(u for u in units(o200k_encoding, TEXT) if u[0] <= at < u[1])
        assert len(ids) > 1
        hexes = [o200k_encoding.decode_single_token_bytes(i).hex(" ") for i in ids]
        line, col = position(TEXT, at)
        hover = o200k.hover(uri, line, col)
        assert hover is not None
        value = hover.contents.value  # type: ignore[union-attr]
        assert "bytes " + " ".join(f"`{h}`" for h in hexes) in value, value
        assert f"ids {', '.join(str(i) for i in ids)}" in value, value
        assert "model o200k_base" in value
        assert (hover.range.start.line, hover.range.start.character) == position(TEXT, start)
        assert (hover.range.end.line, hover.range.end.character) == position(TEXT, end)
        token = o200k.request(
            "tokenline/tokenAt", {"uri": uri, "position": {"line": line, "character": col}}
        )
        assert token["ids"] == ids
        assert token["bytes"] == hexes
        assert token["text"] == TEXT[start:end]
    o200k.close_doc(uri)


def test_models_lists_encodings_and_tokenizer_files(tiktoken_cache: Path, tmp_path: Path) -> None:
    tekken = tekken_path()
    folder = tmp_path / "work"
    (folder / "models" / "hf").mkdir(parents=True)
    (folder / "models" / "hf" / "tokenizer.json").write_text("{}", encoding="utf-8")
    shutil.copyfile(tekken, folder / "models" / tekken.name)
    for skipped in ("node_modules/pkg", ".venv/lib", ".git/x"):
        (folder / skipped).mkdir(parents=True)
        (folder / skipped / "tokenizer.json").write_text("{}", encoding="utf-8")
    snapshot = tmp_path / "hf" / "hub" / "models--acme--byte-model" / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    (snapshot / "tokenizer.json").write_text("{}", encoding="utf-8")
    env = {"TIKTOKEN_CACHE_DIR": str(tiktoken_cache), "HF_HUB_CACHE": str(tmp_path / "hf" / "hub")}
    s = Session(folders=[folder.as_uri()], env=env)
    try:
        models = s.request("tokenline/models", {})["models"]
        kinds = {m["value"]: m["kind"] for m in models}
        by_value = {m["value"]: m for m in models}
        assert models[0]["value"] == "mistral-7b-v0.1"
        assert kinds["o200k_base"] == "tiktoken"
        assert kinds["cl100k_base"] == "tiktoken"
        # Every encoding tiktoken knows; those not in the cache are marked as downloads.
        assert {m["value"] for m in models if m["kind"] == "tiktoken"} == set(
            tiktoken.list_encoding_names()
        )
        for name in ("r50k_base", "gpt2"):
            assert by_value[name]["download"] is True and by_value[name]["path"] == ""
        for name in ("o200k_base", "cl100k_base"):
            assert "download" not in by_value[name]
            assert Path(by_value[name]["path"]).parent == tiktoken_cache
        assert kinds["models/hf/tokenizer.json"] == "workspace"
        assert kinds[f"models/{tekken.name}"] == "workspace"
        assert by_value["models/hf/tokenizer.json"]["description"] == "Hugging Face"
        assert by_value[f"models/{tekken.name}"]["description"] == "Mistral Tekken"
        assert by_value[f"models/{tekken.name}"]["path"] == str(folder / "models" / tekken.name)
        assert not [v for v in kinds if "node_modules" in v or ".venv" in v or ".git" in v]
        assert kinds["acme/byte-model"] == "huggingface"
        # A listed value is a setting that works: the workspace's Tekken file, by its path.
        uri = (folder / "prompt.md").as_uri()
        s.open(uri, "Hello 鬱")
        s.configure({"model": f"models/{tekken.name}"})
        s.wait_for(
            lambda: [x for x in s.statuses if x["uri"] == uri and x["model"] == "tekken_240911"],
            what="status on the Tekken file",
        )
    finally:
        s.close()


def test_models_marks_every_encoding_of_an_empty_cache_as_a_download(tmp_path: Path) -> None:
    s = Session(env={"TIKTOKEN_CACHE_DIR": str(tmp_path)})
    try:
        models = s.request("tokenline/models", {})["models"]
        listed = [m for m in models if m["kind"] == "tiktoken"]
        assert [m["value"] for m in listed] == list(reversed(tiktoken.list_encoding_names()))
        assert all(m["download"] is True for m in listed), listed
        assert models[0]["value"] == "mistral-7b-v0.1"
    finally:
        s.close()
