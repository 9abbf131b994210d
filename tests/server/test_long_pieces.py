"""Keys typed into a Unigram piece of tens of thousands of characters (t5-small's
tokenizer.json): such an edit would encode the whole piece at once (Document.encodes_long), so
the server takes it as it takes a model that re-encodes whole: the text at once, the tokens from
a whole re-encode on a worker, the status `pending` meanwhile (server/catchup.py); once caught
up, edits elsewhere go in place again. The tokenizers library is the reference.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from tokenizers import Tokenizer

from tokenline.core.window import LONG_STRETCH

from .harness import Session, position, rng
from .test_catchup import all_ids, final_status

T5 = Path(__file__).resolve().parents[1] / "data" / "tokenizers" / "t5-small" / "tokenizer.json"


@pytest.fixture(scope="module")
def t5() -> Iterator[Session]:
    s = Session(init={"model": str(T5), "contextWindow": 1_000_000})
    try:
        yield s
    finally:
        s.close()


def reference(text: str) -> list[int]:
    ids: list[int] = Tokenizer.from_file(str(T5)).encode(text, add_special_tokens=False).ids
    return ids


def test_keys_in_a_long_piece_catch_up_on_a_worker(t5: Session, botchan: str) -> None:
    r = random.Random(4)
    piece = "".join(r.choice("abcdefghij") for _ in range(4 * LONG_STRETCH))
    prose = botchan[:3000]
    text = prose + " " + piece + " " + prose
    uri = "file:///t5/long.txt"
    t5.open(uri, text, language="plaintext")
    opened = t5.status(uri)
    assert opened["tokens"] == len(reference(text)) and opened["pending"] is False
    version = 1
    for k in range(12):
        at = len(prose) + 1 + 1000 + 997 * k
        new = "q" if k % 3 else ""
        end = at if new else at + 1
        t5.change(uri, [(rng(position(text, at), position(text, end)), new)])
        text = text[:at] + new + text[end:]
        version += 1
    done = final_status(t5, uri, version)
    assert done["tokens"] == len(reference(text))
    seen = [st for st in t5.statuses if st["uri"] == uri and st["version"] > 1]
    assert any(st["pending"] for st in seen), "no status said the count was catching up"
    assert all_ids(t5, uri, text) == reference(text)
    # Caught up: an edit in the prose goes in place, its status settled at once.
    at = 100
    t5.change(uri, [(rng(position(text, at), position(text, at)), "Well, ")])
    text = text[:at] + "Well, " + text[at:]
    version += 1
    settled = t5.wait_for(
        lambda: next(
            (st for st in t5.statuses if st["uri"] == uri and st["version"] == version), None
        ),
        what="the status of the edit in the prose",
    )
    assert settled["pending"] is False
    assert settled["tokens"] == len(reference(text))
    assert all_ids(t5, uri, text) == reference(text)
    t5.close_doc(uri)


def test_a_long_piece_pasted_catches_up_on_a_worker(t5: Session, botchan: str) -> None:
    text = botchan[:5000]
    uri = "file:///t5/paste.txt"
    t5.open(uri, text, language="plaintext")
    t5.status(uri)
    pasted = "".join(random.Random(9).choice("xyz") for _ in range(2 * LONG_STRETCH))
    at = text.index(" ", 2000) + 1
    t5.change(uri, [(rng(position(text, at), position(text, at)), pasted)])
    text = text[:at] + pasted + text[at:]
    first = t5.wait_for(
        lambda: next((st for st in t5.statuses if st["uri"] == uri and st["version"] == 2), None),
        what="the paste's first status",
    )
    assert first["pending"] is True
    assert final_status(t5, uri, 2)["tokens"] == len(reference(text))
    assert all_ids(t5, uri, text) == reference(text)
    t5.close_doc(uri)
