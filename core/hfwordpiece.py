"""WordPiece words past max_input_chars_per_word: one unknown token, whatever their letters.

The library's WordPiece gives a word (a pre-token of the normalized text) whose characters number
more than max_input_chars_per_word one unknown token, without looking at its vocabulary. For the
files whose words are independent (hfloader: BERT's normalizer, or none, and pre-tokenizer), an
edit inside such a word, or one that splits or joins such words, needs only a bounded read
(tokenline.core.longwords): BERT's normalizer maps each character alone (cleaning, Chinese
characters, accents and case), so a character's part in a word, and its count of normalized
characters, are its own, found once per character.
"""

from __future__ import annotations

from typing import Any, Final

from librt.vecs import vec
from mypy_extensions import i64, u8

from tokenline.core.longwords import CUT, OPEN, LongWords
from tokenline.core.tokens import TokenRun
from tokenline.core.usermatch import UserMatcher

# What a character is inside a word (WordPieceLength.kind): bits, and its count of normalized
# characters shifted by COUNT_SHIFT.
JOINS: Final = 1  # keeps the characters either side one word (it may normalize to nothing)
BLANK: Final = 2  # normalizes to white space only, which the pre-tokenizer drops
COUNT_SHIFT: Final = 2


class WordPieceLength(LongWords):
    """The long-word rule of a WordPiece file with independent words (hffamily.use_words).

    The old token holds white space and deleted characters (the latter perhaps the end of the
    word before it), then its word, which ends the token. The read text, from where the word
    starts (_word_start), must join into one word; its characters after the edit must hold one
    that is not deleted (the old word's, so all after it in the token are the word's). Added
    tokens could still break this: one matched near the edit (none may occur), or an old token
    that is an added token's match (the unknown token's own content, say), which the characters
    either side of the edit, counted past the longest added token, rule out (only the content's
    own characters could be counted there).
    """

    normalizer: Any
    pre: Any
    matcher: UserMatcher
    limit: i64
    unk: i64
    longest_added: i64
    word_joins: vec[u8]
    # Per character code: its kind (JOINS, BLANK, count), found once with the library.
    kinds: dict[i64, i64]

    def __init__(
        self,
        tok: Any,
        limit: i64,
        unk: i64,
        matcher: UserMatcher,
        longest_added: i64,
        word_joins: vec[u8],
    ) -> None:
        super().__init__(limit + longest_added + 2, longest_added)
        self.normalizer = tok.normalizer
        self.pre = tok.pre_tokenizer
        self.matcher = matcher
        self.limit = limit
        self.unk = unk
        self.longest_added = longest_added
        self.word_joins = word_joins
        self.kinds = {}

    def long_word(self, text: str, at: i64, upto: i64, first: bool, last: bool) -> i64:
        p: i64 = self._word_start(text, at)
        if p < 0:
            return -1
        n: i64 = len(text)
        total: i64 = 0
        left: i64 = 0
        right: i64 = 0
        while p < n:
            kind: i64 = self.kind(text[p])
            if (kind & JOINS) == 0:
                return -1
            count: i64 = kind >> COUNT_SHIFT
            total += count
            if count > 0 and p < at:
                left += 1
            elif count > 0 and p >= upto:
                right += 1
            p += 1
        if right == 0 or total <= self.limit:
            return -1
        if left <= self.longest_added and right <= self.longest_added:
            return -1
        return self.unk

    def fits(self, text: str, at: i64, upto: i64, first: i64, last: i64, run: TokenRun) -> bool:
        """An open side's word is the run of characters that join from the read's edge, past
        the limit by the characters read alone (so whatever the unread ones add); the edge
        character, in the old token read into, must count (_own): it is then that token's own
        word, which no added token can be (none occurs in the read), and the unread characters
        are the rest of it (the token ends with its word, and starts with it or the white space
        and deleted characters before it). A cut
        side is an old token boundary: the cut before it stays when old characters before the
        edit show where the token's word starts (_word_start); the one after it, when the
        read's last character, the end of the old word before the boundary, is old."""
        n: i64 = len(text)
        m: i64 = run.size()
        unk: i64 = self.unk
        if first == OPEN:
            end: i64 = self._joined_run(text, 0, 1)
            if end < 0 or not self._own(text[0]):
                return False
            if i64(run.ids[0]) != unk or i64(run.lens[0]) != end:
                return False
        elif first == CUT and self._word_start(text, at) < 0:
            return False
        if last == OPEN:
            start: i64 = self._joined_run(text, n - 1, -1)
            if start < 0 or not self._own(text[n - 1]):
                return False
            if i64(run.ids[m - 1]) != unk or n - i64(run.lens[m - 1]) > start:
                return False
        elif last == CUT:
            if upto >= n:
                return False
            kind: i64 = self.kind(text[n - 1])
            if (kind >> COUNT_SHIFT) == 0 or (kind & BLANK) != 0:
                return False
        return True

    def _own(self, c: str) -> bool:
        """Whether c, an open side's outermost character (in the old token read into), is that
        token's word: a character of a word that counts (white space and deleted characters
        may be the token's, before its word, or the next word's)."""
        kind: i64 = self.kind(c)
        return (kind & JOINS) != 0 and (kind >> COUNT_SHIFT) > 0

    def _joined_run(self, text: str, p: i64, step: i64) -> i64:
        """From text[p] in direction step (1 or -1), the characters that join into one word:
        where the run ends (the first index past it; the index of its first character going
        back), or -1 when they count no more normalized characters than the limit."""
        n: i64 = len(text)
        total: i64 = 0
        while 0 <= p < n:
            kind: i64 = self.kind(text[p])
            if (kind & JOINS) == 0:
                break
            total += kind >> COUNT_SHIFT
            p += step
        if total <= self.limit:
            return -1
        return p if step > 0 else p + 1

    def _word_start(self, text: str, at: i64) -> i64:
        """Where the new word starts in text, as the old characters before the edit show: at
        the first that normalizes to a character that is not white space (the old word's), or
        else past the last white space before the edit (characters the normalizer deletes may
        belong to the word before the token, which white space alone keeps apart); -1 when
        there is neither."""
        blank: i64 = -1
        p: i64 = 0
        while p < at:
            kind: i64 = self.kind(text[p])
            if (kind & BLANK) != 0:
                blank = p
            elif (kind >> COUNT_SHIFT) > 0:
                return p
            p += 1
        return blank + 1 if blank >= 0 else -1

    def clean(self, text: str) -> bool:
        m = self.matcher
        p: i64 = 0
        n: i64 = len(text)
        while p < n:
            if m.match(text, p) > 0:
                return False
            p += 1
        return True

    def flag(self, token_id: i64) -> i64:
        return i64(self.word_joins[token_id]) if token_id < len(self.word_joins) else 0

    def kind(self, c: str) -> i64:
        code: i64 = ord(c)
        got = self.kinds.get(code)
        if got is not None:
            return got
        found: i64 = self._classify(c)
        self.kinds[code] = found
        return found

    def _classify(self, c: str) -> i64:
        """Between two letters, c joins them when the pre-tokenizer sees one word; alone, it
        normalizes to some characters, white space the pre-tokenizer drops when it keeps none."""
        alone: str = c if self.normalizer is None else str(self.normalizer.normalize_str(c))
        count: i64 = len(alone)
        kind: i64 = count << COUNT_SHIFT
        between: str = "a" + c + "a"
        if self.normalizer is not None:
            between = str(self.normalizer.normalize_str(between))
        pieces = self.pre.pre_tokenize_str(between)
        if len(pieces) == 1 and pieces[0][1][0] == 0 and pieces[0][1][1] == len(between):
            kind |= JOINS
        elif count > 0 and len(self.pre.pre_tokenize_str(alone)) == 0:
            kind |= BLANK
        return kind


def word_piece_length(tok: Any, joins: vec[u8], matcher: UserMatcher) -> WordPieceLength | None:
    """The rule for a WordPiece file's words past its max_input_chars_per_word, or None when the
    file has no unknown token in its vocabulary (the library then fails on them)."""
    model = tok.model
    unk = tok.token_to_id(model.unk_token)
    if unk is None:
        return None
    longest: i64 = matcher.longest
    for added in tok.get_added_tokens_decoder().values():
        longest = max(longest, len(added.content))
    limit: i64 = int(model.max_input_chars_per_word)
    return WordPieceLength(tok, limit, int(unk), matcher, longest, joins)
