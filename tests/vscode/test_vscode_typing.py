"""Typing into a 1 MB Markdown file in real VS Code with boundary colours on (o200k_base).

The harness of test_vscode_e2e.py (code-server, headless Chromium, the built .vsix, the real
server); driver.mjs's "typing" mode types a short sequence at the end of a paragraph in the
middle. Asserted: the count after the last key is tiktoken's count of the saved text, and the
boundary colours are on screen. The timings (open → first count, typing echo, status latency;
typing_timing.py) go to tests/artifacts/vscode/typing-timings.json, never into an assertion:
benchmarks/bench_vscode.py reports them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.vscode import typing_timing
from tests.vscode.test_vscode_e2e import (
    ARTIFACTS,
    DARK_A,
    DARK_B,
    PYTHON,
    CodeServer,
    Env,
    rgb,
    run_driver,
    vsix,  # noqa: F401 (the fixture)
)

MB = 1_000_000
KEYS = 30
INTERVAL_MS = 100


@pytest.fixture(scope="module")
def typed(
    tmp_path_factory: pytest.TempPathFactory,
    vsix: Path,  # noqa: F811
    tiktoken_cache: Path,
    o200k_encoding: Any,
) -> dict[str, Any]:
    """One session: a small file opened first (the server starts), then the 1 MB one typed into."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    env = Env(tmp_path_factory.mktemp("vscode-typing"))
    env.env["TIKTOKEN_CACHE_DIR"] = str(tiktoken_cache)
    small, big = env.workspace / "small.md", env.workspace / "large-1m.md"
    small.write_text(typing_timing.markdown(10_000), encoding="utf-8")
    text = typing_timing.markdown(MB)
    big.write_text(text, encoding="utf-8")
    plan = typing_timing.plan(text, KEYS, o200k_encoding)
    # The server logs at DEBUG into a file of its own: what it counted on willOpen and didOpen.
    env.env["TOKENLINE_LOG"] = "DEBUG"
    server_log = ARTIFACTS / "tokenline-server-typing.log"
    server_log.unlink(missing_ok=True)
    serve = ["sh", "-c", f'exec "$0" -m tokenline serve 2>>"{server_log}"', PYTHON]
    env.install(
        vsix,
        {
            "tokenline.server.command": serve,
            "tokenline.python": PYTHON,
            "tokenline.model": "o200k_base",
            # Not over its window: no error diagnostics drawn under the text.
            "tokenline.contextWindow": 100_000_000,
        },
    )
    targets = [
        {"name": "warmup", "file": small.name, "colours": True, "openTimeoutMs": 120_000,
         "initial": len(o200k_encoding.encode_ordinary(small.read_text(encoding="utf-8")))},
        {"name": "large", "file": big.name, "colours": True, "initial": plan.counts[0],
         "line": plan.line, "lineText": plan.line_text, "typed": plan.typed,
         "final": plan.counts[-1], "save": True},
    ]  # fmt: skip
    with CodeServer(env, ARTIFACTS / "code-server-typing.log"):
        result = run_driver(
            env,
            "typing",
            env.url(),
            {
                "targets": targets,
                "interval": INTERVAL_MS,
                "boundaryColours": [rgb(DARK_A), rgb(DARK_B)],
                "firstLine": typing_timing.FIRST_LINE,
                "shotPrefix": "70-typing",
            },
        )
    (ARTIFACTS / "tokenline-output-typing.log").write_text(env.extension_log())
    return {"result": result, "plan": plan, "file": big, "server_log": server_log}


def _large(typed: dict[str, Any]) -> dict[str, Any]:
    step: dict[str, Any] = typed["result"]["steps"]["large"]
    assert step["ok"], step.get("error")
    return step


def test_typing_ends_on_tiktokens_count_of_the_saved_text(
    typed: dict[str, Any], o200k_encoding: Any
) -> None:
    step, plan = _large(typed), typed["plan"]
    saved = typed["file"].read_text(encoding="utf-8")
    assert plan.line_text + plan.typed + "\n" in saved, "every key reached the file"
    expected = len(o200k_encoding.encode_ordinary(saved))
    assert typing_timing.count_of(step["final"]) == expected, (step["final"], expected)


def test_typing_keeps_the_boundary_colours(typed: dict[str, Any]) -> None:
    colours = {span["color"] for line in _large(typed)["colours"] for span in line}
    assert rgb(DARK_A) in colours and rgb(DARK_B) in colours, colours


def test_the_file_is_counted_from_disk_when_its_tab_opens(typed: dict[str, Any]) -> None:
    """The extension says `tokenline/willOpen` as the file's tab opens, before VS Code hands it
    the document: the server counts the file then, and the didOpen keeps those tokens (its text
    is the file's)."""
    _large(typed)
    lines = typed["server_log"].read_text(encoding="utf-8", errors="replace").splitlines()
    uri = typed["file"].as_uri()
    will = [i for i, line in enumerate(lines) if f"willOpen {uri}: " in line]
    did = [i for i, line in enumerate(lines) if f"didOpen {uri}: " in line]
    assert will and did and will[0] < did[0], (will, did)
    assert not any(f"didOpen {uri}: its text or model is not" in line for line in lines)


def test_typing_timings_are_logged(typed: dict[str, Any]) -> None:
    """Open → first count, echo and status latency, as measured: logged, not judged."""
    step, plan = _large(typed), typed["plan"]
    timings = {
        "open": typing_timing.open_times(step["open"], plan.counts[0]),
        "typing": typing_timing.typing_times(step["typing"], plan),
    }
    (ARTIFACTS / "typing-timings.json").write_text(json.dumps(timings, indent=1))
    print(json.dumps(timings))
    assert timings["typing"]["keys"] == KEYS
    assert timings["open"]["correct_count_ms"] is not None
