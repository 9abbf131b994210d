"""Counting a file against its limit: the project configuration that applies to it, the model
it names, the budget its path matches, and the count.

Precedence, as ruff and black have it: command-line options, then the project configuration,
then the defaults. Counting is the model's one-shot SentencePiece encoding (`Model.encode_full`,
exactly what a core Document holds for the same text, without its per-edit bookkeeping).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from tokenline.config import Budget, ConfigError, ConfigFinder, ProjectConfig, show_value
from tokenline.core import BUNDLED_DEFAULT, Model, ModelError, bundled_models, load_model
from tokenline.walk import read_text

DEFAULT_CONTEXT_WINDOW = 8192


@dataclass(frozen=True)
class Overrides:
    """What the command line sets; None leaves it to the configuration."""

    model: str | None = None
    context_window: int | None = None
    config: Path | None = None


@dataclass(frozen=True)
class Measurement:
    """One file's count and the limit it is held to (its budget, else the context window)."""

    path: str
    tokens: int
    characters: int
    model: str
    context_window: int
    budget: int | None
    pattern: str | None
    config: str | None

    @property
    def limit(self) -> int:
        return self.budget if self.budget is not None else self.context_window

    @property
    def over(self) -> int:
        """Tokens beyond the limit; 0 within it."""
        return max(0, self.tokens - self.limit)

    def as_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "tokens": self.tokens,
            "characters": self.characters,
            "model": self.model,
            "budget": self.budget,
            "over": self.over,
            "pattern": self.pattern,
            "config": self.config,
            "context_window": self.context_window,
        }


class Measurer:
    """Counts files, loading each configuration and model once for the whole run.

    Raises ConfigError (a bad configuration), ModelError (a model that cannot be loaded) and
    InputError (a file that is not UTF-8 text) for the command to report.
    """

    def __init__(self, overrides: Overrides) -> None:
        self.overrides = overrides
        self.finder = ConfigFinder()
        self._models: dict[str, Model] = {}
        self._explicit = None if overrides.config is None else self.finder.load(overrides.config)

    def config_for(self, path: str) -> ProjectConfig | None:
        if self._explicit is not None:
            return self._explicit
        return self.finder.config_for(Path.cwd() if path == "-" else Path(path))

    def model(self, setting: str | None) -> Model:
        """The model a setting names: empty for the bundled default, a bundled name, or a path."""
        key = setting or ""
        if key not in self._models:
            bundled = bundled_models()
            name = key or BUNDLED_DEFAULT
            if name not in bundled and not _looks_like_a_path(name):
                raise ModelError(
                    name,
                    f"neither a bundled model ({', '.join(sorted(bundled))}) nor a .model file",
                )
            model = load_model(bundled.get(name, key))
            if name in bundled:
                model.name = name
            self._models[key] = model
        return self._models[key]

    def model_for(self, config: ProjectConfig | None) -> Model:
        """The command line's model, else the configuration's (its errors name the file)."""
        if self.overrides.model is not None or config is None or config.model is None:
            return self.model(self.overrides.model)
        setting = config.model_setting()
        try:
            return self.model(setting)
        except ModelError as exc:
            reason = exc.reason
            if setting == config.model and _looks_like_a_path(setting):
                reason += f" (looked for {config.root / setting})"
            problem = f'{config.table}"model" = {show_value(config.model)}: {reason}'
            raise ConfigError(config.path, [problem]) from None

    def excluded(self, path: str) -> ProjectConfig | None:
        """The configuration whose `exclude` leaves this file out, or None."""
        config = None if path == "-" else self.config_for(path)
        return config if config is not None and config.excludes(Path(path)) else None

    def limits(self, path: str, config: ProjectConfig | None) -> tuple[int, Budget | None]:
        """The context window (command line, configuration, default) and the file's budget."""
        window = self.overrides.context_window or (config and config.context_window)
        budget = None if config is None or path == "-" else config.budget_for(Path(path))
        return window or DEFAULT_CONTEXT_WINDOW, budget

    def measure(self, path: str) -> Measurement:
        config = self.config_for(path)
        model = self.model_for(config)
        window, budget = self.limits(path, config)
        text = read_text(path)
        return Measurement(
            path=path,
            tokens=len(model.encode_full(text)) if text else 0,
            characters=len(text),
            model=model.name,
            context_window=window,
            budget=None if budget is None else budget.limit,
            pattern=None if budget is None else budget.pattern,
            config=None if config is None else str(config.path),
        )


def _looks_like_a_path(setting: str) -> bool:
    return (
        setting.endswith(".model") or "/" in setting or os.sep in setting or Path(setting).exists()
    )
