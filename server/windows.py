"""Context windows the server knows for a model, when the user's `tokenline.contextWindows` names
none: OpenAI's published windows for the model names tiktoken knows, and the `model_max_length`
of a `tokenizer_config.json` beside a tokenizer file (as Hugging Face repos ship them).

A tiktoken encoding (`o200k_base`) or a bare tokenizer file has no window of its own: it is
unknown (None), never guessed.
"""

from __future__ import annotations

import json
from pathlib import Path

# OpenAI's published context windows, in tokens, of the model names tiktoken maps to an encoding.
OPENAI_WINDOWS = {
    "gpt-4o": 128_000,
    "gpt-4o-mini": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4": 8_192,
    "gpt-4-32k": 32_768,
    "gpt-3.5-turbo": 16_385,
    "gpt-4.1": 1_047_576,
    "gpt-4.1-mini": 1_047_576,
    "gpt-4.1-nano": 1_047_576,
    "o1": 200_000,
    "o3": 200_000,
    "o3-mini": 200_000,
    "o4-mini": 200_000,
}
CONFIG_FILE = "tokenizer_config.json"
# transformers writes a huge number (int(1e30)) when a tokenizer has no limit: not a window.
MOST_PLAUSIBLE_WINDOW = 100_000_000
# A tokenizer_config.json larger than this is not read (they are a few kilobytes).
MOST_CONFIG_BYTES = 8 << 20


def known_window(spec: str, path: str | None) -> int | None:
    """The window of the model `spec` names (loaded from `path`, when a file), or None."""
    by_name = OPENAI_WINDOWS.get(spec.strip())
    if by_name is not None:
        return by_name
    return None if path is None else configured_window(Path(path))


def configured_window(model_file: Path) -> int | None:
    """`model_max_length` of the tokenizer_config.json beside a tokenizer file, when it is a
    plausible number of tokens."""
    config = model_file.parent / CONFIG_FILE
    try:
        if not config.is_file() or config.stat().st_size > MOST_CONFIG_BYTES:
            return None
        value = json.loads(config.read_text(encoding="utf-8")).get("model_max_length")
    except (OSError, ValueError, AttributeError):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value if 0 < value <= MOST_PLAUSIBLE_WINDOW else None
    return None
