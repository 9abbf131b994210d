"""`tokenline models`: what can be used here (the core's catalog), and `tokenline models fetch`,
which fills tiktoken's cache with an encoding: downloaded by tiktoken, or from files brought from
a machine with network (`--from`)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from tokenline.core import ModelError, hf_hub_cache, tiktoken_cache_dir
from tokenline.core.catalog import (
    BUNDLED,
    HUGGINGFACE,
    SECTIONS,
    TIKTOKEN,
    CatalogEntry,
    model_catalog,
)
from tokenline.core.tiktokencache import fetch_encoding, install_encoding_files, tiktoken_encoding
from tokenline.core.tiktokenloader import tiktoken_name

EXIT_MODEL = 3
# The widest the name column gets: a longer name pushes its own line's details right.
NAME_WIDTH = 28


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`models [--json] [--folder DIR]` and `models fetch NAME [--from FILE]...`."""
    p = sub.add_parser(
        "models",
        usage="tokenline models [--json] [--folder DIR]\n"
        "       tokenline models fetch NAME [--from FILE]...",
        help="list the models that can be used here; `models fetch NAME` downloads a tiktoken "
        "encoding",
        description="List the models that can be used here: the bundled models, every tiktoken "
        "encoding (cached, or downloaded on first use), tokenizer files under a folder, and the "
        "Hugging Face cache's repos. The first column is what --model (or the editor's "
        "tokenline.model setting) takes.",
    )
    p.add_argument("--json", action="store_true", help="print a JSON object")
    p.add_argument(
        "--folder",
        type=Path,
        default=Path("."),
        metavar="DIR",
        help="where to look for tokenizer files (default: the current directory)",
    )
    actions = p.add_subparsers(dest="models_command", title="commands", metavar="fetch")
    fetch = actions.add_parser(
        "fetch",
        help="put a tiktoken encoding into tiktoken's cache (downloaded, or --from files)",
        description="Put a tiktoken encoding into tiktoken's cache ($TIKTOKEN_CACHE_DIR, else "
        "its temporary folder), so that it loads with no network: downloaded by tiktoken, or, "
        "offline, from the encoding's files downloaded elsewhere (checked against the sha256 "
        "tiktoken expects).",
    )
    fetch.add_argument("name", metavar="NAME", help="an encoding (o200k_base) or OpenAI model name")
    fetch.add_argument(
        "--from",
        dest="files",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="the encoding's file (o200k_base.tiktoken; gpt2 has two: vocab.bpe, encoder.json)",
    )


def cmd_models(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.models_command == "fetch":
        return cmd_fetch(args.name, args.files, out, err)
    folder = args.folder.resolve()
    entries = model_catalog([folder])
    if args.json:
        out.write(json_listing(entries) + "\n")
    else:
        out.write(listing(entries, folder))
    return 0


def json_listing(entries: Sequence[CatalogEntry]) -> str:
    cache = tiktoken_cache_dir()
    return json.dumps(
        {
            "tiktokenCache": None if cache is None else str(cache),
            "huggingFaceCache": str(hf_hub_cache()),
            "models": [e.to_json() for e in entries],
        },
        indent=2,
        ensure_ascii=False,
    )


def _headings(folder: Path) -> dict[str, str]:
    cache = tiktoken_cache_dir()
    where = f"cache: {cache}" if cache is not None else "caching off: TIKTOKEN_CACHE_DIR is empty"
    return {
        BUNDLED: "Bundled",
        TIKTOKEN: f"tiktoken encodings ({where})",
        "workspace": f"Tokenizer files under {folder} (named relative to it)",
        HUGGINGFACE: f"Hugging Face cache ({hf_hub_cache()})",
    }


def _where(e: CatalogEntry) -> str:
    if e.section == TIKTOKEN and not e.cached:
        return f"not cached: downloaded on first use (tokenline models fetch {e.value})"
    note = "  (the default)" if e.default else ""
    return f"{e.format}  {e.path}{note}" if e.section != TIKTOKEN else f"cached  {e.path}"


def listing(entries: Sequence[CatalogEntry], folder: Path) -> str:
    """The entries under a heading per section, each as `value  format  path`; a section with
    nothing says so, so that the list also tells where Tokenline looked."""
    headings = _headings(folder)
    width = min(max((len(e.value) for e in entries), default=0), NAME_WIDTH)
    lines: list[str] = []
    for section in SECTIONS:
        lines.append(headings[section])
        mine = [e for e in entries if e.section == section]
        lines.extend(f"  {e.value:<{width}}  {_where(e)}" for e in mine)
        if not mine:
            lines.append("  (none)")
    return "\n".join(lines) + "\n"


def cmd_fetch(spec: str, files: Sequence[Path], out: TextIO, err: TextIO) -> int:
    """Fills tiktoken's cache with the encoding `spec` names; says what to do when it cannot."""
    name = tiktoken_name(spec) or spec
    try:
        if files:
            written = install_encoding_files(name, files)
            out.write(f"{name}: put into tiktoken's cache: {', '.join(map(str, written))}\n")
        else:
            was_cached = tiktoken_encoding(name).cached()
            fetch_encoding(name)
            state = "already in" if was_cached else "downloaded into"
            out.write(f"{name}: {state} tiktoken's cache {tiktoken_cache_dir()}\n")
    except ModelError as exc:
        err.write(f"tokenline: {exc.path}: {exc.reason}\n")
        return EXIT_MODEL
    out.write(
        f"--model {name} (or the editor setting tokenline.model) loads it with no network while "
        "TIKTOKEN_CACHE_DIR names the same folder.\n"
    )
    return 0
