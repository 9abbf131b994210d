"""tiktoken's own cache: where it is, which files each encoding reads, which encodings it holds,
and filling it (by tiktoken's own download, or from files brought from elsewhere).

tiktoken (tiktoken.load.read_file_cached) keeps each downloaded file in its cache folder under
the sha1 of the URL, and checks the file's sha256 against the hash the encoding's constructor
gives. The URLs and hashes are found by running tiktoken's constructors with their loaders
replaced by stand-ins that only record what they are asked for: nothing is fetched, and a newer
tiktoken's encodings are found the same way. Interpreted, not compiled: it only touches files.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import os
import pkgutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import tiktoken
import tiktoken.load

from tokenline.core.modelfile import ModelError

# The longest part of an exception's text quoted in a message (requests' are paragraphs).
SHORT_ERROR_CHARS = 160


@dataclass(frozen=True)
class EncodingFile:
    """One file an encoding reads: where tiktoken downloads it, and its sha256 when tiktoken
    checks one."""

    url: str
    sha256: str | None = None

    @property
    def file_name(self) -> str:
        """The last part of the URL (`o200k_base.tiktoken`): what a download is saved as."""
        return self.url.rstrip("/").rsplit("/", 1)[-1]


@dataclass(frozen=True)
class TiktokenEncoding:
    """An encoding tiktoken knows, and the files it reads (none when its plugin's constructor
    could not be followed: it is known, but where it comes from is not)."""

    name: str
    files: tuple[EncodingFile, ...] = ()

    def cache_files(self, cache: Path) -> list[Path]:
        return [tiktoken_cache_file(f.url, cache) for f in self.files]

    def cached(self, cache: Path | None = None) -> bool:
        """Whether every file is in tiktoken's cache, so that loading it needs no network."""
        where = cache if cache is not None else tiktoken_cache_dir()
        if where is None or not self.files:
            return False
        return all(p.is_file() for p in self.cache_files(where))


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


# -- the files each encoding reads ----------------------------------------------------------------


class _Located(Exception):
    """Raised by the stand-in loaders: the files an encoding would read, with nothing fetched."""

    def __init__(self, files: list[EncodingFile]) -> None:
        super().__init__(", ".join(f.url for f in files))
        self.files = files


def _arg(args: tuple[object, ...], kwargs: dict[str, object], i: int, name: str) -> str | None:
    value = args[i] if len(args) > i else kwargs.get(name)
    return None if value is None else str(value)


def _capture_tiktoken(*args: object, **kwargs: object) -> Any:
    """Stands in for tiktoken.load.load_tiktoken_bpe(tiktoken_bpe_file, expected_hash)."""
    url = _arg(args, kwargs, 0, "tiktoken_bpe_file") or ""
    raise _Located([EncodingFile(url, _arg(args, kwargs, 1, "expected_hash"))])


def _capture_data_gym(*args: object, **kwargs: object) -> Any:
    """Stands in for data_gym_to_mergeable_bpe_ranks(vocab_bpe_file, encoder_json_file,
    vocab_bpe_hash, encoder_json_hash)."""
    vocab = _arg(args, kwargs, 0, "vocab_bpe_file") or ""
    encoder = _arg(args, kwargs, 1, "encoder_json_file") or ""
    raise _Located(
        [
            EncodingFile(vocab, _arg(args, kwargs, 2, "vocab_bpe_hash")),
            EncodingFile(encoder, _arg(args, kwargs, 3, "encoder_json_hash")),
        ]
    )


LOADERS = {
    "load_tiktoken_bpe": _capture_tiktoken,
    "data_gym_to_mergeable_bpe_ranks": _capture_data_gym,
}


def _located_in(module: Any) -> dict[str, list[EncodingFile]]:
    """The files of each encoding a tiktoken plugin module constructs, with its loaders swapped
    for the stand-ins while the constructors run."""
    found: dict[str, list[EncodingFile]] = {}
    constructors = getattr(module, "ENCODING_CONSTRUCTORS", None) or {}
    saved = {attr: getattr(module, attr) for attr in LOADERS if hasattr(module, attr)}
    try:
        for attr, stand_in in LOADERS.items():
            setattr(module, attr, stand_in)
        for name, constructor in constructors.items():
            with contextlib.suppress(Exception):  # another shape of constructor: unlisted
                try:
                    constructor()
                except _Located as located:
                    found.setdefault(name, located.files)
    finally:
        for attr in LOADERS:
            if attr in saved:
                setattr(module, attr, saved[attr])
            else:
                delattr(module, attr)
    return found


def tiktoken_locations() -> dict[str, list[EncodingFile]]:
    """The files each encoding of tiktoken's plugins reads (URL and expected sha256)."""
    plugins = importlib.import_module("tiktoken_ext")
    found: dict[str, list[EncodingFile]] = {}
    for info in pkgutil.iter_modules(plugins.__path__, plugins.__name__ + "."):
        try:
            module = importlib.import_module(info.name)
        except Exception:  # a broken plugin lists nothing
            continue
        for name, files in _located_in(module).items():
            found.setdefault(name, files)
    return found


def tiktoken_encodings() -> list[TiktokenEncoding]:
    """Every encoding tiktoken knows (tiktoken.list_encoding_names(), in its order), with the
    files each reads."""
    located = tiktoken_locations()
    return [TiktokenEncoding(n, tuple(located.get(n, ()))) for n in tiktoken.list_encoding_names()]


def tiktoken_encoding(name: str) -> TiktokenEncoding:
    """The encoding `name` (ModelError when tiktoken does not know it)."""
    for encoding in tiktoken_encodings():
        if encoding.name == name:
            return encoding
    known = ", ".join(tiktoken.list_encoding_names())
    raise ModelError(name, f"not a tiktoken encoding (tiktoken knows: {known})")


def cached_tiktoken_encodings() -> list[tuple[str, Path]]:
    """(encoding name, cached file) of each tiktoken encoding whose every file is in tiktoken's
    cache, so that loading it needs no network."""
    cache = tiktoken_cache_dir()
    if cache is None or not cache.is_dir():
        return []
    out: list[tuple[str, Path]] = []
    for encoding in sorted(tiktoken_encodings(), key=lambda e: e.name):
        if encoding.cached(cache):
            out.append((encoding.name, encoding.cache_files(cache)[0]))
    return out


def tiktoken_hashes() -> dict[str, str]:
    """Encoding name by the sha256 tiktoken expects of its one rank file (the first encoding
    listed wins where two share a file, as o200k_base and o200k_harmony do)."""
    out: dict[str, str] = {}
    for name, files in tiktoken_locations().items():
        if len(files) == 1 and files[0].sha256:
            out.setdefault(files[0].sha256, name)
    return out


def encoding_from_ranks(name: str, ranks: dict[bytes, int]) -> Any:
    """tiktoken's encoding `name` (its pattern and special tokens) over ranks read from a local
    file, its constructor run with a loader that hands it those ranks."""

    def given(*args: object, **kwargs: object) -> dict[bytes, int]:
        return ranks

    plugins = importlib.import_module("tiktoken_ext")
    for info in pkgutil.iter_modules(plugins.__path__, plugins.__name__ + "."):
        try:
            module = importlib.import_module(info.name)
        except Exception:  # a broken plugin lists nothing
            continue
        constructor = (getattr(module, "ENCODING_CONSTRUCTORS", None) or {}).get(name)
        if constructor is None:
            continue
        saved = getattr(module, "load_tiktoken_bpe", None)
        setattr(module, "load_tiktoken_bpe", given)  # noqa: B010 (a plugin module, untyped)
        try:
            params = constructor()
        finally:
            if saved is None:
                delattr(module, "load_tiktoken_bpe")
            else:
                setattr(module, "load_tiktoken_bpe", saved)  # noqa: B010
        return tiktoken.Encoding(**params)
    raise KeyError(name)


# -- filling the cache ----------------------------------------------------------------------------


def short_error(exc: BaseException) -> str:
    """An exception as a short phrase: its type and the start of its text."""
    text = " ".join(str(exc).split())
    if len(text) > SHORT_ERROR_CHARS:
        text = text[: SHORT_ERROR_CHARS - 3] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def download_failure(exc: BaseException, encoding: TiktokenEncoding) -> str:
    """Why tiktoken's download failed, short: a failed connection (requests' ConnectionError and
    its ProxyError, or the builtin one) is said as such, without requests' paragraph."""
    if any(c.__name__ == "ConnectionError" for c in type(exc).__mro__):
        host = urlparse(encoding.files[0].url).hostname if encoding.files else None
        return f"no connection to {host or 'the network'}: {type(exc).__name__}"
    return short_error(exc)


def offline_advice(encoding: TiktokenEncoding, fetching: bool = False) -> str:
    """What to do when tiktoken cannot download an encoding: the commands that fill its cache
    (`fetching`: said to someone who just ran `tokenline models fetch`)."""
    fetch = f"tokenline models fetch {encoding.name}"
    again = "run it again where the network is reachable" if fetching else f"run `{fetch}`"
    if not encoding.files:
        return again + ("" if fetching else " where the network is reachable")
    urls = " and ".join(f.url for f in encoding.files)
    names = " ".join(f"--from {f.file_name}" for f in encoding.files)
    where = "" if fetching else " where the network is reachable"
    return f"{again}{where}, or download {urls} elsewhere and run `{fetch} {names}`"


def fetch_encoding(name: str) -> TiktokenEncoding:
    """Has tiktoken download `name` into its cache (a no-op when it is there already).

    ModelError, saying what to do instead, when tiktoken cannot (offline, caching off)."""
    encoding = tiktoken_encoding(name)
    cache = tiktoken_cache_dir()
    if cache is None:
        raise ModelError(
            name,
            "tiktoken's cache is off (TIKTOKEN_CACHE_DIR is empty): a download would not be "
            "kept; unset it or point it at a folder",
        )
    if encoding.cached(cache):
        return encoding
    try:
        if not encoding.files:
            tiktoken.get_encoding(name)  # files unknown: tiktoken's constructor reads them
        for f in encoding.files:
            # tiktoken's own download: the same cache file name and hash check as its loads.
            tiktoken.load.read_file_cached(f.url, f.sha256)
    except Exception as exc:  # network, hash and file errors alike
        raise ModelError(
            name,
            f"tiktoken could not download it into {cache} ({download_failure(exc, encoding)}); "
            + offline_advice(encoding, fetching=True),
        ) from exc
    return encoding


def install_encoding_files(name: str, files: Sequence[Path]) -> list[Path]:
    """Puts files fetched elsewhere into tiktoken's cache as `name`'s, where tiktoken looks for
    them; each is matched to the encoding's file of the same name (or taken as its only file) and
    must have the sha256 tiktoken checks. Returns the cache files written."""
    encoding = tiktoken_encoding(name)
    cache = tiktoken_cache_dir()
    if cache is None:
        raise ModelError(name, "tiktoken's cache is off (TIKTOKEN_CACHE_DIR is empty)")
    if not encoding.files:
        raise ModelError(name, "the files this encoding reads are unknown to Tokenline")
    given = {Path(f).name: Path(f) for f in files}
    if len(encoding.files) == 1 and len(files) == 1:
        given = {encoding.files[0].file_name: Path(files[0])}
    missing = [f for f in encoding.files if f.file_name not in given]
    if missing:
        needed = " and ".join(f"{f.file_name} (from {f.url})" for f in missing)
        raise ModelError(name, f"needs {needed}")
    # Every file checked before any is written: a wrong second file leaves the cache as it was.
    checked = [(f, _checked(name, f, given[f.file_name])) for f in encoding.files]
    return [_write(f, data, cache) for f, data in checked]


def _checked(name: str, wanted: EncodingFile, source: Path) -> bytes:
    """The file's bytes, when they have the sha256 tiktoken checks."""
    try:
        data = source.read_bytes()
    except OSError as exc:
        raise ModelError(str(source), exc.strerror or str(exc)) from exc
    if wanted.sha256 is not None and hashlib.sha256(data).hexdigest() != wanted.sha256:
        raise ModelError(
            str(source),
            f"not {name}'s {wanted.file_name}: its sha256 is not the {wanted.sha256} tiktoken "
            "checks",
        )
    return data


def _write(wanted: EncodingFile, data: bytes, cache: Path) -> Path:
    """data in tiktoken's cache file for the URL, written whole or not at all."""
    target = tiktoken_cache_file(wanted.url, cache)
    try:
        cache.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + f".{os.getpid()}.tmp")
        partial.write_bytes(data)
        partial.replace(target)
    except OSError as exc:
        raise ModelError(str(target), exc.strerror or str(exc)) from exc
    return target
