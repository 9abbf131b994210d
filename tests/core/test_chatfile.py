"""Chat files: which documents are chat files, and where each conversation and message is.

The offsets are checked by reading the text back: the text at a message's [start, end) parses to
the message's own data, whatever the spacing, unicode or bad lines around it."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from tokenline.core import Conversation, chat_kind, parse_chat, parse_jsonl_line

# Text with astral characters, quotes, backslashes and line separators JSON escapes.
TEXT = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",)) | st.sampled_from('"\\\n\u2028😀'),
    max_size=12,
)
ROLES = st.sampled_from(["system", "user", "assistant", "tool", "developer"])
MESSAGE = st.fixed_dictionaries(
    {
        "role": ROLES,
        "content": TEXT
        | st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": TEXT}), max_size=2),
    },
    optional={"name": TEXT},
)
CONVERSATION = st.fixed_dictionaries(
    {"messages": st.lists(MESSAGE, max_size=4)},
    optional={"tools": st.lists(st.fixed_dictionaries({"type": st.just("function")}), max_size=1)},
)
# How a JSON record may be written: any indent, separators, escaped or raw non-ASCII.
DUMPS = st.fixed_dictionaries(
    {
        "ensure_ascii": st.booleans(),
        "separators": st.sampled_from([(",", ":"), (", ", ": "), (" ,  ", " :\t")]),
    }
)


def _check_messages(text: str, conv: Conversation, record: dict[str, Any]) -> None:
    assert conv.error is None
    assert [m.data for m in conv.messages] == record["messages"]
    for message, data in zip(conv.messages, record["messages"], strict=True):
        assert json.loads(text[message.start : message.end]) == data
        assert message.role == data["role"]
        assert message.content_end == message.end
    assert conv.tools == record.get("tools")


@given(st.lists(CONVERSATION | st.just(None), max_size=5), DUMPS, st.sampled_from(["\n", "\r\n"]))
def test_jsonl_offsets_read_back_each_message(records: list[Any], dumps: Any, eol: str) -> None:
    """None stands for a bad line: it gets an error and the lines after it still parse."""
    lines = ["{bad json" if r is None else json.dumps(r, **dumps) for r in records]
    text = eol.join(lines) + eol
    conversations = parse_chat(text, "jsonl")
    assert [c.line for c in conversations] == list(range(len(records)))
    offset = 0
    for conv, record, line in zip(conversations, records, lines, strict=True):
        assert text[conv.start : conv.end] == line
        assert conv.start == offset
        offset += len(line) + len(eol)
        if record is None:
            assert conv.error is not None and conv.error.startswith("bad JSON")
            assert conv.messages == ()
        else:
            _check_messages(text, conv, record)


def test_jsonl_line_alone_matches_the_whole_parse() -> None:
    text = '{"messages": [{"role": "user", "content": "a"}]}\n\n  {"messages": []}  \n'
    whole = parse_chat(text, "jsonl")
    second = text.index("  {")
    alone = parse_jsonl_line(text[second : text.index("\n", second)], second, 2)
    assert alone == whole[1]
    assert parse_jsonl_line("   ", 10, 1) is None


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("[1, 2]", "not a conversation: a JSON object"),
        ('{"messages": 3}', 'not a conversation: no "messages" array'),
        ('{"prompt": "x"}', 'not a conversation: no "messages" array'),
        ('{"messages": [{"content": "x"}]}', 'message 1 has no "role"'),
        ('{"messages": [{"role": "user"}, 7]}', "message 2 is not an object"),
        ('{"messages": []} {}', "bad JSON: extra data"),
        ('{"messages": [', "bad JSON: "),
    ],
)
def test_bad_records_say_why(line: str, error: str) -> None:
    conv = parse_jsonl_line(line, 5, 3)
    assert conv is not None and conv.error is not None and conv.error.startswith(error)
    assert (conv.start, conv.end, conv.line, conv.messages) == (5, 5 + len(line), 3, ())


@given(st.lists(CONVERSATION, min_size=1, max_size=3), st.booleans(), st.integers(0, 3))
def test_json_offsets_read_back_each_message(records: list[Any], listed: bool, indent: int) -> None:
    data: Any = records if listed else records[0]
    text = json.dumps(data, indent=indent or None, ensure_ascii=False)
    assert chat_kind("prompts.json", text) == "json"
    conversations = parse_chat(text, "json")
    assert len(conversations) == (len(records) if listed else 1)
    for conv, record in zip(conversations, records, strict=False):
        assert json.loads(text[conv.start : conv.end]) == record
        assert conv.line == text.count("\n", 0, conv.start)
        _check_messages(text, conv, record)


@given(st.lists(CONVERSATION, min_size=1, max_size=3), st.booleans(), st.booleans())
def test_yaml_offsets_read_back_each_message(records: list[Any], listed: bool, flow: bool) -> None:
    """A message's text, indented as it stands, is YAML for the message's data."""
    data: Any = records if listed else records[0]
    text = yaml.safe_dump(
        data, allow_unicode=True, default_flow_style=flow or None, sort_keys=False
    )
    assert chat_kind("prompt.yaml", text) == "yaml"
    # What the text means is PyYAML's reading of it, not what was dumped: PyYAML writes a NEL
    # (U+0085) raw inside a quoted scalar and reads it back as a folded line break (a space).
    meant = yaml.safe_load(text)
    records = meant if listed else [meant]
    conversations = parse_chat(text, "yaml")
    assert len(conversations) == len(records)
    for conv, record in zip(conversations, records, strict=False):
        assert conv.error is None
        assert [m.data for m in conv.messages] == record["messages"]
        for message, expected in zip(conv.messages, record["messages"], strict=True):
            column = message.start - (text.rfind("\n", 0, message.start) + 1)
            assert yaml.safe_load(" " * column + text[message.start : message.end]) == expected
            assert not text[message.end - 1].isspace()


def test_yaml_prompt_file_with_comments_and_block_text() -> None:
    text = (
        "# few-shot prompt\n"
        "messages:\n"
        "  - role: system\n"
        "    content: |\n"
        "      Answer in French.\n"
        "      Be brief.\n"
        "\n"
        "  - role: user   # the question\n"
        "    content: Où est la gare ?\n"
    )
    assert chat_kind("p.yml", text) == "yaml"
    [conv] = parse_chat(text, "yaml")
    assert conv.line == 1
    system, user = conv.messages
    assert system.data == {"role": "system", "content": "Answer in French.\nBe brief.\n"}
    assert (
        text[system.start : system.end]
        == "role: system\n    content: |\n      Answer in French.\n      Be brief."
    )
    assert (
        text[user.start : user.end] == "role: user   # the question\n    content: Où est la gare ?"
    )


def test_bad_yaml_and_json_give_one_error_record() -> None:
    [bad] = parse_chat("messages:\n  - role: user\n   content: [", "yaml")
    assert bad.error is not None and bad.error.startswith("bad YAML") and bad.messages == ()
    [bad] = parse_chat('{"messages": [}', "json")
    assert bad.error is not None and bad.error.startswith("bad JSON")


@pytest.mark.parametrize(
    ("path", "text", "kind"),
    [
        ("a.jsonl", '\n\n{"messages": [{"role": "user", "content": "x"}]}\n{bad', "jsonl"),
        ("a.JSONL", '{"messages": []}', "jsonl"),
        ("a.jsonl", '{"prompt": "x"}\n', None),
        ("a.jsonl", "{bad\n", None),
        ("a.jsonl", "", None),
        ("a.json", '[{"messages": []}, {"messages": [{"role": "user"}]}]', "json"),
        ("a.json", '{"messages": [{"role": "user", "content": "x"}]}', "json"),
        ("a.json", '{"model": "x"}', None),
        ("a.json", "[]", None),
        ("a.yaml", "messages:\n  - role: user\n    content: hi\n", "yaml"),
        ("a.yml", "- messages: []\n", "yaml"),
        ("a.yaml", "name: x\n", None),
        ("a.txt", '{"messages": []}', None),
    ],
)
def test_chat_kind(path: str, text: str, kind: str | None) -> None:
    assert chat_kind(path, text) == kind
