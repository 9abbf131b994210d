"""The `tokenline` settings section: defaults and validation.

Each source of settings (server/configuration.py, server/budgets.py) is a partial mapping;
`Settings.overlay` applies one on top of another, ignoring absent and null keys. A value of the
wrong type or out of range is dropped with a problem message instead of being half-applied.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

SECTION = "tokenline"
# Longest rendering of a rejected value in a problem message.
SHOWN_VALUE_CHARS = 60
ELLIPSIS = "..."
# Tolerance of the warnAt threshold, so that 0.9 x 100 is 90 and not 91.
THRESHOLD_EPSILON = 1e-9

DEFAULT_CONTEXT_WINDOW = 8192
DEFAULT_WARN_AT = 0.9


@dataclass(frozen=True)
class Settings:
    """One effective set of settings (what a document is checked against)."""

    model: str = ""
    context_window: int = DEFAULT_CONTEXT_WINDOW
    warn_at: float = DEFAULT_WARN_AT
    section_counts: bool = True
    # Models each document is also counted with (specs as `model` takes), in the user's order.
    compare_models: tuple[str, ...] = ()
    # The user's context windows by model spec or name (`tokenline.contextWindows`).
    context_windows: tuple[tuple[str, int], ...] = ()
    # From the project configuration only (tokenline.config): the document's token budget and
    # the glob that gave it. A budget replaces the context window as the diagnostics' limit.
    budget: int | None = None
    budget_pattern: str = ""
    # The model the budget counts tokens of (a spec), when the budget names one.
    budget_model: str | None = None

    def overlay(self, raw: object) -> tuple[Settings, list[str]]:
        """These settings with the keys present in `raw` (a `tokenline` section) applied.

        Returns the new settings and a list of problems, one per rejected value.
        """
        section = unwrap_section(raw)
        if section is None:
            return self, []
        problems: list[str] = []
        out = self
        if "model" in section and section["model"] is not None:
            v = section["model"]
            if isinstance(v, str):
                # Empty is unset: it leaves the project's model (or the bundled default) alone.
                if v.strip():
                    out = replace(out, model=v.strip())
            else:
                problems.append(f"tokenline.model must be a string, not {_show(v)}")
        if "contextWindow" in section and section["contextWindow"] is not None:
            cw = parse_context_window(section["contextWindow"])
            if cw is None:
                problems.append(
                    "tokenline.contextWindow must be a positive whole number of tokens, not "
                    f"{_show(section['contextWindow'])}"
                )
            else:
                out = replace(out, context_window=cw)
        if "warnAt" in section and section["warnAt"] is not None:
            v = section["warnAt"]
            if (
                isinstance(v, (int, float))
                and not isinstance(v, bool)
                and math.isfinite(v)
                and 0 <= v <= 1
            ):
                out = replace(out, warn_at=float(v))
            else:
                problems.append(
                    f"tokenline.warnAt must be a fraction between 0 and 1, not {_show(v)}"
                )
        if "sectionCounts" in section and section["sectionCounts"] is not None:
            v = section["sectionCounts"]
            if isinstance(v, bool):
                out = replace(out, section_counts=v)
            else:
                problems.append(f"tokenline.sectionCounts must be true or false, not {_show(v)}")
        return _overlay_compare(out, section, problems), problems

    def window_of(self, spec: str, name: str) -> int | None:
        """The user's context window for a model, by the spec it was named with or its name."""
        windows = dict(self.context_windows)
        return windows.get(spec, windows.get(name))

    @property
    def limit(self) -> int:
        """What the document is held to: its budget when the project gives one, else the window."""
        return self.budget if self.budget is not None else self.context_window

    def warn_threshold(self) -> int:
        """The smallest token count that gets the Warning (at or above warnAt x limit)."""
        return max(0, math.ceil(self.warn_at * self.limit - THRESHOLD_EPSILON))


def _overlay_compare(out: Settings, section: Mapping[str, Any], problems: list[str]) -> Settings:
    """`out` with `compareModels` and `contextWindows` from the section, each whole or not at
    all (a problem appended for a bad one)."""
    models = section.get("compareModels")
    if models is not None:
        if isinstance(models, list) and all(isinstance(m, str) and m.strip() for m in models):
            # Each model once, in the order first named.
            out = replace(out, compare_models=tuple(dict.fromkeys(m.strip() for m in models)))
        else:
            problems.append(
                "tokenline.compareModels must be a list of model names or paths, not "
                f"{_show(models)}"
            )
    windows = section.get("contextWindows")
    if windows is not None:
        parsed = parse_context_windows(windows)
        if parsed is None:
            problems.append(
                "tokenline.contextWindows must map model names to positive whole numbers of "
                f"tokens, not {_show(windows)}"
            )
        else:
            out = replace(out, context_windows=parsed)
    return out


def parse_context_windows(v: object) -> tuple[tuple[str, int], ...] | None:
    """{"o200k_base": 128000, ...} as pairs; None when a key or a window is not one."""
    if not isinstance(v, Mapping):
        return None
    out: list[tuple[str, int]] = []
    for key, window in v.items():
        tokens = parse_context_window(window)
        if not isinstance(key, str) or not key.strip() or tokens is None:
            return None
        out.append((key.strip(), tokens))
    return tuple(out)


def unwrap_section(raw: object) -> Mapping[str, Any] | None:
    """The `tokenline` section of `raw`: either the section itself or `{"tokenline": {...}}`."""
    if not isinstance(raw, Mapping):
        return None
    inner = raw.get(SECTION)
    if isinstance(inner, Mapping):
        return inner
    # Dotted keys, as some clients send them flat: {"tokenline.model": ...}.
    dotted = {
        k[len(SECTION) + 1 :]: v
        for k, v in raw.items()
        if isinstance(k, str) and k.startswith(SECTION + ".")
    }
    if dotted:
        return dotted
    return raw


def parse_context_window(v: object) -> int | None:
    """A positive integer from a number or a string such as "128000", "128,000" or "131_072"."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v if v > 0 else None
    if isinstance(v, float):
        return int(v) if v.is_integer() and v > 0 else None
    if isinstance(v, str):
        s = v.strip().replace(",", "").replace("_", "")
        if s.isdigit():
            n = int(s)
            return n if n > 0 else None
    return None


def _show(v: object) -> str:
    text = repr(v)
    if len(text) <= SHOWN_VALUE_CHARS:
        return text
    return text[: SHOWN_VALUE_CHARS - len(ELLIPSIS)] + ELLIPSIS
