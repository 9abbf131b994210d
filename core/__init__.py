"""Tokenline's engine: the exact tokenization of a document (SentencePiece models, Hugging Face
tokenizer.json files), updated per edit.

from tokenline.core import load_model, Document, ModelError, COMPILED
model = load_model(spec)          # path, folder, bundled name or Hub repo id; ModelError
doc = Document(model, text)
doc.edit(start, end, new_text)    # code-point offsets into the current text
doc.ids(), len(doc), doc.text
doc.group(k)                      # tokens that share a character with token k
model.token_kind(id)              # TOKEN_BYTE | TOKEN_SPECIAL | TOKEN_UNKNOWN | TOKEN_WHITESPACE
model.token_bytes(id)             # the bytes a token stands for (b"\xe4" for <0xE4>)
"""

from __future__ import annotations

from tokenline.core import document as _document
from tokenline.core.catalog import TIKTOKEN as TIKTOKEN_KIND
from tokenline.core.catalog import WORKSPACE as WORKSPACE_KIND
from tokenline.core.catalog import CatalogEntry, model_catalog
from tokenline.core.chatbill import CONTENTS_ONLY, Bill, ChatBiller, ChatError, encodable
from tokenline.core.chatcount import plain_contents, plain_messages
from tokenline.core.chatfile import (
    ChatMessage,
    Conversation,
    chat_kind,
    first_record,
    parse_chat,
    parse_jsonl_line,
)
from tokenline.core.counting import UNCOUNTED, TokenCounter
from tokenline.core.document import Document, whole_tokens
from tokenline.core.loader import (
    BUNDLED_DEFAULT,
    bundled_model_path,
    bundled_models,
    load_model_file,
)
from tokenline.core.model import Model
from tokenline.core.modelfile import ModelError
from tokenline.core.resolve import (
    LISTED_FILES,
    ModelSource,
    find_in_hf_cache,
    hf_cached_repos,
    hf_hub_cache,
    load_model,
    resolve_model,
)
from tokenline.core.rope import (
    UTF8,
    UTF16,
    UTF32,
    RopeBuilder,
    TextRope,
    count_breaks,
    units8,
    units16,
    utf8_width,
)
from tokenline.core.tiktokencache import cached_tiktoken_encodings, tiktoken_cache_dir
from tokenline.core.tokens import TokenRun, run_bytes, run_from_bytes
from tokenline.core.vocab import FLAG_BYTE as TOKEN_BYTE
from tokenline.core.vocab import FLAG_SPECIAL as TOKEN_SPECIAL
from tokenline.core.vocab import FLAG_UNKNOWN as TOKEN_UNKNOWN
from tokenline.core.vocab import FLAG_WHITESPACE as TOKEN_WHITESPACE

# True when the engine runs as mypyc-compiled C extensions (pip install without
# TOKENLINE_NO_MYPYC), False for the pure-Python build.
COMPILED: bool = not _document.__file__.endswith(".py")

__all__ = [
    "BUNDLED_DEFAULT",
    "COMPILED",
    "CONTENTS_ONLY",
    "LISTED_FILES",
    "TIKTOKEN_KIND",
    "TOKEN_BYTE",
    "TOKEN_SPECIAL",
    "TOKEN_UNKNOWN",
    "TOKEN_WHITESPACE",
    "UNCOUNTED",
    "UTF8",
    "UTF16",
    "UTF32",
    "WORKSPACE_KIND",
    "Bill",
    "CatalogEntry",
    "ChatBiller",
    "ChatError",
    "ChatMessage",
    "Conversation",
    "Document",
    "Model",
    "ModelError",
    "ModelSource",
    "RopeBuilder",
    "TextRope",
    "TokenCounter",
    "TokenRun",
    "bundled_model_path",
    "bundled_models",
    "cached_tiktoken_encodings",
    "chat_kind",
    "count_breaks",
    "encodable",
    "find_in_hf_cache",
    "first_record",
    "hf_cached_repos",
    "hf_hub_cache",
    "load_model",
    "load_model_file",
    "model_catalog",
    "parse_chat",
    "parse_jsonl_line",
    "plain_contents",
    "plain_messages",
    "resolve_model",
    "run_bytes",
    "run_from_bytes",
    "tiktoken_cache_dir",
    "units8",
    "units16",
    "utf8_width",
    "whole_tokens",
]
