"""The chunk block and the stores on it, against plain Python lists and strings.

Small chunk targets make a few dozen elements span many chunks, so that every edit exercises the
splice: point updates, merges of slivers, re-cuts, and the "\\r\\n" that must stay in one chunk.
"""

from __future__ import annotations

import random
import re
from bisect import bisect_right
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st
from librt.vecs import vec
from mypy_extensions import i32, i64, u8

from tokenline.core.chunks import SIZE, Chunks, Columns
from tokenline.core.rope import (
    BREAKS,
    CODE_UNITS_8,
    CODE_UNITS_16,
    MEASURES,
    UTF8,
    UTF16,
    RopeBuilder,
    TextRope,
)
from tokenline.core.tokens import TARGET, TokenStore

LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass
class Rows:
    """The model: a plain list per column."""

    wide: list[list[int]]
    flags: list[list[int]]

    def splice(self, k0: int, k1: int, new: Rows) -> None:
        for col, values in zip(self.wide + self.flags, new.wide + new.flags, strict=True):
            col[k0:k1] = values


def rows(n_wide: int, n_flags: int, max_size: int) -> st.SearchStrategy[Rows]:
    """Rows with small values; zeros are frequent, as zero-length tokens and units are."""

    @st.composite
    def build(draw: st.DrawFn) -> Rows:
        n = draw(st.integers(0, max_size))
        column = st.lists(st.integers(0, 3), min_size=n, max_size=n)
        flag = st.lists(st.integers(0, 1), min_size=n, max_size=n)
        return Rows([draw(column) for _ in range(n_wide)], [draw(flag) for _ in range(n_flags)])

    return build()


def check_chunks(store: Chunks) -> None:
    """Chunk sizes stay within the bounds (but for a short whole) and no chunk is empty."""
    count = store.chunk_count()
    for c in range(count):
        size = store.measure_of(SIZE, c)
        assert size > 0
        if count > 1:
            # A cut pushed past a glued pair may leave one element more or less.
            assert store.minimum - 1 <= size <= store.maximum + 1


def check_columns(store: Columns, model: Rows, summed: list[int]) -> None:
    n = len(model.wide[0])
    assert store.size() == n
    check_chunks(store)
    for col, values in enumerate(model.wide):
        assert store.to_list(col, 0, n) == values
        for k in range(n):
            assert store.get(col, k) == values[k]
    for col, values in enumerate(model.flags):
        for k in range(n):
            assert store.flag(col, k) == values[k]
    for col in summed:
        values = model.wide[col]
        assert store.column_total(col) == sum(values)
        for k in range(n + 2):
            assert store.column_start(col, k) == sum(values[:k])
        for off in range(-1, sum(values) + 2):
            # Offsets before the start count as 0; rows of 0 hold no offset.
            expected = next((k for k in range(n) if sum(values[: k + 1]) > max(off, 0)), n)
            assert store.row_at(col, off) == expected


@given(st.data())
def test_columns_follow_a_list_model(data: st.DataObject) -> None:
    summed = [0, 1]
    store = Columns(3, 1, vec[i64]([0, 1]), data.draw(st.sampled_from([4, 8, 16]), "target"))
    model = data.draw(rows(3, 1, 60), "loaded")
    _load(store, model)
    check_columns(store, model, summed)
    for _ in range(data.draw(st.integers(1, 12), "steps")):
        n = len(model.wide[0])
        k0 = data.draw(st.integers(0, n))
        k1 = data.draw(st.integers(k0, n))
        new = data.draw(rows(3, 1, 40))
        for col, values in enumerate(new.wide):
            store.stage(col, vec[i32](values))
        store.stage_flags(0, vec[u8](new.flags[0]))
        store.replace(k0, k1)
        model.splice(k0, k1, new)
        check_columns(store, model, summed)
        c, i = store.locate(k0)
        count = len(model.wide[0]) - k0
        wide, flags = store.copy_rows(c, i, count)
        assert [list(v) for v in wide] == [col[k0:] for col in model.wide]
        assert list(flags[0]) == model.flags[0][k0:]


def _load(store: Columns, model: Rows) -> None:
    for col, values in enumerate(model.wide):
        store.stage(col, vec[i32](values))
    for col, values in enumerate(model.flags):
        store.stage_flags(col, vec[u8](values))
    store.load()


def test_columns_keep_no_caller_buffer() -> None:
    """Vecs handed in are copied: changing them afterwards changes nothing stored."""
    store = Columns(1, 0, vec[i64]([0]), 8)
    values = vec[i32]([1, 2, 3])
    store.stage(0, values)
    store.load()
    values[0] = 9
    assert store.to_list(0, 0, 3) == [1, 2, 3]


@dataclass
class Tokens:
    ids: list[int]
    lengths: list[int]
    joins: list[int]


def random_tokens(seed: int, n: int) -> Tokens:
    rng = random.Random(seed)
    return Tokens(
        [rng.randrange(32000) for _ in range(n)],
        [rng.choice([0, 1, 1, 2, 3, 5]) for _ in range(n)],
        [rng.randrange(2) for _ in range(n)],
    )


def check_tokens(store: TokenStore, model: Tokens, rng: random.Random) -> None:
    n = len(model.ids)
    starts = [sum(model.lengths[:k]) for k in range(n + 1)]
    assert store.size() == n
    assert store.total_length() == starts[n]
    assert store.ids(0, n + 5) == model.ids
    assert store.lengths(0, n) == model.lengths
    for k in rng.sample(range(n + 1), min(n + 1, 60)):
        assert store.start(k) == starts[k]
        if k < n:
            assert (store.id(k), store.length(k)) == (model.ids[k], model.lengths[k])
    for off in rng.sample(range(starts[n] + 2), min(starts[n] + 2, 60)):
        expected = next((k for k in range(n) if starts[k + 1] > off), n)
        assert store.at(off) == expected
    k0 = rng.randrange(n + 1)
    k1 = rng.randrange(k0, n + 2)
    ids, lengths, joins, start = store.window(k0, k1)
    assert list(ids) == model.ids[k0:k1] and list(lengths) == model.lengths[k0:k1]
    assert list(joins) == (model.joins[k0:k1] if store.keeps_joins else [])
    assert start == starts[k0]


@given(
    keeps_joins=st.booleans(),
    size=st.integers(0, 3 * TARGET),
    edits=st.lists(
        st.tuples(st.floats(0, 1), st.integers(0, 2 * TARGET), st.integers(0, 2 * TARGET)),
        max_size=8,
    ),
    seed=st.integers(0, 2**16),
)
def test_token_store_follows_a_list_model(
    keeps_joins: bool, size: int, edits: list[tuple[float, int, int]], seed: int
) -> None:
    rng = random.Random(seed)
    model = random_tokens(seed, size)
    store = TokenStore(keeps_joins)
    store.load(vec[i32](model.ids), vec[i32](model.lengths), vec[u8](model.joins))
    check_tokens(store, model, rng)
    for where, removed, added in edits:
        n = len(model.ids)
        k0 = int(where * n)
        k1 = min(n, k0 + removed)
        if added % 4 == 0:
            # Flags alone, in place (pre-token starts learned late), across chunks too.
            flags = [rng.randrange(16) for _ in range(k1 - k0)]
            store.set_joins(k0, vec[u8](flags))
            if keeps_joins:
                model.joins[k0:k1] = flags
            assert list(store.window(0, n)[2]) == (model.joins if keeps_joins else [])
            check_tokens(store, model, rng)
            continue
        new = random_tokens(seed + k0, added)
        given_joins = vec[u8](new.joins) if rng.random() < 0.8 else None
        if given_joins is None:
            new.joins = [0] * added
        store.replace(k0, k1, vec[i32](new.ids), vec[i32](new.lengths), given_joins)
        for mine, theirs in ((model.ids, new.ids), (model.lengths, new.lengths)):
            mine[k0:k1] = theirs
        model.joins[k0:k1] = new.joins
        check_tokens(store, model, rng)


def units(s: str, unit: int) -> int:
    return len(s.encode("utf-16-le")) // 2 if unit == UTF16 else len(s.encode("utf-8"))


def check_rope(rope: TextRope, text: str) -> None:
    assert rope.text() == text and rope.length() == len(text)
    check_chunks(rope)
    for c, chunk in enumerate(rope.chunks):
        assert rope.measure_of(BREAKS, c) == len(LINE_BREAK.findall(chunk))
        assert rope.measure_of(CODE_UNITS_16, c) == units(chunk, UTF16)
        assert rope.measure_of(CODE_UNITS_8, c) == units(chunk, UTF8)
        if c > 0:
            assert not (rope.chunks[c - 1].endswith("\r") and chunk.startswith("\n"))
    starts = [0] + [m.end() for m in LINE_BREAK.finditer(text)]
    assert rope.line_count() == len(starts)
    for line, start in enumerate(starts):
        assert rope.line_start(line) == start
        assert rope.line_of(start) == line
    assert rope.line_start(len(starts)) == len(text)  # past the last line: the end
    for off in range(len(text) + 1):
        assert rope.slice(off, off + 7) == text[off : off + 7]
        if not (0 < off < len(text) and text[off - 1 : off + 1] == "\r\n"):
            assert rope.line_of(off) == bisect_right(starts, off) - 1
        for unit in (UTF8, UTF16):
            assert rope.units_before(off, unit) == units(text[:off], unit)
            if off == len(text) or units(text[off], unit) == 1:
                continue
            # Inside a character: rounded down to its start.
            assert rope.offset_of_units(units(text[:off], unit) + 1, unit) == off


pieces = st.sampled_from(["a", "bc", "\n", "\r\n", "\r", "é", "😀", "中", " ", "xyz\r"])
texts = st.lists(pieces, max_size=60).map("".join)


# Text whose only line break is "\n": its chunks find lines by str.find and str.count.
newline_texts = st.lists(
    st.sampled_from(["a", "bc", "\n", "\n\n", "é", "😀", "xyz\n"]), max_size=60
)


@given(text=texts | newline_texts.map("".join), target=st.sampled_from([4, 8, 16]), data=st.data())
def test_rope_follows_a_string(text: str, target: int, data: st.DataObject) -> None:
    rope = TextRope(text, target)
    check_rope(rope, text)
    for _ in range(data.draw(st.integers(1, 10), "steps")):
        start = data.draw(st.integers(0, len(text)))
        end = data.draw(st.integers(start, len(text)))
        new = data.draw(texts)
        rope.replace(start, end, new)
        text = text[:start] + new + text[end:]
        check_rope(rope, text)


@given(text=texts, target=st.sampled_from([8, 16, 32]), data=st.data())
def test_rope_follows_small_edits_inside_chunks(
    text: str, target: int, data: st.DataObject
) -> None:
    """Edits of a few characters, which the rope applies inside one chunk without measuring it
    again: line breaks formed or split at the edit's ends ("\\r" + "\\n") are counted."""
    rope = TextRope(text * 4, target)
    text *= 4
    for _ in range(data.draw(st.integers(1, 20), "steps")):
        start = data.draw(st.integers(0, len(text)))
        end = data.draw(st.integers(start, min(len(text), start + 3)))
        new = data.draw(st.lists(pieces, max_size=2).map("".join))
        rope.replace(start, end, new)
        text = text[:start] + new + text[end:]
        check_rope(rope, text)


@given(
    text=texts | newline_texts.map("".join),
    target=st.sampled_from([4, 8, 16]),
    budget=st.integers(1, 40),
)
def test_a_rope_built_in_pieces_is_the_ropes_and_each_piece_is_bounded(
    text: str, target: int, budget: int
) -> None:
    """RopeBuilder (an opening in idle time): the chunks TextRope(text) cuts, with their measures;
    a piece cuts at most `budget` characters beyond its first chunk (counted, not timed)."""
    whole = TextRope(text, target)
    builder = RopeBuilder(text, target)
    pieces = 0
    while True:
        before = builder.start
        more = builder.build_some(budget)
        pieces += 1
        # Chunks until the budget is reached: the last one is at most 2 * target + 1 (a whole
        # text of one chunk, a "\r\n" glued on).
        assert builder.start - before < budget + 2 * target + 2
        if not more:
            break
    assert pieces <= len(whole.chunks) + 1
    rope = builder.built()
    assert rope.chunks == whole.chunks
    for m in range(MEASURES):
        assert [rope.measure_of(m, c) for c in range(len(rope.chunks))] == [
            whole.measure_of(m, c) for c in range(len(whole.chunks))
        ]
    check_rope(rope, text)
    rope.replace(0, min(3, len(text)), "ab\r\n")
    check_rope(rope, "ab\r\n" + text[3:])


def test_a_rope_built_in_pieces_rejects_a_lone_surrogate() -> None:
    builder = RopeBuilder("ok " * 50 + "\ud800", 8)
    with pytest.raises(ValueError, match="lone surrogate"):
        while builder.build_some(16):
            pass
