"""Builds tokenline.core with mypyc unless TOKENLINE_NO_MYPYC is set.

mypyc names a module after its path, so the core's sources are staged under
build/mypyc-src/tokenline/core/ where the path spells the real module name.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from setuptools import setup

HERE = Path(__file__).parent.resolve()
# Modules compiled with mypyc: everything an edit or a lookup runs through. Interpreted, on
# purpose: __init__ (so that COMPILED can look at the compiled modules), loader, hfloader,
# hfnormloader and tiktokenloader (run once per model, through protobuf's, tokenizers' and
# tiktoken's untyped code), resolve, catalog and tiktokencache (run once per model load or listing
# and only look at the file system): compiling them would buy nothing.
COMPILED_MODULES = [
    # The engine: what document.py reaches, naming no family.
    "fenwick",
    "chunks",
    "tokens",
    "rope",
    "vocab",
    "normalization",
    "segments",
    "window",
    "family",
    "opening",
    "model",
    "retokenize",
    "document",
    "counting",
    "chatcount",
    # Edge strategies the families share.
    "symboledges",
    "longwords",
    "pretokenfamily",
    "pretokenflags",
    "runcuts",
    "lazycuts",
    "pretokenedges",
    # The families.
    "steps",
    "charsmap",
    "usermatch",
    "normalizer",
    "spsegments",
    "spfamily",
    "pretokens",
    "bytelevel",
    "hfbytelevel",
    "spacecuts",
    "hfwordpiece",
    "hffamily",
    "addedmatch",
    "stretchlayout",
    "prefixnorm",
    "hfbpe",
    "unicodesteps",
    "stepnorm",
    "addedsplit",
    "hfnormbytelevel",
    "hfwordlevel",
]


def _mypyc_extensions() -> list[object]:
    if os.environ.get("TOKENLINE_NO_MYPYC", "").lower() in ("1", "true", "yes"):
        return []
    from mypyc.build import mypycify

    stage = HERE / "build" / "mypyc-src" / "tokenline"
    if stage.exists():
        shutil.rmtree(stage)
    (stage / "core").mkdir(parents=True)
    # Empty package files: the real ones import sentencepiece, which the build does not need.
    (stage / "__init__.py").write_text("")
    (stage / "core" / "__init__.py").write_text("")
    for name in COMPILED_MODULES:
        shutil.copy2(HERE / "core" / f"{name}.py", stage / "core" / f"{name}.py")
    paths = [str((stage / "core" / f"{name}.py").relative_to(HERE)) for name in COMPILED_MODULES]
    return list(mypycify(paths, opt_level="3", debug_level="0"))


setup(ext_modules=_mypyc_extensions())
