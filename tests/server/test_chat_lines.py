"""A JSONL line counted in idle time (chatlines.counted_line) is read by orjson when its
conversation is plain (messages of strings, no tools) and by json otherwise: whichever reads
it, its record is the one json's reading gives (chatlines.json_line), the same bill or the same
error, for lines that orjson refuses or reads differently (NaN, Infinity, lone surrogates,
integers beyond 64 bits, a byte order mark) and lines both read alike (duplicate keys, escapes,
names, extra keys). The plain contents are counted in compiled code (core.chatcount): the
counts equal sentencepiece's, and OpenAI's rule (tiktoken) bills them as json's reading does."""

from __future__ import annotations

import json
from typing import Any

import pytest
import sentencepiece as spm
from hypothesis import given
from hypothesis import strategies as st

from tests import tiktokencache
from tests.conftest import read_botchan
from tokenline.core import bundled_model_path, load_model
from tokenline.server import chatlines
from tokenline.server.chatlines import Record, SegmentBiller, counted_line, json_line

MODEL = "mistral-7b-v0.1"


def one(content: str, head: str = "", tail: str = "") -> str:
    """A line of one user message whose content is written `content` in JSON."""
    return f'{{{head}"messages": [{{"role": "user", "content": "{content}"}}]{tail}}}'


# (line, whether its conversation is plain: read by orjson and counted in compiled code).
LINES: list[tuple[str, bool]] = [
    (one("Hello there"), True),
    ('{"messages": [{"role": "user", "content": "a"}, {"role": "x", "content": "b  c "}]}', True),
    ('{"messages": []}', True),
    ('{"messages": [{"role": "system"}]}', True),  # no content: nothing to count
    ('{"messages": [{"role": "user", "content": "x", "name": "bob"}]}', True),
    (one("big id", head='"id": 18446744073709551616, '), True),
    (one("a float beside", head='"score": 1.5, '), True),
    (one("first", tail=', "messages": [{"role": "user", "content": "second one"}]'), True),
    ('{"messages": [{"role": "user", "content": "one", "content": "two words"}]}', True),
    (one(r"caf\u00e9 \ud83d\ude00 \n \t \" \\ \/"), True),
    (one("吾輩は猫である。 名前は\u2581まだ無い"), True),
    ("  " + one("spaces around") + "  ", True),
    (one(r"lone \ud800 surrogate"), False),
    (one(r"lone \udc00"), False),
    (one("nan beside", head='"score": NaN, '), False),
    (one("infinity beside", head='"score": Infinity, '), False),
    (one("overflow beside", head='"score": 1e400, '), False),
    ('{"messages": [{"role": "user", "content": 18446744073709551616}]}', False),
    ('{"messages": [{"role": "user", "content": -9223372036854775809}]}', False),
    ('{"messages": [{"role": "user", "content": 12}]}', False),
    ('{"messages": [{"role": "user", "content": 1e400}]}', False),
    ('{"messages": [{"role": "user", "content": NaN}]}', False),
    ('{"messages": [{"role": "user", "content": "x", "weight": 18446744073709551616}]}', False),
    ('{"messages": [{"role": "user", "content": null}]}', False),
    ('{"messages": [{"role": "user", "content": [{"type": "text", "text": "part"}]}]}', False),
    ('{"messages": [{"role": "user", "content": [{"type": "image_url"}, "bare"]}]}', False),
    ('{"messages": [{"role": "user", "content": [3]}]}', False),
    ('{"messages": [{"content": "no role"}]}', False),
    ('{"messages": [{"role": 7, "content": "role a number"}]}', False),
    ('{"messages": ["not an object"]}', False),
    ('{"messages": {"role": "user"}}', False),
    (one("with tools", tail=', "tools": [{"type": "function"}]'), False),
    (one("tools null", tail=', "tools": null'), False),
    ('[{"messages": []}]', False),
    ('"a string"', False),
    ("\ufeff" + one("after a bom"), False),
    (one("extra data") + " trailing", False),
    (one("trailing comma", tail=","), False),
    (one("cut short")[:-1], False),
    ("", False),
    ("   ", False),
    ("[" * 3000 + "]" * 3000, False),
]


@pytest.fixture(scope="module")
def sp() -> spm.SentencePieceProcessor:
    return spm.SentencePieceProcessor(model_file=str(bundled_model_path(MODEL)))


@pytest.fixture(scope="module")
def mistral() -> Any:
    return load_model(MODEL)


def same(a: Record, b: Record) -> bool:
    return (a.bill, a.error, a.located, a.conv) == (b.bill, b.error, b.located, b.conv)


class Spy:
    """How often the compiled contents' count answered."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.answered = 0
        real = chatlines.plain_contents

        def spied(*args: Any) -> list[int] | None:
            found = real(*args)
            self.answered += found is not None
            return found

        monkeypatch.setattr(chatlines, "plain_contents", spied)


@pytest.mark.parametrize(("line", "plain"), LINES)
def test_a_line_counts_as_jsons_reading_of_it(
    line: str, plain: bool, mistral: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    spy = Spy(monkeypatch)
    got = counted_line(SegmentBiller.for_model(mistral), line)
    assert spy.answered == plain
    assert same(got, json_line(SegmentBiller.for_model(mistral), line)), line


@pytest.mark.parametrize(
    ("line", "error"),
    [
        (one(r"a \ud800 b"), "a lone surrogate (U+D800, \\ud800 in JSON) cannot be encoded"),
        ('{"messages": [{"role": "x", "content": ["\\udfff"]}]}', "a lone surrogate (U+DFFF"),
        ("[" * 3000 + "]" * 3000, "bad JSON: nested too deeply to read"),
    ],
)
def test_a_line_no_model_can_read_says_why(line: str, error: str, mistral: Any) -> None:
    """Not an exception out of the idle slice (which left the totals pending for good)."""
    for read in (counted_line, chatlines.located_line):
        got = read(SegmentBiller.for_model(mistral), line)
        assert got.bill is None
        assert got.error is not None and got.error.startswith(error), got.error


def test_plain_contents_count_as_sentencepiece_does(
    mistral: Any, sp: spm.SentencePieceProcessor
) -> None:
    """Each content counted alone, the conversation their sum, the same contents again as
    the first time (through the counter's kept words)."""
    biller = SegmentBiller.for_model(mistral)
    botchan = read_botchan()
    contents = [botchan[i : i + 300] for i in range(0, 30_000, 997)]
    messages = [{"role": "user", "content": c} for c in contents * 2]
    record = counted_line(biller, json.dumps({"messages": messages}))
    assert record.bill is not None
    assert list(record.bill.per_message) == [len(sp.encode(c)) for c in contents * 2]
    assert record.bill.tokens == record.bill.contents == sum(record.bill.per_message)


PIECES = [*'ab é\n"\\', "\u2581", "😀", "  ", "\ud800", "the", "word"]
TEXT = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)
VALUE = st.one_of(
    TEXT,
    st.none(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True),
    st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": TEXT}), max_size=2),
)
MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["system", "user", "assistant", "tool"])},
    optional={"content": st.one_of(TEXT, VALUE), "name": TEXT, "extra": VALUE},
)
RECORD = st.fixed_dictionaries(
    {"messages": st.lists(MESSAGE, max_size=4)},
    optional={"tools": st.lists(st.fixed_dictionaries({"name": TEXT}), max_size=1), "n": VALUE},
)


@given(record=RECORD, ascii_only=st.booleans())
def test_any_conversation_counts_as_jsons_reading_of_it(
    record: dict[str, Any], ascii_only: bool, mistral: Any
) -> None:
    line = json.dumps(record, ensure_ascii=ascii_only)
    got = counted_line(SegmentBiller.for_model(mistral), line)
    assert same(got, json_line(SegmentBiller.for_model(mistral), line)), line


@given(record=RECORD)
def test_openais_rule_bills_a_conversation_as_jsons_reading_of_it(
    record: dict[str, Any], o200k: Any
) -> None:
    line = json.dumps(record)
    got = counted_line(SegmentBiller.for_model(o200k), line)
    assert same(got, json_line(SegmentBiller.for_model(o200k), line)), line


@pytest.fixture(scope="module")
def o200k() -> Any:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIKTOKEN_CACHE_DIR", str(tiktokencache.session_cache()))
        return load_model("o200k_base")
