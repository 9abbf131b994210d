"""The server reads the core through its public API: no private flags, one site for helpers."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

SERVER = ROOT / "server"


def imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return out


def attributes(path: Path) -> set[str]:
    return {
        node.attr
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
        if isinstance(node, ast.Attribute)
    }


def test_the_server_uses_token_kinds_not_private_flags() -> None:
    for path in sorted(SERVER.glob("*.py")):
        assert "tokenline.core.model" not in imports(path), path.name
        assert "flags" not in attributes(path), f"{path.name} reads model.flags"


def test_the_server_imports_no_core_internals() -> None:
    private = {
        path.name: sorted(m for m in imports(path) if m.startswith("tokenline.core."))
        for path in sorted(SERVER.glob("*.py"))
    }
    assert {name: mods for name, mods in private.items() if mods} == {}
