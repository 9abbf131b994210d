"""The `tokenline` command: count and show LLM tokens in files, or serve editors over LSP.

Exit codes: 0 success; 1 an input file could not be read (missing, unreadable, binary, not
UTF-8); 2 bad usage; 3 the tokenizer model could not be loaded.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TextIO

from tokenline.core import BUNDLED_DEFAULT, Document, Model, ModelError, load_model

EXIT_INPUT = 1
EXIT_USAGE = 2
EXIT_MODEL = 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report Ctrl-C

DEFAULT_CONTEXT_WINDOW = 8192
# Input whose first bytes hold a NUL is taken for a binary file.
BINARY_SNIFF_BYTES = 8192

# Two subtle background colours (256-colour palette) that keep text readable on dark and light.
BACKGROUNDS = ("\x1b[48;5;24m\x1b[38;5;255m", "\x1b[48;5;94m\x1b[38;5;255m")
RESET = "\x1b[0m"
DIM = "\x1b[2m"


class InputError(Exception):
    pass


def read_text(path: str) -> str:
    """A file's text, or InputError saying why it is not text the tokenizer can take."""
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as fh:
                data = fh.read()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        raise InputError(f"{path}: binary file (it contains NUL bytes), not text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{path}: not UTF-8 text (invalid byte 0x{data[exc.start]:02x} at byte {exc.start})"
        ) from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tokenline",
        description="See where an LLM's tokens begin and end, and how many a text has.",
        epilog="Exit codes: 0 ok, 1 unreadable or binary input, 2 bad usage, 3 bad model.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    model_help = (
        "a SentencePiece .model file, a bundled model name, or a Hugging Face repo id in the "
        f"local cache (default: {BUNDLED_DEFAULT})"
    )
    p_count = sub.add_parser("count", help="print the token count of each file")
    p_count.add_argument("files", nargs="+", metavar="FILE", help="files to count ('-' is stdin)")
    p_count.add_argument("--model", help=model_help)

    p_show = sub.add_parser("show", help="print a file with its token boundaries coloured")
    p_show.add_argument("file", metavar="FILE", help="the file to show ('-' is stdin)")
    p_show.add_argument("--model", help=model_help)
    p_show.add_argument(
        "--context-window",
        type=int,
        default=DEFAULT_CONTEXT_WINDOW,
        metavar="N",
        help=f"tokens (default {DEFAULT_CONTEXT_WINDOW})",
    )
    p_show.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the tokens (default: when writing to a terminal); without colour, tokens "
        "are separated by '|'",
    )

    p_serve = sub.add_parser("serve", help="run the language server (stdio by default)")
    p_serve.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio")
    p_serve.add_argument("--stdio", action="store_true", help="use stdio (the default)")
    return parser


def load(model_arg: str | None, err: TextIO) -> Model | None:
    """The model named on the command line (see tokenline.core.resolve); None after saying why."""
    try:
        return load_model(model_arg)
    except ModelError as exc:
        err.write(f"tokenline: {exc}\n")
        return None


def cmd_count(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    model = load(args.model, err)
    if model is None:
        return EXIT_MODEL
    status = 0
    total = 0
    counted = 0
    for path in args.files:
        try:
            text = read_text(path)
        except InputError as exc:
            err.write(f"tokenline: {exc}\n")
            status = EXIT_INPUT
            continue
        n = len(Document(model, text))
        total += n
        counted += 1
        out.write(f"{n:>10,}  {path}\n")
    if counted > 1:
        out.write(f"{total:>10,}  total\n")
    return status


def render(doc: Document, color: bool) -> str:
    """The document's text with alternating colours (or '|') at token boundaries."""
    spans = doc.spans(0, len(doc))
    text = doc.text
    parts: list[str] = []
    shade = 0
    for k in range(len(doc)):
        start, end = spans[2 * k], spans[2 * k + 1]
        if start == end:
            continue  # a byte token's continuation or a lone dummy prefix: no character
        piece = text[start:end]
        if color:
            # Colour each line's part separately so that backgrounds never run to the margin.
            lines = piece.split("\n")
            coloured = [f"{BACKGROUNDS[shade]}{ln}{RESET}" if ln else "" for ln in lines]
            parts.append("\n".join(coloured))
        else:
            parts.append(piece + "|")
        shade ^= 1
    return "".join(parts)


def cmd_show(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    model = load(args.model, err)
    if model is None:
        return EXIT_MODEL
    try:
        text = read_text(args.file)
    except InputError as exc:
        err.write(f"tokenline: {exc}\n")
        return EXIT_INPUT
    if args.context_window <= 0:
        err.write("tokenline: --context-window must be a positive number of tokens\n")
        return EXIT_USAGE
    doc = Document(model, text)
    color = args.color == "always" or (
        args.color == "auto" and out.isatty() and os.environ.get("NO_COLOR") is None
    )
    body = render(doc, color)
    out.write(body)
    if body and not body.endswith("\n"):
        out.write("\n")
    n = len(doc)
    pct = 100.0 * n / args.context_window
    window = f"{args.context_window:,}-token context window"
    summary = f"{n:,} tokens · {model.name} · {pct:.1f}% of the {window}"
    out.write(f"{DIM}{summary}{RESET}\n" if color else summary + "\n")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from tokenline.server.app import serve

    return serve(tcp=args.tcp)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        if args.command == "count":
            return cmd_count(args, sys.stdout, sys.stderr)
        if args.command == "show":
            return cmd_show(args, sys.stdout, sys.stderr)
        return cmd_serve(args)
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
