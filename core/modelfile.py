"""What every loader shares: the error a bad model file raises, reading a file, and how a model
is named after its file. Interpreted: runs once per model load.
"""

from __future__ import annotations

from pathlib import Path

# Suffixes a model's name leaves out, and the file names that say nothing of the model (a Hub
# repo's tokenizer.json or tokenizer.model), named after their folder instead; Meta's downloads
# keep tokenizer.model in a folder named "original", named after the folder above it.
NAME_SUFFIXES = (".model", ".json", ".tiktoken")
GENERIC_STEMS = frozenset({"tokenizer", "tiktoken"})
GENERIC_FOLDERS = frozenset({"original"})


class ModelError(ValueError):
    """A model file that cannot be used: the message names the path and the reason."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"cannot load tokenizer model {path}: {reason}")
        self.path = path
        self.reason = reason


def read_model_file(p: str, what: str, limit: int = -1) -> bytes:
    """A tokenizer file's bytes (its first `limit` bytes when limit >= 0); ModelError saying why
    when it cannot be read (`what` names the sort of file a directory at p is not)."""
    try:
        with Path(p).open("rb") as f:
            return f.read(limit)
    except FileNotFoundError:
        raise ModelError(p, "no such file") from None
    except IsADirectoryError:
        raise ModelError(p, f"it is a directory, not {what}") from None
    except OSError as exc:
        raise ModelError(p, f"unreadable ({exc.strerror or exc})") from None


def display_name(path: str) -> str:
    """A model's name from its file: the file name without its suffix (`mistral-7b-v0.1`,
    `tekken_240911`); `tokenizer.json` or `tokenizer.model` take their folder's name."""
    p = Path(path)
    stem = p.name
    for suffix in NAME_SUFFIXES:
        if stem.lower().endswith(suffix) and len(stem) > len(suffix):
            stem = stem[: -len(suffix)]
            break
    if stem.lower() not in GENERIC_STEMS:
        return stem
    folder = p.parent
    if folder.name.lower() in GENERIC_FOLDERS and folder.parent.name:
        folder = folder.parent
    return folder.name or stem


def short_error(exc: BaseException) -> str:
    """The last line of an exception's message (libraries' errors can run to many lines)."""
    text = str(exc).strip().splitlines()
    return text[-1] if text else type(exc).__name__
