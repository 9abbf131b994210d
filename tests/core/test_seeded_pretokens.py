"""Windows take the tokens of the pre-tokens an edit left alone from the old tokens, through the
model's segment cache (tokenline.core.pretokenflags.seed_known): every entry the cache holds must
be the library's own BPE of its text, and the document must stay equal to a full encode."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import tiktoken
from hypothesis import given
from hypothesis import strategies as st

from tests.core.strategies import CJK, edit_ops, texts, unspaced
from tokenline.core import Document, load_model
from tokenline.core.bytelevel import ByteLevelFamily
from tokenline.core.pretokens import holds_newer

NAMES = ["o200k_base", "cl100k_base"]


@pytest.fixture(scope="module")
def encodings(tiktoken_cache: Path) -> Iterator[dict[str, tuple[Document, tiktoken.Encoding]]]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIKTOKEN_CACHE_DIR", str(tiktoken_cache))
        yield {n: (Document(load_model(n)), tiktoken.get_encoding(n)) for n in NAMES}


def check_cache(doc: Document, enc: tiktoken.Encoding) -> None:
    """Every cached pre-token has the library's tokens, and the join flags its length gives
    (edges inside a long one), whoever put it there (what a document reads for a pre-token near
    a character newer than Python's tables keeps its starts unknown, not the cache)."""
    family = doc.model.family
    assert isinstance(family, ByteLevelFamily)
    cache = family.cache
    for text in cache.segments():
        run = cache.get(text)
        assert run is not None and run.id_list() == enc._encode_single_piece(text), text
        if not holds_newer(family.newer, text):
            expected = family.pretoken_joins(text, run.lens, run.joins)
            assert list(run.joins) == list(expected), text


japanese = st.lists(st.sampled_from([*CJK, "、", "。", "「", "」", "\n"]), max_size=40).map("".join)


@pytest.mark.parametrize("name", NAMES)
@given(
    text=st.one_of(texts(), japanese, unspaced(min_size=1, max_size=20)),
    prepared=st.booleans(),
    data=st.data(),
)
def test_every_cached_pretoken_is_the_librarys(
    encodings: dict[str, tuple[Document, tiktoken.Encoding]],
    name: str,
    text: str,
    prepared: bool,
    data: st.DataObject,
) -> None:
    doc, enc = encodings[name]
    doc.model.family.cache.clear()
    doc.set_text(text)  # from one encode: pre-token starts unknown until an edit learns them
    while prepared and doc.prepare():
        pass
    for _ in range(data.draw(st.integers(1, 12), label="steps")):
        start, end, new = data.draw(edit_ops(doc.length()), label="edit")
        expected = doc.text[:start] + new + doc.text[end:]
        doc.edit(start, end, new)
        assert doc.ids() == enc.encode_ordinary(expected), (start, end, new)
    check_cache(doc, enc)


@pytest.mark.parametrize("name", NAMES)
def test_an_edit_finds_its_neighbours_in_the_cache(
    encodings: dict[str, tuple[Document, tiktoken.Encoding]], name: str
) -> None:
    # A Japanese line's pre-tokens run to its punctuation; an edit in one re-encodes it with
    # those either side, which the library is not asked for again.
    doc, enc = encodings[name]
    cache = doc.model.family.cache
    line = "吾輩は猫である。名前はまだ無い、どこで生れたかとんと見当がつかぬ。何でも薄暗い所で"
    doc.set_text((line + "\n") * 50)
    while doc.prepare():
        pass
    cache.clear()
    hits = cache.hits
    at = 25 * (len(line) + 1) + line.index("名前") + 1
    for new in ("は", "前"):
        doc.edit(at, at + 1, new)
        assert doc.ids() == enc.encode_ordinary(doc.text)
    assert cache.hits > hits
    check_cache(doc, enc)
