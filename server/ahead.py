"""Opening ahead: a file counted from disk as soon as its editor opens, before its didOpen.

VS Code hands an opened file's text to the extension host only after the window has loaded and
shown it, and the didOpen follows from there: in code-server 0.4-0.6 s after the user opens a 1 MB
file, 1.2-1.6 s for 5 MB (docs/benchmarks.md), while the file itself is read and counted in a
tenth of that. So the client says `tokenline/willOpen` {uri} when the editor's tab opens; the
server reads the file, tokenizes it with the model the document will have, and publishes its
status at once (version null: no version of the editor's text yet). The didOpen that follows
takes those tokens when its text is the file's text, else counts its own text as always. One
file is held at a time: the next willOpen, or the didOpen, lets it go.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass

from tokenline.core import Document, Model
from tokenline.server.uris import uri_path

log = logging.getLogger("tokenline.server")

WILL_OPEN = "tokenline/willOpen"
# Larger files wait for their didOpen (VS Code asks before it opens a file this large).
MAX_BYTES = 50 << 20
BOM = "\ufeff"


@dataclass
class Counted:
    """A file read and tokenized ahead of its didOpen, and how long the tokenizing took."""

    uri: str
    text: str
    doc: Document
    seconds: float


def read_text(uri: str) -> str | None:
    """The text an editor shows of the file at a file: URI (UTF-8, without a byte order mark);
    None when it is no such file, too large, or not UTF-8."""
    path = uri_path(uri)
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size > MAX_BYTES:
                return None
            data = f.read()
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return text.removeprefix(BOM)


class OpeningAhead:
    """The one file counted ahead of its didOpen."""

    def __init__(self) -> None:
        self._held: Counted | None = None

    def count(self, uri: str, text: str, model: Model) -> Counted:
        """Tokenizes the file's text with the model its document will have; held for its didOpen
        (instead of the one held before)."""
        self._held = None
        start = time.perf_counter()
        doc = Document(model, text)
        self._held = Counted(uri, text, doc, time.perf_counter() - start)
        return self._held

    def holds(self, uri: str) -> bool:
        return self._held is not None and self._held.uri == uri

    def take(self, uri: str, text: str, model: Model) -> Counted | None:
        """The tokens counted ahead for the didOpen of `uri` when they are of its very text and
        model (None otherwise); either way nothing is held any more."""
        held, self._held = self._held, None
        if held is None or held.uri != uri:
            return None
        if held.doc.model is not model or held.text != text:
            log.debug("didOpen %s: its text or model is not the one counted ahead", uri)
            return None
        return held
