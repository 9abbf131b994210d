"""A model that re-encodes the whole text (SentencePiece unigram) under quick typing, end to end:
the edits go to the text at once, one re-encode of the newest text follows, and the status says
`pending` meanwhile (server/catchup.py). sentencepiece, on the same model, is the reference.

The model is trained here (as tests/core/modelkit.py trains its unigram models), so nothing is
downloaded.
"""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as T
from pygls.exceptions import JsonRpcException

from tests.core import modelkit
from tokenline.core import Document, load_model
from tokenline.server.catchup import CATCH_UP, CatchUp
from tokenline.server.feature import Change, DocState
from tokenline.server.idle import IdleWork
from tokenline.server.reencode import Reencoder
from tokenline.server.settings import Settings
from tokenline.server.status import status

from .harness import (
    Session,
    apply_semantic_edits,
    check_semantic,
    offset,
    position,
    rng,
    sp_char_spans,
    sp_count,
    sp_for,
)

SERVER_CANCELLED = -32802


@pytest.fixture(scope="module")
def unigram(tmp_path_factory: pytest.TempPathFactory, botchan: str) -> Path:
    return modelkit.train("unigram", tmp_path_factory.mktemp("unigram"), botchan)


@pytest.fixture(scope="module")
def whole(unigram: Path) -> Iterator[Session]:
    s = Session(init={"model": str(unigram), "contextWindow": 8192})
    try:
        yield s
    finally:
        s.close()


def typed(text: str, n: int, seed: int) -> tuple[list[tuple[T.Range, str]], str]:
    """n quick edits (insertions, deletions, replacements) and the text after them; each edit's
    range is in the text the edits before it left."""
    r = random.Random(seed)
    edits = []
    for _ in range(n):
        a = r.randrange(len(text) // 3, 2 * len(text) // 3)
        b = a + r.choice([0, 0, 1, 3])
        new = r.choice(["e", "the ", "", " ", "中"])
        if a == b and not new:
            new = "x"
        edits.append((rng(position(text, a), position(text, b)), new))
        text = text[:a] + new + text[b:]
    return edits, text


def final_status(s: Session, uri: str, version: int) -> dict[str, Any]:
    """The status of `version` once its tokens have caught up."""
    return dict(
        s.wait_for(
            lambda: next(
                (
                    st
                    for st in s.statuses
                    if st["uri"] == uri and st["version"] == version and not st["pending"]
                ),
                None,
            ),
            what=f"the caught-up status of {uri} version {version}",
        )
    )


def refused(call: Any) -> int:
    with pytest.raises(JsonRpcException) as error:
        call()
    return error.value.code


def test_sixty_quick_changes_cost_a_few_whole_encodes(
    whole: Session, unigram: Path, botchan: str
) -> None:
    uri = "file:///whole/1mb.txt"
    text = (botchan * 4)[:1_000_000]
    whole.open(uri, text, language="plaintext")
    opened = whole.status(uri)
    assert opened["tokens"] == sp_count(unigram, text) and opened["pending"] is False
    edits, final = typed(text, 60, seed=3)
    for r, new in edits:
        whole.change(uri, [(r, new)])
    line, col = position(final, 500_000)
    # Sent right behind the changes: the tokens are still catching up, so it is refused.
    hover = T.HoverParams(
        text_document=T.TextDocumentIdentifier(uri=uri),
        position=T.Position(line=line, character=col),
    )
    pending_hover = whole.client.text_document_hover_async(hover)
    assert refused(lambda: whole.run(pending_hover)) == SERVER_CANCELLED
    done = final_status(whole, uri, 61)
    assert done["tokens"] == sp_count(unigram, final)
    seen = [st for st in whole.statuses if st["uri"] == uri and st["version"] > 1]
    assert any(st["pending"] for st in seen), "no status said the count was catching up"
    reencodes = sum(1 for st in seen if not st["pending"])
    # Each whole re-encode that lands publishes one status with pending false: the sixty changes
    # arrive together, so one or two re-encodes follow them, not sixty.
    assert 1 <= reencodes <= 5, [(st["version"], st["pending"]) for st in seen]
    # Caught up: requests are answered on the newest text.
    k = _token_at(unigram, final, 500_000)
    got = whole.request(
        "tokenline/tokenAt", {"uri": uri, "position": {"line": line, "character": col}}
    )
    assert got["id"] == k
    assert all_ids(whole, uri, final) == sp_for(unigram).encode(final)
    whole.close_doc(uri)


def all_ids(s: Session, uri: str, text: str) -> list[int]:
    """The document's token ids, as tokenline/ids gives those of its whole text."""
    end = position(text, len(text))
    whole_range = {
        "start": {"line": 0, "character": 0},
        "end": {"line": end[0], "character": end[1]},
    }
    return list(s.request("tokenline/ids", {"uri": uri, "ranges": [whole_range]})["ids"][0])


def _token_at(model: Path, text: str, off: int) -> int:
    """The id of the sentencepiece token that holds character `off`."""
    return next(i for a, b, i, _byte in sp_char_spans(model, text) if a <= off < b)


def test_deltas_across_a_catch_up(whole: Session, unigram: Path, botchan: str) -> None:
    """A document small enough for full results but slow enough to catch up: the delta after
    the re-encode turns the last full result into the newest text's colours."""
    uri = "file:///whole/60k.txt"
    text = botchan[:60_000]
    whole.open(uri, text, language="plaintext")
    whole.status(uri)
    first = whole.semantic_full(uri)
    assert first is not None and first.result_id
    edits, final = typed(text, 20, seed=5)
    for r, new in edits:
        whole.change(uri, [(r, new)])
    final_status(whole, uri, 21)
    delta = whole.semantic_delta(uri, first.result_id)
    data = apply_semantic_edits(first.data, delta.edits)
    check_semantic(unigram, final, data)
    whole.close_doc(uri)


def test_a_whole_text_change_while_catching_up(whole: Session, unigram: Path, botchan: str) -> None:
    uri = "file:///whole/replaced.txt"
    text = (botchan * 2)[:300_000]
    whole.open(uri, text, language="plaintext")
    whole.status(uri)
    edits, mid = typed(text, 5, seed=7)
    for r, new in edits:
        whole.change(uri, [(r, new)])
    replaced = botchan[1000:90_000]
    a = offset(replaced, 10, 0)
    whole.change(uri, [(None, replaced), (rng(position(replaced, a), position(replaced, a)), "Z")])
    final = replaced[:a] + "Z" + replaced[a:]
    assert final_status(whole, uri, 7)["tokens"] == sp_count(unigram, final)
    assert all_ids(whole, uri, final) == sp_for(unigram).encode(final)
    del mid
    whole.close_doc(uri)


def test_no_superseded_count_is_published_as_settled(
    whole: Session, unigram: Path, botchan: str
) -> None:
    """Quick changes while re-encodes run on a worker: every status that says it is not pending
    counts the text of its own version (never one a later change superseded), versions only
    grow, and the last one settles on the newest text."""
    uri = "file:///whole/burst.txt"
    text = (botchan * 3)[:600_000]
    whole.open(uri, text, language="plaintext")
    whole.status(uri)
    edits, final = typed(text, 40, seed=11)
    texts = {1: text}
    for version, (r, new) in enumerate(edits, start=2):
        whole.change(uri, [(r, new)])
        a = offset(texts[version - 1], r.start.line, r.start.character)
        b = offset(texts[version - 1], r.end.line, r.end.character)
        texts[version] = texts[version - 1][:a] + new + texts[version - 1][b:]
    assert texts[41] == final
    done = final_status(whole, uri, 41)
    assert done["tokens"] == sp_count(unigram, final)
    seen = [st for st in whole.statuses if st["uri"] == uri and st["version"] > 1]
    versions = [st["version"] for st in seen]
    assert versions == sorted(versions)
    for st in seen:
        if not st["pending"]:
            assert st["tokens"] == sp_count(unigram, texts[st["version"]]), st["version"]
    whole.close_doc(uri)


class HeldPool(ThreadPoolExecutor):
    """Worker threads whose jobs each wait until their `releases` event is set: encodes under
    way for as long as the test needs, landing in the order it says."""

    def __init__(self) -> None:
        super().__init__(2)
        self.releases: list[threading.Event] = []
        self.jobs: list[Future[Any]] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        release = threading.Event()

        def held() -> Any:
            release.wait()
            return fn(*args, **kwargs)

        self.releases.append(release)
        self.jobs.append(super().submit(held))
        return self.jobs[-1]

    def __exit__(self, *exc: object) -> None:
        for release in self.releases:  # a failed test leaves no thread waiting
            release.set()
        self.shutdown()

    async def land(self, k: int) -> None:
        """Lets job k run, and waits until it is done and its result handed back."""
        self.releases[k].set()
        for _ in range(3000):
            if self.jobs[k].done():
                break
            await asyncio.sleep(0.01)
        for _ in range(3):  # the loop's turns that run the callbacks of its landing
            await asyncio.sleep(0)


async def test_keys_are_taken_while_an_encode_runs(unigram: Path, botchan: str) -> None:
    """A re-encode held on its worker: keys still go to the text, each status says pending, and
    the encode of the newest text starts at once; the held one, superseded, is dropped when it
    lands, and the tokens that go in are the newest text's, once."""
    with HeldPool() as pool:
        await _keys_while_held(pool, unigram, botchan)


async def _keys_while_held(pool: HeldPool, unigram: Path, botchan: str) -> None:
    model = load_model(unigram)
    idle = IdleWork()
    told: list[list[int]] = []
    catchup = CatchUp(idle, lambda st, change: told.append(st.doc.ids()), Reencoder(pool))
    text = botchan[:50_000]
    st = DocState("file:///held.txt", "plaintext", 1, Document(model, text), Settings())
    catchup.took(st, 1.0, text)  # slow enough to catch up in idle time

    def key(at: int, end: int, new: str) -> None:  # what the store does with a didChange
        nonlocal text
        backlog = catchup.backlog(st)
        assert backlog is not None
        backlog.edit(at, end, new)
        text = text[:at] + new + text[end:]
        st.version = (st.version or 0) + 1
        catchup.edited(st, Change(0, 0))

    def catch_up() -> None:  # the idle job's step, now rather than after the pause
        idle._jobs[(CATCH_UP, st.uri)].step()

    key(100, 100, "first ")
    catch_up()
    assert len(pool.jobs) == 1 and st.pending
    # The first encode is still under way. Letters replaced: the newest text is as long as the
    # one under way, whose tokens would cover it as well, but are not its tokens.
    for k in range(3):
        key(200 + 5 * k, 201 + 5 * k, "Z")
        assert status(st)["pending"] is True and status(st)["version"] == 3 + k
    catch_up()
    assert len(pool.jobs) == 2 and not told
    await pool.land(0)  # superseded: dropped
    assert not told and st.pending
    await pool.land(1)
    assert told == [sp_for(unigram).encode(text)]
    assert not st.pending and st.doc.text == text


def test_edits_that_undo_themselves_need_no_encode(unigram: Path, botchan: str) -> None:
    model = load_model(unigram)
    idle = IdleWork()
    told: list[list[int]] = []
    with HeldPool() as pool:
        catchup = CatchUp(idle, lambda st, change: told.append(st.doc.ids()), Reencoder(pool))
        text = botchan[:50_000]
        st = DocState("file:///undone.txt", "plaintext", 1, Document(model, text), Settings())
        catchup.took(st, 1.0, text)
        backlog = catchup.backlog(st)
        assert backlog is not None
        backlog.edit(500, 500, "typo")
        catchup.edited(st, Change(0, 0))
        backlog.edit(500, 504, "")
        catchup.edited(st, Change(0, 0))
        assert st.pending
        idle._jobs[(CATCH_UP, st.uri)].step()
        assert not pool.jobs and not st.pending
        assert told == [sp_for(unigram).encode(text)]
