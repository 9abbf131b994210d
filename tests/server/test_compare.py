"""Several models side by side (`tokenline.compareModels`), end to end: the status's `compare`
counts after every edit, of the selection, of a model that cannot be loaded, and
`tokenline/compare`; each equals its reference library's encode of the same text.

The document is on the bundled Mistral model (sentencepiece is its reference) and is compared
under o200k_base (tiktoken's `encode_ordinary`, from a cache seeded from ../shared) and a
byte-level tokenizer.json trained here (`tokenizers`, `add_special_tokens=False`).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Tokenizer

from tests.core import hfkit

from .harness import Session, bundled_model_path, position, rng, sp_count

MISTRAL = bundled_model_path()
TRAINED = "bl-llama3"
MISSING = "no-such-tokenizer.model"
FRAGMENTS = [
    "a",
    "The",
    " world",
    " ",
    "  ",
    "\t",
    "\n",
    "\r\n",
    "😀",
    "👍🏽",
    "中文",
    "丧美",
    "𠀀",
    "é",
    "—",
    "'s",
    "12345",
    "don't",
    "<s>",
    "...",
]
text_st = st.lists(st.sampled_from(FRAGMENTS), max_size=30).map("".join)
# (where, how many characters to replace, new text); 1-3 changes per didChange.
edit_st = st.tuples(
    st.floats(0, 1), st.integers(0, 6), st.lists(st.sampled_from(FRAGMENTS), max_size=4)
)
batches_st = st.lists(st.lists(edit_st, min_size=1, max_size=3), min_size=1, max_size=10)
_uris = itertools.count()

Counter = Callable[[str], int]


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory, botchan: str) -> Path:
    path = hfkit.train(TRAINED, tmp_path_factory.mktemp("compare"), botchan)
    # Hugging Face repos keep the model's window beside the file.
    config = {"model_max_length": 4096, "tokenizer_class": "PreTrainedTokenizerFast"}
    (path.parent / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def references(trained: Path, o200k_encoding: Any) -> list[Counter]:
    """Each compare model's reference count, in the setting's order (the missing one: none)."""
    hf = Tokenizer.from_file(str(trained))
    return [
        lambda text: len(o200k_encoding.encode_ordinary(text)),
        lambda text: len(hf.encode(text, add_special_tokens=False).ids),
    ]


@pytest.fixture(scope="module")
def session(tiktoken_cache: Path, trained: Path) -> Iterator[Session]:
    init = {
        "compareModels": ["o200k_base", str(trained), MISSING],
        "contextWindows": {"o200k_base": 128000},
    }
    s = Session(init=init, env={"TIKTOKEN_CACHE_DIR": str(tiktoken_cache)})
    try:
        yield s
    finally:
        s.close()


def check(status: dict[str, Any], text: str, refs: list[Counter], selected: list[str]) -> None:
    """The status counts the text (and each selected text, encoded alone) as the references do."""
    assert status["tokens"] == sp_count(MISTRAL, text)
    o200k, hf, missing = status["compare"]
    for entry, ref in zip((o200k, hf), refs, strict=True):
        assert entry["tokens"] == ref(text), (entry, text)
        assert entry["selection"] == sum(ref(t) for t in selected), (entry, selected)
        assert "error" not in entry
    assert missing["tokens"] is None and missing["selection"] is None
    assert missing["model"] == MISSING and missing["error"]


def _not_inside_crlf(text: str, off: int) -> int:
    if 0 < off < len(text) and text[off - 1] == "\r" and text[off] == "\n":
        return off - 1
    return off


@given(text=text_st, batches=batches_st)
def test_compare_counts_follow_every_edit(
    session: Session, references: list[Counter], text: str, batches: list[Any]
) -> None:
    uri = f"file:///compare/{next(_uris)}.md"
    session.open(uri, text)
    check(session.status(uri), text, references, [])
    mirror = text
    for batch in batches:
        changes = []
        for frac, n, parts in batch:
            a = _not_inside_crlf(mirror, int(frac * len(mirror)))
            b = _not_inside_crlf(mirror, min(len(mirror), a + n))
            new = "".join(parts)
            changes.append((rng(position(mirror, a), position(mirror, b)), new))
            mirror = mirror[:a] + new + mirror[b:]
        session.change(uri, changes)
        check(session.status(uri), mirror, references, [])
    session.close_doc(uri)


def test_names_windows_and_a_whole_text_change(
    session: Session, references: list[Counter], trained: Path
) -> None:
    uri = "file:///compare/whole.md"
    text = "Prompts are written once and sent to many models. 中文 😀\n" * 20
    session.open(uri, text)
    status = session.status(uri)
    check(status, text, references, [])
    o200k, hf, missing = status["compare"]
    assert (o200k["model"], o200k["contextWindow"]) == ("o200k_base", 128000)
    # Named after its folder; its window from the tokenizer_config.json beside it.
    assert (hf["model"], hf["contextWindow"]) == (TRAINED, 4096)
    assert missing["contextWindow"] is None
    assert MISSING in missing["error"] or "no such file" in missing["error"]
    # A whole-text change (not told edit by edit) and then a ranged one.
    text = "Something else entirely: 丧美 and don't.\n"
    session.change(uri, [(None, text)])
    check(session.status(uri), text, references, [])
    session.change(uri, [(rng((0, 0), (0, 9)), "Nothing")])
    text = "Nothing else entirely: 丧美 and don't.\n"
    check(session.status(uri), text, references, [])
    session.close_doc(uri)


def test_the_selection_is_counted_under_each_model(
    session: Session, references: list[Counter]
) -> None:
    uri = "file:///compare/selection.md"
    text = "First line of the prompt.\nSecond line, 丧美 and 😀 here.\nThird line\n"
    session.open(uri, text)
    session.status(uri)
    ranges = [rng((0, 6), (1, 14)), rng((2, 0), (2, 5))]
    selected = [text[6 : text.index("\n") + 1 + 14], "Third"]
    session.client.protocol.notify(
        "tokenline/selection", {"uri": uri, "ranges": [_plain_range(r) for r in ranges]}
    )

    def selected_status() -> dict[str, Any] | None:
        for s in reversed(session.statuses):
            if s["uri"] == uri and s["compare"] and s["compare"][0]["selection"]:
                return s
        return None

    check(
        session.wait_for(selected_status, what="a status with the selection"),
        text,
        references,
        selected,
    )
    # tokenline/compare: the same counts, and the document's own model first.
    answer = session.request("tokenline/compare", {"uri": uri})
    assert answer["document"]["model"] == "mistral-7b-v0.1"
    assert answer["document"]["tokens"] == sp_count(MISTRAL, text)
    assert answer["document"]["selection"] == sum(sp_count(MISTRAL, t) for t in selected)
    check(
        {"tokens": answer["document"]["tokens"], "compare": answer["compare"]},
        text,
        references,
        selected,
    )
    # Other ranges given with the request are counted instead of the selection.
    line = [rng((1, 0), (1, 6))]
    answer = session.request(
        "tokenline/compare", {"uri": uri, "ranges": [_plain_range(r) for r in line]}
    )
    assert [c["selection"] for c in answer["compare"][:2]] == [ref("Second") for ref in references]
    # An empty selection (a cursor) counts 0.
    session.client.protocol.notify(
        "tokenline/selection", {"uri": uri, "ranges": [_plain_range(rng((0, 3), (0, 3)))]}
    )
    v = session.change(uri, [(rng((0, 0), (0, 0)), "> ")])
    text = "> " + text
    check(session.status(uri, v), text, references, [])
    session.close_doc(uri)


def _plain_range(r: Any) -> dict[str, Any]:
    return {
        "start": {"line": r.start.line, "character": r.start.character},
        "end": {"line": r.end.line, "character": r.end.character},
    }


BUDGETS = """[budgets]
"prompts/*.md" = { tokens = 40, model = "o200k_base" }
"notes/*.md" = { tokens = 10, model = "missing.model" }
"""
CHINESE = "我们今天讨论的是如何用简短的句子回答每一个问题。\n"


def test_a_budget_that_names_a_model_holds_its_tokens(
    tmp_path: Path, tiktoken_cache: Path, o200k_encoding: Any
) -> None:
    (tmp_path / "tokenline.toml").write_text(BUDGETS, encoding="utf-8")
    s = Session(folders=[tmp_path.as_uri()], env={"TIKTOKEN_CACHE_DIR": str(tiktoken_cache)})
    try:
        uri = (tmp_path / "prompts" / "a.md").as_uri()
        text = CHINESE * 2
        o200k = len(o200k_encoding.encode_ordinary(text))
        # Over the budget in the document's own tokens, within it in o200k_base's.
        assert sp_count(MISTRAL, text) > 40 > o200k / 0.9
        s.open(uri, text)
        st = s.status(uri)
        assert (st["budget"], st["budgetModel"], st["budgetTokens"]) == (40, "o200k_base", o200k)
        assert st["compare"] == [] and s.diagnostics(uri) == []
        text = CHINESE * 3
        o200k = len(o200k_encoding.encode_ordinary(text))
        v = s.change(uri, [(rng((2, 0), (2, 0)), CHINESE)])
        [d] = s.diagnostics(uri, v)
        assert d.code == "budget"
        assert d.message == (
            f"Beyond the 40-token budget for prompts/*.md: {o200k} o200k_base tokens, "
            f"{o200k - 40} over"
        )
        # From o200k_base's token 40: where the first 40 tokens' bytes end.
        ids = o200k_encoding.encode_ordinary(text)
        start = len(o200k_encoding.decode_bytes(ids[:40]).decode("utf-8", "ignore"))
        assert (d.range.start.line, d.range.start.character) == position(text, start)
        # A budget whose model cannot be loaded: said in the status; the window holds instead.
        note = (tmp_path / "notes" / "n.md").as_uri()
        s.open(note, text)
        st = s.status(note)
        assert (st["budget"], st["budgetTokens"]) == (10, None)
        assert "missing.model" in st["budgetError"] or "no such file" in st["budgetError"]
        assert s.diagnostics(note) == []
    finally:
        s.close()
