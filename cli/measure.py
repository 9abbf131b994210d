"""Counting a file against its limit: the project configuration that applies to it, the model
it names, the budget its path matches, and the count.

Precedence, as ruff and black have it: command-line options, then the project configuration,
then the defaults. A file is counted a chunk at a time through the model's segment cache
(tokenline.core.counting: the count of the reference library's one-shot encoding, proven cut by
cut), or by that encoding itself where the model's texts cannot be cut so.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tokenline.chat import ChatRecord, chat_records, mode_phrase
from tokenline.config import Budget, ConfigError, ConfigFinder, ProjectConfig, show_value
from tokenline.core import (
    LISTED_FILES,
    ChatBiller,
    ChatError,
    Model,
    ModelError,
    bundled_models,
    chat_kind,
    resolve_model,
)
from tokenline.core.counting import UNCOUNTED, TokenCounter, count_text
from tokenline.core.resolve import is_tekken_file
from tokenline.walk import InputError, read_chunks, read_text

DEFAULT_CONTEXT_WINDOW = 8192
# How chat files are counted: as text ("off"), per conversation when a file is one ("auto",
# `check`), or per conversation with any other file an error ("only", `count --chat`).
CHAT_OFF = "off"
CHAT_AUTO = "auto"
CHAT_ONLY = "only"
# The names chat files have (chatfile.chat_kind): other files are never read whole for it.
CHAT_SUFFIXES = (".jsonl", ".json", ".yaml", ".yml")
NOT_CHAT = (
    "not a chat file (JSON Lines with a messages array on each line, or a .json/.yaml file "
    "holding messages)"
)


@dataclass(frozen=True)
class Overrides:
    """What the command line sets; None leaves it to the configuration."""

    model: str | None = None
    context_window: int | None = None
    config: Path | None = None
    # More models each file is counted with (`count --model A --model B`), after `model`.
    more_models: tuple[str, ...] = ()
    chat: str = CHAT_OFF


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
    # (model, tokens) of every model the file was counted with; the first is `model`, `tokens`.
    models: tuple[tuple[str, int], ...] = ()
    # The model a budget that names one counts, and its count of the file.
    budget_model: str | None = None
    budget_tokens: int | None = None
    # A chat file's conversations, each held to the limit alone (None for other files), and how
    # they were counted.
    records: tuple[ChatRecord, ...] | None = None
    # ChatBiller.mode ("template", "mistral", "estimate", "contents only"), and in words.
    chat_mode: str | None = None
    chat_how: str | None = None

    @property
    def limit(self) -> int:
        return self.budget if self.budget is not None else self.context_window

    @property
    def counts(self) -> tuple[tuple[str, int], ...]:
        """(model, tokens) under every model the file was counted with."""
        return self.models or ((self.model, self.tokens),)

    @property
    def held(self) -> int:
        """The count held to the limit: the budget's model's when it names one."""
        return self.budget_tokens if self.budget_tokens is not None else self.tokens

    @property
    def over(self) -> int:
        """Tokens beyond the limit (a chat file: its largest conversation's); 0 within it."""
        if self.records is not None:
            return max((r.over(self.limit) for r in self.records), default=0)
        return max(0, self.held - self.limit)

    @property
    def over_records(self) -> list[ChatRecord]:
        """A chat file's conversations over the limit."""
        return [r for r in self.records or () if r.over(self.limit)]

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
            "budget_model": self.budget_model,
            "budget_tokens": self.budget_tokens,
            "models": [{"model": name, "tokens": n} for name, n in self.counts],
            **self._chat_json(),
        }

    def _chat_json(self) -> dict[str, object]:
        if self.records is None:
            return {}
        return {"chat_mode": self.chat_mode, "records": [r.as_json() for r in self.records]}


class Measurer:
    """Counts files, loading each configuration and model once for the whole run.

    Raises ConfigError (a bad configuration: every problem of its file, the model it names
    included), ModelError (the command line's model cannot be loaded) and InputError (a file that
    is not UTF-8 text) for the command to report. A failure is remembered: a configuration or a
    model is tried once per run, however many files it applies to.
    """

    def __init__(self, overrides: Overrides) -> None:
        self.overrides = overrides
        self.finder = ConfigFinder()
        # Loaded models by ModelSource.key, and what each spec (with its base folder) resolved to.
        self._models: dict[str, Model] = {}
        self._by_spec: dict[tuple[str, Path | None], Model] = {}
        self._failed: dict[tuple[str, Path | None], ModelError] = {}
        self._broken: dict[Path, ConfigError] = {}
        self._explicit: ProjectConfig | None = None
        # A biller per model (by identity), each keeping its conversations' bills.
        self._billers: dict[int, ChatBiller] = {}
        # How a file is counted: here, or by a pool of workers (tokenline.workers).
        self.counter: Callable[[str, list[Model]], tuple[int, list[int]]] = count_file
        # Each file's configuration and limits, looked up once: planning the workers' jobs asks
        # them before the file is measured (on 2,000 files, a fifth of `check`'s own work).
        self._configs: dict[str, ProjectConfig | None] = {}
        self._limits: dict[tuple[str, int], tuple[int, Budget | None]] = {}
        if overrides.config is not None:
            try:
                self._explicit = self.finder.load(overrides.config)
            except ConfigError as exc:
                raise self._complete(exc) from None

    def config_for(self, path: str) -> ProjectConfig | None:
        if self._explicit is not None:
            return self._explicit
        if path in self._configs:
            return self._configs[path]
        try:
            config = self.finder.config_for(Path.cwd() if path == "-" else Path(path))
        except ConfigError as exc:
            raise self._complete(exc) from None
        if path != "-":
            self._configs[path] = config
        return config

    def _complete(self, exc: ConfigError) -> ConfigError:
        """`exc` with the problem of the file's `model` too, when it names one that cannot be
        loaded (and the command line does not override it): all of a file's problems at once."""
        known = self._broken.get(exc.path)
        if known is not None:
            return known
        partial = exc.partial
        if partial is not None and partial.model is not None and self.overrides.model is None:
            try:
                self.model_for(partial)
            except ConfigError as bad_model:
                exc = ConfigError(exc.path, [*exc.problems, *bad_model.problems], exc.syntax)
        self._broken[exc.path] = exc
        return exc

    def model(self, spec: str | None, base_dir: Path | None = None) -> Model:
        """The model a spec names (tokenline.core.resolve_model: a bundled name, a tiktoken
        encoding or OpenAI model name, a tokenizer.json, tekken*.json or .model file or a folder
        holding one, relative to base_dir, a Hugging Face repo id in the local cache), each file
        loaded once."""
        text = (spec or "").strip()
        known = self._by_spec.get((text, base_dir))
        if known is not None:
            return known
        failed = self._failed.get((text, base_dir))
        if failed is not None:
            raise failed
        try:
            model = self._load(text, base_dir)
        except ModelError as exc:
            self._failed[(text, base_dir)] = exc
            raise
        self._by_spec[(text, base_dir)] = model
        return model

    def _load(self, text: str, base_dir: Path | None) -> Model:
        """Resolves and loads a spec; two specs naming one file share its Model."""
        source = resolve_model(text, base_dir)
        if text and text not in bundled_models() and source.origin != "tiktoken":
            _check_file(text, base_dir, Path(source.path))
        model = self._models.get(source.key)
        if model is None:
            model = self._models[source.key] = source.load()
        return model

    def model_for(self, config: ProjectConfig | None) -> Model:
        """The command line's model, else the configuration's (its errors name the file)."""
        if self.overrides.model is not None or config is None or config.model is None:
            return self.model(self.overrides.model)
        try:
            return self.model(config.model, config.root)
        except ModelError as exc:
            where = f" ({exc.path})" if exc.path != config.model else ""
            problem = f'{config.table}"model" = {show_value(config.model)}: {exc.reason}{where}'
            raise ConfigError(config.path, [problem]) from None

    def limits(self, path: str, config: ProjectConfig | None) -> tuple[int, Budget | None]:
        """The context window (command line, configuration, default) and the file's budget."""
        key = (path, id(config))
        found = self._limits.get(key)
        if found is None:
            window = self.overrides.context_window or (config and config.context_window)
            budget = None if config is None or path == "-" else config.budget_for(Path(path))
            found = self._limits[key] = (window or DEFAULT_CONTEXT_WINDOW, budget)
        return found

    def budget_model(self, budget: Budget, config: ProjectConfig) -> Model:
        """The model a budget names (relative to its configuration; its errors name the file)."""
        assert budget.model is not None
        try:
            return self.model(config.setting(budget.model), config.root)
        except ModelError as exc:
            where = f" ({exc.path})" if exc.path != budget.model else ""
            problem = (
                f"{config.table}budgets {show_value(budget.pattern)} model = "
                f"{show_value(budget.model)}: {exc.reason}{where}"
            )
            raise ConfigError(config.path, [problem]) from None

    def models_of(self, path: str, config: ProjectConfig | None) -> list[Model]:
        """The models a file is counted with: its model, the command line's more models, and
        its budget's model last when the budget names one (ConfigError, ModelError)."""
        return self._counted_with(config, self.limits(path, config)[1])

    def _counted_with(self, config: ProjectConfig | None, budget: Budget | None) -> list[Model]:
        models = [self.model_for(config), *(self.model(m) for m in self.overrides.more_models)]
        if budget is not None and budget.model is not None and config is not None:
            models.append(self.budget_model(budget, config))
        return models

    def measure(self, path: str, config: ProjectConfig | None) -> Measurement:
        """The count of the file at `path` under its model (and under each of the command line's
        more models), held to the limits of `config` (its configuration)."""
        window, budget = self.limits(path, config)
        models = self._counted_with(config, budget)
        held = budget is not None and budget.model is not None and config is not None
        named = models[:-1] if held else models
        text = self._chat_text(path)
        kind = None if text is None else chat_kind(path, text)
        if kind is None and self.overrides.chat == CHAT_ONLY:
            raise InputError(f"{path}: {NOT_CHAT}")
        records, biller = None, None
        if kind is not None and text is not None:
            characters, numbers = len(text), [count(m, text) for m in models]
            biller = self.biller(models[-1] if held else models[0])
            records = chat_records(biller, text, kind)
        else:
            characters, numbers = self.counter(path, models)
        counts = [(m.name, n) for m, n in zip(named, numbers, strict=False)]
        return Measurement(
            path=path,
            tokens=counts[0][1],
            characters=characters,
            model=models[0].name,
            context_window=window,
            budget=None if budget is None else budget.limit,
            pattern=None if budget is None else budget.pattern,
            config=None if config is None else str(config.path),
            models=tuple(counts),
            budget_model=models[-1].name if held else None,
            budget_tokens=numbers[-1] if held else None,
            records=records,
            chat_mode=None if biller is None else biller.mode,
            chat_how=None if biller is None else mode_phrase(biller),
        )

    def _chat_text(self, path: str) -> str | None:
        """The text of a file that may be a chat file, read whole to be parsed (None: counted as
        text, a chunk at a time)."""
        if self.overrides.chat == CHAT_OFF:
            return None
        if self.overrides.chat == CHAT_AUTO and not path.lower().endswith(CHAT_SUFFIXES):
            return None
        return read_text(path)

    def biller(self, model: Model) -> ChatBiller:
        """The chat biller of a model, made once per run."""
        found = self._billers.get(id(model))
        if found is None:
            try:
                found = self._billers[id(model)] = ChatBiller.for_model(model)
            except ChatError as exc:
                raise ModelError(model.path, str(exc)) from None
        return found


def count(model: Model, text: str) -> int:
    """The text's tokens under `model` (through its segment cache where the model's texts can be
    counted so; else its reference library's one-shot encoding)."""
    return int(count_text(model, text))


def count_file(path: str, models: Sequence[Model]) -> tuple[int, list[int]]:
    """(characters, tokens under each of `models`) of the file at `path` ('-': standard input),
    read a chunk at a time, so that a large file is counted in little memory (InputError when it
    is not UTF-8 text). A model whose count cannot stream counts the whole text by one encode."""
    unique: list[Model] = []
    for m in models:
        if all(m is not u for u in unique):
            unique.append(m)
    counters = [TokenCounter(m) for m in unique]
    characters = 0
    if path != "-" and any(c.streams() for c in counters):
        for chunk in read_chunks(path):
            characters += len(chunk)
            for c in counters:
                c.feed(chunk)
        found = [int(c.finish()) for c in counters]
    else:
        found = [UNCOUNTED] * len(unique)
    if UNCOUNTED in found:
        text = read_text(path)
        characters = len(text)
        found = [
            count(m, text) if n == UNCOUNTED else n for m, n in zip(unique, found, strict=True)
        ]
    by_model = {id(m): n for m, n in zip(unique, found, strict=True)}
    return characters, [by_model[id(m)] for m in models]


# The tokenizer files a folder may hold, as the resolver looks for them.
FOLDER_FILES = ", ".join(LISTED_FILES)


def _check_file(spec: str, base_dir: Path | None, path: Path) -> None:
    """Raises ModelError, saying what was expected, when a spec that is neither a bundled model
    nor a tiktoken encoding names no tokenizer file that exists."""
    if not _names_a_file(spec, base_dir):
        raise ModelError(
            spec,
            f"not a bundled model ({', '.join(sorted(bundled_models()))}), a tiktoken encoding "
            "or OpenAI model name (o200k_base, cl100k_base, gpt-4o, ...), a tokenizer file "
            "(tokenizer.json, tekken*.json, .model), a folder holding one, nor a Hugging Face "
            "repo id (owner/name)",
        )
    if path.is_dir():
        raise ModelError(spec, f"the folder {path} holds no tokenizer file ({FOLDER_FILES})")
    if not path.exists():
        kind = _file_kind(path)
        if kind:
            raise ModelError(spec, f"no such file: {path.absolute()} (read as {kind})")
        raise ModelError(spec, f"no such file or folder: {path.absolute()}")


def _file_kind(path: Path) -> str:
    """What kind of tokenizer file a path was taken for, by its name ("" when not a file's)."""
    name = path.name.lower()
    if is_tekken_file(path):
        return "a Mistral Tekken file"
    if name.endswith(".json"):
        return "a Hugging Face tokenizer.json"
    if name.endswith(".model"):
        return "a SentencePiece .model file"
    return ""


def _names_a_file(spec: str, base_dir: Path | None) -> bool:
    """Whether a spec that is neither a bundled name nor a tiktoken encoding can name a tokenizer
    file (a Hugging Face tokenizer.json, a Mistral tekken*.json, a SentencePiece .model), a
    folder holding one, or a Hugging Face repo id (else it is a typo of a model or encoding name,
    better said as such than as "no such file")."""
    if spec.endswith((".model", ".json")) or "/" in spec or os.sep in spec:
        return True
    return (Path(base_dir) / spec if base_dir else Path(spec)).exists()
