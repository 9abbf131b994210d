"""Project configuration (tokenline.config): where it is found, what wins, what a bad one says."""

from __future__ import annotations

from pathlib import Path

import pytest

from tokenline.config import ConfigError, ConfigFinder, parse_config, read_config


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_discovery_walks_up_and_stops_at_the_first_tokenline_configuration(tmp_path: Path) -> None:
    top = write(tmp_path / "pyproject.toml", "[tool.tokenline]\ncontext-window = 32000\n")
    # A pyproject.toml without [tool.tokenline] is passed over, as ruff passes over one
    # without [tool.ruff].
    write(tmp_path / "pkg" / "pyproject.toml", "[project]\nname = 'pkg'\n")
    nested = write(tmp_path / "pkg" / "sub" / "tokenline.toml", "warn-at = 0.5\n")
    finder = ConfigFinder()
    assert finder.find(tmp_path / "pkg" / "a.md") == top
    assert finder.find(tmp_path / "pkg" / "sub" / "deep" / "b.md") == nested
    # The nearest configuration is the whole configuration: nothing is merged from above.
    config = finder.config_for(tmp_path / "pkg" / "sub" / "b.md")
    assert config is not None
    assert (config.warn_at, config.context_window) == (0.5, None)


def test_in_one_directory_dot_file_then_tokenline_toml_then_pyproject(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool.tokenline]\ncontext-window = 1\n")
    finder = ConfigFinder()
    assert finder.find(tmp_path / "x.md") == tmp_path / "pyproject.toml"
    write(tmp_path / "tokenline.toml", "context-window = 2\n")
    finder.clear()
    assert finder.find(tmp_path / "x.md") == tmp_path / "tokenline.toml"
    write(tmp_path / ".tokenline.toml", "context-window = 3\n")
    finder.clear()
    config = finder.config_for(tmp_path / "x.md")
    assert config is not None and config.context_window == 3


def test_all_keys_are_read(tmp_path: Path) -> None:
    path = write(
        tmp_path / "pyproject.toml",
        """[project]
name = "x"

[tool.tokenline]
model = "llama-2"
context-window = 4096
warn-at = 0.75

[tool.tokenline.budgets]
"prompts/*.md" = 2_000
""",
    )
    config = read_config(path)
    assert config is not None
    assert (config.model, config.context_window, config.warn_at) == ("llama-2", 4096, 0.75)
    assert [(b.pattern, b.limit) for b in config.budgets] == [("prompts/*.md", 2000)]
    assert config.root == tmp_path


def test_a_budget_may_name_the_model_its_tokens_are_of(tmp_path: Path) -> None:
    write(tmp_path / "models" / "tokenizer.json", "{}")
    path = write(
        tmp_path / "tokenline.toml",
        """[budgets]
"prompts/*.md" = 2000
"prompts/gpt/*.md" = { tokens = 4000, model = "o200k_base" }
"prompts/local/*.md" = { tokens = 300, model = "models/tokenizer.json" }
"prompts/same/*.md" = { tokens = 100 }
""",
    )
    config = read_config(path)
    assert config is not None
    assert [(b.pattern, b.limit, b.model) for b in config.budgets] == [
        ("prompts/*.md", 2000, None),
        ("prompts/gpt/*.md", 4000, "o200k_base"),
        ("prompts/local/*.md", 300, "models/tokenizer.json"),
        ("prompts/same/*.md", 100, None),
    ]
    gpt = config.budget_for(tmp_path / "prompts" / "gpt" / "a.md")
    assert gpt is not None and gpt.model == "o200k_base"
    # A path is taken against the configuration's folder; a name stays a name.
    local = config.budget_for(tmp_path / "prompts" / "local" / "a.md")
    assert local is not None and local.model is not None
    assert config.setting(local.model) == str(tmp_path / "models" / "tokenizer.json")
    assert config.setting("o200k_base") == "o200k_base"


BUDGETS = """
[budgets]
"*.md" = 1
"prompts/**/*.md" = 2
"prompts/system/*.md" = 3
"prompts/system/intro.md" = 4
"prompts/*/notes.md" = 5
"rag/" = 6
"""


@pytest.mark.parametrize(
    "file,pattern",
    [
        ("README.md", "*.md"),
        ("docs/deep/guide.md", "*.md"),
        ("prompts/fewshot/a.md", "prompts/**/*.md"),
        ("prompts/a/b/c.md", "prompts/**/*.md"),
        ("prompts/system/other.md", "prompts/system/*.md"),
        ("prompts/system/intro.md", "prompts/system/intro.md"),
        ("prompts/fewshot/notes.md", "prompts/*/notes.md"),
        ("rag/chunk.txt", "rag/"),
        ("rag/chunk.md", "rag/"),
        ("prompts/system/nested/x.md", "prompts/**/*.md"),
        ("notes.txt", None),
    ],
)
def test_the_most_specific_matching_pattern_wins(
    tmp_path: Path, file: str, pattern: str | None
) -> None:
    config = parse_config(tmp_path / "tokenline.toml", BUDGETS)
    assert config is not None
    budget = config.budget_for(tmp_path / file)
    assert (budget.pattern if budget else None) == pattern


def test_patterns_are_relative_to_the_configuration_file(tmp_path: Path) -> None:
    config = parse_config(tmp_path / "sub" / "tokenline.toml", '[budgets]\n"p/*.md" = 7\n')
    assert config is not None
    assert config.budget_for(tmp_path / "sub" / "p" / "a.md") is not None
    assert config.budget_for(tmp_path / "p" / "a.md") is None  # outside the project


def test_equally_specific_patterns_the_later_one_wins(tmp_path: Path) -> None:
    config = parse_config(tmp_path / "tokenline.toml", '[budgets]\n"a/*.md" = 1\n"*/b.md" = 2\n')
    assert config is not None
    budget = config.budget_for(tmp_path / "a" / "b.md")
    assert budget is not None and budget.limit == 2


@pytest.mark.parametrize(
    "name,text,expected",
    [
        (
            "pyproject.toml",
            "[tool.tokenline]\ncontext-window = -5\n",
            ['[tool.tokenline] "context-window" must be a positive whole number', "not -5"],
        ),
        (
            "pyproject.toml",
            '[tool.tokenline]\ncontext-window = "lots"\n',
            ['"context-window"', 'not "lots"'],
        ),
        ("tokenline.toml", "warn-at = 1.5\n", ['"warn-at" must be a fraction', "not 1.5"]),
        ("tokenline.toml", "warn-at = true\n", ['"warn-at"', "not true"]),
        ("tokenline.toml", "model = 3\n", ['"model" must be a non-empty string', "not 3"]),
        (
            "tokenline.toml",
            "context_window = 100\n",
            ['unknown key "context_window"', 'did you mean "context-window"'],
        ),
        (
            "pyproject.toml",
            '[tool.tokenline.budgets]\n"prompts/*.md" = "2k"\n',
            ['[tool.tokenline.budgets] "prompts/*.md" must be a positive whole number', 'not "2k"'],
        ),
        ("tokenline.toml", '[budgets]\n"a.md" = 0\n', ['[budgets] "a.md"', "not 0"]),
        ("tokenline.toml", '[budgets]\n"!a.md" = 10\n', ['"!a.md" is not a glob pattern']),
        ("tokenline.toml", 'budgets = ["a.md"]\n', ["[budgets] must be a table", "an array"]),
        (
            "tokenline.toml",
            '[budgets]\n"a.md" = { tokens = 10, modle = "o200k_base" }\n',
            ['[budgets] "a.md" has an unknown key "modle"', 'did you mean "model"'],
        ),
        (
            "tokenline.toml",
            '[budgets]\n"a.md" = { model = "o200k_base" }\n',
            ['[budgets] "a.md" "tokens" must be a positive whole number', "not None"],
        ),
        (
            "pyproject.toml",
            '[tool.tokenline.budgets]\n"a.md" = { tokens = 5, model = "" }\n',
            ['[tool.tokenline.budgets] "a.md" "model" must be a non-empty string', 'not ""'],
        ),
        ("tokenline.toml", "[tool.tokenline]\nmodel = 'x'\n", ['unknown key "tool"']),
        (
            "tokenline.toml",
            'exclude = "vendor/"\n',
            ['"exclude" must be an array', 'not "vendor/"'],
        ),
        ("tokenline.toml", "context-window = \n", ["not valid TOML"]),
    ],
)
def test_bad_configuration_names_file_key_and_value(
    tmp_path: Path, name: str, text: str, expected: list[str]
) -> None:
    path = write(tmp_path / name, text)
    with pytest.raises(ConfigError) as info:
        ConfigFinder().config_for(tmp_path / "a.md")
    message = str(info.value)
    assert message.startswith(f"{path}: ")
    for part in expected:
        assert part in message


def test_every_bad_key_is_reported_at_once(tmp_path: Path) -> None:
    path = write(tmp_path / "tokenline.toml", "context-window = 0\nwarn-at = 2\n")
    with pytest.raises(ConfigError) as info:
        read_config(path)
    assert len(info.value.problems) == 2


def test_a_broken_pyproject_that_is_not_ours_is_passed_over(tmp_path: Path) -> None:
    write(tmp_path / "tokenline.toml", "context-window = 100\n")
    write(tmp_path / "sub" / "pyproject.toml", "[project\nname = broken")
    config = ConfigFinder().config_for(tmp_path / "sub" / "a.md")
    assert config is not None and config.context_window == 100


def test_explicit_config_must_have_a_table(tmp_path: Path) -> None:
    path = write(tmp_path / "pyproject.toml", "[project]\nname = 'x'\n")
    with pytest.raises(ConfigError, match=r"no \[tool.tokenline\] table"):
        ConfigFinder().load(path)
    with pytest.raises(ConfigError, match="no such file"):
        ConfigFinder().load(tmp_path / "missing.toml")


def test_a_model_path_is_relative_to_the_configuration(tmp_path: Path) -> None:
    write(tmp_path / "models" / "mine.model", "not really a model")
    config = parse_config(tmp_path / "tokenline.toml", 'model = "models/mine.model"\n')
    assert config is not None
    assert config.model_setting() == str(tmp_path / "models" / "mine.model")
    named = parse_config(tmp_path / "tokenline.toml", 'model = "llama-2"\n')
    assert named is not None and named.model_setting() == "llama-2"


def test_exclude_is_gitignore_style_relative_to_the_configuration(tmp_path: Path) -> None:
    config = parse_config(tmp_path / "tokenline.toml", 'exclude = ["vendor/", "*.lock"]\n')
    assert config is not None
    assert config.excludes(tmp_path / "vendor" / "deep" / "a.md")
    assert config.excludes(tmp_path / "web" / "yarn.lock")
    assert not config.excludes(tmp_path / "prompts" / "vendor.md")
    assert not config.excludes(tmp_path.parent / "vendor" / "a.md")  # outside the project
