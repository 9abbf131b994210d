"""The core's shape: the engine names no family, and modules and classes stay readable."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT

CORE = ROOT / "core"
REFERENCE_LIBRARIES = ("sentencepiece", "tiktoken", "tokenizers", "regex", "mistral_common")
MAX_MODULE_LINES = 500
MAX_CLASS_LINES = 300
MAX_FAMILY_FIELDS = 6


def tree(name: str) -> ast.Module:
    return ast.parse((CORE / f"{name}.py").read_text("utf-8"))


def imported(module: ast.Module) -> set[str]:
    """Every module an import names, type-only imports included."""
    out: set[str] = set()
    for node in ast.walk(module):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return out


def reached_from(start: str) -> set[str]:
    """Core modules (by short name) that `start` reaches through imports, itself included."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for mod in imported(tree(name)):
            if mod.startswith("tokenline.core."):
                todo.append(mod.removeprefix("tokenline.core."))
    return seen


def family_classes() -> dict[str, str]:
    """Family subclasses defined anywhere in the core: class name -> module."""
    bases: dict[str, tuple[str, list[str]]] = {}
    for path in CORE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ClassDef):
                names = [b.id for b in node.bases if isinstance(b, ast.Name)]
                bases[node.name] = (path.stem, names)
    found: dict[str, str] = {}
    changed = True
    while changed:
        changed = False
        for name, (module, parents) in bases.items():
            if name not in found and any(p == "Family" or p in found for p in parents):
                found[name] = module
                changed = True
    return found


def test_the_engine_names_no_family() -> None:
    engine = reached_from("document")
    families = family_classes()
    assert {"SentencePieceFamily", "ByteLevelFamily", "HFFamily", "HFBPEFamily"} <= families.keys()
    family_modules = set(families.values())
    assert engine & family_modules == set(), "the engine imports a family's module"
    for name in sorted(engine):
        libraries = {m.split(".")[0] for m in imported(tree(name))} & set(REFERENCE_LIBRARIES)
        assert not libraries, f"{name}.py (reached from document.py) imports {libraries}"
    # Modules only a family uses stay out of the engine too.
    family_parts = ("normalizer", "pretokens", "spsegments", "spacecuts", "charsmap", "usermatch")
    for name in (*family_parts, "addedmatch", "stretchlayout", "prefixnorm"):
        assert name not in engine, f"document.py reaches {name}.py"


def test_the_check_follows_imports_to_families() -> None:
    # Were document.py to import the loader, the family modules would be reached.
    assert {"spfamily", "normalizer", "charsmap"} <= reached_from("loader")
    assert {"retokenize", "window", "tokens"} <= reached_from("document")


def test_family_keeps_only_what_every_family_has() -> None:
    family = next(
        n for n in ast.walk(tree("family")) if isinstance(n, ast.ClassDef) and n.name == "Family"
    )
    fields = [ast.unparse(n.target) for n in family.body if isinstance(n, ast.AnnAssign)]
    assert 0 < len(fields) <= MAX_FAMILY_FIELDS, fields


@pytest.mark.parametrize("path", sorted(CORE.glob("*.py")), ids=lambda p: p.name)
def test_modules_and_classes_stay_readable(path: Path) -> None:
    source = path.read_text("utf-8")
    assert len(source.splitlines()) <= MAX_MODULE_LINES, f"{path.name} is over the limit"
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef):
            lines = (node.end_lineno or node.lineno) - node.lineno + 1
            assert lines <= MAX_CLASS_LINES, f"{path.name}: class {node.name} has {lines} lines"
