"""The Hugging Face `tokenizer.json` family: BPE, WordPiece, Unigram and WordLevel models.

The `tokenizers` library encodes; its offsets (characters of the original text) give each token
its length. Its own normalizer runs inside encode, so the document's normalized text is its
original text. Built by tokenline.core.hfloader.
"""

from __future__ import annotations

from typing import Any, Final

from librt.vecs import append, vec
from mypy_extensions import i32, i64, u8

from tokenline.core.family import Family
from tokenline.core.hfwordpiece import word_piece_length
from tokenline.core.longwords import LongWordEdges, LongWords
from tokenline.core.normalization import IdentityNorm, Normalization
from tokenline.core.rope import TextRope
from tokenline.core.spacecuts import SpaceCuts
from tokenline.core.symboledges import CutTest, SymbolEdges
from tokenline.core.tokens import JOIN_CHARACTER, TokenRun, TokenStore, to_vec
from tokenline.core.usermatch import UserMatcher
from tokenline.core.vocab import Vocabulary, byte_piece_value
from tokenline.core.window import Edges, Stats

# Characters deleted at a text's start that tokens() corrects the library's offsets for; past
# this many, the tokens' places are not trusted (see tokens).
DELETED_PREFIX: Final = 64
# Texts from this long are encoded with the GIL released (encode_batch): on the server's worker
# thread they are whole re-encodes (Document.edit_text), which the event loop must not wait for.
RELEASED_FROM: Final = 4096


class HFFamily(Family):
    """A tokenizer.json model: re-encoded whole on every edit (exact by definition), or for
    WordPiece models whose words are independent, windows of whole words (see use_words)."""

    # The tokenizers.Tokenizer that encodes (no truncation, padding or post-processor).
    tok: Any
    # Per id: 1 for a token of inserted marker characters only (Metaspace's prepended "▁"), which
    # yields the characters it shares with the next token to that token.
    inserted: vec[u8]
    # Per id: 1 for a piece that continues a word ("##..."); empty unless windows are used.
    word_joins: vec[u8]
    # The added tokens, matched before anything else (None when windows are not used).
    matcher: UserMatcher | None
    # What settles an edit inside a long word from a bounded read (None: windows alone).
    long_words: LongWords | None
    # Metaspace-splitting models: windows cut before plain spaces (None otherwise).
    spaces: SpaceCuts | None
    # What a piece writes for a space (Metaspace's "▁"), and the prefix of a piece that continues
    # a word (WordPiece's "##"); "" when the file has none. Only token_bytes reads them.
    marker: str
    word_prefix: str
    # Ids of the file's added tokens (their pieces are the text as written), and the contents of
    # those matched in the original text, before normalizing.
    added: set[int]
    raw_added: list[str]
    # Whether the library's offsets lose characters the normalizer deletes at the start of what
    # it normalizes (so far seen for SentencePiece's precompiled rules only).
    loses_deleted: bool
    # What the normalizer makes of "a" (what a deleted character leaves before a letter).
    letter: str

    def __init__(self, vocab: Vocabulary, tok: Any, inserted: vec[u8]) -> None:
        super().__init__(vocab)
        self.tok = tok
        self.inserted = inserted
        self.incremental = False
        self.mode_note = "tokenizer.json models re-encode whole for now"
        # Join flags always: byte-fallback bytes after a character's first continue it.
        self.keeps_joins = True
        self.word_joins = vec[u8]()
        self.matcher = None
        self.long_words = None
        self.spaces = None
        self.marker = ""
        self.word_prefix = ""
        self.added = set()
        self.raw_added = []
        self.loses_deleted = False
        norm = tok.normalizer
        self.letter = "a" if norm is None else str(norm.normalize_str("a"))

    def use_words(self, word_joins: vec[u8], matcher: UserMatcher) -> None:
        """Windows cut only where a word starts: each word of a WordPiece model is encoded
        alone, so a window whose edges hold is the whole text's encoding: an edge token is the
        old one at the same place, so it holds the same (unedited) characters, which decide
        alone whether a word starts there; the added-token matcher is re-run across edges. An
        edit inside a word too long for pieces is settled by `long_words` (hfwordpiece)."""
        self.word_joins = word_joins
        self.matcher = matcher
        self.long_words = word_piece_length(self.tok, word_joins, matcher)
        self.incremental = True
        self.mode_note = "incremental"

    def use_spaces(self, spaces: SpaceCuts) -> None:
        """Windows cut before plain spaces (see spacecuts): a Metaspace model that splits
        encodes each piece alone, so a window whose edges are such cuts of the new text is the
        whole text's encoding there. A cut depends on the two characters before it, the space
        and the one after it (edge_reach 3 keeps an edit from touching them unseen); no added
        token of the models accepted holds a space, so none reaches across one. Such cuts
        prove a window's edges alone, so a long piece is encoded once, not until a window
        reaches past the pieces either side of it."""
        self.spaces = spaces
        self.incremental = True
        self.mode_note = "incremental"

    def normalization(self, rope: TextRope) -> Normalization:
        return IdentityNorm(rope)

    def edges(self, norm: Normalization, toks: TokenStore, stats: Stats) -> Edges:
        cuts: CutTest | None = self.matcher
        sp = self.spaces
        if sp is not None:
            cuts = sp
        rule = self.long_words
        if rule is not None:
            return LongWordEdges(self, norm, toks, stats, cuts, sp is not None, rule)
        return SymbolEdges(self, norm, toks, stats, cuts, sp is not None)

    def encode(self, text: str) -> list[int]:
        ids: list[int] = self.tok.encode(text, add_special_tokens=False).ids
        return ids

    def tokens(self, text: str, normalized: bool) -> TokenRun:
        # The normalized text is the original text: both encode the same way. A whole
        # re-encode (normalized: not incremental, or a long text) may run on the server's worker
        # thread: encode_batch, the same encode, releases the GIL, where encode holds it.
        released: bool = normalized and (not self.incremental or len(text) >= RELEASED_FROM)
        enc = self._encode(text, released)
        ids: list[int] = enc.ids
        offsets: list[tuple[int, int]] = enc.offsets
        skip: i64 = self._deleted_prefix(text)
        placed: bool = skip >= 0
        if skip > 0:
            # The library's offsets lose characters its normalizer deletes at the very start of
            # a text (SentencePiece's precompiled rules: "\x1fab" gives "a" (0, 1)); the text
            # without them has the same tokens and true offsets, shifted.
            rest = self._encode(text[skip:], released)
            if rest.ids == ids:
                offsets = [(s + skip, e + skip) for s, e in rest.offsets]
            else:
                placed = False
        lens = self.lengths(ids, offsets, len(text))
        sp = self.spaces
        if sp is not None:
            # After an added token matched in the original text the library normalizes a new
            # stretch, whose offsets lose deleted characters at its start the same way: not
            # corrected, these tokens are not placed.
            placed = placed and not self._deleted_after_added(text, sp)
            joins = sp.joins(text, ids, lens, self.inserted, placed)
        else:
            joins = self.joins(ids)
        self._mark_characters(ids, lens, joins)
        return TokenRun(to_vec(ids), lens, joins)

    def _encode(self, text: str, released: bool) -> Any:
        if released:
            return self.tok.encode_batch([text], add_special_tokens=False)[0]
        return self.tok.encode(text, add_special_tokens=False)

    def _mark_characters(self, ids: list[int], lens: vec[i32], joins: vec[u8]) -> None:
        """Byte-fallback bytes after a character's first (no length) continue its character."""
        vocab = self.vocab
        i: i64 = 0
        while i < len(lens):
            if lens[i] == 0 and vocab.is_byte(ids[i]):
                joins[i] = joins[i] | JOIN_CHARACTER
            i += 1

    def _deleted_after_added(self, text: str, sp: SpaceCuts) -> bool:
        """Whether the normalizer deletes the character right after an added token matched in
        the original text (one not normalized first)."""
        if not self.loses_deleted:
            return False
        n: i64 = len(text)
        for content in self.raw_added:
            at: i64 = text.find(content)
            while at >= 0:
                end: i64 = at + len(content)
                if end < n and sp.deletes(text[end]):
                    return True
                at = text.find(content, at + 1)
        return False

    def _deleted_prefix(self, text: str) -> i64:
        """How many characters at text's start the normalizer deletes (0 without one), or -1
        when it deletes more than DELETED_PREFIX (not looked at further)."""
        if not self.loses_deleted:
            return 0
        norm = self.tok.normalizer
        letter = self.letter
        n: i64 = len(text)
        k: i64 = 0
        # Before a letter, so that a right strip does not count.
        while k < n and str(norm.normalize_str(text[: k + 1] + "a")) == letter:
            k += 1
            if k > DELETED_PREFIX:
                return -1
        return k

    def token_bytes(self, token_id: i64) -> bytes:
        """A byte-fallback piece (<0xE4>) is that byte; other pieces are their text with the
        marker as a space and without the word-continuation prefix (added tokens as written)."""
        piece = self.vocab.piece(token_id)
        value = byte_piece_value(piece)
        if self.vocab.is_byte(token_id) and value >= 0:
            return bytes([value])
        if int(token_id) not in self.added:
            if self.word_prefix != "" and piece.startswith(self.word_prefix):
                piece = piece[len(self.word_prefix) :]
            if self.marker != "":
                piece = piece.replace(self.marker, " ")
        return piece.encode("utf-8")

    def joins(self, ids: list[int]) -> vec[u8]:
        """Per token: JOIN_EDGE when it continues a word (no window edge may cut a word: its
        pieces depend on all of it); 0 for every token without words."""
        table = self.word_joins
        words: bool = len(table) > 0
        m: i64 = len(ids)
        out = vec[u8](capacity=m)
        i: i64 = 0
        while i < m:
            out = append(out, table[ids[i]] if words else u8(0))
            i += 1
        return out

    def lengths(self, ids: list[int], offsets: list[tuple[int, int]], n: i64) -> vec[i32]:
        """Token lengths that partition the text, from offsets that may overlap or be empty.

        Each token holds the characters up to its end that no token before it holds: of the
        byte-level tokens of one character, the first holds it and the rest get length 0. An
        inserted marker yields to the next token when both cover the same characters. Text no
        token covers (white space the pre-tokenizer drops) goes to the token after it, or at the
        end to the last token that holds a character.
        """
        m: i64 = len(ids)
        out = vec[i32](capacity=m)
        inserted = self.inserted
        cur: i64 = 0
        i: i64 = 0
        while i < m:
            s: i64 = offsets[i][0]
            e: i64 = min(i64(offsets[i][1]), n)
            ln: i64 = 0
            yields: bool = (
                inserted[ids[i]] != 0
                and i + 1 < m
                and offsets[i + 1][0] == s
                and offsets[i + 1][1] == e
            )
            if e > cur and not yields:
                ln = e - cur
                cur = e
            out = append(out, i32(ln))
            i += 1
        if m > 0 and cur < n:
            # To the last token that holds a character, so that the byte-level tokens after it
            # (which normalization may have left covering nothing more) stay its group.
            last: i64 = m - 1
            while last > 0 and out[last] == 0:
                last -= 1
            out[last] = out[last] + i32(n - cur)
        return out
