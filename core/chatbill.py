"""What a model is billed for a conversation: its messages as the model's chat format writes them.

Each kind of model has its own rule (docs/chat.md):
- a tokenizer.json with a chat template (in tokenizer_config.json or chat_template.jinja beside it,
  or in the file): the template rendered as transformers' `apply_chat_template(messages,
  tools=..., tokenize=False)` renders it (chattemplate.py), then encoded by the model, the special
  tokens the template writes matched as the library matches them;
- a Mistral Tekken file: mistral-common's own encoding of the chat-completion request;
- a tiktoken encoding: OpenAI's published rule (3 tokens per message, 1 more with a name, 3 to
  prime the reply), an estimate;
- anything else (a SentencePiece model): the contents alone.

Bills made by a template or mistral-common are kept by the conversation's content, so that
billing an unchanged conversation again (an editor re-bills a file after each edit of one message)
costs a hash, and contents by their text, so an edit re-encodes only the message it touched.

Interpreted, not compiled: it runs jinja2's and mistral-common's Python code.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tokenline.core.chattemplate import ChatTemplate, TemplateFailed, find_template
from tokenline.core.model import Model

TEMPLATE: str = "template"
MISTRAL: str = "mistral"
ESTIMATE: str = "estimate"
CONTENTS_ONLY: str = "contents only"

# OpenAI's rule for its chat models (the cookbook's "How to count tokens with tiktoken"):
# <|start|>{role/name}\n{content}<|end|>\n around each message, and <|start|>assistant<|message|>
# priming the reply.
TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
REPLY_PRIMING = 3

# How many bills and contents' counts a biller keeps (a few hundred bytes each).
BILLS_KEPT = 1 << 18
CONTENTS_KEPT = 1 << 18


@dataclass(frozen=True)
class Bill:
    """A conversation's tokens: what the model is billed, and the messages' contents alone."""

    tokens: int
    contents: int
    per_message: tuple[int, ...]
    # True when `tokens` is a published rule's estimate, not the model's own encoding.
    estimate: bool
    mode: str


class ChatError(Exception):
    """A conversation that cannot be billed: the template raised, a content of a kind no rule
    counts, mistral-common refused the request."""


class ChatBiller:
    """Bills conversations for one model (for_model picks the rule)."""

    def __init__(
        self,
        model: Model,
        mode: str,
        template: ChatTemplate | None = None,
        mistral: Any = None,
    ) -> None:
        self.model = model
        self._mode = mode
        self.template = template
        self._mistral = mistral
        self._bills: dict[bytes, Bill | ChatError] = {}
        self._contents: dict[str, int] = {}

    @classmethod
    def for_model(cls, model: Model, template_source: str | None = None) -> ChatBiller:
        """The biller of a model: its chat template when it is a tokenizer.json with one
        (`template_source`: a tokenizer_config.json, a .jinja file or a folder holding either,
        to use instead of the one beside the model), mistral-common's encoding for Tekken,
        OpenAI's rule for tiktoken encodings, else the contents alone. ChatError when
        `template_source` holds no template, or a template file cannot be read."""
        if model.model_type.endswith("(tokenizer.json)") or template_source is not None:
            try:
                template = find_template(model.path, template_source)
            except TemplateFailed as exc:
                raise ChatError(str(exc)) from None
            if template is not None:
                return cls(model, TEMPLATE, template)
        if model.model_type == "tekken":
            return cls(model, MISTRAL)
        if model.model_type.startswith("tiktoken"):
            return cls(model, ESTIMATE)
        return cls(model, CONTENTS_ONLY)

    @property
    def mode(self) -> str:
        """ "template", "mistral", "estimate" or "contents only"."""
        return self._mode

    def bill(self, messages: list[dict[str, Any]], tools: list[Any] | None = None) -> Bill:
        """The conversation's bill (ChatError when it cannot be billed)."""
        if self._mode in (CONTENTS_ONLY, ESTIMATE):
            # Sums of contents' counts, which are kept by text: keeping the bill too would cost
            # more (its key encodes the whole conversation) than it saves.
            return self._bill(messages, tools)
        key = _key(messages, tools)
        found = self._bills.get(key)
        if found is None:
            try:
                found = self._bill(messages, tools)
            except ChatError as exc:
                found = exc
            if len(self._bills) >= BILLS_KEPT:
                # Emptied, not trimmed: deleting the first key again and again walks the dict's
                # deleted slots from its start each time (quadratic once full).
                self._bills.clear()
            self._bills[key] = found
        if isinstance(found, ChatError):
            raise found
        return found

    def _bill(self, messages: list[dict[str, Any]], tools: list[Any] | None) -> Bill:
        per_message = tuple([self._message_contents(i, m) for i, m in enumerate(messages)])
        contents = sum(per_message)
        if self._mode == TEMPLATE:
            tokens = len(self.model.encode(self._rendered(messages, tools)))
        elif self._mode == MISTRAL:
            tokens = self._mistral_tokens(messages, tools)
        elif self._mode == ESTIMATE:
            tokens = self._estimate(messages, tools)
        else:
            tokens = contents
        return Bill(tokens, contents, per_message, self._mode == ESTIMATE, self._mode)

    def render(self, messages: list[dict[str, Any]], tools: list[Any] | None = None) -> str:
        """The text the chat template makes of a conversation (ChatError when it raises or
        the model has no template)."""
        if self.template is None:
            raise ChatError(f"{self.model.name} has no chat template")
        return self._rendered(messages, tools)

    def _rendered(self, messages: list[dict[str, Any]], tools: list[Any] | None) -> str:
        assert self.template is not None
        try:
            return encodable(self.template.render(messages, tools))
        except TemplateFailed as exc:
            raise ChatError(str(exc)) from None

    def count(self, text: str) -> int:
        """Tokens of a text alone (kept by text)."""
        found = self._contents.get(text)
        if found is None:
            found = len(self.model.encode(encodable(text))) if text else 0
            if len(self._contents) >= CONTENTS_KEPT:
                self._contents.clear()
            self._contents[text] = found
        return found

    def _message_contents(self, index: int, message: dict[str, Any]) -> int:
        content = message.get("content")
        if isinstance(content, str):
            return self.count(content)  # the common case, without a list of one text
        return sum(self.count(t) for t in content_texts(index, content))

    def _estimate(self, messages: list[dict[str, Any]], tools: list[Any] | None) -> int:
        """OpenAI's rule: every value of every message encoded, plus its fixed tokens."""
        total = REPLY_PRIMING
        for i, message in enumerate(messages):
            total += TOKENS_PER_MESSAGE
            for key, value in message.items():
                if key == "content":
                    total += sum(self.count(t) for t in content_texts(i, value))
                elif isinstance(value, str):
                    total += self.count(value)
                elif value is not None:
                    total += self.count(_compact(value))
                if key == "name":
                    total += TOKENS_PER_NAME
        if tools:
            total += self.count(_compact(tools))
        return total

    def _mistral_tokens(self, messages: list[dict[str, Any]], tools: list[Any] | None) -> int:
        if self._mistral is None:
            self._mistral = _mistral_encoder(self.model.path)
        encode: Callable[[list[dict[str, Any]], list[Any] | None], int] = self._mistral
        return encode(messages, tools)


def content_texts(index: int, content: Any) -> list[str]:
    """The texts of a message's content that count: the string, or the text parts of a list of
    parts (images and other parts count nothing here); ChatError for any other kind."""
    if content is None:
        return []
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        out: list[str] = []
        for part in content:
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, dict):
                text = part.get("text")
                if part.get("type", "text") == "text" and isinstance(text, str):
                    out.append(text)
            else:
                raise ChatError(
                    f"message {index + 1}: a content part is neither text nor an object"
                )
        return out
    raise ChatError(
        f"message {index + 1}: content is {type(content).__name__}; a string or a list of parts "
        "is expected"
    )


def encodable(text: str) -> str:
    """The text, when a model can encode it: ChatError when it holds a lone surrogate (JSON's
    escape "\\ud800" reads as one), which no tokenizer encodes."""
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            cp = ord(text[exc.start])
            raise ChatError(
                f"a lone surrogate (U+{cp:04X}, \\u{cp:04x} in JSON) cannot be encoded by any model"
            ) from None
    return text


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _key(messages: list[dict[str, Any]], tools: list[Any] | None) -> bytes:
    text = json.dumps([messages, tools], ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _mistral_encoder(path: str) -> Callable[[list[dict[str, Any]], list[Any] | None], int]:
    """mistral-common's chat-completion encoding of a Tekken file, as a count: a conversation
    that ends with the assistant's message is encoded as a fine-tuning example (mistral-common
    asks the last message of a request for a reply to be the user's or a tool's)."""
    try:
        from mistral_common.protocol.instruct.request import ChatCompletionRequest
        from mistral_common.protocol.instruct.validator import ValidationMode
        from mistral_common.tokens.tokenizers.mistral import MistralTokenizer
    except ImportError:
        raise ChatError(
            "billing conversations for a Tekken file needs mistral-common "
            "(pip install 'tokenline[mistral]')"
        ) from None
    try:
        request_mode = MistralTokenizer.from_file(path, mode=ValidationMode.test)
        finetuning = MistralTokenizer.from_file(path, mode=ValidationMode.finetuning)
    except Exception as exc:
        raise ChatError(f"mistral-common cannot read {Path(path).name}: {exc}") from None

    def encode(messages: list[dict[str, Any]], tools: list[Any] | None) -> int:
        last = messages[-1].get("role") if messages else None
        tokenizer = finetuning if last == "assistant" else request_mode
        try:
            request = ChatCompletionRequest(messages=messages, tools=tools)  # type: ignore[type-var]
            return len(tokenizer.encode_chat_completion(request).tokens)
        except Exception as exc:
            raise ChatError(
                f"mistral-common refused the conversation: {_first_line(exc)}"
            ) from None

    return encode


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
