"""Conversations billed as the model is billed, against the references: transformers'
apply_chat_template (render, then encode) for real chat templates on real tokenizer.json files,
mistral-common for Tekken, OpenAI's cookbook for the tiktoken rule.

The templates are in tests/data/chat_templates (SOURCES.md). Each is paired with committed
tokenizer files: the tokenizer.json its repository ships where we have it (Phi-3 mini), else
byte-level, Llama 2 style and Unigram files. The pair is written into one folder as a Hub repo
holds them, with only the special tokens the tokenizer knows: transformers adds a configured
special token the tokenizer.json lacks as a new token, which a real repo never needs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jinja2
import pytest
from hypothesis import given, note
from hypothesis import strategies as st
from tokenizers import Tokenizer
from transformers import PreTrainedTokenizerFast

from tests.conftest import DATA, shared_file, tekken_path
from tokenline.core import Bill, ChatBiller, ChatError, load_model

TEMPLATES = DATA / "chat_templates"
TOKENIZERS = DATA / "tokenizers"
SPECIALS = (
    "bos_token",
    "eos_token",
    "unk_token",
    "sep_token",
    "pad_token",
    "cls_token",
    "mask_token",
)
# Template -> tokenizers it is checked with.
PAIRS = {
    "phi-3-mini": ["phi-3-mini", "gpt2"],
    "phi-4-mini": ["phi-3-mini", "gpt2"],
    "mistral-7b-instruct-v0.1": ["phi-3-mini", "t5-small"],
    "mistral-instruct": ["phi-3-mini", "gpt-neox-20b"],
    "zephyr": ["phi-3-mini", "falcon"],
    "llama-3-instruct": ["gpt2", "phi-3-mini"],
    "gemma-it": ["gpt-neox-20b", "t5-small"],
    "qwen2.5": ["gpt2", "phi-3-mini"],
    "qwen3": ["gpt-neox-20b", "phi-3-mini"],
    "deepseek-r1": ["falcon", "phi-3-mini"],
    "gpt-oss": ["gpt2"],
    "smollm3": ["gpt-neox-20b"],
}
CASES = [(t, k) for t, tokenizers in PAIRS.items() for k in tokenizers]


def _config(template: str) -> dict[str, Any]:
    return dict(json.loads((TEMPLATES / template / "tokenizer_config.json").read_text("utf-8")))


def _token(value: Any) -> str | None:
    return value.get("content") if isinstance(value, dict) else value


class Pair:
    """A template and a tokenizer in one folder, billed by Tokenline and by transformers."""

    def __init__(self, folder: Path, template: str, tokenizer: str) -> None:
        shutil.copy(TOKENIZERS / tokenizer / "tokenizer.json", folder / "tokenizer.json")
        jinja = TEMPLATES / template / "chat_template.jinja"
        if jinja.is_file():
            shutil.copy(jinja, folder / "chat_template.jinja")
        config = _config(template)
        vocab = Tokenizer.from_file(str(folder / "tokenizer.json"))
        # Whether the tokenizer has every special token the template's configuration names.
        self.complete = True
        for name in SPECIALS:
            token = _token(config.get(name))
            if token is not None and vocab.token_to_id(token) is None:
                self.complete = False
            if token is None or vocab.token_to_id(token) is None:
                config.pop(name, None)
        (folder / "tokenizer_config.json").write_text(json.dumps(config), "utf-8")
        self.biller = ChatBiller.for_model(load_model(folder))
        kwargs = {n: _token(config[n]) for n in SPECIALS if n in config}
        source = config.get("chat_template")
        self.reference = PreTrainedTokenizerFast(
            tokenizer_file=str(folder / "tokenizer.json"),
            chat_template=jinja.read_text("utf-8") if source is None else source,
            **kwargs,
        )

    def check(self, messages: list[dict[str, Any]], tools: list[Any] | None = None) -> Bill | None:
        """Tokenline's bill equals the reference's render and encode, or both fail alike; the
        bill, or None when the template refused the conversation."""
        try:
            text = self.reference.apply_chat_template(messages, tools=tools, tokenize=False)
        except jinja2.TemplateError as exc:
            with pytest.raises(ChatError) as raised:
                self.biller.bill(messages, tools)
            assert str(exc) in str(raised.value)
            return None
        except (TypeError, ValueError, KeyError, IndexError, AttributeError):
            with pytest.raises(ChatError):
                self.biller.bill(messages, tools)
            return None
        assert self.biller.render(messages, tools) == text
        ids = self.reference.apply_chat_template(messages, tools=tools, return_dict=False)
        bill = self.biller.bill(messages, tools)
        assert bill.tokens == len(ids) == len(self.reference.encode(text, add_special_tokens=False))
        assert bill.mode == "template" and not bill.estimate
        return bill


@pytest.fixture(scope="module", params=CASES, ids=[f"{t}+{k}" for t, k in CASES])
def pair(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Pair:
    template, tokenizer = request.param
    return Pair(tmp_path_factory.mktemp(f"{template}-{tokenizer}"), template, tokenizer)


# Text with what templates and tokenizers treat apart: special tokens, spaces to trim, newlines,
# astral characters, combining marks.
TEXT = st.lists(
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=4)
    | st.sampled_from(
        [" ", "\n", "<|im_end|>", "<s>", "</s>", "[INST]", "<|end|>", "<|endoftext|>", "😀", "é"]
    ),
    max_size=6,
).map("".join)
PARTS = st.lists(
    st.one_of(
        st.fixed_dictionaries({"type": st.just("text"), "text": TEXT}),
        st.just({"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}),
    ),
    min_size=1,
    max_size=3,
)
TOOL_CALL = st.fixed_dictionaries(
    {
        "id": st.just("call_1"),
        "type": st.just("function"),
        "function": st.fixed_dictionaries(
            {
                "name": st.sampled_from(["get_weather", "search"]),
                "arguments": st.just({"city": "Paris"}),
            }
        ),
    }
)
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]


@st.composite
def messages(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Conversations of every shape: alternating (what most templates accept), or any roles;
    contents as strings, parts or empty, with names and tool calls."""
    if draw(st.booleans()):
        turns = draw(st.integers(1, 4))
        roles = ["user" if i % 2 == 0 else "assistant" for i in range(turns)]
        if draw(st.booleans()):
            roles.insert(0, "system")
    else:
        roles = draw(
            st.lists(
                st.sampled_from(["system", "user", "assistant", "tool"]), min_size=1, max_size=4
            )
        )
    out: list[dict[str, Any]] = []
    for role in roles:
        message: dict[str, Any] = {"role": role, "content": draw(TEXT)}
        kind = draw(st.integers(0, 9))
        if kind == 0:
            message["content"] = draw(PARTS)
        elif kind == 1:
            message["name"] = draw(st.sampled_from(["example_user", "bob"]))
        elif kind == 2 and role == "assistant":
            message["tool_calls"] = [draw(TOOL_CALL)]
            message["content"] = draw(st.sampled_from(["", None]))
        elif kind == 3 and role == "tool":
            message["tool_call_id"] = "call_1"
        out.append(message)
    return out


@given(conversation=messages(), with_tools=st.booleans())
def test_bills_equal_transformers(
    pair: Pair, conversation: list[dict[str, Any]], with_tools: bool
) -> None:
    note(json.dumps(conversation, ensure_ascii=False))
    pair.check(conversation, TOOLS if with_tools else None)


def test_a_plain_conversation_renders_on_every_pair(pair: Pair) -> None:
    """The same simple conversation bills on every template (none refuses it, unless it writes a
    special token the paired tokenizer lacks), and its parts add up: the contents are counted
    apart from what the template adds."""
    conversation = [
        {"role": "user", "content": "What is the capital of France?"},
        {"role": "assistant", "content": "Paris."},
        {"role": "user", "content": "And of Italy?"},
    ]
    bill = pair.check(conversation)
    if bill is None:
        assert not pair.complete
        return
    count = pair.biller.count
    assert bill.per_message == tuple(count(m["content"]) for m in conversation)
    assert bill.contents == sum(bill.per_message)
    assert bill.tokens > bill.contents


def test_alternation_error_is_the_templates_own_message(tmp_path: Path) -> None:
    pair = Pair(tmp_path, "mistral-7b-instruct-v0.1", "phi-3-mini")
    bad = [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
    assert pair.check(bad) is None
    with pytest.raises(ChatError, match="Conversation roles must alternate user/assistant"):
        pair.biller.bill(bad)
    # Refused again from the cache, the same way.
    with pytest.raises(ChatError, match="Conversation roles must alternate"):
        pair.biller.bill(bad)


def test_phi3_mini_is_billed_with_its_own_template_from_its_folder(tmp_path: Path) -> None:
    """A Hub-style folder: tokenizer.json and tokenizer_config.json side by side; the special
    tokens the template writes (<|user|>, <|end|>) are single tokens."""
    shutil.copy(TOKENIZERS / "phi-3-mini" / "tokenizer.json", tmp_path)
    shutil.copy(TEMPLATES / "phi-3-mini" / "tokenizer_config.json", tmp_path)
    model = load_model(tmp_path)
    biller = ChatBiller.for_model(model)
    assert biller.mode == "template"
    conversation = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]
    text = biller.render(conversation)
    assert text.startswith("<|user|>\nHi<|end|>\n<|assistant|>\nHello<|end|>\n")
    ids = model.encode(text)
    specials = [model.piece(i) for i in ids if model.piece(i).startswith("<|")]
    assert specials[:4] == ["<|user|>", "<|end|>", "<|assistant|>", "<|end|>"]
    assert biller.bill(conversation).tokens == len(ids)


def test_unchanged_conversations_are_billed_from_the_cache(tmp_path: Path) -> None:
    pair = Pair(tmp_path, "qwen2.5", "gpt2")
    conversation = [{"role": "user", "content": "one"}, {"role": "assistant", "content": "two"}]
    first = pair.biller.bill(conversation)
    assert pair.biller.bill(json.loads(json.dumps(conversation))) is first
    edited = [conversation[0], {"role": "assistant", "content": "two and three"}]
    second = pair.biller.bill(edited)
    assert second is not first and second.tokens > first.tokens
    assert second.per_message[0] == first.per_message[0]


def test_unsupported_content_is_a_chat_error(tmp_path: Path) -> None:
    pair = Pair(tmp_path, "zephyr", "phi-3-mini")
    with pytest.raises(ChatError, match="message 2: content is int"):
        pair.biller.bill([{"role": "user", "content": "a"}, {"role": "assistant", "content": 3}])


def test_tekken_equals_mistral_common() -> None:
    from mistral_common.protocol.instruct.request import ChatCompletionRequest
    from mistral_common.protocol.instruct.validator import ValidationMode
    from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

    model = load_model(tekken_path())
    biller = ChatBiller.for_model(model)
    assert biller.mode == "mistral"
    asks = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Où est la gare ?"},
        {"role": "assistant", "content": "À gauche."},
        {"role": "user", "content": [{"type": "text", "text": "Merci 😀"}]},
    ]
    example = [*asks, {"role": "assistant", "content": "De rien."}]
    for conversation, mode in ((asks, ValidationMode.test), (example, ValidationMode.finetuning)):
        reference = MistralTokenizer.from_file(str(tekken_path()), mode=mode)
        request = ChatCompletionRequest(messages=conversation)  # type: ignore[type-var]
        tokens = reference.encode_chat_completion(request).tokens
        bill = biller.bill(conversation)
        assert bill.tokens == len(tokens)
        assert bill.per_message == tuple(len(model.encode(t)) for t in _texts(conversation))
    with pytest.raises(ChatError, match="mistral-common refused"):
        biller.bill([{"role": "narrator", "content": "a"}])


def _texts(conversation: list[dict[str, Any]]) -> list[str]:
    return [
        m["content"] if isinstance(m["content"], str) else m["content"][0]["text"]
        for m in conversation
    ]


# OpenAI's cookbook, "How to count tokens with tiktoken" (openai/openai-cookbook,
# examples/How_to_count_tokens_with_tiktoken.ipynb,
# commit 06d9feb5e21e6fdc85f3ddce7731e05892758cd7): its example conversation is 129 prompt
# tokens for gpt-4-0613 (cl100k_base), as both its num_tokens_from_messages() and the OpenAI
# API counted it.
COOKBOOK_MESSAGES = [
    {
        "role": "system",
        "content": "You are a helpful, pattern-following assistant that translates corporate "
        "jargon into plain English.",
    },
    {
        "role": "system",
        "name": "example_user",
        "content": "New synergies will help drive top-line growth.",
    },
    {
        "role": "system",
        "name": "example_assistant",
        "content": "Things working well together will increase revenue.",
    },
    {
        "role": "system",
        "name": "example_user",
        "content": "Let's circle back when we have more bandwidth to touch base on opportunities "
        "for increased leverage.",
    },
    {
        "role": "system",
        "name": "example_assistant",
        "content": "Let's talk later when we're less busy about how to do better.",
    },
    {
        "role": "user",
        "content": "This late pivot means we don't have time to boil the ocean for the client "
        "deliverable.",
    },
]
COOKBOOK_GPT4_PROMPT_TOKENS = 129


def test_tiktoken_rule_gives_the_cookbooks_published_count() -> None:
    model = load_model(shared_file("models", "cl100k_base.tiktoken"))
    biller = ChatBiller.for_model(model)
    assert biller.mode == "estimate"
    bill = biller.bill(COOKBOOK_MESSAGES)
    assert bill.tokens == COOKBOOK_GPT4_PROMPT_TOKENS
    assert bill.estimate
    assert bill.contents == sum(len(model.encode(m["content"])) for m in COOKBOOK_MESSAGES)


def test_sentencepiece_without_template_counts_contents_only() -> None:
    model = load_model("mistral-7b-v0.1")  # the bundled SentencePiece model
    biller = ChatBiller.for_model(model)
    assert biller.mode == "contents only"
    conversation = [
        {"role": "user", "content": "Hello there"},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Hi"}, {"type": "text", "text": "!"}],
        },
    ]
    bill = biller.bill(conversation)
    expected = (len(model.encode("Hello there")), len(model.encode("Hi")) + len(model.encode("!")))
    assert bill.per_message == expected
    assert bill.tokens == bill.contents == sum(expected)
    assert not bill.estimate and bill.mode == "contents only"
