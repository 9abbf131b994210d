"""Loading tiktoken encodings and Mistral Tekken files into Models.

tiktoken loads its own encodings (so its cache and TIKTOKEN_CACHE_DIR apply); a Tekken file is a
tiktoken encoding in JSON whose first ids are Mistral's special tokens. Interpreted, not compiled:
it runs once per load.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import importlib
import os
import pkgutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import tiktoken
from tiktoken.model import encoding_name_for_model

from tokenline.core.bytelevel import ByteLevelFamily, TiktokenCoder
from tokenline.core.model import Model
from tokenline.core.modelfile import ModelError, display_name
from tokenline.core.pretokens import PreTokenSegmenter, reads_little, run_class
from tokenline.core.vocab import (
    FLAG_BYTE,
    FLAG_CONTINUATION,
    FLAG_SPECIAL,
    FLAG_WHITESPACE,
    Vocabulary,
)

CONTINUATION_BYTES = bytes(range(0x80, 0xC0))


def tiktoken_name(spec: str) -> str | None:
    """The encoding a tiktoken encoding name or OpenAI model name stands for, else None."""
    if spec in tiktoken.list_encoding_names():
        return spec
    try:
        return encoding_name_for_model(spec)
    except KeyError:
        return None


def load_tiktoken(spec: str) -> Model:
    """The tiktoken encoding `spec` names (an encoding or an OpenAI model name)."""
    name = tiktoken_name(spec)
    if name is None:
        raise ModelError(spec, "not a tiktoken encoding or OpenAI model name")
    try:
        enc = tiktoken.get_encoding(name)
    except Exception as exc:  # network, cache and hash errors alike
        cache = tiktoken_cache_dir()
        where = f"tiktoken's cache {cache}" if cache else "tiktoken's cache, which is off"
        raise ModelError(
            spec, f"tiktoken could not load {name} (not in {where}, and fetching it failed: {exc})"
        ) from exc
    label = spec if spec == name else f"{spec} ({name})"
    return model_from_encoding(enc, label)


def model_from_encoding(enc: Any, name: str | None = None, path: str | None = None) -> Model:
    """A Model for a tiktoken Encoding object (one of tiktoken's, or one built by hand; path is
    the file it was read from, when not tiktoken's cache)."""
    vocab = _vocabulary(_token_bytes(enc), {v: k for k, v in enc._special_tokens.items()}, 0)
    return _model(name or enc.name, path or enc.name, "tiktoken", vocab, enc, enc._pat_str, 0)


def _token_bytes(enc: Any) -> list[bytes | None]:
    """Each rank's bytes (None for ids that are special tokens or holes)."""
    out: list[bytes | None] = [None] * enc.n_vocab
    for token, rank in enc._mergeable_ranks.items():
        out[rank] = token
    return out


def is_tekken_data(data: Any) -> bool:
    """Whether a JSON file's content is meant as a Tekken file: Tekken's keys ("config" and
    "vocab"; one of them is enough for tekken_from_data to say what the other lacks) and no
    tokenizer.json "model"."""
    return isinstance(data, dict) and "model" not in data and ("config" in data or "vocab" in data)


def tekken_from_data(data: Any, where: str) -> Model:
    """The Model of a Tekken file's JSON (where names the file)."""
    try:
        config = data["config"]
        pattern = str(config["pattern"])
        specials = int(config["default_num_special_tokens"])
        size = int(config["default_vocab_size"]) - specials
        entries = data["vocab"][:size]
        ranks = {base64.b64decode(e["token_bytes"]): int(e["rank"]) for e in entries}
    except (ValueError, KeyError, TypeError) as exc:
        problem = f"not a Tekken tokenizer file ({type(exc).__name__}: {exc})"
        raise ModelError(where, problem) from exc
    name = Path(where).name
    enc = tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    names = {i: _special_name(data, i) for i in range(specials)}
    by_rank: list[bytes | None] = [None] * (specials + size)
    for token, rank in ranks.items():
        by_rank[specials + rank] = token
    vocab = _vocabulary(by_rank, names, specials)
    return _model(display_name(where), where, "tekken", vocab, enc, pattern, specials)


# The special tokens of Tekken files that do not list theirs (mistral-common's deprecated list);
# the rest are <SPECIAL_i>, as mistral-common names them.
TEKKEN_SPECIALS = (
    "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]",
    "[IMG_END]", "[PREFIX]", "[MIDDLE]", "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
)  # fmt: skip


def _special_name(data: dict[str, Any], i: int) -> str:
    listed = data.get("special_tokens")
    if isinstance(listed, list):
        if i < len(listed) and isinstance(listed[i], dict):
            return str(listed[i].get("token_str", f"<SPECIAL_{i}>"))
        return f"<SPECIAL_{i}>"
    return TEKKEN_SPECIALS[i] if i < len(TEKKEN_SPECIALS) else f"<SPECIAL_{i}>"


def _vocabulary(tokens: list[bytes | None], specials: dict[int, str], offset: int) -> Vocabulary:
    """Pieces (decoded for display), lengths (characters that start in the token) and kinds."""
    vocab = Vocabulary()
    vocab.unk_id = -1
    for i, token in enumerate(tokens):
        if token is None:
            vocab.add(specials.get(i, ""), 0, FLAG_SPECIAL)
            continue
        starts = len(token.translate(None, CONTINUATION_BYTES))
        flags = 0
        if token[:1] and token[0] in CONTINUATION_BYTES:
            flags |= FLAG_CONTINUATION
        try:
            piece = token.decode("utf-8")
        except UnicodeDecodeError:
            piece = token.decode("utf-8", errors="replace")
            flags |= FLAG_BYTE
        if piece.isspace():
            flags |= FLAG_WHITESPACE
        vocab.add(piece, starts, flags)
    return vocab


def _model(
    label: str, path: str, model_type: str, vocab: Vocabulary, enc: Any, pattern: str, offset: int
) -> Model:
    coder = TiktokenCoder(enc, enc._mergeable_ranks, offset)
    family = ByteLevelFamily(vocab, coder, PreTokenSegmenter(pattern))
    if reads_little(pattern):
        family.use_pretokens()
        family.guard_newer_characters()
        family.use_runs(run_class(pattern))
    else:
        family.incremental = False
        family.mode_note = (
            "its pre-tokenizer pattern is not one Tokenline knows to read only a few characters "
            "past each cut, so every edit re-encodes the whole text"
        )
    return Model(label, path, model_type, family)


# -- which encodings tiktoken's cache holds (for model pickers) ------------------------------------


def tiktoken_cache_dir() -> Path | None:
    """Where tiktoken caches encoding files (tiktoken.load.read_file_cached's choice); None when
    caching is off (TIKTOKEN_CACHE_DIR set to "")."""
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        where = os.environ["TIKTOKEN_CACHE_DIR"]
    elif "DATA_GYM_CACHE_DIR" in os.environ:
        where = os.environ["DATA_GYM_CACHE_DIR"]
    else:
        where = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    return Path(where) if where else None


def tiktoken_cache_file(location: str, cache: Path) -> Path:
    """The file tiktoken caches `location` in: the sha1 of the URL, in the cache folder."""
    return cache / hashlib.sha1(location.encode()).hexdigest()


class _Located(Exception):
    """Raised by the stand-in loaders: the files an encoding would read (and the sha256 tiktoken
    expects of a rank file), with nothing fetched."""

    def __init__(self, locations: list[str], expected_hash: str | None = None) -> None:
        super().__init__(", ".join(locations))
        self.locations = locations
        self.expected_hash = expected_hash


def _capture_tiktoken(*args: object, **kwargs: object) -> Any:
    """Stands in for tiktoken.load.load_tiktoken_bpe(tiktoken_bpe_file, expected_hash)."""
    digest = args[1] if len(args) > 1 else kwargs.get("expected_hash")
    where = str(args[0] if args else kwargs.get("tiktoken_bpe_file"))
    raise _Located([where], digest if isinstance(digest, str) else None)


def _capture_data_gym(*args: object, **kwargs: object) -> Any:
    """Stands in for data_gym_to_mergeable_bpe_ranks(vocab_bpe_file, encoder_json_file, ...)."""
    names = ("vocab_bpe_file", "encoder_json_file")
    raise _Located([str(args[i] if len(args) > i else kwargs.get(n)) for i, n in enumerate(names)])


LOADERS = {
    "load_tiktoken_bpe": _capture_tiktoken,
    "data_gym_to_mergeable_bpe_ranks": _capture_data_gym,
}


@contextlib.contextmanager
def _stand_ins(module: Any, loaders: dict[str, Any]) -> Iterator[None]:
    """Replaces a tiktoken plugin's file loaders for the duration of the block."""
    saved = {attr: getattr(module, attr) for attr in loaders if hasattr(module, attr)}
    try:
        for attr, stand_in in loaders.items():
            setattr(module, attr, stand_in)
        yield
    finally:
        for attr in loaders:
            if attr in saved:
                setattr(module, attr, saved[attr])
            else:
                delattr(module, attr)


def _constructors() -> Iterator[tuple[Any, str, Any]]:
    """(plugin module, encoding name, constructor) of every encoding tiktoken's plugins define,
    in their order."""
    plugins = importlib.import_module("tiktoken_ext")
    for info in pkgutil.iter_modules(plugins.__path__, plugins.__name__ + "."):
        try:
            module = importlib.import_module(info.name)
        except Exception:  # a broken plugin lists nothing
            continue
        constructors = getattr(module, "ENCODING_CONSTRUCTORS", None) or {}
        for name, constructor in constructors.items():
            yield module, name, constructor


def _located() -> list[tuple[Any, str, Any, _Located]]:
    """What each encoding's constructor asks its loaders for (run with stand-ins that only
    record the request)."""
    found: list[tuple[Any, str, Any, _Located]] = []
    for module, name, constructor in _constructors():
        with _stand_ins(module, LOADERS), contextlib.suppress(Exception):
            try:
                constructor()
            except _Located as located:  # another shape of constructor: unlisted
                found.append((module, name, constructor, located))
    return found


def tiktoken_locations() -> dict[str, list[str]]:
    """The URLs of the files each encoding of tiktoken's plugins loads."""
    found: dict[str, list[str]] = {}
    for _, name, _, located in _located():
        found.setdefault(name, located.locations)
    return found


def tiktoken_hashes() -> dict[str, str]:
    """Encoding name by the sha256 tiktoken expects of its one rank file (the first encoding
    listed wins where two share a file, as o200k_base and o200k_harmony do)."""
    out: dict[str, str] = {}
    for _, name, _, located in _located():
        if located.expected_hash and len(located.locations) == 1:
            out.setdefault(located.expected_hash, name)
    return out


def encoding_from_ranks(name: str, ranks: dict[bytes, int]) -> Any:
    """tiktoken's encoding `name` (its pattern and special tokens) over ranks read from a local
    file, its constructor run with a loader that hands it those ranks."""

    def given(*args: object, **kwargs: object) -> dict[bytes, int]:
        return ranks

    for module, known, constructor in _constructors():
        if known == name:
            with _stand_ins(module, {"load_tiktoken_bpe": given}):
                params = constructor()
            return tiktoken.Encoding(**params)
    raise KeyError(name)


def cached_tiktoken_encodings() -> list[tuple[str, Path]]:
    """(encoding name, cached file) of each tiktoken encoding whose every file is in tiktoken's
    cache, so that loading it needs no network."""
    cache = tiktoken_cache_dir()
    if cache is None or not cache.is_dir():
        return []
    out: list[tuple[str, Path]] = []
    for name, locations in sorted(tiktoken_locations().items()):
        files = [tiktoken_cache_file(loc, cache) for loc in locations]
        if files and all(f.is_file() for f in files):
            out.append((name, files[0]))
    return out
