"""The document's normalized text, kept in step with its original text.

SentencePiece tokenizes the *normalized* text: normalization rules applied, spaces escaped as "▁",
a dummy "▁" in front, extra white space removed. An edit of the original text becomes an edit of
the normalized text, which is what the BPE engine re-tokenizes. Two implementations:

- TrivialNorm, for models whose normalizer maps every character to itself (Mistral, Llama):
  nothing is stored, the normalized text is derived on demand.
- GeneralNorm, for rule-based normalizers and remove_extra_whitespaces: the normalization steps
  (what each rule match consumed and produced, and the white-space state at its start) are stored,
  and an edit re-normalizes from a few characters before it until the steps agree again.
"""

from __future__ import annotations

from typing import Final

from librt.vecs import append, vec
from mypy_extensions import i32, i64, u8

from tokenline.core.charsmap import Charsmap
from tokenline.core.chunks import sum_first
from tokenline.core.normalization import Normalization
from tokenline.core.rope import TextRope
from tokenline.core.steps import StepStore
from tokenline.core.usermatch import UserMatcher

SPACE_SYMBOL: Final = "\u2581"

# Step state bits: the white-space state where a step starts.
PREV_SPACE: Final = 1
STARTED: Final = 2


class NormRules:
    """SentencePiece's normalizer spec: what the normalizers below apply."""

    add_dummy_prefix: bool
    dummy_as_suffix: bool
    escape_whitespaces: bool
    remove_extra_whitespaces: bool
    charsmap: Charsmap | None
    # USER_DEFINED pieces, which the rules leave as they are (None when there are none).
    matcher: UserMatcher | None

    def __init__(self) -> None:
        self.add_dummy_prefix = True
        self.dummy_as_suffix = False
        self.escape_whitespaces = True
        self.remove_extra_whitespaces = False
        self.charsmap = None
        self.matcher = None

    def trivial(self) -> bool:
        """Every character maps to itself: the normalized text can be derived on demand."""
        return self.charsmap is None and not self.remove_extra_whitespaces


class TrivialNorm(Normalization):
    prefix: i64
    suffix: i64
    escape: bool

    def __init__(self, orig: TextRope, rules: NormRules) -> None:
        super().__init__(orig)
        dummy: bool = rules.add_dummy_prefix
        self.prefix = 1 if dummy and not rules.dummy_as_suffix else 0
        self.suffix = 1 if dummy and rules.dummy_as_suffix else 0
        self.escape = rules.escape_whitespaces

    def length(self) -> i64:
        n: i64 = self.orig.length()
        if n == 0:
            return 0
        return n + self.prefix + self.suffix

    def _esc(self, s: str) -> str:
        if self.escape:
            return s.replace(" ", SPACE_SYMBOL)
        return s

    def slice(self, start: i64, end: i64) -> str:
        n: i64 = self.orig.length()
        if n == 0 or start >= end:
            return ""
        body = self._esc(self.orig.slice(start - self.prefix, end - self.prefix))
        # The dummy is a plain space when spaces are not escaped (normalizer.cc's add_ws).
        dummy: str = SPACE_SYMBOL if self.escape else " "
        if self.prefix and start == 0:
            body = dummy + body
        if self.suffix and end > n:
            body = body + dummy
        return body

    def to_orig(self, pos: i64) -> i64:
        off: i64 = pos - self.prefix
        n: i64 = self.orig.length()
        if off < 0:
            return 0
        return off if off < n else n

    def to_norm(self, off: i64) -> i64:
        if self.orig.length() == 0:
            return 0
        return off + self.prefix

    def apply(self, start: i64, end: i64, text: str) -> tuple[i64, i64, i64]:
        old_norm: i64 = self.length()
        self.orig.replace(start, end, text)
        new_norm: i64 = self.length()
        if (self.prefix or self.suffix) and (old_norm == 0 or new_norm == 0):
            # The dummy "▁" comes and goes with the first and last character.
            return 0, old_norm, new_norm
        return start + self.prefix, end + self.prefix, start + self.prefix + len(text)

    def split_range(self, start: i64, end: i64) -> tuple[str, i64, i64, str]:
        dummy: str = SPACE_SYMBOL if self.escape else " "
        head: str = dummy if self.prefix else ""
        tail: str = dummy if self.suffix else ""
        return head, start + self.prefix, end + self.prefix, tail

    def streams(self) -> bool:
        return True  # character by character, the dummy at the text's ends

    def normalize_part(self, text: str, first: bool, last: bool) -> str:
        body = self._esc(text)
        dummy: str = SPACE_SYMBOL if self.escape else " "
        if self.prefix and first:
            body = dummy + body
        if self.suffix and last:
            body = body + dummy
        return body


class GeneralNorm(Normalization):
    steps: StepStore
    norm: TextRope
    charsmap: Charsmap | None
    matcher: UserMatcher | None
    lookahead: i64
    prefix: bool
    suffix: bool
    escape: bool
    remove_ws: bool
    # Original offset the end of the normalized text maps to (after trailing white space).
    tail_orig: i64
    # Steps at the end whose output the trailing-space removal shortened.
    tail_steps: i64

    def __init__(self, orig: TextRope, rules: NormRules) -> None:
        super().__init__(orig)
        self.charsmap = rules.charsmap
        self.matcher = rules.matcher
        look: i64 = 1
        cm = self.charsmap
        if cm is not None:
            look = cm.longest
        um = self.matcher
        if um is not None and um.longest > look:
            look = um.longest
        self.lookahead = look
        self.prefix = rules.add_dummy_prefix and not rules.dummy_as_suffix
        self.suffix = rules.add_dummy_prefix and rules.dummy_as_suffix
        self.escape = rules.escape_whitespaces
        self.remove_ws = rules.remove_extra_whitespaces
        self.steps = StepStore()
        self.norm = TextRope("")
        self.tail_orig = 0
        self.tail_steps = 0
        self._renormalize(0, 0, orig.length(), 0)

    def length(self) -> i64:
        return self.norm.length()

    def slice(self, start: i64, end: i64) -> str:
        return self.norm.slice(start, end)

    def to_orig(self, pos: i64) -> i64:
        body: i64 = self.steps.norm_total()
        if pos >= body:
            return self.tail_orig
        if pos <= 0 and body == 0:
            return self.tail_orig
        u: i64 = self.steps.at_norm(pos)
        return self.steps.orig_start(u)

    def to_norm(self, off: i64) -> i64:
        u: i64 = self.steps.at_orig(off)
        return self.steps.norm_start(u)

    def apply(self, start: i64, end: i64, text: str) -> tuple[i64, i64, i64]:
        steps = self.steps
        self.orig.replace(start, end, text)
        delta: i64 = len(text) - (end - start)
        # Restart where no earlier rule can see the edit, and before any step the trailing-space
        # removal shortened when the edit is near the end.
        back: i64 = self.lookahead
        while True:
            u0: i64 = steps.at_orig(start - back)
            if u0 >= steps.size():
                u0 = steps.size() - 1 if steps.size() > 0 else 0
            if self.tail_steps > 0:
                first_tail: i64 = steps.size() - self.tail_steps
                if first_tail < u0 and end + self.lookahead >= steps.orig_start(first_tail):
                    u0 = first_tail
            got = self._renormalize(u0, end, start + len(text), delta)
            if got[0] >= 0:
                return got
            # The trailing white space reached before u0: start further back.
            back = back * 4 + 64

    # -- the normalizer proper -----------------------------------------------------------------

    def _next_step(self, text: str, pos: i64, limit: i64) -> tuple[i64, str]:
        """One normalization step at text[pos:]: (characters consumed, raw output)."""
        um = self.matcher
        if um is not None:
            m: i64 = um.match(text, pos)
            if m > 0:
                return m, text[pos : pos + m]
        cm = self.charsmap
        if cm is not None:
            n, value = cm.match(text, pos, limit)
            if n > 0:
                return n, cm.replacement(value)
        return 1, text[pos]

    def _step(self, raw: str, state: i64, out_parts: list[str]) -> tuple[i64, i64]:
        """Appends one step's output (white-space rules applied); returns (length, new state)."""
        nout: i64 = 0
        if not (state & STARTED):
            if self.remove_ws and raw == " ":
                return 0, state  # leading white space of the text: dropped
            state |= STARTED
            if self.prefix:
                out_parts.append(SPACE_SYMBOL if self.escape else " ")
                nout += 1
        sp: str = raw
        if state & PREV_SPACE:
            sp = sp.lstrip(" ")
        nout += self._emit(sp, out_parts)
        return nout, self._next_state(sp, state)

    def split_range(self, start: i64, end: i64) -> tuple[str, i64, i64, str]:
        steps = self.steps
        look: i64 = self.lookahead
        body_steps: i64 = steps.size() - self.tail_steps
        # Head: normalize from `start` as a text of its own until the run falls in step with the
        # document's steps (same boundary, same state, far enough from the end).
        state: i64 = PREV_SPACE if self.remove_ws else 0
        reader = BlockReader(self.orig, end, look, start)
        parts: list[str] = []
        pos: i64 = start
        k: i64 = steps.at_orig(start)
        kpos: i64 = steps.orig_start(k)
        mid: i64 = -1
        while pos < end:
            while k < body_steps and kpos < pos:
                kpos += steps.orig_length(k)
                k += 1
            if kpos == pos and k < body_steps and pos + look <= end and steps.state(k) == state:
                mid = k
                break
            reader.ensure(pos)
            used, raw = self._next_step(reader.block, pos - reader.start, reader.end - reader.start)
            state = self._step(raw, state, parts)[1]
            pos += used
        if mid < 0:
            return "", -1, -1, ""
        head = "".join(parts)
        # Tail: from a step boundary the end cannot influence, in the document's state there.
        sym: str = SPACE_SYMBOL if self.escape else " "
        back: i64 = look
        while True:
            kt: i64 = steps.at_orig(end - back)
            if kt > body_steps:
                kt = body_steps
            if kt <= mid:
                return "", -1, -1, ""
            tstate: i64 = steps.state(kt)
            tpos: i64 = steps.orig_start(kt)
            treader = BlockReader(self.orig, end, look, tpos)
            tparts: list[str] = []
            while tpos < end:
                treader.ensure(tpos)
                used, raw = self._next_step(
                    treader.block, tpos - treader.start, treader.end - treader.start
                )
                tstate = self._step(raw, tstate, tparts)[1]
                tpos += used
            tail = "".join(tparts)
            q1: i64 = steps.norm_start(kt)
            if self.remove_ws:
                tail = tail.rstrip(sym)
                if not tail and q1 > 0 and self.norm.slice(q1 - 1, q1) == sym:
                    back = back * 4 + 64  # the trailing strip reaches into the middle
                    continue
            if self.suffix and (tstate & STARTED):
                tail = tail + sym
            return head, steps.norm_start(mid), q1, tail

    def _renormalize(self, u0: i64, old_end: i64, new_end: i64, delta: i64) -> tuple[i64, i64, i64]:
        """Re-runs the normalizer from step u0 over the (already edited) original text.

        old_end: end of the edited span in old original offsets; new_end: in new offsets.
        Stops at the first step boundary past the edit where the old steps resume with the same
        state, else runs to the end of the text. Returns the normalized edit, or (-1, -1, -1)
        without changing anything when trailing white space removal reaches before u0.
        """
        steps = self.steps
        o0: i64 = steps.orig_start(u0)
        n0: i64 = steps.norm_start(u0)
        run = StepRun(PREV_SPACE if self.remove_ws else 0)
        if u0 < steps.size():
            run.state = steps.state(u0)
        k_sync: i64 = self._run_to_sync(run, u0, o0, old_end, new_end, delta)
        out = "".join(run.parts)
        n_old_end: i64
        if k_sync >= 0:
            n_old_end = steps.norm_start(k_sync)
            self.tail_orig += delta
        else:
            k_sync = steps.size()
            n_old_end = self.norm.length()
            ending = self._end_text(run, out, o0, n0)
            if ending is None:
                return -1, -1, -1
            out = ending
        steps.replace(u0, k_sync, run.orig_lens, run.norm_lens, run.states)
        self.norm.replace(n0, n_old_end, out)
        return n0, n_old_end, n0 + len(out)

    def _run_to_sync(
        self, run: StepRun, u0: i64, o0: i64, old_end: i64, new_end: i64, delta: i64
    ) -> i64:
        """Normalizes from original offset o0 (step u0) into run until the old steps fall back in
        step past the edit; returns the old step where they do, or -1 at the end of the text."""
        steps = self.steps
        # Old steps after the edit, to find where the new run falls back in step.
        k_old: i64 = u0
        old_pos: i64 = o0
        sync_limit: i64 = steps.size() - self.tail_steps
        orig_len: i64 = self.orig.length()
        reader = BlockReader(self.orig, orig_len, self.lookahead, o0)
        pos: i64 = o0
        while pos < orig_len:
            if pos >= new_end:
                target_old: i64 = pos - delta
                while k_old < steps.size() and old_pos < target_old:
                    old_pos += steps.orig_length(k_old)
                    k_old += 1
                # Falling back in step also needs output after this point: otherwise the
                # trailing-space removal could reach back into what was re-normalized.
                if (
                    k_old < sync_limit
                    and old_pos == target_old
                    and old_pos >= old_end
                    and steps.state(k_old) == run.state
                    and steps.norm_start(k_old) < steps.norm_total()
                ):
                    return k_old
            reader.ensure(pos)
            used, raw = self._next_step(reader.block, pos - reader.start, reader.end - reader.start)
            entry: i64 = run.state
            nout, run.state = self._step(raw, run.state, run.parts)
            run.add(used, nout, entry)
            pos += used
        return -1

    def _end_text(self, run: StepRun, out: str, o0: i64, n0: i64) -> str | None:
        """The output of a run that reached the end of the text: trailing white space removed,
        then the suffix dummy. None when the removal reaches before the run."""
        keep, tail_steps = self._strip_tail(out, run.norm_lens, n0)
        if keep < 0:
            return None
        out = out[:keep]
        self.tail_steps = tail_steps
        if tail_steps > 0:
            # SentencePiece maps the end to the first stripped step's start.
            self.tail_orig = o0 + sum_first(run.orig_lens, len(run.orig_lens) - tail_steps)
        else:
            self.tail_orig = self.orig.length()
        if self.suffix and (run.state & STARTED):
            out = out + (SPACE_SYMBOL if self.escape else " ")
        return out

    def _emit(self, sp: str, out_parts: list[str]) -> i64:
        if not sp:
            return 0
        if self.escape:
            out_parts.append(sp.replace(" ", SPACE_SYMBOL))
        else:
            out_parts.append(sp)
        return len(sp)

    def _next_state(self, sp: str, state: i64) -> i64:
        if not self.remove_ws:
            return state & STARTED
        if not sp:
            return state
        if sp.endswith(" "):
            return state | PREV_SPACE
        return state & STARTED

    def _strip_tail(self, out: str, b: vec[i32], n0: i64) -> tuple[i64, i64]:
        """Trailing space symbols to drop (remove_extra_whitespaces): shortens the steps' outputs
        in b and returns (characters kept, steps touched), or (-1, 0) when the spaces reach
        before these steps."""
        if not self.remove_ws:
            return len(out), 0
        sym: str = SPACE_SYMBOL if self.escape else " "
        keep: i64 = len(out)
        while keep > 0 and out[keep - 1] == sym:
            keep -= 1
        if keep == 0 and n0 > 0 and self.norm.slice(n0 - 1, n0) == sym:
            return -1, 0
        strip: i64 = len(out) - keep
        if strip == 0:
            return keep, 0
        k: i64 = len(b) - 1
        touched: i64 = 0
        while strip > 0 and k >= 0:
            w: i64 = i64(b[k])
            cut: i64 = w if w < strip else strip
            b[k] = i32(w - cut)
            strip -= cut
            touched = len(b) - k
            k -= 1
        return keep, touched


class StepRun:
    """The steps one normalizer run produces, its output pieces, and the state it ends in."""

    orig_lens: vec[i32]
    norm_lens: vec[i32]
    states: vec[u8]
    parts: list[str]
    state: i64

    def __init__(self, state: i64) -> None:
        self.orig_lens = vec[i32]()
        self.norm_lens = vec[i32]()
        self.states = vec[u8]()
        self.parts = []
        self.state = state

    def add(self, used: i64, produced: i64, entry: i64) -> None:
        """One step: original code points used, normalized ones produced, state at its start."""
        self.orig_lens = append(self.orig_lens, i32(used))
        self.norm_lens = append(self.norm_lens, i32(produced))
        self.states = append(self.states, u8(entry))


class BlockReader:
    """Reads the original text in growing blocks, always `lookahead` characters ahead."""

    rope: TextRope
    limit: i64
    lookahead: i64
    start: i64
    end: i64
    block: str

    def __init__(self, rope: TextRope, limit: i64, lookahead: i64, pos: i64) -> None:
        self.rope = rope
        self.limit = limit
        self.lookahead = lookahead
        self.start = pos
        self.end = pos
        self.block = ""

    def ensure(self, pos: i64) -> None:
        if pos + self.lookahead + 1 > self.end and self.end < self.limit:
            grow: i64 = max(256, (self.end - self.start) * 2)
            self.start = pos
            self.end = min(self.limit, pos + grow + self.lookahead)
            self.block = self.rope.slice(self.start, self.end)
