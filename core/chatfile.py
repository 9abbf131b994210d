"""Chat files: conversations in JSON Lines, JSON or YAML, with where each message sits in the text.

A chat file holds OpenAI's shape, `{"messages": [{"role": ..., "content": ...}, ...]}`: one per
line in JSON Lines (fine-tuning and evaluation sets), or a document holding one such object, a
`messages` array, or a list of such objects (prompt files). Editors put a count at the end of
each message and of each conversation, so each is given with its code-point offsets.

JSON is read with the standard library's own scanner (`json.JSONDecoder.raw_decode` gives each
value's end), walking only the containers that lead to messages; YAML with PyYAML's node marks.

Interpreted, not compiled: it runs once per line or document, through json's and PyYAML's code.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import yaml

# The kinds chat_kind tells apart.
JSONL: str = "jsonl"
JSON: str = "json"
YAML: str = "yaml"

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")
_YAML_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class ChatMessage:
    """One message: its role, where its object is in the text, and its data as parsed."""

    role: str
    start: int
    end: int
    # Where a hint for this message goes: the end of its object.
    content_end: int
    data: dict[str, Any]


@dataclass(frozen=True)
class Conversation:
    """A record of a chat file: a JSONL line, or an object holding a `messages` array.

    `error` says why the record cannot be counted (bad JSON, no messages, a message without a
    role); its messages are then empty.
    """

    start: int
    end: int
    # 0-based line where the conversation starts.
    line: int
    messages: tuple[ChatMessage, ...]
    tools: list[Any] | None
    error: str | None = None


class _Bad(Exception):
    """A record that is not a conversation (its message is the Conversation's error)."""


def chat_kind(path: str, text: str) -> str | None:
    """ "jsonl", "json" or "yaml" when the document is a chat file of that kind, else None."""
    lower = path.lower()
    if lower.endswith(".jsonl"):
        return JSONL if _first_line_is_chat(text) else None
    if lower.endswith(".json"):
        try:
            data = json.loads(text)
        except ValueError:
            return None
        return JSON if _holds_messages(data) else None
    if lower.endswith(_YAML_SUFFIXES):
        if "messages" not in text:
            return None
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError:
            return None
        return YAML if _holds_messages(data) else None
    return None


def _first_line_is_chat(text: str) -> bool:
    line = first_record(text)
    if not line:
        return False
    try:
        data = json.loads(line)
    except ValueError:
        return False
    return isinstance(data, dict) and isinstance(data.get("messages"), list)


def first_record(text: str) -> str:
    """The first line of JSON Lines text that is not blank ("" when there is none)."""
    at = 0
    while at < len(text):
        nl = text.find("\n", at)
        stop = len(text) if nl < 0 else nl
        if text[at:stop].strip():
            return text[at:stop]
        at = stop + 1
    return ""


def _holds_messages(data: Any) -> bool:
    if isinstance(data, dict):
        return isinstance(data.get("messages"), list)
    if isinstance(data, list) and data:
        return all(isinstance(d, dict) and isinstance(d.get("messages"), list) for d in data)
    return False


def parse_chat(text: str, kind: str) -> list[Conversation]:
    """Every conversation of a whole document of the given kind (see chat_kind)."""
    if kind == JSONL:
        return _parse_jsonl(text)
    if kind == JSON:
        return _parse_json(text)
    if kind == YAML:
        return _parse_yaml(text)
    raise ValueError(f"unknown chat file kind {kind!r}")


def _parse_jsonl(text: str) -> list[Conversation]:
    out: list[Conversation] = []
    at = 0
    line = 0
    while at <= len(text):
        nl = text.find("\n", at)
        stop = len(text) if nl < 0 else nl
        found = parse_jsonl_line(text[at:stop], at, line)
        if found is not None:
            out.append(found)
        if nl < 0:
            break
        at = nl + 1
        line += 1
    return out


def parse_jsonl_line(text: str, offset: int, line: int) -> Conversation | None:
    """The conversation on one JSONL line (`text` without its newline, starting at `offset` in
    the document, on 0-based `line`); None for a blank line."""
    body = text.rstrip("\r")
    start = _skip(body, 0)
    if start == len(body):
        return None
    end = len(body.rstrip(" \t"))
    try:
        data, value_end = _decoded(body, start)
        if _skip(body, value_end) != len(body):
            raise _Bad(f"bad JSON: extra data after the record (column {value_end + 1})")
        messages, tools = _walked(body, start, offset, data)
    except _Bad as exc:
        return Conversation(offset + start, offset + end, line, (), None, str(exc))
    return Conversation(offset + start, offset + end, line, messages, tools)


def _decoded(text: str, at: int) -> tuple[Any, int]:
    """The JSON value at `at` and where it ends (_Bad when it is not JSON)."""
    try:
        return _DECODER.raw_decode(text, at)
    except json.JSONDecodeError as exc:
        raise _Bad(f"bad JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        raise _Bad("bad JSON: nested too deeply to read") from None


def _walked(
    text: str, at: int, offset: int, data: Any
) -> tuple[tuple[ChatMessage, ...], list[Any] | None]:
    """The messages and tools of the JSON object at `at`, decoded as `data` (_Bad when it is no
    conversation)."""
    if not isinstance(data, dict):
        raise _Bad("not a conversation: a JSON object with a messages array is expected")
    listed = data.get("messages")
    if not isinstance(listed, list):
        raise _Bad('not a conversation: no "messages" array')
    tools = data.get("tools")
    span = _member(text, at, "messages")
    out: list[ChatMessage] = []
    for i, (mstart, mend) in enumerate(_elements(text, span)):
        out.append(_message(listed[i], i, offset + mstart, offset + mend))
    return tuple(out), tools if isinstance(tools, list) else None


def _member(text: str, at: int, name: str) -> int:
    """Where the value of the last member `name` of the JSON object at `at` starts (valid JSON
    that has one; the last, as json.loads keeps the last of repeated keys)."""
    found = -1
    pos = _skip(text, at + 1)
    while text[pos] != "}":
        key, pos = json.decoder.scanstring(text, pos + 1)  # type: ignore[attr-defined]
        pos = _skip(text, _skip(text, pos) + 1)
        if key == name:
            found = pos
        pos = _skip(text, _DECODER.raw_decode(text, pos)[1])
        if text[pos] == ",":
            pos = _skip(text, pos + 1)
    return found


def _elements(text: str, at: int) -> list[tuple[int, int]]:
    """(start, end) of each element of the JSON array at `at` (valid JSON)."""
    out: list[tuple[int, int]] = []
    pos = _skip(text, at + 1)
    if text[pos] == "]":
        return out
    while True:
        end = _DECODER.raw_decode(text, pos)[1]
        out.append((pos, end))
        pos = _skip(text, end)
        if text[pos] == "]":
            return out
        pos = _skip(text, pos + 1)


def _skip(text: str, at: int) -> int:
    return _SPACE.match(text, at).end()  # type: ignore[union-attr]


def _message(data: Any, index: int, start: int, end: int) -> ChatMessage:
    if not isinstance(data, dict):
        raise _Bad(f"message {index + 1} is not an object")
    role = data.get("role")
    if not isinstance(role, str):
        raise _Bad(f'message {index + 1} has no "role"')
    return ChatMessage(role, start, end, end, data)


def _parse_json(text: str) -> list[Conversation]:
    start = _skip(text, 0)
    try:
        if start >= len(text):
            raise _Bad("bad JSON: the document is empty")
        data, end = _decoded(text, start)
        if _skip(text, end) != len(text):
            raise _Bad(f"bad JSON: extra data after the value (offset {end})")
    except _Bad as exc:
        return [Conversation(start, len(text), _line_of(text, start), (), None, str(exc))]
    if isinstance(data, list):
        spans = _elements(text, start)
        return [_json_record(text, s, e, d) for (s, e), d in zip(spans, data, strict=True)]
    return [_json_record(text, start, end, data)]


def _json_record(text: str, start: int, end: int, data: Any) -> Conversation:
    line = _line_of(text, start)
    try:
        messages, tools = _walked(text, start, 0, data)
    except _Bad as exc:
        return Conversation(start, end, line, (), None, str(exc))
    return Conversation(start, end, line, messages, tools)


def _line_of(text: str, at: int) -> int:
    return text.count("\n", 0, at)


def _parse_yaml(text: str) -> list[Conversation]:
    loader = yaml.SafeLoader(text)
    try:
        root = loader.get_single_node()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = mark.index if mark is not None else 0
        where = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        return [
            Conversation(0, len(text), _line_of(text, at), (), None, f"bad YAML: {problem}{where}")
        ]
    finally:
        loader.dispose()
    if root is None:
        return []
    if isinstance(root, yaml.SequenceNode):
        return [_yaml_record(loader, text, node) for node in root.value]
    return [_yaml_record(loader, text, root)]


def _yaml_record(loader: yaml.SafeLoader, text: str, node: yaml.Node) -> Conversation:
    start = node.start_mark.index
    end = _yaml_end(text, node)
    line = node.start_mark.line
    if not isinstance(node, yaml.MappingNode):
        return Conversation(start, end, line, (), None, "not a conversation: a mapping is expected")
    messages: tuple[ChatMessage, ...] | None = None
    tools: list[Any] | None = None
    try:
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if key == "messages":
                messages = _yaml_messages(loader, text, value_node)
            elif key == "tools":
                value = loader.construct_object(value_node, deep=True)
                tools = value if isinstance(value, list) else None
        if messages is None:
            raise _Bad('not a conversation: no "messages" list')
    except (_Bad, yaml.YAMLError) as exc:
        return Conversation(start, end, line, (), None, str(exc))
    return Conversation(start, end, line, messages, tools)


def _yaml_messages(loader: yaml.SafeLoader, text: str, node: yaml.Node) -> tuple[ChatMessage, ...]:
    if not isinstance(node, yaml.SequenceNode):
        raise _Bad('not a conversation: "messages" is not a list')
    out: list[ChatMessage] = []
    for i, item in enumerate(node.value):
        data = loader.construct_object(item, deep=True)
        out.append(_message(data, i, item.start_mark.index, _yaml_end(text, item)))
    return tuple(out)


def _yaml_end(text: str, node: yaml.Node) -> int:
    """Where a node's text ends: PyYAML's end mark of a block collection or block scalar lies
    past the blank lines (and next line's indentation) that follow it, so those are left out."""
    end: int = node.end_mark.index
    start: int = node.start_mark.index
    while end > start and text[end - 1] in " \t\r\n":
        end -= 1
    return end
