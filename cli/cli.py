"""The `tokenline` command: count and show tokens in files, or serve editors over LSP."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tokenline", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p_count = sub.add_parser("count", help="print the token count of each file")
    p_count.add_argument("files", nargs="+")
    p_count.add_argument("--model", help="a SentencePiece .model file (default: bundled)")
    args = parser.parse_args(argv)
    from tokenline.core import Document, load_model

    model = load_model(args.model)
    for f in args.files:
        with open(f, encoding="utf-8") as fh:
            print(len(Document(model, fh.read())), f)
    return 0
