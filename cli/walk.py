"""Which files `tokenline count` and `check` look at: the files named, and under each directory
named every file git would see, minus binary files.

A directory walk skips `.git` (and other VCS folders), does not follow symbolic links to
directories, and honours `.gitignore` files the way git does: those of the directory walked and
of its parents up to the repository root, deeper ones overriding shallower ones, `!` re-including,
an ignored directory never entered. pathspec does the pattern matching.
"""

from __future__ import annotations

import codecs
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pathspec

VCS_DIRS = frozenset({".git", ".hg", ".svn", ".jj"})
# As git decides: a NUL byte in the first 8,000 bytes makes a file binary.
BINARY_PROBE = 8192


class InputError(Exception):
    """A file that is not text the tokenizer can take; the message says why."""


def read_text(path: str) -> str:
    """A file's text ('-' is standard input), or InputError saying why it is not UTF-8 text."""
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as fh:
                data = fh.read()
    except OSError as exc:
        raise _unreadable(path, exc) from None
    _check_binary(path, data)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _not_utf8(path, data[exc.start], exc.start) from None


# Bytes read at a time when a file is counted in chunks (at least BINARY_PROBE).
CHUNK_BYTES = 1 << 18


def read_chunks(path: str, size: int = CHUNK_BYTES) -> Iterator[str]:
    """A file's text a chunk at a time (a chunk may end inside a word or a line; a character
    split between reads is joined by the decoder), with read_text's errors: a large file is
    counted without holding its text. The first read covers the binary-file probe."""
    try:
        fh = open(path, "rb")  # noqa: SIM115 (a generator holds it open between chunks)
    except OSError as exc:
        raise _unreadable(path, exc) from None
    with fh:
        decoder = codecs.getincrementaldecoder("utf-8")()
        offset = 0
        while True:
            try:
                data = fh.read(size if offset else max(size, BINARY_PROBE))
            except OSError as exc:
                raise _unreadable(path, exc) from None
            if offset == 0:
                _check_binary(path, data)
            held: bytes = decoder.getstate()[0]
            try:
                text = decoder.decode(data, final=not data)
            except UnicodeDecodeError as exc:
                whole = held + data
                at = offset - len(held) + exc.start
                raise _not_utf8(path, whole[exc.start], at) from None
            offset += len(data)
            if text:
                yield text
            if not data:
                return


def _unreadable(path: str, exc: OSError) -> InputError:
    if isinstance(exc, FileNotFoundError):
        return InputError(f"{path}: no such file")
    if isinstance(exc, IsADirectoryError):
        return InputError(f"{path}: is a directory")
    return InputError(f"{path}: cannot read ({exc.strerror or exc})")


def _check_binary(path: str, data: bytes) -> None:
    if b"\x00" in data[:BINARY_PROBE]:
        raise InputError(f"{path}: binary file (it contains NUL bytes), not text")


def _not_utf8(path: str, byte: int, at: int) -> InputError:
    return InputError(f"{path}: not UTF-8 text (invalid byte 0x{byte:02x} at byte {at})")


@dataclass(frozen=True)
class Found:
    """A file to look at; `named` when given on the command line rather than found in a walk."""

    path: str
    named: bool


class IgnoreRules:
    """`.gitignore` files by directory, each read once."""

    def __init__(self) -> None:
        self._specs: dict[Path, pathspec.GitIgnoreSpec | None] = {}

    def spec(self, directory: Path) -> pathspec.GitIgnoreSpec | None:
        if directory not in self._specs:
            self._specs[directory] = _read_gitignore(directory)
        return self._specs[directory]

    def ignored(self, path: Path, is_dir: bool, chain: Sequence[Path]) -> bool:
        """Whether the .gitignore files of `chain` (shallowest first) ignore `path`."""
        verdict: bool | None = None
        full = str(path)
        for base in chain:
            spec = self.spec(base)
            if spec is None:
                continue
            # String slicing, not Path.relative_to: this runs for every file of a repository.
            relative = full[len(str(base)) :].lstrip(os.sep).replace(os.sep, "/")
            include = spec.check_file(relative + ("/" if is_dir else "")).include
            if include is not None:
                verdict = include
        return bool(verdict)


def _read_gitignore(directory: Path) -> pathspec.GitIgnoreSpec | None:
    """The directory's .gitignore; at a repository root, after .git/info/exclude (which
    .gitignore lines override, as in git)."""
    lines: list[str] = []
    for name in (os.path.join(".git", "info", "exclude"), ".gitignore"):
        try:
            with open(directory / name, encoding="utf-8", errors="replace") as fh:
                lines += fh.read().splitlines()
        except OSError:
            continue
    return pathspec.GitIgnoreSpec.from_lines(lines) if lines else None


def repository_root(directory: Path) -> Path | None:
    """The nearest directory at or above `directory` that holds a `.git`, or None."""
    for d in (directory, *directory.parents):
        if (d / ".git").exists():
            return d
    return None


class FileWalker:
    """Lists the files under the paths given on the command line (see the module docstring)."""

    def __init__(self) -> None:
        self.rules = IgnoreRules()

    def files(self, paths: Sequence[str]) -> Iterator[Found]:
        """In the order given: a named file as it is (even an ignored one: naming a file asks for
        it; a missing one too, for reading it to say so), a directory as its files, sorted."""
        for p in paths:
            if p == "-" or not os.path.isdir(p):
                yield Found(p, named=True)
            else:
                yield from self._walk_root(p)

    def _walk_root(self, top: str) -> Iterator[Found]:
        start = Path(os.path.abspath(top))
        root = repository_root(start) or start
        # The .gitignore files above the walked directory apply too (from the repository root).
        chain = [start]
        while chain[0] != root:
            chain.insert(0, chain[0].parent)
        yield from self._walk(start, top, chain)

    def _walk(self, directory: Path, shown: str, chain: list[Path]) -> Iterator[Found]:
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            is_dir = entry.is_dir(follow_symlinks=False)
            if is_dir and entry.name in VCS_DIRS:
                continue
            path = directory / entry.name
            if self.rules.ignored(path, is_dir, chain):
                continue
            display = os.path.normpath(os.path.join(shown, entry.name))
            if is_dir:
                yield from self._walk(path, display, [*chain, path])
            elif entry.is_file():
                yield Found(display, named=False)
