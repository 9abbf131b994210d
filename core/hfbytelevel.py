"""Byte-level BPE tokenizer.json files (GPT-2, Llama 3, Qwen2 style), edited by pre-tokens.

The same engine as tiktoken's encodings (tokenline.core.bytelevel): the file's own pre-tokenizer
cuts the pre-tokens (so its regex engine, not Python's, decides every cut), and the file's own BPE
model encodes each, after the pre-tokenizer's map of UTF-8 bytes to printable characters.

The library matches added tokens (special or not) in the text before it pre-tokenizes. Pre-tokens
are used only where no added token's text lies near: a text holding one is encoded whole by the
library, and the engine re-encodes the whole document after an edit whose window, or the text it
read, lies near one (old or new). Built by tokenline.core.hfloader.
"""

from __future__ import annotations

from typing import Any

from librt.vecs import vec
from mypy_extensions import i64, u8

from tokenline.core.bytelevel import ByteLevelFamily, PreTokenCoder
from tokenline.core.pretokens import PreTokenSegmenter
from tokenline.core.tokens import TokenRun, empty_run
from tokenline.core.vocab import Vocabulary


class LibraryPreTokens(PreTokenSegmenter):
    """Pre-tokens cut by the tokenizers library's own pre-tokenizer (`pre`), whose pattern is
    one whose reads past a cut `reach_after` bounds."""

    pre: Any

    def __init__(self, pattern: str, pre: Any) -> None:
        super().__init__(pattern, False)  # its own split, not the BMP twin, takes other text
        self.pre = pre
        if "$" in pattern:
            # `$` is the end of a line to the library's engine, the end of the text to `re`.
            self.ascii_rx = None

    def split(self, text: str) -> list[str]:
        # On ASCII text the pattern's twin in `re` cuts where the library's engine does (their
        # classes agree on ASCII, as run_continues relies on), at a fraction of the call's cost.
        if self.ascii_rx is not None and text.isascii():
            twin: list[str] = self.ascii_rx.findall(text)
            return twin
        out: list[str] = []
        pos: i64 = 0
        for found in self.pre.pre_tokenize_str(text):
            s: i64 = found[1][0]
            e: i64 = found[1][1]
            if s != pos:
                raise AssertionError(f"the pre-tokenizer skipped text at {pos}")
            out.append(text[s:e])
            pos = e
        if pos != len(text):
            raise AssertionError(f"the pre-tokenizer skipped text at {pos}")
        return out


class HFCoder(PreTokenCoder):
    """A tokenizers.Tokenizer (`tok`) and its BPE model; `plain` is the same model without
    ignore_merges (the merges alone, for parts of pre-tokens), or the model itself."""

    tok: Any
    model: Any
    plain: Any
    ignore_merges: bool
    # str.translate table: a byte (as a Latin-1 character) -> its printable stand-in.
    table: dict[int, int]
    # Per id: the token's bytes (empty for added tokens).
    bytes_of: list[bytes]

    def __init__(
        self, tok: Any, plain: Any, ignore_merges: bool, table: dict[int, int], by_id: list[bytes]
    ) -> None:
        self.tok = tok
        self.model = tok.model
        self.plain = plain
        self.ignore_merges = ignore_merges
        self.table = table
        self.bytes_of = by_id

    def mapped(self, text: str) -> str:
        """Text as the byte-level pre-tokenizer hands it to the model."""
        return text.encode("utf-8").decode("latin-1").translate(self.table)

    def encode(self, text: str) -> list[int]:
        ids: list[int] = self.tok.encode(text, add_special_tokens=False).ids
        return ids

    def pretoken(self, pretoken: str) -> list[int]:
        return [t.id for t in self.model.tokenize(self.mapped(pretoken))]

    def part(self, part: str) -> list[int]:
        return [t.id for t in self.plain.tokenize(self.mapped(part))]

    def whole(self, pretoken: str) -> bool:
        return self.ignore_merges and self.model.token_to_id(self.mapped(pretoken)) is not None

    def token_bytes(self, token_id: i64) -> bytes | None:
        if token_id < len(self.bytes_of) and self.bytes_of[token_id]:
            return self.bytes_of[token_id]
        return None


class HFByteLevelFamily(ByteLevelFamily):
    """Byte-level BPE from a tokenizer.json, with its added tokens (`contents`, by first
    character) and which ids are added (`added`)."""

    hf: HFCoder
    added: vec[u8]
    by_first: dict[str, list[str]]

    def __init__(
        self, vocab: Vocabulary, coder: HFCoder, splitter: PreTokenSegmenter, added: vec[u8]
    ) -> None:
        super().__init__(vocab, coder, splitter)
        self.hf = coder
        self.added = added
        self.by_first = {}
        longest: i64 = 0
        i: i64 = 0
        while i < len(added):
            content = vocab.piece(i)
            if added[i] != 0 and content:
                self.by_first.setdefault(content[:1], []).append(content)
                longest = max(longest, len(content))
            i += 1
        self.added_longest = longest
        self.added_ids = longest > 0
        self.use_pretokens()
        # Opened by pre-tokens, not lazily: lazy pre-token starts are found with Python's regex
        # from sync points, which holds for tiktoken's engine; the library's engine and its
        # added tokens are not that.
        self.lazy_cuts = False

    def run_continues(self, before: str, new: str, after: str) -> bool:
        """As for tiktoken's encodings, for ASCII letters only: there the library's regex
        engine and Python's agree on every class the patterns test (not so for all of
        Unicode, whose versions differ between them)."""
        if not (before.isascii() and new.isascii() and after.isascii()):
            return False
        return super().run_continues(before, new, after)

    def in_run(self, text: str) -> bool:
        """ASCII letters only, as run_continues."""
        return text.isascii() and super().in_run(text)

    def clean(self, text: str) -> bool:
        for first, contents in self.by_first.items():
            if first in text:
                for content in contents:
                    if content in text:
                        return False
        return True

    def added_id(self, token_id: i64) -> bool:
        return 0 <= token_id < len(self.added) and self.added[token_id] != 0

    def tokens(self, text: str, normalized: bool) -> TokenRun:
        if self.clean(text):
            return super().tokens(text, normalized)
        return self.library_tokens(text)

    def library_tokens(self, text: str) -> TokenRun:
        """The library's encode of text that holds added tokens: pre-tokens between the added
        tokens it matched, each such stretch encoded as a text of its own (as it does)."""
        enc = self.hf.tok.encode(text, add_special_tokens=False)
        ids: list[int] = enc.ids
        offsets: list[tuple[int, int]] = enc.offsets
        out = empty_run()
        pos: i64 = 0
        i: i64 = 0
        while i < len(ids):
            if self.added_id(ids[i]):
                s: i64 = offsets[i][0]
                e: i64 = offsets[i][1]
                if s > pos:
                    out.add(super().tokens(text[pos:s], True))
                out.add_token(ids[i], e - s, 0, True)
                pos = e
            i += 1
        if pos < len(text):
            out.add(super().tokens(text[pos:], True))
        if out.id_list() != ids:
            raise AssertionError("pre-tokens between added tokens disagree with the library")
        return out
