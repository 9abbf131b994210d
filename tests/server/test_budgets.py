"""Project budgets in the language server, end to end: a workspace whose pyproject.toml has
[tool.tokenline] budgets, a real client (pytest-lsp), counts checked against sentencepiece."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as T

from .harness import Session, bundled_model_path, position, sp_count, sp_for

MODEL = bundled_model_path()
PYPROJECT = """[project]
name = "prompts"

[tool.tokenline]
context-window = 1000
warn-at = 0.5

[tool.tokenline.budgets]
"prompts/*.md" = 30
"""
LONG = "You are a careful assistant. Answer every question in one short paragraph.\n" * 6


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (tmp_path / "prompts").mkdir()
    return tmp_path


def latest_status(s: Session, uri: str, **want: Any) -> dict[str, Any]:
    """The newest status of `uri` whose fields have the wanted values (waiting for it)."""

    def found() -> dict[str, Any] | None:
        for st in reversed(s.statuses):
            if st["uri"] == uri and all(st.get(k) == v for k, v in want.items()):
                return st
        return None

    return dict(s.wait_for(found, what=f"status of {uri} with {want}"))


def diagnostics_when(s: Session, uri: str, pred: Any) -> list[T.Diagnostic]:
    return list(
        s.wait_for(
            lambda: pred(s.client.diagnostics.get(uri, [])) and s.client.diagnostics[uri],
            what=f"diagnostics of {uri}",
        )
    )


def test_a_prompt_over_its_budget_gets_the_error_with_the_budget(workspace: Path) -> None:
    root = workspace.as_uri()
    s = Session(folders=[root])
    try:
        uri = (workspace / "prompts" / "system.md").as_uri()
        s.open(uri, LONG)
        total = sp_count(MODEL, LONG)
        assert total > 30
        st = latest_status(s, uri, budget=30)
        assert (st["tokens"], st["contextWindow"], st["warnAt"]) == (total, 1000, 0.5)
        assert st["budgetPattern"] == "prompts/*.md"
        [d] = diagnostics_when(s, uri, lambda ds: len(ds) == 1)
        assert d.severity == T.DiagnosticSeverity.Error
        assert d.code == "budget"
        assert d.message == (
            f"Beyond the 30-token budget for prompts/*.md: {total:,} tokens, {total - 30:,} over"
        )
        # From the first token beyond the budget (index 30 in sentencepiece's numbering).
        begin = sp_for(MODEL).encode(LONG, out_type="proto").pieces[30].begin
        start = len(LONG.encode("utf-8")[:begin].decode("utf-8"))
        assert (d.range.start.line, d.range.start.character) == position(LONG, start)
        # Trimmed below half the budget (warn-at 0.5): no diagnostics.
        v = s.change(uri, [(None, "Be brief.")])
        assert s.diagnostics(uri, v) == []
    finally:
        s.close()


def test_files_without_a_budget_get_the_project_window_and_warn_at(workspace: Path) -> None:
    s = Session(folders=[workspace.as_uri()])
    try:
        uri = (workspace / "notes.md").as_uri()
        text = "word " * 700
        n = sp_count(MODEL, text)
        assert 500 <= n < 1000  # between warn-at x window and the window
        s.open(uri, text)
        st = latest_status(s, uri, contextWindow=1000)
        assert "budget" not in st
        [d] = diagnostics_when(s, uri, lambda ds: len(ds) == 1)
        assert d.severity == T.DiagnosticSeverity.Warning
        assert (
            d.message
            == f"{n} of 1,000 tokens ({round(100 * n / 1000)}%): close to the context window"
        )
    finally:
        s.close()


def test_user_settings_win_over_the_project(workspace: Path) -> None:
    s = Session(folders=[workspace.as_uri()], init={"contextWindow": 4000, "warnAt": 0.9})
    try:
        notes = (workspace / "notes.md").as_uri()
        prompt = (workspace / "prompts" / "a.md").as_uri()
        s.open(notes, "word " * 700)
        s.open(prompt, LONG)
        st = latest_status(s, notes, contextWindow=4000, warnAt=0.9)
        assert "budget" not in st
        assert s.diagnostics(notes) == []  # 700 words: far from 90% of 4,000
        # The budget is the project's alone, whatever the user's window.
        assert latest_status(s, prompt, contextWindow=4000)["budget"] == 30
        # A change of the user's settings at run time wins as well.
        s.configure({"contextWindow": 2500, "warnAt": 0.1})
        latest_status(s, notes, contextWindow=2500, warnAt=0.1)
        [d] = diagnostics_when(s, notes, lambda ds: len(ds) == 1)
        assert "close to the context window" in d.message
    finally:
        s.close()


def test_a_broken_configuration_is_reported_and_not_applied(workspace: Path) -> None:
    pyproject = workspace / "pyproject.toml"
    pyproject.write_text('[tool.tokenline]\ncontext-window = "big"\n', encoding="utf-8")
    s = Session(folders=[workspace.as_uri()], init={"warnAt": 0.2})
    try:
        uri = (workspace / "prompts" / "a.md").as_uri()
        s.open(uri, LONG)
        [message] = s.wait_for(
            lambda: [m for m in s.client.messages if str(pyproject) in m.message]
        )
        assert message.type == T.MessageType.Warning
        assert '"context-window"' in message.message and 'not "big"' in message.message
        # The user's settings and the defaults stay; the server goes on.
        st = latest_status(s, uri, contextWindow=8192, warnAt=0.2)
        assert "budget" not in st
        # Fixed on disk, the change is announced (as a client watching files does): applied.
        pyproject.write_text(PYPROJECT, encoding="utf-8")
        s.client.workspace_did_change_watched_files(
            T.DidChangeWatchedFilesParams(
                changes=[T.FileEvent(uri=pyproject.as_uri(), type=T.FileChangeType.Changed)]
            )
        )
        assert latest_status(s, uri, budget=30)["contextWindow"] == 1000
    finally:
        s.close()
