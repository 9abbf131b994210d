"""The `tokenline` command: count and check LLM tokens in files, show them, serve editors.

Exit codes: 0 success (an empty selection too, said on stderr); 1 `check`: a file over its budget
(or context window), and `count`, `check`, `show`: a file named on the command line could not be
read as text (missing, binary, not UTF-8); 2 bad usage (for `check`, a path that does not
exist); 3 the tokenizer model or the project configuration cannot be used.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from tokenline import __version__
from tokenline.chat import ESTIMATE_MARK, record_lines, summary
from tokenline.config import CONFIG_NAMES, Budget, ConfigError, ProjectConfig
from tokenline.core import BUNDLED_DEFAULT, COMPILED, Document, Model, ModelError
from tokenline.measure import (
    CHAT_AUTO,
    CHAT_OFF,
    CHAT_ONLY,
    DEFAULT_CONTEXT_WINDOW,
    Measurement,
    Measurer,
    Overrides,
    count,
)
from tokenline.models import add_parser as add_models_parser
from tokenline.models import cmd_models
from tokenline.report import (
    check_line,
    check_summary,
    count_header,
    count_line,
    empty_summary,
    json_report,
    limit_phrase,
    plural,
    total_line,
)
from tokenline.walk import FileWalker, Found, InputError, read_text
from tokenline.workers import Workers
from tokenline.workers import start as start_workers

EXIT_OVER = 1
EXIT_INPUT = 1
EXIT_USAGE = 2
EXIT_MODEL = 3
EXIT_CONFIG = 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report Ctrl-C

# Two subtle background colours (256-colour palette) that keep text readable on dark and light.
BACKGROUNDS = ("\x1b[48;5;24m\x1b[38;5;255m", "\x1b[48;5;94m\x1b[38;5;255m")
RESET = "\x1b[0m"
DIM = "\x1b[2m"

MODEL_HELP = (
    "a bundled model name, a tiktoken encoding or OpenAI model name (o200k_base, gpt-4o; from "
    "tiktoken's cache), a tokenizer file (a Hugging Face tokenizer.json, a Mistral tekken*.json, "
    "a SentencePiece .model) or a folder holding one, or a Hugging Face repo id in the local "
    f"cache (default: {BUNDLED_DEFAULT})"
)


def version_text() -> str:
    """What `--version` prints: like black's, whether the core runs compiled."""
    from importlib import metadata  # here: every other command starts without it

    try:
        sp_version = metadata.version("sentencepiece")
    except metadata.PackageNotFoundError:
        sp_version = "unknown"
    return (
        f"tokenline {__version__} (compiled: {'yes' if COMPILED else 'no'})\n"
        f"sentencepiece {sp_version}\n"
        f"Python ({platform.python_implementation()}) {platform.python_version()}\n"
    )


class _Version(argparse.Action):
    def __call__(self, parser: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        sys.stdout.write(version_text())
        parser.exit()


def positive_int(text: str) -> int:
    """An argparse type: a positive number of tokens ("128000", "128,000" or "131_072")."""
    cleaned = text.strip().replace(",", "").replace("_", "")
    if not cleaned.isdigit() or int(cleaned) <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of tokens, not {text!r}")
    return int(cleaned)


def positive_int_jobs(text: str) -> int:
    """A --jobs value: a number of processes, at least 1."""
    if not text.strip().isdigit() or int(text) <= 0:
        raise argparse.ArgumentTypeError(f"must be a number of processes (1 or more), not {text!r}")
    return int(text)


def _add_measure_options(p: argparse.ArgumentParser, several: bool) -> None:
    """The options of `count` (several: `--model` may be given more than once) and `check`."""
    more = (
        ". Given more than once, each file is counted under each model, one column per model "
        "(the first one is held to the budget)"
        if several
        else ""
    )
    p.add_argument(
        "--model",
        action="append",
        help=MODEL_HELP + "; overrides the project configuration" + more,
    )
    p.add_argument(
        "--context-window",
        type=positive_int,
        metavar="N",
        help="tokens, for files without a budget (default: the configuration's, else "
        f"{DEFAULT_CONTEXT_WINDOW})",
    )
    p.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="use this configuration file (pyproject.toml with [tool.tokenline], or "
        "tokenline.toml) instead of looking up from each file",
    )
    p.add_argument("--json", action="store_true", help="print a JSON array, one object per file")
    if several:
        p.add_argument(
            "--chat",
            action="store_true",
            help="count chat files (JSON Lines with a messages array per line, JSON or YAML "
            "holding messages) per conversation, as the first model is billed: its chat "
            "template, Tekken's chat encoding, or OpenAI's rule for tiktoken encodings (an "
            "estimate, marked ≈); a summary per file (count, min, median, p95, max, over the "
            "limit); with --json, each file's records",
        )
    p.add_argument(
        "--jobs",
        type=positive_int_jobs,
        metavar="N",
        help="count files on N worker processes (1: in this process; default: one per core "
        "when the files are many and large enough to gain from it)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tokenline",
        description="See where an LLM's tokens begin and end, how many a text has, and whether "
        "files stay within their token budgets.",
        epilog="Exit codes: 0 ok, 1 over budget (check) or a named file that is not text, "
        "2 bad usage, 3 bad model or bad configuration.",
    )
    parser.add_argument(
        "--version",
        action=_Version,
        nargs=0,
        help="print the version, whether the core is compiled and the sentencepiece version",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p_count = sub.add_parser("count", help="print the token count of each file")
    p_count.add_argument(
        "paths", nargs="+", metavar="PATH", help="files and directories ('-' is stdin)"
    )
    _add_measure_options(p_count, several=True)

    p_check = sub.add_parser(
        "check", help="fail (exit 1) when a file is over its token budget or context window"
    )
    p_check.add_argument(
        "paths",
        nargs="*",
        default=["."],
        metavar="PATH",
        help="files and directories (default: the current directory)",
    )
    _add_measure_options(p_check, several=False)

    p_show = sub.add_parser("show", help="print a file with its token boundaries coloured")
    p_show.add_argument("file", metavar="FILE", help="the file to show ('-' is stdin)")
    p_show.add_argument("--model", help=MODEL_HELP)
    p_show.add_argument(
        "--context-window",
        type=int,
        metavar="N",
        help=f"tokens (default: the project configuration's, else {DEFAULT_CONTEXT_WINDOW})",
    )
    p_show.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the tokens (default: when writing to a terminal); without colour, tokens "
        "are separated by '|'",
    )

    add_models_parser(sub)

    p_serve = sub.add_parser("serve", help="run the language server (stdio by default)")
    p_serve.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio")
    p_serve.add_argument("--stdio", action="store_true", help="use stdio (the default)")
    return parser


def report_config_error(exc: ConfigError, err: TextIO) -> None:
    for problem in exc.problems:
        err.write(f"tokenline: {exc.path}: {problem}\n")


def is_config_file(path: str) -> bool:
    """Whether `path` is named like a configuration file (tokenline.toml, pyproject.toml)."""
    return os.path.basename(path) in CONFIG_NAMES


@dataclass
class Run:
    """One `count` or `check` over the paths given: what was measured, left out, or failed."""

    checking: bool
    measured: list[Measurement] = field(default_factory=list)
    # Binary or not UTF-8, found in a walk.
    skipped: int = 0
    # Named on the command line and not readable text: an error.
    unreadable: int = 0
    excluded: int = 0
    # Broken configuration files, each reported once; the files under them are not measured.
    broken: dict[Path, ConfigError] = field(default_factory=dict)
    # Set when the run had to stop: the exit code.
    fatal: int | None = None

    @property
    def empty(self) -> bool:
        """Nothing to measure under the paths given, and nothing went wrong."""
        return not self.measured and not self.unreadable and not self.broken

    def exit_code(self, over: int = 0) -> int:
        if self.fatal is not None:
            return self.fatal
        if self.broken:
            return EXIT_CONFIG
        return EXIT_INPUT if self.unreadable or over else 0


def unbudgeted_config(measurer: Measurer, found: Found, config: ProjectConfig | None) -> bool:
    """Whether `found` is a configuration file no budget names: `check` leaves it out (its
    settings are not a prompt, and the context window is no limit for it)."""
    if found.path == "-" or not is_config_file(found.path):
        return False
    return config is None or measurer.limits(found.path, config)[1] is None


def measure_one(measurer: Measurer, found: Found, run: Run, err: TextIO) -> Measurement | None:
    """The measurement of one file, or None after recording (and, for a file named on the
    command line, saying) why there is none."""
    reason = ""
    try:
        config = measurer.config_for(found.path)
        if config is not None and found.path != "-" and config.excludes(Path(found.path)):
            run.excluded += 1
            reason = f"excluded by {config.path}"
        elif run.checking and unbudgeted_config(measurer, found, config):
            reason = "a configuration file, not checked (no budget names it)"
        else:
            return measurer.measure(found.path, config)
    except ConfigError as exc:
        if exc.path not in run.broken:
            run.broken[exc.path] = exc
            report_config_error(exc, err)
    except InputError as exc:
        if found.named:
            run.unreadable += 1
            err.write(f"tokenline: {exc}\n")
        else:
            run.skipped += 1
    if reason and found.named:
        err.write(f"tokenline: {found.path}: {reason}\n")
    return None


def overrides(args: argparse.Namespace) -> Overrides:
    """What the command line of `count` or `check` sets (`count` may name several models)."""
    first, *more = args.model or [None]
    chat = CHAT_AUTO if args.command == "check" else CHAT_ONLY if args.chat else CHAT_OFF
    return Overrides(first, args.context_window, args.config, tuple(more), chat)


def measurements(args: argparse.Namespace, run: Run, err: TextIO) -> Iterator[Measurement]:
    """Measures every file of args.paths, reporting problems on `err` and recording them in
    `run`: every broken configuration once, the files under good ones measured all the same. A
    model given on the command line that cannot be loaded stops the run (every file needs it)."""
    workers: Workers | None = None
    try:
        measurer = Measurer(overrides(args))
        found = list(FileWalker().files(args.paths))
        workers = start_workers(measurer, found, args.jobs)
        for f in found:
            m = measure_one(measurer, f, run, err)
            if m is not None:
                run.measured.append(m)
                yield m
    except ConfigError as exc:  # --config names a broken file: nothing can be measured
        report_config_error(exc, err)
        run.fatal = EXIT_CONFIG
    except ModelError as exc:
        err.write(f"tokenline: {exc}\n")
        run.fatal = EXIT_MODEL
    finally:
        if workers is not None:
            workers.close()


def cmd_count(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    run = Run(checking=False)
    several = args.model is not None and len(args.model) > 1
    for m in measurements(args, run, err):
        if args.json:
            continue
        if m.records is not None:
            out.write(chat_block(m))
            continue
        if several and len(run.measured) == 1:
            out.write(count_header(m) + "\n")
        out.write(count_line(m) + "\n")
    if run.fatal is not None:
        return run.fatal
    if args.json:
        out.write(json_report(run.measured))
    elif len(run.measured) > 1 and not args.chat:
        out.write(total_line(run.measured) + "\n")
    if run.empty:
        err.write(empty_summary("count", run.skipped, run.excluded) + "\n")
    return run.exit_code()


def chat_block(m: Measurement) -> str:
    """A chat file under `count --chat`: a heading, a row per conversation, the summary."""
    assert m.records is not None
    lines = [f"{m.path}: {m.model}, {m.chat_how}"]
    lines += ["  " + line for line in record_lines(m.records, m.limit)]
    lines.append("  " + summary(m.records, m.limit, limit_phrase(m)))
    return "".join(line + "\n" for line in lines)


def chat_check_lines(m: Measurement) -> list[str]:
    """`data.jsonl:12: 9,000 tokens, 808 over the context window of 8,192`, per conversation."""
    lines = []
    for r in m.over_records:
        assert r.tokens is not None
        what = f"{ESTIMATE_MARK if r.estimate else ''}{plural(r.tokens, 'token')}"
        lines.append(f"{m.path}:{r.line}: {what}, {r.over(m.limit):,} over {limit_phrase(m)}")
    return lines


def cmd_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.model is not None and len(args.model) > 1:
        err.write("tokenline: check holds each file to one model (count compares several)\n")
        return EXIT_USAGE
    missing = [p for p in args.paths if p != "-" and not os.path.exists(p)]
    for p in missing:
        err.write(f"tokenline: {p}: no such file or directory\n")
    if missing:
        return EXIT_USAGE  # before any output: a mistyped path must not pass as "all within"
    run = Run(checking=True)
    over = 0
    for m in measurements(args, run, err):
        if m.over:
            over += 1
            if not args.json:
                lines = [check_line(m)] if m.records is None else chat_check_lines(m)
                out.write("".join(line + "\n" for line in lines))
    if run.fatal is not None:
        return run.fatal
    if args.json:
        out.write(json_report(run.measured))
        if run.empty:
            err.write(empty_summary("check", run.skipped, run.excluded) + "\n")
    elif not run.broken:
        summary = check_summary(len(run.measured), over, run.skipped, run.excluded, run.unreadable)
        err.write(summary + "\n")
    return run.exit_code(over)


def render(doc: Document, color: bool) -> str:
    """The document's text with alternating colours (or '|') at token boundaries; tokens that
    share a character (Document.group: byte fallback, byte-level BPE) are shown as one. Text
    without tokens (white space a WordPiece model drops) is shown as it is."""
    text = doc.text
    if len(doc) == 0:
        return text
    spans = doc.spans(0, len(doc))
    parts: list[str] = []
    shade = 0
    k = 0
    while k < len(doc):
        last = max(k, int(doc.group(k)[1]) - 1)
        start, end = spans[2 * k], spans[2 * last + 1]
        k = last + 1
        if start == end:
            continue  # a lone dummy prefix: no character
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


@dataclass(frozen=True)
class ShowSetup:
    """What `show` counts with: the model, the context window, the file's budget, and the model
    that budget names (None when it names none)."""

    model: Model
    window: int
    budget: Budget | None
    budget_model: Model | None


def show_setup(args: argparse.Namespace, err: TextIO) -> ShowSetup | int:
    """What `show` uses (command line, then the project configuration), or the exit code after
    saying what is wrong."""
    if args.context_window is not None and args.context_window <= 0:
        err.write("tokenline: --context-window must be a positive number of tokens\n")
        return EXIT_USAGE
    try:
        measurer = Measurer(Overrides(args.model, args.context_window))
        config = measurer.config_for(args.file)
        model = measurer.model_for(config)
        window, budget = measurer.limits(args.file, config)
        held = None
        if budget is not None and budget.model is not None and config is not None:
            held = measurer.budget_model(budget, config)
    except ConfigError as exc:
        report_config_error(exc, err)
        return EXIT_CONFIG
    except ModelError as exc:
        err.write(f"tokenline: {exc}\n")
        return EXIT_MODEL
    return ShowSetup(model, window, budget, held)


def cmd_show(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    setup = show_setup(args, err)
    if isinstance(setup, int):
        return setup
    model, window, budget = setup.model, setup.window, setup.budget
    try:
        text = read_text(args.file)
    except InputError as exc:
        err.write(f"tokenline: {exc}\n")
        return EXIT_INPUT
    doc = Document(model, text)
    color = args.color == "always" or (
        args.color == "auto" and out.isatty() and os.environ.get("NO_COLOR") is None
    )
    body = render(doc, color)
    out.write(body)
    if body and not body.endswith("\n"):
        out.write("\n")
    n = len(doc)
    limit = f"{window:,}-token context window"
    held = n
    if budget is not None:
        window, limit = budget.limit, f"{budget.limit:,}-token budget ({budget.pattern})"
        if setup.budget_model is not None:
            held = count(setup.budget_model, text)
            limit += f": {held:,} {setup.budget_model.name} tokens"
    summary = f"{n:,} tokens · {model.name} · {100.0 * held / window:.1f}% of the {limit}"
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
        if args.command == "check":
            return cmd_check(args, sys.stdout, sys.stderr)
        if args.command == "show":
            return cmd_show(args, sys.stdout, sys.stderr)
        if args.command == "models":
            return cmd_models(args, sys.stdout, sys.stderr)
        return cmd_serve(args)
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
