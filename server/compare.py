"""Each open document counted under other models too: the models of `tokenline.compareModels`,
and the model a project budget names (`{ tokens = 2000, model = "o200k_base" }`).

Per open document, one core Document per such model, made from the text when the document opens
(or when the setting names a new model) and then edited as the document is, edit by edit
(`Change.edits`): each count stays exact and costs an edit, not an encode. A model the
document's own tokens already follow shares its Document. Models come from the models unit's
cache (loaded once each, shared with every document's model); one that cannot be loaded is
reported once, counted as an error, and costs the others nothing.

The editor's selection (`tokenline/selection`, sent by the client as it changes) is counted
under each model too; `tokenline/compare` answers the counts for any ranges at once.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Protocol

from lsprotocol import types

from tokenline.core import Document, Model
from tokenline.server.counted import ModelCount, count_fields
from tokenline.server.feature import Change, DocState, Feature, Handler, Host
from tokenline.server.positions import param, position_of, ranges_of

log = logging.getLogger("tokenline.server")

COMPARE = "tokenline/compare"
SELECTION = "tokenline/selection"

# A range as the client sent it: (start line, start character, end line, end character).
LineRange = tuple[int, int, int, int]
# Selections up to this many characters are encoded whole to be counted (the core's direct
# count), so their counts are kept by their text: an edit elsewhere re-counts none of them.
# Longer ones reuse the document's tokens and cost only their edges.
KEPT_SELECTION_CHARS = 4096
# At most this many kept counts per document (edits inside a selection add one each).
KEPT_SELECTION_COUNTS = 64


class ModelLoader(Protocol):
    """Where the models come from (the models unit, joined by the server)."""

    def load(self, spec: str, uri: str | None) -> Model:
        """The model `spec` names for the document at uri; ModelError when it cannot be."""

    def known_window(self, spec: str, uri: str | None) -> int | None:
        """The context window known for that model, or None."""


@dataclass(frozen=True)
class Counted:
    """A model a document is counted under, as the user named it: loaded, or why not."""

    spec: str
    model: Model | None
    error: str | None = None
    window: int | None = None


@dataclass
class Tracked:
    """One open document's other models, their Documents, and the editor's selection."""

    specs: tuple[str, ...] = ()
    counted: dict[str, Counted] = field(default_factory=dict)
    # The text under each loaded model other than the document's own, by id of the model.
    docs: dict[int, Document] = field(default_factory=dict)
    selection: tuple[LineRange, ...] = ()
    # Counts of the selected texts, by (id of the model, text), from the last count.
    selected: dict[tuple[int, str], int] = field(default_factory=dict)


def wanted(st: DocState) -> tuple[str, ...]:
    """The specs the document is counted under: compareModels, then its budget's model."""
    specs = st.settings.compare_models
    budget = st.settings.budget_model
    return specs if budget is None or budget in specs else (*specs, budget)


class CompareFeature(Feature):
    """Keeps every open document tokenized under its other models; counts them."""

    def __init__(self, host: Host, models: ModelLoader) -> None:
        super().__init__(host)
        self.models = models
        self._docs: dict[str, Tracked] = {}
        self._errors_shown: set[str] = set()

    def handlers(self) -> list[Handler]:
        return [Handler(SELECTION, self.selection), Handler(COMPARE, self.compare)]

    # -- hooks ------------------------------------------------------------------------------------

    def document_opened(self, st: DocState) -> None:
        self._docs[st.uri] = Tracked()
        self.sync(st)

    def document_changed(self, st: DocState, change: Change) -> None:
        """Each other model's Document takes the change's edits, then follows new settings."""
        tracked = self._docs.get(st.uri)
        if tracked is None:
            return
        for key, doc in list(tracked.docs.items()):
            tracked.docs[key] = follow(st, doc, change)
        self.sync(st)

    def publish(self, st: DocState) -> None:
        """New settings reach the status through a publish: the models follow them first."""
        self.sync(st)

    def document_closed(self, st: DocState) -> None:
        self._docs.pop(st.uri, None)

    def configuration_changed(self) -> None:
        """A model that failed is tried again (and reported again if it still fails)."""
        self._errors_shown.clear()
        for tracked in self._docs.values():
            tracked.counted = {s: c for s, c in tracked.counted.items() if c.model is not None}
            tracked.specs = ()

    def sync(self, st: DocState) -> None:
        """Loads the models the settings name and makes the Documents missing (from the text);
        forgets those no longer named. Cheap when nothing changed."""
        tracked = self._docs.setdefault(st.uri, Tracked())
        specs = wanted(st)
        if specs != tracked.specs:
            tracked.counted = {s: tracked.counted.get(s) or self._load(s, st.uri) for s in specs}
            tracked.specs = specs
        needed = {
            id(c.model): c.model
            for c in tracked.counted.values()
            if c.model is not None and c.model is not st.model
        }
        if needed.keys() == tracked.docs.keys():
            return
        docs: dict[int, Document] = {}
        for key, model in needed.items():
            found = tracked.docs.get(key)
            docs[key] = found if found is not None else Document(model, st.doc.text)
        tracked.docs = docs

    def _load(self, spec: str, uri: str) -> Counted:
        try:
            model = self.models.load(spec, uri)
        except Exception as exc:
            reason = getattr(exc, "reason", None) or str(exc)
            self._report(spec, str(exc))
            return Counted(spec, None, error=reason)
        return Counted(spec, model, window=self.models.known_window(spec, uri))

    def _report(self, spec: str, message: str) -> None:
        key = f"{spec}\0{message}"
        if key in self._errors_shown:
            return
        self._errors_shown.add(key)
        log.error("compare model %r: %s", spec, message)
        self.host.show(
            types.MessageType.Warning,
            f"Tokenline: {message}. The model {spec!r} is left out of the comparison.",
        )

    # -- counts (the status and the diagnostics read them: counted.OtherModels) -------------------

    def compared(self, st: DocState) -> list[ModelCount]:
        tracked = self._docs.get(st.uri)
        if tracked is None:
            return []
        spans = self._spans(st, tracked.selection)
        return [
            self._count(st, tracked, tracked.counted[spec], spans)
            for spec in st.settings.compare_models
            if spec in tracked.counted
        ]

    def budget_count(self, st: DocState) -> ModelCount | None:
        counted = self._budget(st)
        if counted is None:
            return None
        tracked = self._docs[st.uri]
        return self._count(st, tracked, counted, self._spans(st, tracked.selection))

    def budget_document(self, st: DocState) -> Document | None:
        counted = self._budget(st)
        if counted is None or counted.model is None:
            return None
        return self._document(st, self._docs[st.uri], counted.model)

    def _budget(self, st: DocState) -> Counted | None:
        spec = st.settings.budget_model
        tracked = self._docs.get(st.uri)
        return None if spec is None or tracked is None else tracked.counted.get(spec)

    def _document(self, st: DocState, tracked: Tracked, model: Model) -> Document | None:
        return st.doc if model is st.model else tracked.docs.get(id(model))

    def _count(
        self, st: DocState, tracked: Tracked, counted: Counted, spans: list[tuple[int, int]]
    ) -> ModelCount:
        model = counted.model
        doc = None if model is None else self._document(st, tracked, model)
        if model is None or doc is None:
            return ModelCount(counted.spec, None, None, None, counted.error or "not counted")
        window = st.settings.window_of(counted.spec, model.name)
        if window is None:
            window = st.settings.context_window if model is st.model else counted.window
        return ModelCount(model.name, len(doc), window, selection_count(tracked, doc, spans))

    def _spans(self, st: DocState, ranges: tuple[LineRange, ...]) -> list[tuple[int, int]]:
        """Code-point offsets of the ranges in the document's text now (clamped like edits)."""
        unit = self.host.unit
        out = []
        for sl, sc, el, ec in ranges:
            a = int(st.doc.offset(sl, sc, unit))
            b = int(st.doc.offset(el, ec, unit))
            if a != b:
                out.append((min(a, b), max(a, b)))
        return out

    # -- handlers ---------------------------------------------------------------------------------

    def selection(self, params: Any) -> None:
        """`tokenline/selection` {uri, ranges}: the editor's selection changed. A new non-empty
        selection of a document with other models publishes its status again."""
        uri = str(param(params, "uri"))
        tracked = self._docs.get(uri)
        if tracked is None:
            return  # a notification gets no error answer; the document is not open
        ranges = tuple(r for r in map(line_range, ranges_of(params)) if r[:2] != r[2:])
        if ranges == tracked.selection:
            return
        tracked.selection = ranges
        tracked.selected.clear()
        if tracked.counted:
            self.host.mark(uri)

    def compare(self, params: Any) -> dict[str, object]:
        """`tokenline/compare` {uri, ranges?}: the document's count and its ranges' under its
        own model and under each compare model (the ranges default to the last selection)."""
        st = self.host.document(str(param(params, "uri")))
        self.sync(st)
        tracked = self._docs[st.uri]
        given = param(params, "ranges")
        ranges = tracked.selection if given is None else tuple(map(line_range, ranges_of(params)))
        spans = self._spans(st, ranges)
        own = ModelCount(
            st.model.name,
            len(st.doc),
            st.settings.context_window,
            sum(int(st.doc.count(a, b)) for a, b in spans),
        )
        compared = [
            self._count(st, tracked, tracked.counted[spec], spans)
            for spec in st.settings.compare_models
        ]
        return {
            "uri": st.uri,
            "version": st.version,
            "document": count_fields(own),
            "compare": [count_fields(c) for c in compared],
        }


def selection_count(tracked: Tracked, doc: Document, spans: list[tuple[int, int]]) -> int:
    """The tokens of the spans of `doc`, each encoded alone; short ones counted once per text."""
    total = 0
    for a, b in spans:
        if b - a > KEPT_SELECTION_CHARS:
            total += int(doc.count(a, b))
            continue
        key = (id(doc.model), doc.slice(a, b))
        n = tracked.selected.get(key)
        if n is None:
            if len(tracked.selected) >= KEPT_SELECTION_COUNTS:
                tracked.selected.clear()
            n = tracked.selected[key] = int(doc.count(a, b))
        total += n
    return total


def line_range(rng: Any) -> LineRange:
    """(start line, start character, end line, end character) of an LSP Range; InvalidParams
    when it is not one."""
    sl, sc = position_of(param(rng, "start"))
    el, ec = position_of(param(rng, "end"))
    return sl, sc, el, ec


def follow(st: DocState, doc: Document, change: Change) -> Document:
    """`doc` (the document's text under another model) after the change's edits; rebuilt from
    the document's text when the change is not told edit by edit, or when the core fails."""
    try:
        if change.edits is None:
            doc.set_text(st.doc.text)
        else:
            for edit in change.edits:
                doc.edit(edit.start, edit.end, edit.text)
        if doc.length() == st.doc.length():
            return doc
        log.error("%s: %s lost step with the text; re-encoding it", st.uri, doc.model.name)
    except Exception:
        log.exception(
            "%s: the core failed on an edit under %s; re-encoding", st.uri, doc.model.name
        )
    return Document(doc.model, st.doc.text)
