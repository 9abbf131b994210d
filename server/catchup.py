"""Documents whose model re-encodes the whole text on every edit (`Model.incremental` False:
SentencePiece unigram, some tokenizer.json files): the text takes each edit at once, and the
tokens catch up in one re-encode of the newest text when typing pauses.

Re-encoding a large document whole takes longer than keystrokes come (a twentieth of a second
for a 1 MB unigram document, more on a busy machine); one re-encode per didChange falls further
behind with every key. Here the edits of a document whose last whole re-encode took over
EAGER_SECONDS go to its `Backlog`: a copy of its text with the line index LSP positions need,
made when the document opens (or grows that slow) and kept while it is open. Once input has
paused briefly (PAUSE_SHARE of that re-encode's time, at most PAUSE_CAP; idle work,
server/idle.py), the Document's text takes one edit, the stretch between the first and the last
character any edit touched (Document.edit_text), and its newest text is encoded on a worker
thread (server/reencode.py) while the event loop goes on taking keys. Tokens that land for a
text superseded meanwhile are dropped (the encode of the newest text has started, or starts
after the next pause); only the newest text's go in. Meanwhile the document is `pending`: its
status says so, its diagnostics wait, and requests that need its tokens get a ServerCancelled
answer (the client asks again after the refresh sent when the tokens catch up).

A model that edits in place does the same for an edit that would encode a long stretch at once
(Document.encodes_long: a Unigram piece of thousands of characters, which no bounded window
encodes exactly): the document gets a backlog before that edit (`hold`) and loses it once its
tokens have caught up, so that the keys typed into such a piece do not wait for its encode.

A large chat file (server/chat.py counts its conversations from the text alone) opens the same
way: its text goes to a backlog at once and its first encode is a low idle job, after the work
that answers the user (hints of the visible lines, the conversations' totals), so that opening
a 100 MB JSONL file does not wait for seconds of encoding before the first hints. That encode
is read in slices (`Loading`: Document.load, sized to take about SLICE_SECONDS) of the text as
it was opened; edits made meanwhile wait in the backlog and go in as one edit once it is done.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from tokenline.core import Document, Model, RopeBuilder, TextRope, TokenRun
from tokenline.server.feature import EVERYTHING, Change, DocState
from tokenline.server.idle import SLICE_SECONDS, IdleWork
from tokenline.server.reencode import Reencoder

log = logging.getLogger("tokenline.server")

# A whole re-encode faster than this is done on every edit, as for an incremental model.
EAGER_SECONDS = 0.005
# Input must pause briefly before a re-encode starts: this share of the document's last whole
# re-encode, at most PAUSE_CAP. The encode runs on a worker (server/reencode.py), so a key
# arriving meanwhile does not wait for it, and the pause only spares the CPU the encodes that a
# key repeating or a paste would supersede at once; it adds to the wait for the final count.
PAUSE_SHARE = 0.1
PAUSE_CAP = 0.05
CATCH_UP = "catch-up"
# Characters a deferred first encode reads in its first slice; later slices are sized from the
# time the last one took, to take about SLICE_SECONDS, within LOAD_BUDGETS.
FIRST_LOAD_BUDGET = 1 << 12
LOAD_BUDGETS = (1 << 9, 1 << 16)
# Characters of the text's rope a slice builds (cut, checked and measured: about 1 ms).
ROPE_PIECE = 1 << 17


class Backlog:
    """A document's newest text, edited by didChange before its tokens are; and the stretch
    those edits touched."""

    def __init__(self, text: str) -> None:
        self.rope = TextRope(text)
        # Edits taken so far: which text an encode under way is of (server/reencode.py).
        self.edits = 0
        self.caught_up()

    def caught_up(self) -> None:
        """The tokens are those of the text again: no edit is behind."""
        # What the edits left alone, in lines (for the features' hooks once the tokens follow).
        self.change = Change()
        self.text_caught_up()

    def text_caught_up(self) -> None:
        """The Document's text is this text again (its tokens may still be an older one's)."""
        # The edits touched nothing before `lo` and nothing in the last `tail` characters.
        self.lo = self.tail = self.length()

    # The text API of tokenline.core.Document that the store edits through.

    def length(self) -> int:
        return int(self.rope.length())

    def line_count(self) -> int:
        return int(self.rope.line_count())

    def line_start(self, line: int) -> int:
        return int(self.rope.line_start(line))

    def line_end(self, line: int) -> int:
        return int(self.rope.line_end(line))

    def offset(self, line: int, column: int, unit: int) -> int:
        return int(self.rope.offset(line, column, unit))

    def position(self, offset: int, unit: int) -> tuple[int, int]:
        line, column = self.rope.position(offset, unit)
        return int(line), int(column)

    def slice(self, start: int, end: int) -> str:
        return self.rope.slice(start, end)

    def edit(self, start: int, end: int, text: str) -> None:
        n = self.length()
        self.lo = min(self.lo, start)
        self.tail = min(self.tail, n - end)
        self.rope.replace(start, end, text)
        self.edits += 1

    def combined(self, old_length: int) -> tuple[int, int, str]:
        """The one edit [a, b) -> text that turns the old text (of old_length characters) into
        the newest: what lies outside the touched stretch is the same in both."""
        n = self.length()
        return self.lo, old_length - self.tail, self.rope.slice(self.lo, n - self.tail)


class Loading:
    """A deferred first encode read in slices: the text's rope built a piece at a time, then
    the Document of the text as it was opened."""

    def __init__(self, model: Model, text: str) -> None:
        self.model = model
        self.text = text
        self.rope: RopeBuilder | None = RopeBuilder(text)
        self.doc: Document | None = None
        self.budget = FIRST_LOAD_BUDGET
        self.seconds = 0.0

    def step(self) -> bool:
        """One slice: ROPE_PIECE characters of the text's rope, then (once it is built) the
        Document made, then its tokens read, `budget` characters at a time; True while more
        remains."""
        start = time.perf_counter()
        if self.rope is not None:
            if not self.rope.build_some(ROPE_PIECE):
                self.doc = Document(self.model, self.text, False, self.rope.built())
                self.rope, self.text = None, ""
            more = True
        else:
            assert self.doc is not None
            more = self.doc.load(self.budget)
            took = max(time.perf_counter() - start, 1e-6)
            # Towards the budget that takes SLICE_SECONDS, by at most a factor 4 per slice.
            scaled = self.budget * min(4.0, max(0.25, SLICE_SECONDS / took))
            self.budget = int(min(max(scaled, LOAD_BUDGETS[0]), LOAD_BUDGETS[1]))
        self.seconds += time.perf_counter() - start
        return more


class CatchUp:
    """Whole re-encodes of the open documents: how long each took, and the backlogs."""

    def __init__(
        self,
        idle: IdleWork,
        caught_up: Callable[[DocState, Change], None],
        reencoder: Reencoder | None = None,
    ) -> None:
        self._idle = idle
        # Called when a document's tokens have caught up with its text, with what its edits
        # since the last time left alone.
        self._caught_up = caught_up
        self._seconds: dict[str, float] = {}
        self._backlogs: dict[str, Backlog] = {}
        # Documents opened with their first encode deferred (their Document is still empty),
        # and the first encodes under way.
        self._opening: set[str] = set()
        self._loads: dict[str, Loading] = {}
        # Whole re-encodes on worker threads, and which text (Backlog.edits) each document's
        # newest one under way is of.
        self._reencoder = reencoder or Reencoder()
        self._encoding: dict[str, int] = {}

    def defer(self, st: DocState, text: str) -> None:
        """Opens the document with its text in a backlog; its tokens are made in idle time."""
        self._backlogs[st.uri] = Backlog(text)
        self._opening.add(st.uri)
        self._loads[st.uri] = Loading(st.model, text)
        st.pending = True
        self._idle.add(CATCH_UP, st.uri, lambda: self._catch_up(st), low=True)

    def took(self, st: DocState, seconds: float, text: str | None = None) -> None:
        """The document's tokens were just made whole in `seconds`: from `text` (opened or
        re-tokenized: a new Document), or by an edit in place. A slow one gets a backlog for its
        next edits."""
        if text is not None:
            self.drop(st)
        if st.model.incremental:
            return
        self._seconds[st.uri] = seconds
        if seconds > EAGER_SECONDS and st.uri not in self._backlogs:
            self._backlogs[st.uri] = Backlog(st.doc.text if text is None else text)

    def hold(self, st: DocState) -> Backlog:
        """A backlog for a document whose model edits in place, made before an edit that would
        encode a long stretch at once (Document.encodes_long: a long Unigram piece, encoded
        whole): its edits go to the text, its tokens catch up from a whole re-encode on a
        worker, as a model's that re-encodes whole do, and the backlog goes once they have."""
        backlog = self._backlogs[st.uri] = Backlog(st.doc.text)
        st.pending = True
        return backlog

    def backlog(self, st: DocState) -> Backlog | None:
        """Where a didChange of the document goes: its backlog (the document is pending from
        now until its tokens catch up), or None for its Document."""
        found = self._backlogs.get(st.uri)
        if found is not None:
            st.pending = True
        return found

    def backlog_of(self, st: DocState) -> Backlog | None:
        """The document's backlog while it is pending (its newest text), else None."""
        return self._backlogs.get(st.uri) if st.pending else None

    def edited(self, st: DocState, change: Change) -> None:
        """A didChange went to the document's backlog: its re-encode waits for a pause again."""
        backlog = self._backlogs[st.uri]
        backlog.change = backlog.change.then(change)
        pause = min(PAUSE_SHARE * self._seconds.get(st.uri, 0.0), PAUSE_CAP)
        low = st.uri in self._opening
        self._idle.add(CATCH_UP, st.uri, lambda: self._catch_up(st), pause, low)

    def text(self, st: DocState) -> str:
        """The document's newest text."""
        backlog = self._backlogs.get(st.uri)
        return st.doc.text if backlog is None else backlog.rope.text()

    def drop(self, st: DocState) -> None:
        """Forgets the document's backlog (re-tokenized from its newest text)."""
        self._backlogs.pop(st.uri, None)
        self._encoding.pop(st.uri, None)
        self._opening.discard(st.uri)
        self._loads.pop(st.uri, None)
        st.pending = False

    def forget(self, uri: str) -> None:
        self._backlogs.pop(uri, None)
        self._encoding.pop(uri, None)
        self._seconds.pop(uri, None)
        self._opening.discard(uri)
        self._loads.pop(uri, None)

    def _open(self, st: DocState, backlog: Backlog) -> bool:
        """A slice of the deferred first encode; once done, the Document of the text as opened,
        with the edits made since as one edit. True while slices remain."""
        loading = self._loads.get(st.uri)
        if loading is None or loading.model is not st.doc.model:
            loading = self._loads[st.uri] = Loading(st.doc.model, backlog.rope.text())
            backlog.caught_up()  # the edits from here on are the load's text's
        if loading.step():
            return True
        assert loading.doc is not None
        del self._loads[st.uri]
        self._opening.discard(st.uri)
        st.doc = loading.doc
        log.info(
            "%s: encoded in idle time in %.0f ms, version %s",
            st.uri,
            loading.seconds * 1e3,
            st.version,
        )
        a, b, text = backlog.combined(int(st.doc.length()))
        if a < b or text:
            st.doc.edit(a, b, text)
        self.drop(st)
        if not st.model.incremental:
            self.took(st, loading.seconds)
        self._caught_up(st, EVERYTHING)
        return False

    def _catch_up(self, st: DocState) -> bool:
        """Starts the re-encode of the document's newest text (one slice of idle work): the
        text goes to the Document now, its tokens come from a worker (server/reencode.py)."""
        backlog = self._backlogs.get(st.uri)
        if backlog is None or not st.pending:
            return False
        if st.uri in self._opening:
            return self._open(st, backlog)
        if self._encoding.get(st.uri) == backlog.edits:
            return False  # this very text is being encoded
        doc = st.doc
        a, b, text = backlog.combined(int(doc.length()))
        if a == b and not text and not doc.stale:
            self._settle(st, backlog, backlog.change)  # edits that undid themselves
            return False
        try:
            normalized = doc.edit_text(a, b, text)
            if doc.length() != backlog.length():
                raise AssertionError("the combined edit left a text of another length")
        except Exception:
            log.exception("%s: the core failed on a whole re-encode; rebuilding", st.uri)
            self._rebuild(st, backlog)
            return False
        backlog.text_caught_up()
        edits = self._encoding[st.uri] = backlog.edits

        def newest() -> bool:  # asked on the worker thread
            return backlog.edits == edits

        def landed(run: TokenRun | None, seconds: float, error: BaseException | None) -> None:
            self._landed(st, doc, backlog, edits, run, seconds, error)

        self._reencoder.encode(doc.model, normalized, newest, landed)
        return False

    def _landed(
        self,
        st: DocState,
        doc: Document,
        backlog: Backlog,
        edits: int,
        run: TokenRun | None,
        seconds: float,
        error: BaseException | None,
    ) -> None:
        """A worker's encode is back (on the event loop): the document's tokens, when it was of
        its newest text; else dropped (a newer encode is under way or waits for a pause)."""
        start = time.perf_counter()
        if self._encoding.get(st.uri) == edits:
            del self._encoding[st.uri]
        current = self._backlogs.get(st.uri) is backlog and st.doc is doc and st.pending
        if not current or backlog.edits != edits:
            log.debug("%s: a re-encode of a superseded text dropped", st.uri)
            return
        if run is None:
            log.error("%s: the core failed on a whole re-encode (%s); rebuilding", st.uri, error)
            self._rebuild(st, backlog)
            return
        try:
            doc.take_tokens(run)
        except Exception:
            log.exception("%s: the re-encoded tokens did not fit the text; rebuilding", st.uri)
            self._rebuild(st, backlog)
            return
        self._seconds[st.uri] = seconds
        self._settle(st, backlog, backlog.change)
        log.info(
            "%s: re-encoded whole in %.0f ms on a worker, taken in %.1f ms, version %s",
            st.uri,
            seconds * 1e3,
            (time.perf_counter() - start) * 1e3,
            st.version,
        )

    def _rebuild(self, st: DocState, backlog: Backlog) -> None:
        """The document re-made from its newest text on the event loop (the core failed)."""
        st.doc = Document(st.doc.model, backlog.rope.text())
        self._encoding.pop(st.uri, None)
        self._settle(st, backlog, EVERYTHING)

    def _settle(self, st: DocState, backlog: Backlog, change: Change) -> None:
        """The document's tokens are its newest text's: no longer pending."""
        backlog.caught_up()
        st.pending = False
        if st.model.incremental:
            self._backlogs.pop(st.uri, None)  # held for a long edit (hold): edits in place again
        self._caught_up(st, change)
