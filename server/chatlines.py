"""What a chat file's records cost, kept per record: the state behind the chat unit (chat.py).

A JSON Lines file is kept line by line (`LineTable`): each line's record, counted or not yet,
keyed by its line and shifted as edits insert or delete lines, so an edit of one message
re-counts its line alone; the totals (`Totals`) are kept as records are counted and dropped, so
the status never walks the file. Two bytearrays beside the records (counted, and has a
diagnostic) are searched at C speed for the next line to count or to report.

A JSON or YAML chat file is one document parsed whole (`WholeFile`): prompt files are small.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import orjson
from lsprotocol import types

from tokenline.core import (
    CONTENTS_ONLY,
    UNCOUNTED,
    Bill,
    ChatBiller,
    ChatError,
    Conversation,
    Model,
    TokenCounter,
    encodable,
    parse_chat,
    parse_jsonl_line,
    plain_contents,
    plain_messages,
)
from tokenline.server.feature import TextView

_BREAK = re.compile(r"\r\n|\r|\n")
# Contents' counts a biller keeps (as ChatBiller keeps them).
CONTENTS_KEPT = 1 << 18
# Lines read from the text at once when counting in idle time (one slice of the rope each).
READ_LINES = 64


class SegmentBiller(ChatBiller):
    """A biller whose texts (messages' contents, the values OpenAI's rule counts) are counted
    through the model's segment cache (core.counting.TokenCounter), which the words prose
    repeats make many times faster than the reference library's encode, and exact as every
    count of the core is; a text the counter cannot take goes to the model's encode. One
    counter serves every text: a Document or a counter made per message cost more than its
    count. Contents are kept by text, as ChatBiller keeps them."""

    def __init__(self, model: Model, mode: str, template: Any = None, mistral: Any = None) -> None:
        super().__init__(model, mode, template, mistral)
        self._counter = TokenCounter(model)

    @classmethod
    def for_model(cls, model: Model, template_source: str | None = None) -> SegmentBiller:
        biller = super().for_model(model, template_source)
        assert isinstance(biller, SegmentBiller)
        return biller

    def plain_bill(self, messages: object) -> Bill | None:
        """The bill of messages that are objects of strings, their contents counted in
        compiled code (core.chatcount); None for any other messages (bill() takes them)."""
        if self.mode != CONTENTS_ONLY:
            # What the template, mistral-common or OpenAI's rule adds around the contents.
            if not plain_messages(messages):
                return None
            assert isinstance(messages, list)
            return self.bill(messages, None)
        per_message = plain_contents(self._counter, messages)
        if per_message is None:
            return None
        n = sum(per_message)
        return Bill(n, n, tuple(per_message), False, CONTENTS_ONLY)

    def count(self, text: str) -> int:
        found = self._contents.get(text)
        if found is None:
            found = int(self._counter.count_alone(encodable(text)))
            if found == UNCOUNTED:
                found = len(self.model.encode(text))
            if len(self._contents) >= CONTENTS_KEPT:
                # Emptied, not trimmed: dropping the oldest key one by one walks the dict's
                # deleted slots from its start each time (quadratic once full).
                self._contents.clear()
            self._contents[text] = found
        return found


@dataclass(eq=False)
class Record:
    """One record of a chat file: a conversation and its bill, or why it has none.

    conv: where its messages are (offsets from its line's start in a JSONL file, from the
    document's start otherwise); None for a blank line, and for a line counted in idle time
    before anything needed its messages' places (`located` is then False).
    """

    conv: Conversation | None
    bill: Bill | None
    error: str | None
    located: bool = True
    # The inlay hints last made of it, and the line they were made for.
    shown: tuple[int, list[types.InlayHint]] | None = None


BLANK = Record(None, None, None)


def bill_of(biller: ChatBiller, conv: Conversation) -> Record:
    """The record of a parsed conversation: its bill, or why it cannot be counted."""
    if conv.error is not None:
        return Record(conv, None, conv.error)
    try:
        bill = biller.bill([m.data for m in conv.messages], conv.tools)
    except ChatError as exc:
        return Record(conv, None, str(exc) or "the conversation cannot be counted")
    return Record(conv, bill, None)


def located_line(biller: ChatBiller, line: str) -> Record:
    """The record of one JSONL line, with where its messages are."""
    conv = parse_jsonl_line(line, 0, 0)
    return BLANK if conv is None else bill_of(biller, conv)


def counted_line(biller: SegmentBiller, line: str) -> Record:
    """The record of one JSONL line, counted without placing its messages (idle time): read by
    orjson, several times faster than json, when the conversation is plain (no tools, messages
    of strings alone: every value billing reads is a string, which both read alike); any other
    line as json reads it (orjson refuses NaN and lone surrogates, and reads integers beyond 64
    bits as floats)."""
    try:
        data = orjson.loads(line)
    except ValueError:  # orjson.JSONDecodeError
        return json_line(biller, line)
    if type(data) is dict and "tools" not in data:
        bill = biller.plain_bill(data.get("messages"))
        if bill is not None:
            return Record(None, bill, None, False)
    return json_line(biller, line)


def json_line(biller: ChatBiller, line: str) -> Record:
    """The record of one JSONL line as json reads it, counted without placing its messages; a
    line that is not plainly a conversation goes through the parser, which says why."""
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return located_line(biller, line)
    messages = data.get("messages") if isinstance(data, dict) else None
    if not isinstance(messages, list) or not all(map(_is_message, messages)):
        return located_line(biller, line)
    tools = data.get("tools")
    try:
        bill = biller.bill(messages, tools if isinstance(tools, list) else None)
    except ChatError as exc:
        return Record(None, None, str(exc) or "the conversation cannot be counted", False)
    return Record(None, bill, None, False)


def _is_message(m: Any) -> bool:
    return isinstance(m, dict) and isinstance(m.get("role"), str)


class Totals:
    """The conversations counted so far: how many, the largest, the sum, the failures."""

    def __init__(self) -> None:
        self.conversations = 0
        self.total = 0
        self.errors = 0
        self.largest = 0
        # How many counted conversations have each size (the largest survives removals).
        self._sizes: dict[int, int] = {}

    def add(self, r: Record) -> None:
        if r.error is not None:
            self.errors += 1
        if r.bill is None:
            return
        n = r.bill.tokens
        self.conversations += 1
        self.total += n
        self._sizes[n] = self._sizes.get(n, 0) + 1
        self.largest = max(self.largest, n)

    def remove(self, r: Record) -> None:
        if r.error is not None:
            self.errors -= 1
        if r.bill is None:
            return
        n = r.bill.tokens
        self.conversations -= 1
        self.total -= n
        left = self._sizes[n] - 1
        if left:
            self._sizes[n] = left
            return
        del self._sizes[n]
        if n == self.largest:
            self.largest = max(self._sizes, default=0)


def is_problem(r: Record | None, limit: int) -> bool:
    """True for a record that gets a diagnostic: not counted, or over the limit."""
    if r is None:
        return False
    return r.error is not None or (r.bill is not None and r.bill.tokens > limit)


class LineTable:
    """The records of a JSONL file by line, the totals, and which lines to count or report."""

    def __init__(self, lines: int, limit: int) -> None:
        self.records: list[Record | None] = [None] * lines
        self.done = bytearray(lines)  # 1: the line's record is counted
        self.problems = bytearray(lines)  # 1: the line's record gets a diagnostic
        self.totals = Totals()
        self.limit = limit
        # The first line that may still wait to be counted.
        self.cursor = 0

    def __len__(self) -> int:
        return len(self.records)

    @property
    def pending(self) -> bool:
        return self.done.find(0, self.cursor) >= 0

    def put(self, line: int, r: Record) -> None:
        old = self.records[line]
        if old is not None:
            self.totals.remove(old)
        self.records[line] = r
        self.totals.add(r)
        self.done[line] = 1
        self.problems[line] = is_problem(r, self.limit)

    def shift(self, head: int, tail: int, lines: int) -> range:
        """Lines [head, len - tail) became lines [head, lines - tail), not counted yet; returns
        the new ones."""
        n = len(self.records)
        head = max(0, min(head, n - 1, lines - 1))
        tail = max(0, min(tail, n - head, lines - head))
        end, new_end = n - tail, lines - tail
        for r in self.records[head:end]:
            if r is not None:
                self.totals.remove(r)
        fresh = new_end - head
        self.records[head:end] = [None] * fresh
        self.done[head:end] = bytes(fresh)
        self.problems[head:end] = bytes(fresh)
        self.cursor = min(self.cursor, head)
        return range(head, new_end)

    def set_limit(self, limit: int) -> None:
        """Another limit: every counted record is checked against it again."""
        if limit == self.limit:
            return
        self.limit = limit
        self.problems = bytearray(is_problem(r, limit) for r in self.records)

    def next_waiting(self) -> int:
        """The first line not counted yet, or -1."""
        line = self.done.find(0, self.cursor)
        self.cursor = len(self.done) if line < 0 else line
        return line

    def problem_lines(self, most: int) -> list[int]:
        """The first `most` lines whose records get a diagnostic."""
        out: list[int] = []
        at = self.problems.find(1)
        while at >= 0 and len(out) < most:
            out.append(at)
            at = self.problems.find(1, at + 1)
        return out


def read_lines(text: TextView, first: int, last: int) -> list[str]:
    """Lines [first, last) of the text, without their breaks, from one slice of it."""
    n = text.line_count()
    last = min(last, n)
    if first >= last:
        return []
    a = text.line_start(first)
    b = text.line_end(last - 1)
    body = text.slice(a, b)
    return _BREAK.split(body) if "\r" in body else body.split("\n")


class WholeFile:
    """A JSON or YAML chat file: its conversations, parsed whole again after each change."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.records: list[Record] | None = None
        self.totals = Totals()

    def changed(self) -> None:
        self.records = None

    def parsed(self, text: TextView, biller: ChatBiller) -> list[Record]:
        """The records, parsed and counted when the text changed since the last time."""
        if self.records is None:
            convs = parse_chat(text.slice(0, text.length()), self.kind)
            self.records = [bill_of(biller, c) for c in convs]
            self.totals = Totals()
            for r in self.records:
                self.totals.add(r)
        return self.records
