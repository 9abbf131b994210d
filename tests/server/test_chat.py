"""Chat files in the language server, end to end: inlay hints of each message and conversation,
hover on a message, diagnostics of bad records and of conversations over the window, the
status's `chat` totals, in JSONL, JSON and YAML files; an edit re-counts its conversation only.

References: sentencepiece for the bundled Mistral model (no chat template: the contents alone),
and OpenAI's published rule computed here with tiktoken for o200k_base (an estimate).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as T

from .harness import Session, bundled_model_path, rng, sp_count

MISTRAL = bundled_model_path()
WINDOW = 60

RECORDS: list[dict[str, Any]] = [
    {
        "messages": [
            {"role": "system", "content": "You are a careful reader of Botchan."},
            {"role": "user", "content": "Who is Kiyo, and why does she spoil the narrator?"},
            {"role": "assistant", "content": "Kiyo is the old maid of the family — héllo 😀."},
        ]
    },
    {
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "First part."},
                    {"type": "image_url", "image_url": {"url": "x"}},
                    {"type": "text", "text": "Second part."},
                ],
            },
            {"role": "assistant", "name": "bot", "content": "Answered."},
        ]
    },
    {"messages": [{"role": "user", "content": "word " * 80}]},
]


def contents(message: dict[str, Any]) -> list[str]:
    """The texts of a message's content that count (as OpenAI's format has them)."""
    c = message.get("content")
    if isinstance(c, str):
        return [c]
    return [p["text"] for p in c or [] if p.get("type") == "text"]


def sp_contents(message: dict[str, Any]) -> int:
    return sum(sp_count(MISTRAL, t) for t in contents(message))


def jsonl(records: list[Any]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def labels_by_line(hints: list[T.InlayHint]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for h in sorted(hints, key=lambda h: (h.position.line, h.position.character)):
        out.setdefault(h.position.line, []).append(str(h.label))
    return out


def expected_labels(record: dict[str, Any]) -> list[str]:
    """Mistral has no chat template: each message's contents, then the conversation's sum."""
    per = [sp_contents(m) for m in record["messages"]]
    return [f"{n:,} tok" for n in per] + [f"{sum(per):,} tok (contents only)"]


@pytest.fixture(scope="module")
def session() -> Iterator[Session]:
    s = Session(init={"contextWindow": WINDOW})
    try:
        yield s
    finally:
        s.close()


def test_jsonl_hints_count_each_message_and_conversation(session: Session) -> None:
    uri = "file:///chat/hints.jsonl"
    text = jsonl(RECORDS[:1]) + "\n{not json\n" + jsonl(RECORDS[1:])
    session.open(uri, text, "jsonl")
    got = labels_by_line(session.inlay_hints(uri))
    assert got[0] == expected_labels(RECORDS[0])
    assert got[2] == ["not counted"]
    assert got[3] == expected_labels(RECORDS[1])
    assert got[4] == expected_labels(RECORDS[2])
    assert 1 not in got  # a blank line is no record
    # A range asks for its lines only.
    r = session.run(
        session.client.text_document_inlay_hint_async(
            T.InlayHintParams(
                text_document=T.TextDocumentIdentifier(uri=uri), range=rng((3, 0), (3, 5))
            )
        )
    )
    assert {h.position.line for h in r} == {3}


def test_jsonl_status_diagnostics_and_hover(session: Session) -> None:
    uri = "file:///chat/status.jsonl"
    text = jsonl(RECORDS[:1]) + "{not json\n" + jsonl(RECORDS[1:])
    session.open(uri, text, "jsonl")
    totals = [sum(sp_contents(m) for m in r["messages"]) for r in RECORDS]
    chat = session.wait_for(
        lambda: next(
            (
                s["chat"]
                for s in reversed(session.statuses)
                if s["uri"] == uri and s.get("chat") and not s["chat"]["pending"]
            ),
            None,
        ),
        what="the chat totals",
    )
    assert chat == {
        "conversations": 3,
        "largest": max(totals),
        "total": sum(totals),
        "estimate": False,
        "mode": "contents only",
        "errors": 1,
        "pending": False,
    }
    diags = sorted(session.diagnostics(uri), key=lambda d: d.range.start.line)
    assert [(d.range.start.line, d.code) for d in diags] == [(1, "chat-record"), (3, "chat-over")]
    assert "bad JSON" in diags[0].message
    over = totals[2]
    assert f"{over:,} tokens, {over - WINDOW:,} over" in diags[1].message
    assert "60-token context window" in diags[1].message
    # Hover on the second message of the first conversation.
    line0 = text.split("\n")[0]
    col = line0.index("Who is Kiyo")
    hover = session.hover(uri, 0, col)
    assert hover is not None and isinstance(hover.contents, T.MarkupContent)
    value = hover.contents.value
    first, second = (sp_contents(m) for m in RECORDS[0]["messages"][:2])
    assert "**Message 2 of 3** · user" in value
    assert f"Contents: {second:,} tokens" in value
    assert f"(messages 1–2): {first + second:,} tokens" in value
    assert "token " in value  # the token under the cursor is still told


def test_an_edit_recounts_its_conversation_only(session: Session) -> None:
    uri = "file:///chat/edit.jsonl"
    text = jsonl(RECORDS)
    session.open(uri, text, "jsonl")
    before = labels_by_line(session.inlay_hints(uri))
    line1 = text.split("\n")[1]
    at = line1.index("Answered.")
    session.change(uri, [(rng((1, at), (1, at)), "Well and truly ")])
    record = json.loads(line1[:at] + "Well and truly " + line1[at:])
    after = session.until(
        lambda: (h := labels_by_line(session.inlay_hints(uri)))[1] != before[1] and h,
        what="the edited conversation's hints",
    )
    assert after[1] == expected_labels(record)
    assert after[0] == before[0] and after[2] == before[2]
    status = session.status(uri)
    assert status["chat"]["total"] == sum(
        sp_contents(m) for r in (RECORDS[0], record, RECORDS[2]) for m in r["messages"]
    )
    # A line inserted above shifts the others' hints down with them.
    session.change(uri, [(rng((0, 0), (0, 0)), "\n")])
    shifted = session.until(lambda: labels_by_line(session.inlay_hints(uri)).get(3), what="shift")
    assert shifted == expected_labels(RECORDS[2])


def test_json_and_yaml_chat_files(session: Session) -> None:
    record = RECORDS[0]
    text = json.dumps(record, ensure_ascii=False, indent=2) + "\n"
    session.open("file:///chat/prompt.json", text, "json")
    got = session.inlay_hints("file:///chat/prompt.json")
    assert [str(h.label) for h in got] == expected_labels(record)
    yaml_text = "# a prompt file\nmessages:\n" + "".join(
        f"  - role: {m['role']}\n    content: {json.dumps(m['content'], ensure_ascii=False)}\n"
        for m in record["messages"]
    )
    session.open("file:///chat/prompt.prompt.yml", yaml_text, "yaml")
    got = session.inlay_hints("file:///chat/prompt.prompt.yml")
    assert sorted(str(h.label) for h in got) == sorted(expected_labels(record))
    status = session.status("file:///chat/prompt.prompt.yml")
    assert status["chat"]["conversations"] == 1
    assert status["chat"]["total"] == sum(sp_contents(m) for m in record["messages"])


def test_markdown_section_hints_still_answer(session: Session) -> None:
    uri = "file:///chat/notes.md"
    text = "# One\nHello there.\n"
    session.open(uri, text)
    hints = session.inlay_hints(uri)
    assert [str(h.label) for h in hints] == [f"{sp_count(MISTRAL, text)} tokens"]
    assert session.status(uri).get("chat") is None


def test_a_large_chat_file_answers_before_its_first_encode(session: Session) -> None:
    """Past 2 million characters the raw encode waits in idle time: hints come from the text,
    and the tokens, once made, are the reference's."""
    uri = "file:///chat/large.jsonl"
    records = [
        {"messages": [{"role": "user", "content": f"Question {i}: " + "why so " * 40}]}
        for i in range(6000)
    ]
    text = jsonl(records)
    assert len(text) > 2_000_000
    session.open(uri, text, "jsonl")
    got = labels_by_line(session.inlay_hints(uri, last_line=3))
    assert got[0] == expected_labels(records[0])
    settled = session.wait_for(
        lambda: next(
            (
                s
                for s in reversed(session.statuses)
                if s["uri"] == uri
                and not s["pending"]
                and s.get("chat")
                and not s["chat"]["pending"]
            ),
            None,
        ),
        timeout=600,
        what="the large file's tokens and totals",
    )
    assert settled["tokens"] == sp_count(MISTRAL, text)
    assert settled["chat"]["conversations"] == len(records)


@pytest.fixture(scope="module")
def o200k_session(tiktoken_cache: Path) -> Iterator[Session]:
    s = Session(init={"model": "o200k_base"}, env={"TIKTOKEN_CACHE_DIR": str(tiktoken_cache)})
    try:
        yield s
    finally:
        s.close()


def test_tiktoken_models_bill_by_openais_rule_as_an_estimate(
    o200k_session: Session, o200k_encoding: Any
) -> None:
    def rule(messages: list[dict[str, Any]]) -> int:
        # The OpenAI cookbook's num_tokens_from_messages, with text parts counted.
        total = 3
        for m in messages:
            total += 3
            for key, value in m.items():
                if key == "content":
                    total += sum(len(o200k_encoding.encode(t)) for t in contents(m))
                else:
                    total += len(o200k_encoding.encode(value))
                if key == "name":
                    total += 1
        return total

    uri = "file:///chat/o200k.jsonl"
    o200k_session.open(uri, jsonl(RECORDS[:2]), "jsonl")
    got = labels_by_line(o200k_session.inlay_hints(uri))
    for line, record in enumerate(RECORDS[:2]):
        assert got[line][-1] == f"≈{rule(record['messages']):,} tok"
    chat = o200k_session.status(uri)["chat"]
    assert chat["estimate"] is True and chat["mode"] == "estimate"
