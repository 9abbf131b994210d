"""The Tokenline VS Code extension, end to end in real VS Code.

code-server 4.100.3 (VS Code 1.100.3) serves the workbench on 127.0.0.1; Debian's headless
Chromium, driven by playwright-core (driver.mjs), shows it; the built .vsix is installed and talks
to the real `python -m tokenline serve`. A second run loads host/index.js as extensionTestsPath
inside the extension host. Screenshots go to tests/artifacts/vscode/.

Prerequisites come from tests/vscode/setup.sh. Without them the tests are skipped locally and FAIL
when CI=true.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import tiktoken

from tests.conftest import BOTCHAN
from tests.vscode.index_proxy import HOST as INDEX_HOST
from tests.vscode.index_proxy import INDEX_URL, IndexProxy

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
EXT_DIR = REPO / "vscode-extension"
ARTIFACTS = REPO / "tests" / "artifacts" / "vscode"
CACHE = Path(os.environ.get("TOKENLINE_CI_CACHE", Path.home() / ".cache" / "tokenline-ci"))
CODE_SERVER = CACHE / "node_modules" / ".bin" / "code-server"
PLAYWRIGHT = CACHE / "node_modules" / "playwright-core"
CHROMIUM = Path(os.environ.get("TOKENLINE_E2E_CHROMIUM", "/usr/bin/chromium"))
# The interpreter that has `tokenline` installed: the one running pytest unless told otherwise.
PYTHON = os.environ.get("TOKENLINE_E2E_PYTHON", sys.executable)

_VERSION = json.loads((EXT_DIR / "package.json").read_text())["version"]
VSIX = EXT_DIR / f"tokenline-{_VERSION}.vsix"
PLATFORM_VSIX = EXT_DIR / f"tokenline-linux-x64-{_VERSION}.vsix"

CONTEXT_WINDOW = 8192
# The default boundary colours, per theme, as package.json contributes them.
_CUSTOM = json.loads((EXT_DIR / "package.json").read_text())["contributes"][
    "configurationDefaults"
]["editor.semanticTokenColorCustomizations"]
# Theme id (what settings say) -> the customization key that colours it; the picker shows labels.
THEMES = {
    "Default Dark Modern": "[*Dark*]",
    "Default Light Modern": "[*Light*]",
    "Default High Contrast": "[Default High Contrast]",
    "Default High Contrast Light": "[Default High Contrast Light]",
}
THEME_COLOURS = {
    name: (_CUSTOM[key]["rules"]["tokenlineA"], _CUSTOM[key]["rules"]["tokenlineB"])
    for name, key in THEMES.items()
}
DARK_A, DARK_B = THEME_COLOURS["Default Dark Modern"]
# A theme with no Tokenline rules: the types fall back to TextMate scopes it colours.
OTHER_THEME = "Monokai"
THEME_LABELS = {
    OTHER_THEME: OTHER_THEME,
    "Default Dark Modern": "Dark Modern",
    "Default Light Modern": "Light Modern",
    "Default High Contrast": "Dark High Contrast",
    "Default High Contrast Light": "Light High Contrast",
}
TYPED = " Answer in plain English."

PROMPT = """Summarize the story below in three sentences, then list its characters.
Keep the tone of the narrator: dry, quick to anger, honest to a fault.
Summarize only what happens; do not judge it.

"""


def rgb(hex_colour: str) -> str:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


def _missing(what: str) -> None:
    msg = f"VS Code end-to-end prerequisite missing: {what} (run: bash tests/vscode/setup.sh)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(msg, pytrace=False)
    pytest.skip(msg)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def tokenline_count(
    *files: Path, model: str | None = None, env: dict[str, str] | None = None
) -> list[int]:
    """`tokenline count` on the files: the reference the status bar must agree with."""
    out = subprocess.run(
        [
            PYTHON,
            "-m",
            "tokenline",
            "count",
            *(["--model", model] if model else []),
            *map(str, files),
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    ).stdout
    # One "COUNT  PATH" line per file (counts grouped with commas), then a total for several.
    by_path = {}
    for line in out.splitlines():
        parts = line.split(None, 1)
        if len(parts) == 2:
            by_path[parts[1].strip()] = int(parts[0].replace(",", ""))
    missing = [f for f in files if str(f) not in by_path]
    assert not missing, f"tokenline count printed no count for {missing}:\n{out}"
    return [by_path[str(f)] for f in files]


def count_text(tmp: Path, *texts: str) -> list[int]:
    files = []
    for i, t in enumerate(texts):
        p = tmp / f"piece-{i}.txt"
        p.write_text(t, encoding="utf-8")
        files.append(p)
    return tokenline_count(*files)


def fmt(n: int) -> str:
    return f"{n:,}"


class Env:
    """Scratch HOME/XDG dirs, user data, extensions dir and workspace for one code-server."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.user_data = root / "user-data"
        self.extensions = root / "extensions"
        self.workspace = root / "workspace"
        for d in (
            self.home,
            self.user_data / "User",
            self.extensions,
            self.workspace / ".tokenline-e2e",
        ):
            d.mkdir(parents=True, exist_ok=True)
        self.port = _free_port()
        self.config = root / "config.yaml"
        self.config.write_text(f"bind-addr: 127.0.0.1:{self.port}\nauth: none\ncert: false\n")
        self.env = {
            **os.environ,
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            "XDG_RUNTIME_DIR": str(root / "run"),
        }
        self.env.pop("VSCODE_IPC_HOOK_CLI", None)
        (root / "run").mkdir(mode=0o700, exist_ok=True)

    def install(self, vsix: Path, settings: dict[str, Any]) -> None:
        """User settings for a quiet, reproducible workbench, then the .vsix."""
        quiet = {
            "workbench.startupEditor": "none",
            "workbench.tips.enabled": False,
            "workbench.enableExperiments": False,
            "telemetry.telemetryLevel": "off",
            "extensions.autoCheckUpdates": False,
            "extensions.autoUpdate": False,
            "security.workspace.trust.enabled": False,
            "chat.commandCenter.enabled": False,
            "editor.minimap.enabled": False,
            "files.autoSave": "off",
            "editor.fontSize": 15,
            "workbench.colorTheme": "Default Dark Modern",
        }
        (self.user_data / "User" / "settings.json").write_text(
            json.dumps({**quiet, **settings}, indent=2)
        )
        inst = subprocess.run(
            [*self.code_server_args(), "--install-extension", str(vsix), "--force"],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert inst.returncode == 0, inst.stdout + inst.stderr
        assert any(self.extensions.glob("tokenline.tokenline-*")), inst.stdout + inst.stderr

    def extension_log(self) -> str:
        """The newest "Tokenline" output channel (a LogOutputChannel is written to a file)."""
        logs = sorted(
            (self.user_data / "logs").rglob("Tokenline.log"), key=lambda p: p.stat().st_mtime
        )
        return logs[-1].read_text(encoding="utf-8", errors="replace") if logs else ""

    def code_server_args(self) -> list[str]:
        return [
            str(CODE_SERVER),
            "--config",
            str(self.config),
            "--user-data-dir",
            str(self.user_data),
            "--extensions-dir",
            str(self.extensions),
            "--disable-telemetry",
            "--disable-update-check",
            "--disable-workspace-trust",
        ]

    def url(self, payload: list[list[str]] | None = None) -> str:
        q = {"folder": str(self.workspace)}
        if payload:
            q["payload"] = json.dumps(payload)
        return f"http://127.0.0.1:{self.port}/?" + urllib.parse.urlencode(
            q, quote_via=urllib.parse.quote
        )


class CodeServer:
    def __init__(self, env: Env, log: Path) -> None:
        self.env = env
        self.log_path = log
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> CodeServer:
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [*self.env.code_server_args(), str(self.env.workspace)],
            env=self.env.env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"code-server exited with {self.proc.returncode}; see {self.log_path}"
                )
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.env.port}/healthz", timeout=2):
                    return self
            except OSError:
                time.sleep(0.3)
        raise RuntimeError(f"code-server did not answer /healthz; see {self.log_path}")

    def __exit__(self, *exc: object) -> None:
        if self.proc and self.proc.poll() is None:
            # Its own process group: the extension host and the language server go with it.
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=15)
        self.log.close()


def run_driver(
    env: Env, mode: str, url: str, extra: dict[str, Any], tag: str | None = None
) -> dict[str, Any]:
    cfg = {
        "mode": mode,
        "url": url,
        "playwright": str(PLAYWRIGHT),
        "chromium": str(CHROMIUM),
        "artifacts": str(ARTIFACTS),
        "timeoutMs": int(os.environ.get("TOKENLINE_E2E_TIMEOUT_MS", "60000")),
        **extra,
    }
    cfg_path = env.root / f"driver-{tag or mode}.json"
    cfg_path.write_text(json.dumps(cfg))
    proc = subprocess.run(
        ["node", str(HERE / "driver.mjs"), str(cfg_path)],
        env=env.env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    (ARTIFACTS / f"driver-{tag or mode}.log").write_text(proc.stderr)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert lines, f"driver printed no result (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    result: dict[str, Any] = json.loads(lines[-1])
    assert "fatal" not in result, result["fatal"]
    return result


@pytest.fixture(scope="module")
def vsix() -> Path:
    for what, p in (
        ("code-server", CODE_SERVER),
        ("playwright-core", PLAYWRIGHT),
        ("chromium", CHROMIUM),
    ):
        if not p.exists():
            _missing(f"{what} at {p}")
    if not shutil.which("node"):
        _missing("node")
    if (
        subprocess.run([PYTHON, "-c", "import tokenline.server"], capture_output=True).returncode
        != 0
    ):
        _missing(f"the tokenline package (with its server) in {PYTHON}; set TOKENLINE_E2E_PYTHON")
    # npm run package builds both: the universal .vsix and the linux-x64 one (bundled/deps).
    universal, platform = VSIX, PLATFORM_VSIX
    # The extension's sources and the Python package its bundled wheels are built from.
    sources = [
        EXT_DIR / "package.json",
        *(EXT_DIR / "src").glob("*.ts"),
        *(EXT_DIR / "scripts").glob("*.mjs"),
        *EXT_DIR.glob(".vscodeignore*"),
        REPO / "pyproject.toml",
        REPO / "setup.py",
        *(p for d in ("core", "server", "cli") for p in (REPO / d).rglob("*.py")),
    ]
    newest_source = max(p.stat().st_mtime for p in sources)
    if (
        not all(v.is_file() and v.stat().st_mtime >= newest_source for v in (universal, platform))
        or not (EXT_DIR / "bundled" / "bundle.json").is_file()
        or not (EXT_DIR / "bundled" / "deps" / "deps.json").is_file()
    ):
        if not (EXT_DIR / "node_modules").is_dir():
            _missing("vscode-extension/node_modules")
        build = subprocess.run(
            ["npm", "run", "package"], cwd=EXT_DIR, capture_output=True, text=True
        )
        assert build.returncode == 0, build.stdout[-5000:] + build.stderr[-5000:]
    return universal


@pytest.fixture(scope="module")
def platform_vsix(vsix: Path) -> Path:
    """The linux-x64 .vsix, built beside the universal one."""
    return PLATFORM_VSIX


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory, vsix: Path) -> dict[str, Any]:
    """A scratch VS Code with the .vsix installed and a workspace of prompt files."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for old in ARTIFACTS.glob("*.png"):
        old.unlink()
    env = Env(tmp_path_factory.mktemp("vscode"))
    ws = env.workspace
    botchan = BOTCHAN.read_text(encoding="utf-8-sig").replace("\r\n", "\n")
    lines = botchan.split("\n")  # about 18 tokens a line

    prompt = ws / "story.prompt.md"
    prompt.write_text(PROMPT + "\n".join(lines[300:320]) + "\n", encoding="utf-8")
    big = ws / "too-long.md"
    big.write_text("\n".join(lines[300:1000]) + "\n", encoding="utf-8")

    # A document between warnAt (90 %) and the window: tried on prefixes, counted in one call.
    scratch = env.root / "warn-candidates"
    scratch.mkdir()
    candidates = []
    for n in range(360, 480, 3):
        p = scratch / f"{n}.md"
        p.write_text("\n".join(lines[300 : 300 + n]) + "\n", encoding="utf-8")
        candidates.append(p)
    warn_file = None
    for p, c in zip(candidates, tokenline_count(*candidates), strict=True):
        if 0.92 * CONTEXT_WINDOW <= c <= 0.98 * CONTEXT_WINDOW:
            warn_file = ws / "nearly-full.md"
            shutil.copy(p, warn_file)
            break
    files = {"prompt": prompt.name, "big": big.name, "warn": warn_file.name if warn_file else None}
    (ws / ".tokenline-e2e" / "files.json").write_text(json.dumps(files))

    settings: dict[str, Any] = {"tokenline.python": PYTHON, "tokenline.trace.server": "messages"}
    if os.environ.get("TOKENLINE_E2E_SERVER_COMMAND"):
        settings["tokenline.server.command"] = json.loads(
            os.environ["TOKENLINE_E2E_SERVER_COMMAND"]
        )
    env.install(vsix, settings)
    paths = {"prompt": prompt, "big": big, "warn": warn_file}
    # `tokenline count` on each file as written, before VS Code touches it.
    present = {k: p for k, p in paths.items() if p is not None}
    counts = dict(zip(present, tokenline_count(*present.values()), strict=True))
    return {"env": env, "files": files, "paths": paths, "counts": counts}


@pytest.fixture(scope="module")
def ui(workspace: dict[str, Any]) -> dict[str, Any]:
    """One browser session through the whole scenario (driver.mjs, mode "ui")."""
    env: Env = workspace["env"]
    with CodeServer(env, ARTIFACTS / "code-server-ui.log"):
        result = run_driver(
            env,
            "ui",
            env.url(),
            {
                "files": workspace["files"],
                "typed": TYPED,
                "boundaryColours": [rgb(DARK_A), rgb(DARK_B)],
                "startTheme": "Default Dark Modern",
                "themeLabels": THEME_LABELS,
                "themes": {
                    **{name: [rgb(a), rgb(b)] for name, (a, b) in THEME_COLOURS.items()},
                    OTHER_THEME: None,
                },
            },
        )
    # The extension's log channel, for whoever reads a failure.
    (ARTIFACTS / "tokenline-output-ui.log").write_text(env.extension_log())
    return result


@pytest.fixture(scope="module")
def host(workspace: dict[str, Any], ui: dict[str, Any]) -> dict[str, Any]:
    """host/index.js run as extensionTestsPath in the real extension host (after the UI run)."""
    env: Env = workspace["env"]
    out = env.workspace / ".tokenline-e2e" / "host-result.json"
    out.unlink(missing_ok=True)
    remote = f"vscode-remote://127.0.0.1:{env.port}"
    payload = [
        ["extensionDevelopmentPath", f"{remote}{EXT_DIR}"],
        ["extensionTestsPath", f"{remote}{HERE / 'host' / 'index.js'}"],
    ]
    with CodeServer(env, ARTIFACTS / "code-server-host.log"):
        result = run_driver(env, "host", env.url(payload), {"hostResult": str(out)})
    step = result["steps"]["host"]
    assert step["ok"], step.get("error")
    host_result: dict[str, Any] = step["result"]
    return host_result


@pytest.fixture(scope="module")
def missing(
    tmp_path_factory: pytest.TempPathFactory, vsix: Path, host: dict[str, Any]
) -> dict[str, Any]:
    """VS Code whose tokenline.python has no `tokenline` package (after the other sessions)."""
    env = Env(tmp_path_factory.mktemp("vscode-missing"))
    bare = env.root / "bare-venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True, timeout=120
    )
    python = str(bare / "bin" / "python")
    (env.workspace / "story.prompt.md").write_text(PROMPT, encoding="utf-8")
    env.install(vsix, {"tokenline.python": python})
    with CodeServer(env, ARTIFACTS / "code-server-missing.log"):
        result = run_driver(env, "missing", env.url(), {"files": {"prompt": "story.prompt.md"}})
    return {"result": result, "python": python, "log": env.extension_log()}


def _step(result: dict[str, Any], name: str) -> dict[str, Any]:
    s: dict[str, Any] | None = result["steps"].get(name)
    assert s is not None, f"driver step {name} did not run: {result}"
    assert s["ok"], f"driver step {name}: {s.get('error')}"
    return s


STATUS_RE = re.compile(r"^(?:Sel ([\d,]+) · )?([\d,]+) / ([\d,]+)(?: tokens)?$")


def parse_status(text: str) -> tuple[int | None, int, int]:
    m = STATUS_RE.match(text)
    assert m, f"status bar text {text!r}"
    sel = int(m.group(1).replace(",", "")) if m.group(1) else None
    return sel, int(m.group(2).replace(",", "")), int(m.group(3).replace(",", ""))


# ---------------------------------------------------------------------------------------------
# In the browser


def test_status_bar_shows_the_cli_count(ui: dict[str, Any], workspace: dict[str, Any]) -> None:
    status = _step(ui, "open")["status"]
    n = workspace["counts"]["prompt"]
    assert status["text"] == f"{fmt(n)} / {fmt(CONTEXT_WINDOW)} tokens"
    assert "error-kind" not in status["className"] and "warning-kind" not in status["className"]


def test_tooltip_names_model_window_percentage_and_core(ui: dict[str, Any]) -> None:
    text = _step(ui, "tooltip")["text"]
    assert "Model: mistral-7b-v0.1" in text
    assert f"Context window: {fmt(CONTEXT_WINDOW)} tokens" in text
    assert re.search(r"\(\d+(\.\d)?% used\)", text), text
    assert re.search(r"Compiled core: (yes|no)", text), text


def test_typing_changes_the_count_to_the_cli_count(
    ui: dict[str, Any], workspace: dict[str, Any]
) -> None:
    s = _step(ui, "typing")
    _, before, _ = parse_status(s["before"]["text"])
    _, first, _ = parse_status(s["firstChange"]["text"])
    _, after, _ = parse_status(s["after"]["text"])
    assert first != before
    saved = workspace["paths"]["prompt"].read_text(encoding="utf-8")
    assert TYPED.strip() in saved, "the typed text reached the file"
    (n,) = tokenline_count(workspace["paths"]["prompt"])
    assert after == n, f"status {s['after']['text']!r}, tokenline count {n}"


def test_selection_shows_its_count(
    ui: dict[str, Any], workspace: dict[str, Any], tmp_path: Path
) -> None:
    s = _step(ui, "selection")
    first_line = PROMPT.split("\n", 1)[0]
    first_word = first_line.split(" ", 1)[0]
    line_n, word_n = count_text(tmp_path, first_line, first_word)
    sel, total, window = parse_status(s["single"]["text"])
    assert sel == line_n and window == CONTEXT_WINDOW
    assert s["single"]["text"] == f"Sel {fmt(line_n)} · {fmt(total)} / {fmt(CONTEXT_WINDOW)}"
    assert parse_status(s["word"]["text"])[0] == word_n
    # Two cursors on the two occurrences of the word: the counts are summed.
    assert parse_status(s["multi"]["text"])[0] == 2 * word_n
    assert parse_status(s["cleared"]["text"])[0] is None


def test_token_boundary_colours_are_on_the_text(ui: dict[str, Any]) -> None:
    lines = _step(ui, "colours")["lines"]
    first = [span for span in lines[0] if span["text"].strip()]
    colours = [span["color"] for span in first]
    assert rgb(DARK_A) in colours and rgb(DARK_B) in colours, colours
    # Neighbouring tokens differ: no two adjacent spans of the first line share a boundary colour.
    boundary = [c for c in (span["color"] for span in lines[0]) if c in (rgb(DARK_A), rgb(DARK_B))]
    assert len(boundary) >= 8
    assert all(a != b for a, b in itertools.pairwise(boundary)), boundary


def test_toggle_switches_boundaries_off_and_on(ui: dict[str, Any]) -> None:
    s = _step(ui, "toggle")
    off = {span["color"] for span in s["off"][0]}
    on = {span["color"] for span in s["on"][0]}
    assert not off & {rgb(DARK_A), rgb(DARK_B)}, off
    assert {rgb(DARK_A), rgb(DARK_B)} <= on, on


def test_token_details_at_cursor(ui: dict[str, Any]) -> None:
    texts = _step(ui, "tokenAt")["notifications"]
    assert any(re.search(r"Token 1 of [\d,]+: id \d+, piece \"", t) for t in texts), texts


def test_status_click_opens_the_model_picker(ui: dict[str, Any]) -> None:
    s = _step(ui, "models")
    assert "Model" in s["title"]
    assert any("mistral-7b-v0.1" in item for item in s["items"]), s["items"]
    assert any("Tokenizer file (.model, tokenizer.json" in item for item in s["items"]), s["items"]


def test_setting_the_context_window_reaches_the_server(ui: dict[str, Any]) -> None:
    s = _step(ui, "contextWindow")
    _, tokens, window = parse_status(s["changed"]["text"])
    assert window == 4096
    assert parse_status(s["before"]["text"])[1:] == (tokens, CONTEXT_WINDOW)
    assert parse_status(s["restored"]["text"])[1:] == (tokens, CONTEXT_WINDOW)


def test_nearly_full_document_shows_the_warning_colour(
    ui: dict[str, Any], workspace: dict[str, Any]
) -> None:
    if workspace["paths"]["warn"] is None:
        pytest.fail("no prefix of the corpus fell between 90% and 100% of the window")
    s = _step(ui, "warn")["status"]
    n = workspace["counts"]["warn"]
    assert s["text"] == f"{fmt(n)} / {fmt(CONTEXT_WINDOW)} tokens"
    assert "warning-kind" in s["className"]


def test_document_over_the_window_shows_the_error(
    ui: dict[str, Any], workspace: dict[str, Any]
) -> None:
    s = _step(ui, "over")
    n = workspace["counts"]["big"]
    assert n > CONTEXT_WINDOW
    assert s["status"]["text"] == f"{fmt(n)} / {fmt(CONTEXT_WINDOW)} tokens"
    assert "error-kind" in s["status"]["className"]
    assert s["squiggles"] > 0
    assert f"{fmt(n)} tokens, {fmt(n - CONTEXT_WINDOW)} over" in s["problem"]


# ---------------------------------------------------------------------------------------------
# Inside the extension host


def _host_step(host: dict[str, Any], name: str) -> dict[str, Any]:
    s: dict[str, Any] | None = host["steps"].get(name)
    assert s is not None, host
    assert s["ok"], s.get("error")
    return s


def test_extension_host_activates(host: dict[str, Any]) -> None:
    assert _host_step(host, "activation")["active"] is True


def test_extension_host_diagnostics(host: dict[str, Any], workspace: dict[str, Any]) -> None:
    s = _host_step(host, "diagnostics")
    n = workspace["counts"]["big"]
    assert s["prompt"] == []
    assert len(s["big"]) == 1, s["big"]
    d = s["big"][0]
    assert d["severity"] == "Error"
    assert d["message"] == (
        f"Beyond the {fmt(CONTEXT_WINDOW)}-token context window: "
        f"{fmt(n)} tokens, {fmt(n - CONTEXT_WINDOW)} over"
    )
    # From the first token that does not fit to the end of the document.
    assert d["range"][2:] == s["bigEnd"]
    assert d["range"][:2] > [0, 0]


def test_extension_host_semantic_tokens(host: dict[str, Any]) -> None:
    s = _host_step(host, "semanticTokens")
    assert s["legend"]["tokenTypes"] == ["tokenlineA", "tokenlineB"]
    assert s["legend"]["tokenModifiers"] == ["whitespace", "bytes", "special", "unknown"]
    tokens = s["tokens"]
    lines = s["lines"]
    for no in range(3):
        on_line = [t for t in tokens if t["line"] == no]
        assert on_line, f"no semantic tokens on line {no}"
        # Types alternate along the line, and the tokens cover its text without gaps.
        assert [t["type"] for t in on_line] == [
            ["tokenlineA", "tokenlineB"][i % 2] for i in range(len(on_line))
        ]
        assert "".join(t["text"] for t in on_line) == lines[no][on_line[0]["character"] :]
        for a, b in itertools.pairwise(on_line):
            assert a["character"] + a["length"] == b["character"]
    # An empty line has no token (the line break is never part of one).
    assert not [t for t in tokens if t["line"] == 3] and lines[3] == ""
    assert all(set(t["modifiers"]) <= {"whitespace", "bytes", "special", "unknown"} for t in tokens)


def test_extension_host_toggle_empties_semantic_tokens(host: dict[str, Any]) -> None:
    s = _host_step(host, "toggle")
    assert s["off"]["count"] == 0
    assert s["enabledAfterOff"] is False
    assert s["on"]["count"] > 0


def test_extension_host_copies_token_ids(host: dict[str, Any], tmp_path: Path) -> None:
    s = _host_step(host, "copyIds")
    rows = [json.loads(row) for row in s["clipboard"].splitlines()]
    assert len(rows) == 2, s["clipboard"]
    assert [len(r) for r in rows] == count_text(tmp_path, s["word"], s["line"])
    assert all(isinstance(i, int) and i >= 0 for r in rows for i in r)
    # The word is where the line starts, so its ids start the line's.
    assert rows[1][: len(rows[0])] == rows[0]


def test_extension_host_registers_the_commands(host: dict[str, Any]) -> None:
    cmds = _host_step(host, "commands")["tokenline"]
    for c in (
        "tokenline.chooseModel",
        "tokenline.setContextWindow",
        "tokenline.showTokenAtCursor",
        "tokenline.copyTokenIds",
        "tokenline.toggleBoundaries",
    ):
        assert c in cmds


def test_default_colours_for_light_dark_and_high_contrast_themes(ui: dict[str, Any]) -> None:
    seen = _step(ui, "themes")["themes"]
    for name, (a, b) in THEME_COLOURS.items():
        colours = [span["color"] for span in seen[name]["spans"]]
        assert rgb(a) in colours and rgb(b) in colours, (name, colours)
        assert seen[name]["screenshot"].endswith(".png")
    # Elsewhere the fallback scopes still tell neighbours apart.
    spans = [span for span in seen[OTHER_THEME]["spans"] if span["text"].strip()]
    colours = [span["color"] for span in spans]
    assert len(set(colours)) >= 2, colours
    assert sum(a != b for a, b in itertools.pairwise(colours)) >= len(colours) // 2, colours


# ---------------------------------------------------------------------------------------------
# Without the server package


def test_missing_server_package_is_reported_with_a_pip_action(missing: dict[str, Any]) -> None:
    s = _step(missing["result"], "missing")
    python = missing["python"]
    message = next((t for t in s["notifications"] if "not importable" in t), None)
    assert message is not None, s["notifications"]
    assert f"tokenline is not importable by {python}" in message
    assert "Install with pip" in s["buttons"], s["buttons"]
    assert s["status"]["text"] == "Tokenline" and "error-kind" in s["status"]["className"], s[
        "status"
    ]
    # The log shows the command that was run, and Python's own error.
    assert f"{python} -c 'import tokenline'" in missing["log"], missing["log"]
    assert "ModuleNotFoundError" in missing["log"], missing["log"]
    # One check, no restart loop: the server was never started.
    assert missing["log"].count("import tokenline'") == 1, missing["log"]


# ---------------------------------------------------------------------------------------------
# A budget from the project configuration (pyproject.toml)

BUDGET = 40
BUDGET_PATTERN = "prompts/*.md"
BUDGET_PROMPT = """You are a support assistant for a small bookshop.
Answer in two or three short sentences, in plain English.
Never invent a price, a stock level or a delivery date: say you will check.
If the customer is upset, apologise once and move on to what you can do.
"""


@pytest.fixture(scope="module")
def budget(tmp_path_factory: pytest.TempPathFactory, vsix: Path) -> dict[str, Any]:
    """A workspace whose pyproject.toml gives prompts/*.md a budget, and a prompt over it."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    env = Env(tmp_path_factory.mktemp("vscode-budget"))
    (env.workspace / "pyproject.toml").write_text(
        f'[project]\nname = "bookshop-bot"\n\n'
        f'[tool.tokenline.budgets]\n"{BUDGET_PATTERN}" = {BUDGET}\n',
        encoding="utf-8",
    )
    prompt = env.workspace / "prompts" / "system.md"
    prompt.parent.mkdir()
    prompt.write_text(BUDGET_PROMPT, encoding="utf-8")
    env.install(vsix, {"tokenline.python": PYTHON})
    with CodeServer(env, ARTIFACTS / "code-server-budget.log"):
        result = run_driver(
            env,
            "budget",
            env.url(),
            {"files": {"folder": "prompts", "prompt": "system.md"}, "shotName": "40-budget-status"},
        )
    (ARTIFACTS / "tokenline-output-budget.log").write_text(env.extension_log())
    return {"result": result, "prompt": prompt}


# SentencePiece itself on the bundled model, in the interpreter that has tokenline (PYTHON).
SP_COUNT = """import sys
import sentencepiece as spm
from tokenline.core import bundled_model_path
sp = spm.SentencePieceProcessor(model_file=str(bundled_model_path()))
with open(sys.argv[1], encoding="utf-8", newline="") as f:
    print(len(sp.encode(f.read())))
"""


def sentencepiece_count(path: Path) -> int:
    out = subprocess.run(
        [PYTHON, "-c", SP_COUNT, str(path)], check=True, capture_output=True, text=True, timeout=120
    )
    return int(out.stdout)


def test_budget_from_pyproject_in_status_bar_and_problems(budget: dict[str, Any]) -> None:
    n = sentencepiece_count(budget["prompt"])
    assert n > BUDGET, f"the prompt must be over its budget: {n} tokens"
    s = _step(budget["result"], "budget")
    for status in (s["status"], s["shown"]):
        assert status["text"] == f"{fmt(n)} / {fmt(BUDGET)} tokens (budget)", status
        assert "error-kind" in status["className"], status
    assert s["squiggles"] > 0
    message = (
        f"Beyond the {fmt(BUDGET)}-token budget for {BUDGET_PATTERN}: "
        f"{fmt(n)} tokens, {fmt(n - BUDGET)} over"
    )
    assert message in s["problem"], s["problem"]
    assert s["errorIcon"], "the Problems row is not an Error"
    assert Path(s["screenshot"]) == ARTIFACTS / "40-budget-status.png"


# ---------------------------------------------------------------------------------------------
# A tiktoken encoding from tiktoken's cache, and a tokenizer.json in the workspace

TIKTOKEN_MODEL = "o200k_base"
# The picker's headings (MODEL_GROUPS in vscode-extension/src/commands.ts).
TIKTOKEN_GROUP = "tiktoken encodings"
WORKSPACE_GROUP = "Tokenizer files in the workspace"
BERT_NAME = "bert-wp"
BERT_VALUE = f"{BERT_NAME}/tokenizer.json"


@pytest.fixture(scope="module")
def tiktoken_ui(
    tmp_path_factory: pytest.TempPathFactory, vsix: Path, tiktoken_cache: Path, botchan: str
) -> dict[str, Any]:
    """code-server started with TIKTOKEN_CACHE_DIR on a seeded cache and tokenline.model set to
    o200k_base in the workspace, a small WordPiece tokenizer.json beside the prompt: one session
    opens the prompt, reads the model picker and picks the tokenizer.json from it."""
    from tests.core.hfkit import small_bert

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    env = Env(tmp_path_factory.mktemp("vscode-tiktoken"))
    # The extension starts the server from code-server's environment: it finds the cache there.
    env.env["TIKTOKEN_CACHE_DIR"] = str(tiktoken_cache)
    ws = env.workspace
    lines = botchan.lstrip("\ufeff").replace("\r\n", "\n").split("\n")
    prompt = ws / "story.prompt.md"
    prompt.write_text(PROMPT + "\n".join(lines[300:320]) + "\n", encoding="utf-8")
    bert = small_bert(ws, botchan, name=BERT_NAME)
    assert bert.relative_to(ws).as_posix() == BERT_VALUE
    (ws / ".vscode").mkdir()
    (ws / ".vscode" / "settings.json").write_text(json.dumps({"tokenline.model": TIKTOKEN_MODEL}))
    env.install(vsix, {"tokenline.python": PYTHON, "tokenline.trace.server": "messages"})
    # The references, before VS Code touches anything, with the same cache.
    (o200k,) = tokenline_count(prompt, model=TIKTOKEN_MODEL, env=env.env)
    (wordpiece,) = tokenline_count(prompt, model=str(bert), env=env.env)
    with CodeServer(env, ARTIFACTS / "code-server-tiktoken.log"):
        result = run_driver(
            env,
            "tiktoken",
            env.url(),
            {
                "files": {"prompt": prompt.name},
                "boundaryColours": [rgb(DARK_A), rgb(DARK_B)],
                "pick": BERT_VALUE,
                "shotPrefix": "50-tiktoken",
            },
        )
    (ARTIFACTS / "tokenline-output-tiktoken.log").write_text(env.extension_log())
    return {
        "result": result,
        "env": env,
        "prompt": prompt,
        "counts": {"o200k": o200k, "wordpiece": wordpiece},
        "cache": tiktoken_cache,
    }


def _groups(rows: list[dict[str, Any]]) -> dict[str, list[str]]:
    """The picker's labels under each heading, in order (the heading is on its first row)."""
    groups: dict[str, list[str]] = {}
    heading = ""
    for row in rows:
        heading = row["separator"] or heading
        groups.setdefault(heading, []).append(row["label"])
    return groups


def _boundaries(spans: list[dict[str, str]]) -> list[str]:
    """The tokens a line shows: runs of one boundary colour (neighbours alternate colours)."""
    runs: list[tuple[str, str]] = []
    for span in spans:
        if runs and runs[-1][0] == span["color"]:
            runs[-1] = (span["color"], runs[-1][1] + span["text"])
        else:
            runs.append((span["color"], span["text"]))
    # Monaco draws spaces as no-break spaces.
    return [t.replace("\u00a0", " ") for c, t in runs if c in (rgb(DARK_A), rgb(DARK_B))]


def _line_tokens(line: str, ends: list[int]) -> list[str]:
    """The text's first line cut where tokens end: the editor's tokens tile the text (white space
    a tokenizer.json leaves uncovered goes to the token after it)."""
    cuts = sorted({e for e in ends if 0 < e < len(line)})
    return [line[a:b] for a, b in itertools.pairwise([0, *cuts, len(line)])]


def test_tiktoken_status_bar_shows_the_cli_count(tiktoken_ui: dict[str, Any]) -> None:
    status = _step(tiktoken_ui["result"], "open")["status"]
    n = tiktoken_ui["counts"]["o200k"]
    assert status["text"] == f"{fmt(n)} / {fmt(CONTEXT_WINDOW)} tokens"


def test_tiktoken_tooltip_names_the_encoding(tiktoken_ui: dict[str, Any]) -> None:
    s = _step(tiktoken_ui["result"], "tooltip")
    assert f"Model: {TIKTOKEN_MODEL}\n" in s["text"], s["text"]
    assert f"Tokenline: {fmt(tiktoken_ui['counts']['o200k'])} tokens" in s["text"], s["text"]
    assert Path(s["screenshot"]) == ARTIFACTS / "50-tiktoken-tooltip.png"


def test_tiktoken_boundary_colours_are_its_tokens(tiktoken_ui: dict[str, Any]) -> None:
    """The first line's colour runs are o200k_base's tokens (tiktoken's own, from the cache)."""
    from tests import tiktokencache

    (spans,) = _step(tiktoken_ui["result"], "colours")["lines"]
    text = tiktoken_ui["prompt"].read_text(encoding="utf-8")
    enc = tiktokencache.reference(tiktoken_ui["cache"], TIKTOKEN_MODEL)
    tokens = enc.encode_ordinary(text)
    _, starts = enc.decode_with_offsets(tokens)
    line = text.split("\n", 1)[0]
    shown = _boundaries(spans)
    assert len(shown) >= 8, spans
    assert shown == _line_tokens(line, [*starts[1:], len(text)])


def test_tiktoken_model_picker_lists_cached_encodings_and_workspace_tokenizers(
    tiktoken_ui: dict[str, Any],
) -> None:
    from tests.tiktokencache import SEEDED

    s = _step(tiktoken_ui["result"], "models")
    assert s["title"] == "Tokenline: Model (1/2)"
    rows = s["rows"]
    groups = _groups(rows)
    headings = list(groups)
    assert headings[0] == "Bundled" and headings[-1] == "Other", headings
    assert headings.index(TIKTOKEN_GROUP) < headings.index(WORKSPACE_GROUP), headings
    # Every encoding tiktoken knows; the seeded ones in the cache the extension's server inherited,
    # the others marked as downloads.
    assert sorted(groups[TIKTOKEN_GROUP]) == sorted(tiktoken.list_encoding_names()), groups
    from tokenline.core.tiktokencache import tiktoken_encodings

    cache = str(tiktoken_ui["cache"])
    # The seeded files and every encoding that reads only those (o200k_harmony reads o200k_base's).
    cached = {e.name for e in tiktoken_encodings() if e.cached(tiktoken_ui["cache"])}
    assert set(SEEDED) <= cached and "r50k_base" not in cached
    for row in rows:
        if row["label"] in cached:
            assert row["description"] == f"cached in {cache}", row
        elif row["label"] in groups[TIKTOKEN_GROUP]:
            assert row["description"] == "downloaded by tiktoken on first use", row
    assert groups[WORKSPACE_GROUP] == [BERT_VALUE], groups
    # The model in use carries the check mark.
    assert [r["label"] for r in rows if r["checked"]] == [TIKTOKEN_MODEL], rows


def test_tiktoken_picking_the_workspace_tokenizer_counts_with_it(
    tiktoken_ui: dict[str, Any],
) -> None:
    s = _step(tiktoken_ui["result"], "pick")
    n = tiktoken_ui["counts"]["wordpiece"]
    assert n != tiktoken_ui["counts"]["o200k"]
    assert s["status"]["text"] == f"{fmt(n)} / {fmt(CONTEXT_WINDOW)} tokens"
    assert f"Model: {BERT_NAME}\n" in s["tooltip"], s["tooltip"]
    # Saved to the workspace settings as the picker lists it: relative to the folder.
    settings = tiktoken_ui["env"].workspace / ".vscode" / "settings.json"
    assert json.loads(settings.read_text())["tokenline.model"] == BERT_VALUE


def test_tiktoken_picking_the_workspace_tokenizer_recolours_its_tokens(
    tiktoken_ui: dict[str, Any],
) -> None:
    """After the pick the first line shows the WordPiece tokens (a space goes with the next)."""
    from tokenizers import Tokenizer

    (spans,) = _step(tiktoken_ui["result"], "pick")["lines"]
    text = tiktoken_ui["prompt"].read_text(encoding="utf-8")
    tok = Tokenizer.from_file(str(tiktoken_ui["env"].workspace / BERT_VALUE))
    offsets = tok.encode(text, add_special_tokens=False).offsets
    line = text.split("\n", 1)[0]
    assert _boundaries(spans) == _line_tokens(line, [e for _, e in offsets])


# ---------------------------------------------------------------------------------------------
# Choosing a model that fails to load, then again once it can (issue 21)

OFFLINE = ["HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9"]


@pytest.fixture(scope="module")
def switch_ui(
    tmp_path_factory: pytest.TempPathFactory, vsix: Path, tiktoken_cache: Path, botchan: str
) -> dict[str, Any]:
    """The server starts on an empty tiktoken cache with no network (a proxy that refuses every
    connection): the picker's o200k_base fails to load; the driver then seeds the cache (as
    `tokenline models fetch` would) and picks o200k_base again."""
    from tests.conftest import shared_file

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    env = Env(tmp_path_factory.mktemp("vscode-switch"))
    cache = env.root / "tiktoken-cache"
    cache.mkdir()
    prompt = env.workspace / "story.prompt.md"
    lines = botchan.lstrip("\ufeff").replace("\r\n", "\n").split("\n")
    prompt.write_text(PROMPT + "\n".join(lines[300:320]) + "\n", encoding="utf-8")
    server = ["/usr/bin/env", *OFFLINE, f"TIKTOKEN_CACHE_DIR={cache}", PYTHON, "-m", "tokenline"]
    env.install(vsix, {"tokenline.server.command": [*server, "serve"]})
    (bundled,) = tokenline_count(prompt)
    (o200k,) = tokenline_count(
        prompt, model=TIKTOKEN_MODEL, env={**os.environ, "TIKTOKEN_CACHE_DIR": str(tiktoken_cache)}
    )
    seed = {"python": sys.executable, "tool": str(shared_file("tools", "seed-tiktoken-cache"))}
    with CodeServer(env, ARTIFACTS / "code-server-switch.log"):
        result = run_driver(
            env,
            "switch",
            env.url(),
            {
                "files": {"prompt": prompt.name},
                "model": TIKTOKEN_MODEL,
                "seed": {**seed, "cache": str(cache)},
                "shotPrefix": "60-switch",
            },
        )
    (ARTIFACTS / "tokenline-output-switch.log").write_text(env.extension_log())
    return {"result": result, "counts": {"bundled": bundled, "o200k": o200k}, "cache": cache}


def test_switch_picker_lists_every_encoding_and_marks_downloads(switch_ui: dict[str, Any]) -> None:
    s = _step(switch_ui["result"], "failed")
    rows = s["picker"]["rows"]
    groups = _groups(rows)
    assert sorted(groups[TIKTOKEN_GROUP]) == sorted(tiktoken.list_encoding_names()), groups
    for row in rows:
        if row["label"] in groups[TIKTOKEN_GROUP]:
            assert row["description"] == "downloaded by tiktoken on first use", row
    # What the document is counted with, checked and named.
    assert [r["label"] for r in rows if r["checked"]] == ["mistral-7b-v0.1"], rows
    assert s["picker"]["placeholder"] == "In use: mistral-7b-v0.1"


def test_switch_failed_load_keeps_a_warning_state(switch_ui: dict[str, Any]) -> None:
    s = _step(switch_ui["result"], "failed")
    n = switch_ui["counts"]["bundled"]
    for status in (s["status"], s["later"]):
        assert status["text"] == f"{fmt(n)} / {fmt(CONTEXT_WINDOW)} tokens", status
        assert status["warningIcon"] and "warning-kind" in status["className"], status
    assert "Model: mistral-7b-v0.1" in s["tooltip"], s["tooltip"]
    assert (
        "Warning: o200k_base could not be loaded, so mistral-7b-v0.1 counts instead" in s["tooltip"]
    )
    assert "tokenline models fetch o200k_base" in s["tooltip"], s["tooltip"]
    assert any("o200k_base" in t and "Still using" in t for t in s["notifications"]), s


def test_switch_choosing_it_again_once_cached_loads_it(switch_ui: dict[str, Any]) -> None:
    s = _step(switch_ui["result"], "again")
    rows = s["picker"]["rows"]
    (o200k,) = [r for r in rows if r["label"] == TIKTOKEN_MODEL]
    assert o200k["description"] == "could not be loaded; choose it to try again", o200k
    assert s["picker"]["placeholder"] == "In use: mistral-7b-v0.1 (o200k_base could not be loaded)"
    n = switch_ui["counts"]["o200k"]
    assert n != switch_ui["counts"]["bundled"]
    assert s["settled"]["text"] == f"{fmt(n)} / {fmt(CONTEXT_WINDOW)} tokens", s["settled"]
    assert not s["settled"]["warningIcon"] and "warning-kind" not in s["settled"]["className"]
    assert f"Model: {TIKTOKEN_MODEL}\n" in s["tooltip"] and "Warning" not in s["tooltip"]


# ---------------------------------------------------------------------------------------------
# The server bundled in the .vsix: no tokenline.python, a Python on PATH without tokenline

# An index nobody listens on (port 9, discard), for a machine without the network.
CLOSED_INDEX = "http://127.0.0.1:9/simple"
# The first start installs from the package index: give it minutes, not the usual minute.
INSTALL_TIMEOUT_MS = int(os.environ.get("TOKENLINE_E2E_INSTALL_TIMEOUT_MS", 10 * 60_000))


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """PATH with a Python without tokenline first (a venv with no packages), the test venv off it.

    code-server may still replace PATH with the one of a login shell (VS Code resolves the shell
    environment), so the tests check the interpreter the extension reports in its log as well.
    """
    bare = tmp_path_factory.mktemp("bare-python") / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True, timeout=120
    )
    ours = {str(Path(sys.executable).parent), str(Path(PYTHON).parent)}
    rest = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d and d not in ours]
    return {"path": os.pathsep.join([str(bare / "bin"), *rest])}


BASE_RE = re.compile(r"Python for the server environment: (\S+) \(Python ([\d.]+), ([^)]+)\)\.")


def _base_python(log: str) -> tuple[str, str]:
    """The interpreter the extension made its environment with, as its log names it."""
    m = BASE_RE.search(log)
    assert m, log
    assert m.group(3).endswith("on PATH"), m.group(0)
    return m.group(1), m.group(2)


def _bundle() -> dict[str, Any]:
    bundle: dict[str, Any] = json.loads((EXT_DIR / "bundled" / "bundle.json").read_text())
    return bundle


def _bundled_env(
    factory: pytest.TempPathFactory, name: str, vsix: Path, bare: dict[str, Any]
) -> Env:
    env = Env(factory.mktemp(name))
    env.env["PATH"] = bare["path"]
    env.env.pop("VIRTUAL_ENV", None)
    (env.workspace / "notes.md").write_text(PROMPT, encoding="utf-8")
    env.install(vsix, {})  # no tokenline.python, no tokenline.server.command
    return env


def _storage(env: Env) -> Path:
    return env.user_data / "User" / "globalStorage" / "tokenline.tokenline"


def _no_index(env: Env, index: str) -> None:
    """pip as a clean machine has it: no pip.conf, no PIP_* or proxy variables; this index."""
    for key in [k for k in env.env if k.startswith("PIP_") or k.lower().endswith("_proxy")]:
        del env.env[key]
    env.env["PIP_CONFIG_FILE"] = os.devnull
    env.env["PIP_INDEX_URL"] = index


def _start_times(name: str, *runs: dict[str, Any], vsix: Path) -> None:
    """For the record (nothing asserts on time): from the browser's start to the count, and from
    the workbench being loaded to the count, of each start."""
    times: dict[str, Any] = {"vsix_bytes": vsix.stat().st_size}
    for n, result in enumerate(runs, 1):
        step = result["steps"].get("bundled", {})
        times[f"start_{n}"] = {k: step.get(k) for k in ("msToCount", "msWorkbenchToCount")}
    (ARTIFACTS / f"{name}-start-times.json").write_text(json.dumps(times, indent=2) + "\n")


@pytest.fixture(scope="module")
def bundled(
    tmp_path_factory: pytest.TempPathFactory, vsix: Path, bare_python: dict[str, Any]
) -> dict[str, Any]:
    """Two starts of a fresh VS Code with only the universal .vsix: the first installs from the
    package index, reached only through VS Code's http.proxy; the second reuses the environment."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    env = _bundled_env(tmp_path_factory, "vscode-bundled", vsix, bare_python)
    _no_index(env, INDEX_URL)
    # Plain HTTP: pip wants the host named as trusted, as a company mirror's users do.
    env.env["PIP_TRUSTED_HOST"] = INDEX_HOST
    starts = []
    with IndexProxy(EXT_DIR / "bundled" / "deps") as proxy:
        settings = json.loads((env.user_data / "User" / "settings.json").read_text())
        settings["http.proxy"] = proxy.url
        (env.user_data / "User" / "settings.json").write_text(json.dumps(settings, indent=2))
        for n, prefix in ((1, "30-bundled-first-start"), (2, "32-bundled-second-start")):
            with CodeServer(env, ARTIFACTS / f"code-server-bundled-{n}.log"):
                result = run_driver(
                    env,
                    "bundled",
                    env.url(),
                    {
                        "files": {"prompt": "notes.md"},
                        "shotPrefix": prefix,
                        "installTimeoutMs": INSTALL_TIMEOUT_MS,
                    },
                    tag=f"bundled-{n}",
                )
            log = env.extension_log()
            (ARTIFACTS / f"tokenline-output-bundled-{n}.log").write_text(log)
            starts.append({"result": result, "log": log, "requests": list(proxy.requests)})
    _start_times("bundled", *(s["result"] for s in starts), vsix=vsix)
    (count,) = tokenline_count(env.workspace / "notes.md")
    return {
        "first": starts[0],
        "second": starts[1],
        "env": env,
        "count": count,
        "proxy": proxy.url,
    }


def test_bundled_server_first_start_installs_with_progress_and_counts(
    bundled: dict[str, Any],
) -> None:
    s = _step(bundled["first"]["result"], "bundled")
    assert s["status"]["text"] == f"{fmt(bundled['count'])} / {fmt(CONTEXT_WINDOW)} tokens"
    assert s["progress"] is not None, "no progress notification during the first start"
    assert "Tokenline: installing its server" in s["progress"]["text"], s["progress"]
    log = bundled["first"]["log"]
    # The environment was made with a Python that has no tokenline of its own.
    python, _ = _base_python(log)
    assert Path(python).parent != Path(PYTHON).parent, python
    own = subprocess.run([python, "-c", "import tokenline"], capture_output=True, timeout=60)
    assert own.returncode != 0 and b"No module named 'tokenline'" in own.stderr, python
    assert log.count("Creating the server environment:") == 1, log
    bundle = _bundle()
    env_dir = _storage(bundled["env"]) / f"env-{bundle['version']}-{bundle['id']}"
    assert f"The server environment is ready: {env_dir}." in log, log
    assert f"{env_dir}/bin/python -m tokenline serve" in log, log
    # Only the finished environment is left in the extension's storage.
    assert sorted(p.name for p in _storage(bundled["env"]).iterdir()) == [env_dir.name]
    # The dependencies came from the index, through VS Code's proxy.
    assert f"pip uses VS Code's http.proxy {bundled['proxy']}." in log, log
    assert "Installing tokenline 0.1.0 and its dependencies from the package index." in log, log
    served = bundled["first"]["requests"]
    assert f"http://{INDEX_HOST}/simple/sentencepiece/" in served, served
    assert any(r.startswith(f"http://{INDEX_HOST}/files/tokenizers-") for r in served), served


def test_bundled_server_runs_the_compiled_core_where_the_wheel_fits(
    bundled: dict[str, Any],
) -> None:
    _, version = _base_python(bundled["first"]["log"])
    tag = "cp" + "".join(version.split(".")[:2])
    compiled = [w for w in _bundle()["wheels"] if f"-{tag}-{tag}-linux_x86_64" in w]
    assert compiled, (version, _bundle()["wheels"])
    tooltip = _step(bundled["first"]["result"], "bundled")["tooltip"]
    assert "Compiled core: yes" in tooltip, (compiled, tooltip)
    assert (
        f"The bundled compiled core fits Python {version}: {compiled[0]}."
        in (bundled["first"]["log"])
    )


def test_bundled_server_second_start_reuses_the_environment(bundled: dict[str, Any]) -> None:
    s = _step(bundled["second"]["result"], "bundled")
    assert s["status"]["text"] == f"{fmt(bundled['count'])} / {fmt(CONTEXT_WINDOW)} tokens"
    assert s["progress"] is None, s["progress"]
    log = bundled["second"]["log"]
    bundle = _bundle()
    env_dir = _storage(bundled["env"]) / f"env-{bundle['version']}-{bundle['id']}"
    assert f"Using the server environment {env_dir} (tokenline {bundle['version']})." in log, log
    assert "Creating the server environment" not in log, log


@pytest.fixture(scope="module")
def bundled_offline(
    tmp_path_factory: pytest.TempPathFactory,
    vsix: Path,
    bare_python: dict[str, Any],
) -> dict[str, Any]:
    """First start with the package index unreachable (PIP_INDEX_URL on a closed port)."""
    env = _bundled_env(tmp_path_factory, "vscode-bundled-offline", vsix, bare_python)
    # No pip.conf (this machine's could point at local wheels), an index nobody listens on.
    _no_index(env, CLOSED_INDEX)
    with CodeServer(env, ARTIFACTS / "code-server-bundled-offline.log"):
        result = run_driver(
            env,
            "bundledFailure",
            env.url(),
            {
                "files": {"prompt": "notes.md"},
                "expect": "could not set up its server",
                "shotPrefix": "34-bundled-install-failed",
                "installTimeoutMs": INSTALL_TIMEOUT_MS,
            },
        )
    log = env.extension_log()
    (ARTIFACTS / "tokenline-output-bundled-offline.log").write_text(log)
    return {"result": result, "log": log, "env": env}


def test_bundled_server_unreachable_index_says_what_and_how(
    bundled_offline: dict[str, Any],
) -> None:
    s = _step(bundled_offline["result"], "failure")
    bundle = _bundle()
    env_dir = _storage(bundled_offline["env"]) / f"env-{bundle['version']}-{bundle['id']}"
    installed = next(bundled_offline["env"].extensions.glob("tokenline.tokenline-*"))
    message = s["message"]
    assert message.startswith(
        "Tokenline could not set up its server: pip install failed (exit code 1: ERROR: "
    ), message
    assert "package index" in message, message
    storage = _storage(bundled_offline["env"])
    py = f"{env_dir.name}/bin/python"
    command = (
        f"cd {storage} && {_base_python(bundled_offline['log'])[0]} -m venv {env_dir.name} && "
        f"{py} -m pip install --no-index --no-deps --find-links {installed}/bundled/wheels "
        f"tokenline=={bundle['version']} && "
        f"{py} -m pip install -r {installed}/bundled/requirements.txt"
    )
    assert message.endswith(f"To set it up by hand, run: {command}"), message
    assert s["buttons"] == ["Copy Command", "Retry", "Show Log"], s["buttons"]
    assert s["status"]["text"] == "Tokenline" and "error-kind" in s["status"]["className"], s
    log = bundled_offline["log"]
    # One attempt, no reinstall loop, and nothing half-made left behind.
    assert log.count("Creating the server environment:") == 1, log
    assert "127.0.0.1:9" in log, "pip's own output is in the log"
    assert not any(_storage(bundled_offline["env"]).iterdir())


@pytest.fixture(scope="module")
def platform_offline(
    tmp_path_factory: pytest.TempPathFactory,
    platform_vsix: Path,
    bare_python: dict[str, Any],
) -> dict[str, Any]:
    """The linux-x64 .vsix on a clean profile with no package index: the first start installs
    from the wheels it carries; then a restart; then a start with a model file that is not there
    (the server logs an ERROR line)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    env = _bundled_env(tmp_path_factory, "vscode-platform-offline", platform_vsix, bare_python)
    _no_index(env, CLOSED_INDEX)
    with CodeServer(env, ARTIFACTS / "code-server-platform-offline-1.log"):
        first = run_driver(
            env,
            "bundled",
            env.url(),
            {
                "files": {"prompt": "notes.md"},
                "shotPrefix": "36-offline-first-start",
                "installTimeoutMs": INSTALL_TIMEOUT_MS,
                "restart": True,
            },
            tag="platform-offline-1",
        )
    first_log = env.extension_log()
    (ARTIFACTS / "tokenline-output-platform-offline-1.log").write_text(first_log)
    _start_times("platform-offline", first, vsix=platform_vsix)
    settings_file = env.user_data / "User" / "settings.json"
    settings = json.loads(settings_file.read_text())
    missing_model = env.workspace / "no-such-tokenizer.model"
    settings_file.write_text(json.dumps({**settings, "tokenline.model": str(missing_model)}))
    with CodeServer(env, ARTIFACTS / "code-server-platform-offline-2.log"):
        second = run_driver(
            env,
            "bundledFailure",
            env.url(),
            {
                "files": {"prompt": "notes.md"},
                "expect": "cannot load the tokenizer model",
                "shotPrefix": "38-offline-missing-model",
            },
            tag="platform-offline-2",
        )
    second_log = env.extension_log()
    (ARTIFACTS / "tokenline-output-platform-offline-2.log").write_text(second_log)
    (count,) = tokenline_count(env.workspace / "notes.md")
    return {
        "first": first,
        "first_log": first_log,
        "second": second,
        "second_log": second_log,
        "env": env,
        "count": count,
        "missing_model": missing_model,
    }


def test_offline_first_start_installs_from_the_vsix_and_counts(
    platform_offline: dict[str, Any],
) -> None:
    s = _step(platform_offline["first"], "bundled")
    assert s["status"]["text"] == f"{fmt(platform_offline['count'])} / {fmt(CONTEXT_WINDOW)} tokens"
    assert s["progress"] is not None and "installing its server" in s["progress"]["text"]
    assert Path(s["screenshot"]).is_file()
    log = platform_offline["first_log"]
    installed = next(platform_offline["env"].extensions.glob("tokenline.tokenline-*"))
    deps = installed / "bundled" / "deps"
    assert (
        "Installing tokenline 0.1.0 and its dependencies from the wheels bundled with the "
        "extension (no network)." in log
    ), log
    assert f"/pip install --no-index --find-links {deps} -r " in log, log
    # pip never asked the index (nobody listens there: it would have retried and failed).
    assert "127.0.0.1:9" not in log, log
    # The interpreter the compiled wheel fits was taken, and the compiled core runs.
    _, version = _base_python(log)
    assert f"The bundled compiled core fits Python {version}: " in log, log
    assert "Compiled core: yes" in s["tooltip"], s["tooltip"]


def test_offline_restart_is_not_logged_as_an_error(platform_offline: dict[str, Any]) -> None:
    s = _step(platform_offline["first"], "restart")
    assert s["status"]["text"] == f"{fmt(platform_offline['count'])} / {fmt(CONTEXT_WINDOW)} tokens"
    log = platform_offline["first_log"]
    assert re.search(r"\[info\] Server process exited with code 0\.", log), log
    assert not re.search(r"\[error\] Server process exited", log), log


def test_server_errors_are_logged_at_error_level(platform_offline: dict[str, Any]) -> None:
    s = _step(platform_offline["second"], "failure")
    missing = platform_offline["missing_model"]
    assert str(missing) in s["message"], s["message"]
    log = platform_offline["second_log"]
    lines = [ln for ln in log.splitlines() if "tokenline.server:" in ln and str(missing) in ln]
    assert lines, log
    assert all("[error]" in line for line in lines), lines


@pytest.fixture(scope="module")
def no_fitting_wheel(
    tmp_path_factory: pytest.TempPathFactory,
    platform_vsix: Path,
    bare_python: dict[str, Any],
) -> dict[str, Any]:
    """The linux-x64 .vsix with its compiled wheels for Python 3.11 taken out (as for a Python
    none fits), no package index: the compile from the sdist finds no build requirements, the
    log says so, and the pure-Python core runs."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    env = _bundled_env(tmp_path_factory, "vscode-no-fitting-wheel", platform_vsix, bare_python)
    _no_index(env, CLOSED_INDEX)
    installed = next(env.extensions.glob("tokenline.tokenline-*")) / "bundled"
    bundle = json.loads((installed / "bundle.json").read_text())
    removed = [w for w in bundle["wheels"] if "-cp311-cp311-" in w]
    assert removed, bundle
    for w in removed:
        (installed / "wheels" / w).unlink()
    bundle["wheels"] = [w for w in bundle["wheels"] if w not in removed]
    (installed / "bundle.json").write_text(json.dumps(bundle))
    with CodeServer(env, ARTIFACTS / "code-server-no-fitting-wheel.log"):
        result = run_driver(
            env,
            "bundled",
            env.url(),
            {
                "files": {"prompt": "notes.md"},
                "shotPrefix": "39-no-fitting-wheel",
                "installTimeoutMs": INSTALL_TIMEOUT_MS,
            },
            tag="no-fitting-wheel",
        )
    log = env.extension_log()
    (ARTIFACTS / "tokenline-output-no-fitting-wheel.log").write_text(log)
    (count,) = tokenline_count(env.workspace / "notes.md")
    return {"result": result, "log": log, "count": count}


def test_no_fitting_wheel_tries_to_compile_then_runs_the_pure_core_and_says_its_cost(
    no_fitting_wheel: dict[str, Any],
) -> None:
    s = _step(no_fitting_wheel["result"], "bundled")
    assert s["status"]["text"] == f"{fmt(no_fitting_wheel['count'])} / {fmt(CONTEXT_WINDOW)} tokens"
    assert "Compiled core: no (pure-Python core: edits about 20× slower)" in s["tooltip"], s
    log = no_fitting_wheel["log"]
    _, version = _base_python(log)
    assert re.search(
        rf"Compiling the core: no bundled compiled core fits Python {re.escape(version)} on "
        r"linux-x86_64 \(they are for CPython 3\.10, 3\.12, 3\.13 on linux_x86_64\): compiling "
        r"it from the bundled source distribution with /\S+\.",
        log,
    ), log
    # No index and no build requirements for 3.11 in the .vsix: pip says what it lacked.
    assert re.search(
        r"\[warning\] Compiling the core failed \(pip install failed \(exit code 1: ERROR: .*"
        r"setuptools.*\)\); the server runs the pure-Python core instead \(edits about 20× "
        r"slower\)\.",
        log,
    ), log


FAKE_PYTHON = """#!/bin/sh
# A Python 3.8 stand-in: answers the extension's version probe, fails at anything else.
case "$*" in *version_info*) echo 3.8.10; echo "$0"; exit 0;; esac
echo "this is not a real Python" >&2
exit 1
"""


@pytest.fixture(scope="module")
def bundled_old_python(
    tmp_path_factory: pytest.TempPathFactory, vsix: Path, bare_python: dict[str, Any]
) -> dict[str, Any]:
    """First start where every Python the extension looks for on PATH is 3.8."""
    env = _bundled_env(tmp_path_factory, "vscode-bundled-old-python", vsix, bare_python)
    fake = env.root / "fake-bin"
    fake.mkdir()
    for name in ("python3", *(f"python3.{m}" for m in range(10, 15)), "python"):
        (fake / name).write_text(FAKE_PYTHON)
        (fake / name).chmod(0o755)
    # First on PATH, also for the login shell whose environment VS Code takes over.
    env.env["PATH"] = f"{fake}{os.pathsep}{env.env['PATH']}"
    env.env["SHELL"] = "/bin/sh"
    (env.home / ".profile").write_text(f'export PATH="{fake}:$PATH"\n')
    with CodeServer(env, ARTIFACTS / "code-server-bundled-old-python.log"):
        result = run_driver(
            env,
            "bundledFailure",
            env.url(),
            {
                "files": {"prompt": "notes.md"},
                "expect": "needs Python 3.10 or newer",
                "shotPrefix": "35-bundled-no-python",
            },
            tag="bundled-old-python",
        )
    log = env.extension_log()
    (ARTIFACTS / "tokenline-output-bundled-old-python.log").write_text(log)
    return {"result": result, "log": log, "fake": fake, "env": env}


def test_bundled_server_without_python_3_10_says_which_pythons_it_found(
    bundled_old_python: dict[str, Any],
) -> None:
    s = _step(bundled_old_python["result"], "failure")
    fake = bundled_old_python["fake"]
    message = s["message"]
    assert message.startswith(
        "Tokenline needs Python 3.10 or newer to run its server and found none (python3 on PATH "
        f"is Python 3.8.10 ({fake}/python3); python3.14 on PATH is Python 3.8.10 "
    ), message
    assert f"python on PATH is Python 3.8.10 ({fake}/python))." in message, message
    assert "select it in the Python extension or set tokenline.python" in message, message
    assert s["buttons"] == ["Retry", "Open Settings", "Show Log"], s["buttons"]
    assert s["status"]["text"] == "Tokenline" and "error-kind" in s["status"]["className"], s
    log = bundled_old_python["log"]
    # Said once; no environment was attempted and nothing was written.
    assert log.count("needs Python 3.10 or newer") == 1, log
    assert "Creating the server environment" not in log, log
    assert not _storage(bundled_old_python["env"]).exists() or not any(
        _storage(bundled_old_python["env"]).iterdir()
    )


# ---------------------------------------------------------------------------------------------
# Several models side by side: tokenline.compareModels in the tooltip and Compare Models

COMPARED = ["o200k_base", "gpt-4", BERT_VALUE]
SELECTED_LINES = 3


def _cli_counts(path: Path, models: list[str], env: dict[str, str], cwd: Path) -> list[int]:
    """`tokenline count --json` with each model: the counts the editor must show."""
    args = [x for m in models for x in ("--model", m)]
    out = subprocess.run(
        [PYTHON, "-m", "tokenline", "count", "--json", *args, str(path)],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=cwd,
    ).stdout
    return [m["tokens"] for m in json.loads(out)[0]["models"]]


@pytest.fixture(scope="module")
def compare_ui(
    tmp_path_factory: pytest.TempPathFactory, vsix: Path, tiktoken_cache: Path, botchan: str
) -> dict[str, Any]:
    """The prompt on the bundled model, compared under o200k_base, gpt-4 (cl100k_base, its window
    known) and a WordPiece tokenizer.json in the workspace; the first lines selected."""
    from tests.core.hfkit import small_bert

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    env = Env(tmp_path_factory.mktemp("vscode-compare"))
    env.env["TIKTOKEN_CACHE_DIR"] = str(tiktoken_cache)
    ws = env.workspace
    lines = botchan.lstrip("\ufeff").replace("\r\n", "\n").split("\n")
    prompt = ws / "story.prompt.md"
    text = PROMPT + "\n".join(lines[300:320]) + "\n"
    prompt.write_text(text, encoding="utf-8")
    small_bert(ws, botchan, name=BERT_NAME)
    (ws / ".vscode").mkdir()
    settings = {"tokenline.compareModels": COMPARED}
    (ws / ".vscode" / "settings.json").write_text(json.dumps(settings))
    env.install(vsix, {"tokenline.python": PYTHON, "tokenline.trace.server": "messages"})
    selected = env.root / "selected.md"
    selected.write_text("".join(text.splitlines(keepends=True)[:SELECTED_LINES]), encoding="utf-8")
    models = ["mistral-7b-v0.1", *COMPARED]
    counts = {
        "document": _cli_counts(prompt, models, env.env, ws),
        "selection": _cli_counts(selected, models, env.env, ws),
    }
    with CodeServer(env, ARTIFACTS / "code-server-compare.log"):
        result = run_driver(
            env,
            "compare",
            env.url(),
            {
                "files": {"prompt": prompt.name},
                "selectLines": SELECTED_LINES,
                "models": len(COMPARED),
                "shotPrefix": "60-compare",
            },
        )
    (ARTIFACTS / "tokenline-output-compare.log").write_text(env.extension_log())
    return {"result": result, "counts": counts}


def test_compare_tooltip_shows_each_model_as_a_row(compare_ui: dict[str, Any]) -> None:
    s = _step(compare_ui["result"], "tooltip")
    counts = compare_ui["counts"]
    header, *rows = s["rows"]
    assert header == ["Model", "Tokens", "vs. this", "Window", "Selection"], s["rows"]
    assert [r[0] for r in rows] == [
        "mistral-7b-v0.1 (this document)",
        "o200k_base",
        "gpt-4 (cl100k_base)",
        BERT_NAME,
    ], rows
    assert [r[1] for r in rows] == [fmt(n) for n in counts["document"]], rows
    assert [r[4] for r in rows] == [fmt(n) for n in counts["selection"]], rows
    # Windows: the document's setting, unknown for an encoding, OpenAI's for gpt-4.
    assert rows[0][3].startswith("8,192 (") and rows[1][3] == "—", rows
    assert rows[2][3].startswith("8,192 ("), rows
    base = counts["document"][0]
    for row, n in zip(rows[1:], counts["document"][1:], strict=True):
        pct = round((n - base) / base * 100)
        assert row[2] == (f"+{pct}%" if pct > 0 else f"−{-pct}%" if pct < 0 else "±0%"), row
    assert Path(s["screenshot"]) == ARTIFACTS / "60-compare-tooltip.png"


def test_compare_models_command_lists_the_counts(compare_ui: dict[str, Any]) -> None:
    s = _step(compare_ui["result"], "command")
    counts = compare_ui["counts"]
    items = s["items"]
    assert [i["label"] for i in items] == [
        "mistral-7b-v0.1 (this document's model)",
        "o200k_base",
        "gpt-4 (cl100k_base)",
        BERT_NAME,
    ], items
    for item, n, sel in zip(items, counts["document"], counts["selection"], strict=True):
        assert item["description"].startswith(f"{fmt(n)} tokens"), item
        assert f"Selection: {fmt(sel)} tokens" in item["text"], item
    assert "and the selection" in s["placeholder"], s["placeholder"]


def test_compare_status_bar_counts_the_selection(compare_ui: dict[str, Any]) -> None:
    status = _step(compare_ui["result"], "select")["status"]
    sel = compare_ui["counts"]["selection"][0]
    doc = compare_ui["counts"]["document"][0]
    assert status["text"] == f"Sel {fmt(sel)} · {fmt(doc)} / {fmt(CONTEXT_WINDOW)}", status


# -- a document too large for full semantic-token results -----------------------------------------

LARGE_CHARS = 10_000_000


@pytest.fixture(scope="module")
def large_ui(tmp_path_factory: pytest.TempPathFactory, vsix: Path, botchan: str) -> dict[str, Any]:
    """A 10 MB text file in VS Code: the server refuses full results that large (ServerCancelled),
    so VS Code asks for the visible ranges, at the top and after a jump to the middle."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    env = Env(tmp_path_factory.mktemp("vscode-large"))
    story = botchan.lstrip("\ufeff").replace("\r\n", "\n")
    text = (story * (LARGE_CHARS // len(story) + 1))[:LARGE_CHARS]
    big = env.workspace / "big.txt"
    big.write_text(text, encoding="utf-8")
    env.install(vsix, {"tokenline.python": PYTHON})
    with CodeServer(env, ARTIFACTS / "code-server-large.log"):
        result = run_driver(
            env,
            "large",
            env.url(),
            {
                "files": {"large": big.name},
                "boundaryColours": [rgb(DARK_A), rgb(DARK_B)],
                "middleLine": text.count("\n") // 2,
                "timeoutMs": max(int(os.environ.get("TOKENLINE_E2E_TIMEOUT_MS", "60000")), 180_000),
            },
        )
    (ARTIFACTS / "tokenline-output-large.log").write_text(env.extension_log())
    return result


def test_a_10_mb_file_shows_colours(large_ui: dict[str, Any]) -> None:
    for where in ("top", "middle"):
        lines = _step(large_ui, where)["lines"]
        colours = {span["color"] for line in lines for span in line}
        assert rgb(DARK_A) in colours and rgb(DARK_B) in colours, (where, lines[:1])


# -- a chat file ---------------------------------------------------------------------------------

# Short enough that each line and its hints fit on the screen.
CHAT_RECORDS = [
    [("user", "Who is Kiyo?"), ("assistant", "The old maid who spoils the narrator.")],
    [("user", "Where does he go to teach?"), ("assistant", "A middle school in Shikoku.")],
    [("system", "Be brief."), ("user", "The headmaster?"), ("assistant", "Badger.")],
    [("user", "Who is Red Shirt?"), ("assistant", "The head teacher, a schemer.")],
    [("user", "How does the story end?"), ("assistant", "He goes back to Tokyo and Kiyo.")],
]


@pytest.fixture(scope="module")
def chat_ui(tmp_path_factory: pytest.TempPathFactory, vsix: Path) -> dict[str, Any]:
    """A JSONL file of three conversations on the bundled model (no chat template: the
    contents alone), opened in VS Code."""
    import sentencepiece as spm

    from tokenline.core import bundled_model_path

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    env = Env(tmp_path_factory.mktemp("vscode-chat"))
    chat = env.workspace / "train.jsonl"
    records = [{"messages": [{"role": r, "content": c} for r, c in rec]} for rec in CHAT_RECORDS]
    compact = (",", ":")  # as fine-tuning files are written
    chat.write_text("".join(json.dumps(r, separators=compact) + "\n" for r in records), "utf-8")
    # Every line and its hints on the screenshot.
    (env.workspace / ".vscode").mkdir()
    (env.workspace / ".vscode" / "settings.json").write_text(json.dumps({"editor.fontSize": 13}))
    sp = spm.SentencePieceProcessor(model_file=str(bundled_model_path()))
    counts = [[len(sp.encode(c)) for _r, c in rec] for rec in CHAT_RECORDS]
    env.install(vsix, {"tokenline.python": PYTHON})
    with CodeServer(env, ARTIFACTS / "code-server-chat.log"):
        result = run_driver(
            env,
            "chat",
            env.url(),
            {"files": {"chat": chat.name}, "hintLines": len(records), "shotPrefix": "70-chat"},
        )
    (ARTIFACTS / "tokenline-output-chat.log").write_text(env.extension_log())
    return {"result": result, "counts": counts}


def test_chat_file_shows_hints_of_each_message_and_conversation(chat_ui: dict[str, Any]) -> None:
    lines = [line for line in _step(chat_ui["result"], "hints")["lines"] if line.strip()]
    counts = chat_ui["counts"]
    assert len(lines) >= len(counts), lines
    for line, per in zip(lines, counts, strict=False):
        shown = re.findall(r"(\d[\d,]*) tok(?: \(contents only\))?", line)
        assert shown == [fmt(n) for n in per] + [fmt(sum(per))], line
        assert line.rstrip().endswith(f"{fmt(sum(per))} tok (contents only)"), line


def test_chat_file_status_bar_counts_the_conversations(chat_ui: dict[str, Any]) -> None:
    status = _step(chat_ui["result"], "open")["status"]
    totals = [sum(per) for per in chat_ui["counts"]]
    assert status["text"] == (
        f"{len(totals)} conversations · max {fmt(max(totals))} · total {fmt(sum(totals))} tok"
    ), status
    tooltip = _step(chat_ui["result"], "tooltip")["text"]
    assert f"chat file, {len(totals)} conversations" in tooltip, tooltip
    assert "contents only" in tooltip, tooltip
