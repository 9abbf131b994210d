"""A model's chat template, rendered as Hugging Face transformers renders it.

Templates are Jinja, and what a model is billed depends on every space they write, so they run
in the environment `transformers.utils.chat_template_utils` builds for `apply_chat_template`: an
immutable sandbox with trim_blocks and lstrip_blocks, the loopcontrols extension and a
`{% generation %}` block, its own `tojson` (no HTML escaping), `raise_exception`,
`strftime_now`, `dict` and `namespace`; the variables are the special tokens of the tokenizer's
configuration (bos_token, eos_token, ...), `messages`, `tools`, `documents` and
`add_generation_prompt` (false: the conversation as it stands). Messages are passed as
transformers passes them: keys whose value is null left out, a reasoning text also given under
`reasoning_content` and `thinking`.

Where a template is found: `chat_template` in the tokenizer_config.json beside the model's file,
a chat_template.jinja beside it (newer Hub repos), or `chat_template` in the tokenizer file
itself. A list of named templates picks "tool_use" when tools are given and it has one, else
"default", as transformers does.

Interpreted, not compiled: it runs jinja2.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import jinja2
import jinja2.ext
import jinja2.nodes
import jinja2.parser
import jinja2.utils
from jinja2.sandbox import ImmutableSandboxedEnvironment

CONFIG_FILE = "tokenizer_config.json"
JINJA_FILE = "chat_template.jinja"
# The special tokens transformers hands every template (its SPECIAL_TOKENS_ATTRIBUTES).
SPECIAL_TOKENS = (
    "bos_token",
    "eos_token",
    "unk_token",
    "sep_token",
    "pad_token",
    "cls_token",
    "mask_token",
)
# The names a message's reasoning goes by; the first is the one templates read.
REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")


class TemplateFailed(Exception):
    """The template raised (raise_exception, an undefined name, a type error) or is not Jinja."""


class _Generation(jinja2.ext.Extension):
    """`{% generation %}...{% endgeneration %}`: transformers marks the assistant's tokens with it;
    rendered, it is its body."""

    tags = {"generation"}  # noqa: RUF012 (jinja2 reads it as a class attribute)

    def parse(self, parser: jinja2.parser.Parser) -> jinja2.nodes.Node:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        call = self.call_method("_body")
        return jinja2.nodes.CallBlock(call, [], [], body).set_lineno(lineno)

    def _body(self, caller: Any) -> str:
        return str(caller())


class _Namespace(jinja2.utils.Namespace):
    """transformers' namespace: no attribute whose name starts with "_"."""

    def __init__(*args: Any, **kwargs: Any) -> None:
        self, rest = args[0], args[1:]
        attrs = dict(*rest, **kwargs)
        for name in attrs:
            _check_name(name)
        jinja2.utils.Namespace.__init__(self, attrs)

    def __setitem__(self, name: str, value: Any) -> None:
        _check_name(name)
        jinja2.utils.Namespace.__setitem__(self, name, value)


def _check_name(name: Any) -> None:
    if isinstance(name, str) and name.startswith("_"):
        raise jinja2.exceptions.SecurityError(
            "Chat templates cannot store underscore-prefixed attributes on a namespace, but got "
            f"{name!r}. Please rename the attribute."
        )


class _TemplateDict:
    """transformers' `dict`: builds dicts, nothing else reachable."""

    def __call__(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict(*args, **kwargs)

    def fromkeys(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict.fromkeys(*args, **kwargs)


def _raise_exception(message: str) -> None:
    raise jinja2.exceptions.TemplateError(message)


def _tojson(
    x: Any,
    ensure_ascii: bool = False,
    indent: int | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    return json.dumps(
        x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


def _strftime_now(fmt: str) -> str:
    return datetime.now().strftime(fmt)


def environment() -> ImmutableSandboxedEnvironment:
    """The Jinja environment transformers renders chat templates in."""
    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[_Generation, jinja2.ext.loopcontrols]
    )
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    env.globals["dict"] = _TemplateDict()
    env.globals["namespace"] = _Namespace
    return env


class ChatTemplate:
    """A model's chat template(s) and the special tokens it is rendered with."""

    def __init__(self, source: str | dict[str, str], variables: dict[str, str], where: str) -> None:
        self.sources = {"default": source} if isinstance(source, str) else dict(source)
        self.variables = variables
        # The file it came from, for messages.
        self.where = where
        self._env = environment()
        self._compiled: dict[str, jinja2.Template] = {}

    def source(self, tools: list[Any] | None) -> str:
        """The template transformers picks: "tool_use" with tools when there is one, else
        "default" (TemplateFailed when a list of templates has neither)."""
        if tools is not None and "tool_use" in self.sources:
            return self.sources["tool_use"]
        if "default" in self.sources:
            return self.sources["default"]
        names = ", ".join(sorted(self.sources))
        raise TemplateFailed(f"{self.where} has several chat templates ({names}) and no default")

    def render(self, messages: list[dict[str, Any]], tools: list[Any] | None = None) -> str:
        """The text of a conversation (TemplateFailed with the template's own message)."""
        source = self.source(tools)
        try:
            compiled = self._compiled.get(source)
            if compiled is None:
                compiled = self._env.from_string(source)
                self._compiled[source] = compiled
            return compiled.render(
                messages=_as_transformers_passes(messages),
                tools=tools,
                documents=None,
                add_generation_prompt=False,
                **self.variables,
            )
        except jinja2.exceptions.TemplateSyntaxError as exc:
            raise TemplateFailed(f"the chat template is not valid Jinja: {exc}") from None
        except jinja2.exceptions.TemplateError as exc:
            raise TemplateFailed(f"the chat template raised: {exc}") from None
        except (TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:
            raise TemplateFailed(f"the chat template failed: {type(exc).__name__}: {exc}") from None


def _as_transformers_passes(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages as apply_chat_template hands them to the template: null values dropped, a
    reasoning text also under `thinking` and `reasoning_content`."""
    out: list[dict[str, Any]] = []
    for message in messages:
        clean = {k: v for k, v in message.items() if v is not None}
        reasoning = next((clean[k] for k in REASONING_FIELDS if clean.get(k) is not None), None)
        if reasoning is not None:
            clean = {"thinking": reasoning, **clean, "reasoning_content": reasoning}
        out.append(clean)
    return out


def find_template(model_path: str, source: str | None = None) -> ChatTemplate | None:
    """The chat template for a model file: from `source` (a tokenizer_config.json, a .jinja file
    or a folder holding either) when given, else from beside the file or inside it; None when
    there is none."""
    if source is not None:
        found = _from_path(Path(source))
        if found is None:
            raise TemplateFailed(f"{source}: no chat template there")
        return found
    path = Path(model_path)
    return _from_path(path.parent) or _from_config(path, _read_json(path))


def _from_path(path: Path) -> ChatTemplate | None:
    if path.is_dir():
        return _from_path(path / CONFIG_FILE) or _from_path(path / JINJA_FILE)
    if not path.is_file():
        return None
    if path.suffix.lower() == ".json":
        config = _read_json(path)
        found = _from_config(path, config)
        jinja = path.parent / JINJA_FILE
        if found is None and config is not None and jinja.is_file():
            return ChatTemplate(_read_text(jinja), special_tokens(config), str(jinja))
        return found
    config = _read_json(path.parent / CONFIG_FILE) or {}
    return ChatTemplate(_read_text(path), special_tokens(config), str(path))


def _from_config(path: Path, config: dict[str, Any] | None) -> ChatTemplate | None:
    if config is None:
        return None
    template = config.get("chat_template")
    if isinstance(template, str):
        return ChatTemplate(template, special_tokens(config), str(path))
    if isinstance(template, list):
        named = {
            t["name"]: t["template"]
            for t in template
            if isinstance(t, dict) and isinstance(t.get("name"), str)
        }
        if named:
            return ChatTemplate(named, special_tokens(config), str(path))
    return None


def special_tokens(config: dict[str, Any]) -> dict[str, str]:
    """The special tokens a tokenizer configuration names, as templates see them (an
    AddedToken's content)."""
    out: dict[str, str] = {}
    for name in SPECIAL_TOKENS:
        value = config.get(name)
        if isinstance(value, dict):
            value = value.get("content")
        if isinstance(value, str):
            out[name] = value
    return out


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TemplateFailed(f"{path}: cannot read the chat template ({exc})") from None
