"""`tokenline/count` and `tokenline/ids`: selections encoded alone, as a prompt would be."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from tokenline.core import Document
from tokenline.server.feature import Feature, Handler
from tokenline.server.positions import offset_range, param, ranges_of

COUNT = "tokenline/count"
IDS = "tokenline/ids"

T = TypeVar("T")


class CountsFeature(Feature):
    """Token counts and ids of ranges of a document."""

    def handlers(self) -> list[Handler]:
        return [Handler(COUNT, self.count), Handler(IDS, self.ids)]

    def count(self, params: Any) -> dict[str, list[int]]:
        return {"counts": self._each_range(params, lambda doc, a, b: int(doc.count(a, b)))}

    def ids(self, params: Any) -> dict[str, list[list[int]]]:
        return {"ids": self._each_range(params, _range_ids)}

    def _each_range(self, params: Any, answer: Callable[[Document, int, int], T]) -> list[T]:
        """answer(doc, start, end) for each of params.ranges of the document params.uri."""
        st = self.host.document(str(param(params, "uri")))
        spans = [offset_range(st.doc, rng, self.host.unit) for rng in ranges_of(params)]
        return [answer(st.doc, a, b) for a, b in spans]


def _range_ids(doc: Document, start: int, end: int) -> list[int]:
    return [int(x) for x in doc.encode_range(start, end)]
