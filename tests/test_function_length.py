"""Functions short enough to read at once: none over MAX_LINES lines in the checked folders.

core/ joins CHECKED_FOLDERS once the engine's refactor (issue #12) lands.
"""

from __future__ import annotations

import ast

import pytest

from tests.conftest import ROOT

CHECKED_FOLDERS = ("server", "cli")
MAX_LINES = 60


def long_functions(source: str, name: str) -> list[str]:
    """'name:line function (N lines)' for each function of source longer than MAX_LINES."""
    out = []
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            length = (node.end_lineno or node.lineno) - first + 1
            if length > MAX_LINES:
                out.append(f"{name}:{node.lineno} {node.name} ({length} lines)")
    return out


@pytest.mark.parametrize("folder", CHECKED_FOLDERS)
def test_no_function_over_the_limit(folder: str) -> None:
    files = sorted((ROOT / folder).glob("*.py"))
    assert files, f"no Python files in {folder}/"
    found = [hit for f in files for hit in long_functions(f.read_text("utf-8"), str(f))]
    assert not found, f"functions over {MAX_LINES} lines:\n" + "\n".join(found)


def test_the_check_sees_a_long_function() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES))
    assert long_functions(f"def f():\n{body}\n", "t.py") == [f"t.py:1 f ({MAX_LINES + 1} lines)"]
    assert long_functions("def g():\n    return 1\n", "t.py") == []
