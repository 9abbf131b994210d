"""The server reads the core through its public API (no private flags, one site for helpers), and
its features stand alone: no import circle, no feature imports the app or another feature."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
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


# -- the features stand alone ---------------------------------------------------------------------


def server_imports(path: Path) -> set[str]:
    """The server modules a module imports, by name ("store"), type-only imports included."""
    names = {p.stem for p in SERVER.glob("*.py")}
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:  # from . import x / from .x import y
                base = node.module.split(".")[0] if node.module else None
                out.update([base] if base else [a.name for a in node.names])
            elif node.module == "tokenline.server":
                out.update(alias.name for alias in node.names)
            elif node.module and node.module.startswith("tokenline.server."):
                out.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            out.update(
                a.name.split(".")[2] for a in node.names if a.name.startswith("tokenline.server.")
            )
    return (out & names) - {path.stem}


def import_graph() -> dict[str, set[str]]:
    """Each server module and the server modules it imports."""
    return {path.stem: server_imports(path) for path in sorted(SERVER.glob("*.py"))}


def circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of the graph (its modules, the first repeated last), or None."""
    try:
        list(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        return list(exc.args[1])
    return None


def feature_modules() -> set[str]:
    """The modules that define a Feature."""
    return {
        path.stem
        for path in SERVER.glob("*.py")
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
        if isinstance(node, ast.ClassDef)
        and any(isinstance(b, ast.Name) and b.id == "Feature" for b in node.bases)
    }


def test_the_server_modules_import_no_circle() -> None:
    assert circle(import_graph()) is None


def test_the_circle_check_sees_a_circle() -> None:
    assert circle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) in (
        ["a", "c", "b", "a"],
        ["b", "a", "c", "b"],
        ["c", "b", "a", "c"],
    )
    assert circle({"a": {"b"}, "b": set()}) is None


def test_no_feature_imports_the_app_or_another_feature() -> None:
    graph = import_graph()
    features = feature_modules()
    assert {"status", "diagnostics", "semantic", "configuration", "models"} <= features
    assert {name for name, deps in graph.items() if "app" in deps} == {"__main__"}
    assert {name: sorted(graph[name] & features) for name in features} == {
        name: [] for name in features
    }
