"""The `tokenline-check` hook through pre-commit itself, configured as the documentation writes it:
a project adds the hook to its .pre-commit-config.yaml, commits a prompt over its budget, is
refused, trims it, commits.

Every `.pre-commit-config.yaml` block of the README and docs/configuration.md is run: the
`repo: local` form as written (it runs the `tokenline` installed beside this Python), the remote
form with its two placeholders filled in with this checkout and its HEAD commit. For that one
pre-commit clones the checkout and pip-installs it into an environment of its own, so what is
tested is the committed tree (CI runs on a fresh clone: exactly that). That install builds the
package as users get it, the core compiled with mypyc: measured on the 2-core machine, about 18 s
for a fresh clone against 8 s with TOKENLINE_NO_MYPYC=1, so the test keeps the real build.
Dependencies come from PyPI (or pip's cache).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import sentencepiece as spm

from tests.conftest import IN_CI, ROOT
from tokenline.core import load_model

BUDGET = 40
DOCUMENTED = [ROOT / "README.md", ROOT / "docs" / "configuration.md"]
# The placeholders of the remote form, and what the test fills them with.
PLACEHOLDERS = ("URL_OF_A_TOKENLINE_CLONE", "FULL_COMMIT_SHA")


def documented_configs() -> list[tuple[str, str]]:
    """(where, text) of every YAML block in the documentation that configures pre-commit."""
    found = []
    for doc in DOCUMENTED:
        blocks = re.findall(r"^```yaml\n(.*?)^```", doc.read_text(encoding="utf-8"), re.M | re.S)
        for i, block in enumerate(blocks):
            if "\nrepos:\n" in f"\n{block}":
                found.append((f"{doc.relative_to(ROOT)}#{i}", block))
    return found


CONFIGS = documented_configs()


def run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


def head_of_checkout() -> str:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        message = f"{ROOT} is not a git checkout with git installed: pre-commit cannot clone it"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()


def test_the_documentation_has_both_forms() -> None:
    texts = [text for _, text in CONFIGS]
    assert any("repo: local" in t for t in texts), CONFIGS
    assert any(all(p in t for p in PLACEHOLDERS) for t in texts), CONFIGS
    for where, text in CONFIGS:
        assert "v0.1.0" not in text and "<owner>" not in text, where


@pytest.mark.parametrize("where,config", CONFIGS, ids=[where for where, _ in CONFIGS])
def test_hook_refuses_an_over_budget_prompt_and_accepts_it_trimmed(
    where: str, config: str, tmp_path: Path
) -> None:
    if "repo: local" not in config:
        config = config.replace(PLACEHOLDERS[0], str(ROOT)).replace(
            PLACEHOLDERS[1], head_of_checkout()
        )
    project = tmp_path / "project"
    project.mkdir()
    bin_dir = Path(sys.executable).parent
    env = dict(
        os.environ,
        PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"),
        PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
    )
    (project / "pyproject.toml").write_text(
        f'[tool.tokenline.budgets]\n"prompts/*.md" = {BUDGET}\n', encoding="utf-8"
    )
    (project / ".pre-commit-config.yaml").write_text(config, encoding="utf-8")
    for cmd in (["git", "init", "-q"], [sys.executable, "-m", "pre_commit", "install"]):
        done = run(cmd, project, env)
        assert done.returncode == 0, done.stdout + done.stderr

    prompt = project / "prompts" / "system.md"
    prompt.parent.mkdir()
    long_text = "You are a careful assistant. Answer in one short paragraph.\n" * 8
    prompt.write_text(long_text, encoding="utf-8")
    sp = spm.SentencePieceProcessor(model_file=load_model().path)
    tokens = len(sp.encode(long_text))
    assert tokens > BUDGET
    run(["git", "add", "-A"], project, env)
    refused = run(["git", "commit", "-q", "-m", "long prompt"], project, env)
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0, output
    expected = os.path.join("prompts", "system.md")
    assert (
        f"{expected}: {tokens:,} tokens, {tokens - BUDGET:,} over the budget of {BUDGET} "
        "(prompts/*.md)"
    ) in output

    short_text = "You are a careful assistant.\n"
    prompt.write_text(short_text, encoding="utf-8")
    assert len(sp.encode(short_text)) <= BUDGET
    run(["git", "add", "-A"], project, env)
    accepted = run(["git", "commit", "-q", "-m", "short prompt"], project, env)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    log = run(["git", "log", "--format=%s"], project, env)
    assert log.stdout.split("\n")[0] == "short prompt"
