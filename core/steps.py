"""The normalization steps of a text, for normalizers that are not one-to-one.

A step is what the normalizer consumed of the original text and produced of the normalized
text (a rule match, a character), with the white-space state where it started. GeneralNorm keeps
them to map offsets both ways and to restart normalizing just before an edit; they live in
`Columns` chunks with both lengths summed.
"""

from __future__ import annotations

from typing import Final

from librt.vecs import vec
from mypy_extensions import i32, i64, u8

from tokenline.core.chunks import Columns

# Steps a chunk of the step store holds.
STEP_TARGET: Final = 256
# Step columns: original code points consumed and normalized code points produced (both summed,
# to map offsets either way), and the state at the step's start.
ORIG_LEN: Final = 0
NORM_LEN: Final = 1
STATE: Final = 0


class StepStore:
    """The normalization steps of a text, by index and by original or normalized offset."""

    rows: Columns

    def __init__(self) -> None:
        self.rows = Columns(2, 1, vec[i64]([ORIG_LEN, NORM_LEN]), STEP_TARGET)

    def size(self) -> i64:
        return self.rows.size()

    def norm_total(self) -> i64:
        """Normalized code points all steps produce."""
        return self.rows.column_total(NORM_LEN)

    def orig_length(self, k: i64) -> i64:
        return self.rows.get(ORIG_LEN, k)

    def state(self, k: i64) -> i64:
        """White-space state at the start of step k."""
        return self.rows.flag(STATE, k)

    def orig_start(self, k: i64) -> i64:
        """Original offset where step k starts (the end of the steps for k >= size())."""
        return self.rows.column_start(ORIG_LEN, k)

    def norm_start(self, k: i64) -> i64:
        """Normalized offset where step k's output starts."""
        return self.rows.column_start(NORM_LEN, k)

    def at_orig(self, off: i64) -> i64:
        """The step that consumed original offset off; size() past the end."""
        return self.rows.row_at(ORIG_LEN, off)

    def at_norm(self, pos: i64) -> i64:
        """The step that produced normalized offset pos; size() past the end."""
        return self.rows.row_at(NORM_LEN, pos)

    def replace(
        self, k0: i64, k1: i64, orig_lens: vec[i32], norm_lens: vec[i32], states: vec[u8]
    ) -> None:
        """Replaces steps [k0, k1) with the given ones."""
        self.rows.stage(ORIG_LEN, orig_lens)
        self.rows.stage(NORM_LEN, norm_lens)
        self.rows.stage_flags(STATE, states)
        self.rows.replace(k0, k1)
