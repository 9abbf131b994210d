"""Project configuration: `[tool.tokenline]` in pyproject.toml, or tokenline.toml/.tokenline.toml.

Found the way ruff and black find theirs, so that the editor, CI and pre-commit read the same
limits: walking up from the file, the first directory with a Tokenline configuration wins (in
it `.tokenline.toml`, then `tokenline.toml`, then a `pyproject.toml` that has `[tool.tokenline]`;
a `pyproject.toml` without that table is passed over). Keys:

    model = "mistral-7b-v0.1"       # bundled name, tiktoken encoding (o200k_base), tokenizer
                                    # file (tokenizer.json, tekken*.json, .model) or a folder
                                    # holding one (relative to this file), Hub repo id
    context-window = 32768          # tokens
    warn-at = 0.9                   # fraction of the limit that gets a Warning in the editor
    exclude = ["vendor/", "*.lock"] # gitignore-style: files never counted nor checked
    [tool.tokenline.budgets]        # gitignore-style globs relative to this file -> tokens
    "prompts/system/*.md" = 2000
    "prompts/gpt/*.md" = { tokens = 4000, model = "o200k_base" }  # tokens of that model

A bad value is a ConfigError naming the file, the key and the value. Nothing here tokenizes:
the core stays free of configuration, and the CLI and the server both read it from here.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import pathspec

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

# In the order they are looked for in one directory.
CONFIG_NAMES = (".tokenline.toml", "tokenline.toml", "pyproject.toml")
KEYS = ("model", "context-window", "warn-at", "budgets", "exclude")
# The keys of a budget written as a table.
BUDGET_KEYS = ("tokens", "model")
WILDCARDS = frozenset("*?[")


class ConfigError(ValueError):
    """A configuration file that cannot be used; `problems` has one sentence per bad key."""

    def __init__(
        self,
        path: Path,
        problems: list[str],
        syntax: bool = False,
        partial: ProjectConfig | None = None,
    ) -> None:
        self.path = path
        self.problems = problems
        # Not TOML at all (so it is unknown whether the file meant to configure Tokenline).
        self.syntax = syntax
        # The keys that were good, so that a caller can check what this module cannot (whether
        # `model` loads) and report it with the rest.
        self.partial = partial
        super().__init__("; ".join(f"{path}: {p}" for p in problems))


@dataclass(frozen=True)
class Budget:
    """One `budgets` entry: files matching `pattern` (relative to the config) get `limit` tokens,
    of `model` when the entry names one (else of the model the file is counted with)."""

    pattern: str
    limit: int
    order: int
    spec: pathspec.GitIgnoreSpec = field(compare=False, repr=False)
    model: str | None = None

    def matches(self, relative: str) -> bool:
        return bool(self.spec.match_file(relative))

    def specificity(self) -> tuple[int, int, int, int]:
        """Sort key, higher is more specific: a literal path beats any glob; then more literal
        path segments (`prompts/system/*.md` over `prompts/**/*.md`), more literal characters,
        and on a tie the entry written later (as a later .gitignore line overrides)."""
        parts = [p for p in self.pattern.strip("/").split("/") if p]
        literal_parts = sum(1 for p in parts if not WILDCARDS.intersection(p))
        literal_chars = sum(1 for c in self.pattern if c not in WILDCARDS and c not in "/]")
        exact = int(not WILDCARDS.intersection(self.pattern) and not self.pattern.endswith("/"))
        return (exact, literal_parts, literal_chars, self.order)


@dataclass(frozen=True)
class ProjectConfig:
    """One configuration file's values; None where the file leaves a key unset."""

    path: Path
    model: str | None = None
    context_window: int | None = None
    warn_at: float | None = None
    budgets: tuple[Budget, ...] = ()
    exclude: pathspec.GitIgnoreSpec | None = field(default=None, compare=False, repr=False)

    @property
    def table(self) -> str:
        """How messages name the table the keys are in ("" for a tokenline.toml)."""
        return "[tool.tokenline] " if self.path.name == "pyproject.toml" else ""

    @property
    def root(self) -> Path:
        """The directory budget patterns (and a relative model path) are relative to."""
        return self.path.parent

    @cached_property
    def _root_text(self) -> str:
        return str(self.root)

    def _relative(self, file: Path) -> str | None:
        """`file` relative to the configuration's folder, with `/`; None when outside it."""
        full = os.path.abspath(file)
        root = self._root_text
        if os.sep == "/" and root.startswith("/"):
            # As Path.relative_to decides, by strings: `check` asks this of every file it meets.
            if full == root:
                return "."
            prefix = root if root.endswith("/") else root + "/"
            return full[len(prefix) :] if full.startswith(prefix) else None
        try:
            return Path(os.path.abspath(file)).relative_to(self.root).as_posix()
        except ValueError:
            return None

    def budget_for(self, file: Path) -> Budget | None:
        """The most specific budget whose pattern matches `file`, or None."""
        relative = self._relative(file)
        if relative is None:
            return None
        found = [b for b in self.budgets if b.matches(relative)]
        return max(found, key=Budget.specificity) if found else None

    def excludes(self, file: Path) -> bool:
        """Whether `exclude` leaves `file` out of `tokenline count` and `check`."""
        if self.exclude is None:
            return False
        relative = self._relative(file)
        return relative is not None and bool(self.exclude.match_file(relative))

    def model_setting(self) -> str | None:
        """`model` as a setting to resolve: an existing path relative to this file made absolute
        (the editor's working folder may be elsewhere); a bundled name or repo id unchanged."""
        return None if self.model is None else self.setting(self.model)

    def setting(self, model: str) -> str:
        """A model this file names, as a setting to resolve (see `model_setting`)."""
        expanded = Path(os.path.expandvars(os.path.expanduser(model)))
        candidate = expanded if expanded.is_absolute() else self.root / expanded
        return str(candidate) if candidate.exists() else model


def show_value(value: object) -> str:
    """A value as it is written in TOML, cut short when long."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, (str, int, float)):
        text = json.dumps(value, ensure_ascii=False)
    elif isinstance(value, Mapping):
        text = "a table"
    elif isinstance(value, list):
        text = "an array"
    else:
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _table(path: Path, data: Mapping[str, Any]) -> tuple[Mapping[str, Any] | None, str]:
    """The Tokenline table of a parsed file and how to name it in messages; None if absent."""
    if path.name != "pyproject.toml":
        return data, ""
    tool = data.get("tool")
    table = tool.get("tokenline") if isinstance(tool, Mapping) else None
    if table is None:
        return None, "[tool.tokenline]"
    if not isinstance(table, Mapping):
        return {"": table}, "[tool.tokenline]"
    return table, "[tool.tokenline]"


def _check_key(key: str, value: object, where: str, problems: list[str]) -> bool:
    """Whether `value` is what `key` takes; appends a problem when it is not."""
    before = len(problems)
    prefix = f"{where} " if where else ""
    if key == "model" and not (isinstance(value, str) and value.strip()):
        problems.append(f'{prefix}"model" must be a non-empty string, not {show_value(value)}')
    elif key == "context-window" and not _positive_int(value):
        problems.append(
            f'{prefix}"context-window" must be a positive whole number of tokens, '
            f"not {show_value(value)}"
        )
    elif key == "warn-at" and not (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and 0 <= value <= 1
    ):
        problems.append(
            f'{prefix}"warn-at" must be a fraction between 0 and 1, not {show_value(value)}'
        )
    return len(problems) == before


def _unknown_key(key: str, where: str, path: Path) -> str:
    prefix = f"{where} " if where else ""
    if key == "" and where:
        return f"{where} must be a table, not a single value"
    if key == "tool" and not where:
        return (
            f'unknown key "tool": in {path.name} the keys are at the top level, '
            "without [tool.tokenline]"
        )
    close = difflib.get_close_matches(key, KEYS, n=1)
    hint = f' (did you mean "{close[0]}"?)' if close else ""
    return f'{prefix}unknown key "{key}"{hint}; the keys are: {", ".join(KEYS)}'


def _budget_value(
    value: object, table: str, pattern: str, problems: list[str]
) -> tuple[int, str | None] | None:
    """(tokens, model) of one budget: `2000`, or `{ tokens = 2000, model = "o200k_base" }`;
    None after appending its problems."""
    entry = f"{table} {show_value(pattern)}"
    if isinstance(value, Mapping):
        found = len(problems)
        for key in value:
            if key not in BUDGET_KEYS:
                close = difflib.get_close_matches(str(key), BUDGET_KEYS, n=1)
                hint = f' (did you mean "{close[0]}"?)' if close else ""
                problems.append(
                    f'{entry} has an unknown key "{key}"{hint}; a budget table has '
                    f"{' and '.join(BUDGET_KEYS)}"
                )
        tokens, model = value.get("tokens"), value.get("model")
        if not _positive_int(tokens):
            problems.append(
                f'{entry} "tokens" must be a positive whole number of tokens, '
                f"not {show_value(tokens)}"
            )
        if model is not None and not (isinstance(model, str) and model.strip()):
            problems.append(f'{entry} "model" must be a non-empty string, not {show_value(model)}')
        if len(problems) > found:
            return None
        assert isinstance(tokens, int)
        return tokens, model.strip() if isinstance(model, str) else None
    if not _positive_int(value):
        problems.append(
            f"{entry} must be a positive whole number of tokens or a table "
            f'{{ tokens = N, model = "..." }}, not {show_value(value)}'
        )
        return None
    assert isinstance(value, int)
    return value, None


def _budgets(value: object, where: str, problems: list[str]) -> tuple[Budget, ...]:
    """The `budgets` table as Budget entries; each bad entry adds a problem."""
    table = f"[{where[1:-1]}.budgets]" if where else "[budgets]"
    if not isinstance(value, Mapping):
        problems.append(f"{table} must be a table of glob = tokens, not {show_value(value)}")
        return ()
    out: list[Budget] = []
    for order, (pattern, raw) in enumerate(value.items()):
        limit_model = _budget_value(raw, table, pattern, problems)
        if limit_model is None:
            continue
        limit, model = limit_model
        text = pattern.strip()
        if not text or text.startswith(("!", "#")):
            problems.append(
                f"{table} {show_value(pattern)} is not a glob pattern of files "
                "(empty, a comment or a negation)"
            )
            continue
        try:
            spec = pathspec.GitIgnoreSpec.from_lines([text])
        except Exception as exc:
            problems.append(f"{table} {show_value(pattern)} is not a valid glob pattern: {exc}")
            continue
        out.append(Budget(text, limit, order, spec, model))
    return tuple(out)


def _exclude(value: object, where: str, problems: list[str]) -> pathspec.GitIgnoreSpec | None:
    """The `exclude` array as one gitignore-style matcher."""
    prefix = f"{where} " if where else ""
    if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
        problems.append(
            f'{prefix}"exclude" must be an array of glob patterns, not {show_value(value)}'
        )
        return None
    try:
        return pathspec.GitIgnoreSpec.from_lines(value)
    except Exception as exc:
        problems.append(f'{prefix}"exclude" has an invalid glob pattern: {exc}')
        return None


def parse_config(path: Path, text: str) -> ProjectConfig | None:
    """The configuration in `text` (the content of `path`); None for a pyproject.toml without a
    Tokenline table. Raises ConfigError listing every bad key."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(path, [f"not valid TOML: {exc}"], syntax=True) from None
    table, where = _table(path, data)
    if table is None:
        return None
    problems: list[str] = []
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in KEYS:
            problems.append(_unknown_key(key, where, path))
        elif key == "budgets":
            values["budgets"] = _budgets(value, where, problems)
        elif key == "exclude":
            values["exclude"] = _exclude(value, where, problems)
        elif _check_key(key, value, where, problems):
            values[key] = value
    model = values.get("model")
    warn_at = values.get("warn-at")
    config = ProjectConfig(
        path=path,
        model=model.strip() if isinstance(model, str) else None,
        context_window=values.get("context-window"),
        warn_at=float(warn_at) if warn_at is not None else None,
        budgets=values.get("budgets", ()),
        exclude=values.get("exclude"),
    )
    if problems:
        raise ConfigError(path, problems, partial=config)
    return config


def read_config(path: Path) -> ProjectConfig | None:
    """`parse_config` of a file on disk; a file that cannot be read is a ConfigError."""
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise ConfigError(path, [f"cannot read it ({exc.strerror or exc})"]) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(path, [f"not UTF-8 text ({exc.reason} at byte {exc.start})"]) from None
    return parse_config(path, text)


class ConfigFinder:
    """Finds and parses the configuration of many files, reading each directory once.

    Errors are remembered too: every file under a broken configuration raises the same
    ConfigError until `clear()` (the server calls it when a configuration file changes).
    """

    def __init__(self) -> None:
        self._dirs: dict[str, Path | None] = {}
        self._parsed: dict[Path, ProjectConfig | ConfigError | None] = {}

    def clear(self) -> None:
        self._dirs.clear()
        self._parsed.clear()

    def _parse(self, path: Path) -> ProjectConfig | None:
        if path not in self._parsed:
            try:
                self._parsed[path] = read_config(path)
            except ConfigError as exc:
                self._parsed[path] = exc
        got = self._parsed[path]
        if isinstance(got, ConfigError):
            raise got
        return got

    def _in_dir(self, directory: Path) -> Path | None:
        """The configuration file of this directory itself (not of its parents), if any."""
        for name in CONFIG_NAMES:
            candidate = directory / name
            if candidate.is_file() and (name != "pyproject.toml" or self._has_table(candidate)):
                return candidate
        return None

    def _has_table(self, pyproject: Path) -> bool:
        try:
            return self._parse(pyproject) is not None
        except ConfigError as exc:
            if not exc.syntax:
                return True  # it has our table, with bad values: report them
            # Not even TOML: only ours to report if it mentions us.
            try:
                return "tokenline" in pyproject.read_text(encoding="utf-8", errors="replace")
            except OSError:
                return False

    def find(self, file: Path) -> Path | None:
        """The configuration file that applies to `file` (a file or a directory), or None."""
        start = os.path.abspath(file)
        directory = start if os.path.isdir(start) else os.path.dirname(start)
        walked: list[str] = []
        found: Path | None = None
        # Strings, not Paths: this runs once per file of a whole-repository check.
        while True:
            if directory in self._dirs:
                found = self._dirs[directory]
                break
            walked.append(directory)
            found = self._in_dir(Path(directory))
            parent = os.path.dirname(directory)
            if found is not None or parent == directory:
                break
            directory = parent
        for d in walked:
            self._dirs[d] = found
        return found

    def config_for(self, file: Path) -> ProjectConfig | None:
        """The parsed configuration that applies to `file`; ConfigError when it is broken."""
        path = self.find(file)
        # find() returns only files with a Tokenline configuration: parsed (and cached) already.
        return None if path is None else self._parse(path)

    def load(self, path: Path) -> ProjectConfig:
        """An explicitly named configuration file (`--config`): it must have a Tokenline table."""
        path = Path(os.path.abspath(path))
        if not path.is_file():
            raise ConfigError(path, ["no such file"])
        config = self._parse(path)
        if config is None:
            raise ConfigError(path, ["it has no [tool.tokenline] table"])
        return config
