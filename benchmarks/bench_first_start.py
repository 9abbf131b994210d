"""How long the VS Code extension's first start takes on a clean profile, .vsix by .vsix.

Each round installs each .vsix into a new code-server profile (the harness of
tests/vscode/test_vscode_e2e.py: code-server in headless Chromium, a scratch HOME, so pip's cache
is empty) and times, from the workbench being loaded, the count's arrival in the status bar:

- linux-x64 offline: tokenline-linux-x64-<version>.vsix with the package index unreachable;
- universal, PyPI: tokenline-<version>.vsix, its dependencies downloaded from PyPI (this one
  needs the network: it is a benchmark, not a test);
- later start: the same profile opened again (the environment is reused), measured after each
  first start, as the baseline of what a first start adds.

The rounds alternate the two; the table gives medians. Prerequisites: tests/vscode/setup.sh.

    python benchmarks/bench_first_start.py [--rounds 3] [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from tests.vscode.test_vscode_e2e import (  # noqa: E402
    ARTIFACTS,
    CLOSED_INDEX,
    PLATFORM_VSIX,
    PROMPT,
    VSIX,
    CodeServer,
    Env,
    run_driver,
)

MODES = {"linux-x64 offline": PLATFORM_VSIX, "universal, PyPI": VSIX}


def clean_env(root: Path, vsix: Path, offline: bool) -> Env:
    """A new profile, a PATH whose first Python has no tokenline, pip as a new machine has it."""
    env = Env(root)
    bare = root / "bare-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    ours = str(Path(sys.executable).parent)
    rest = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d and d != ours]
    env.env["PATH"] = os.pathsep.join([str(bare / "bin"), *rest])
    env.env.pop("VIRTUAL_ENV", None)
    for key in [k for k in env.env if k.startswith("PIP_") or k.lower().endswith("_proxy")]:
        del env.env[key]
    env.env["PIP_CONFIG_FILE"] = os.devnull
    if offline:
        env.env["PIP_INDEX_URL"] = CLOSED_INDEX
    (env.workspace / "notes.md").write_text(PROMPT, encoding="utf-8")
    env.install(vsix, {})
    return env


def start(env: Env, tag: str) -> float:
    """Seconds from the workbench being loaded to the count in the status bar."""
    with CodeServer(env, ARTIFACTS / f"code-server-{tag}.log"):
        result = run_driver(
            env,
            "bundled",
            env.url(),
            {"files": {"prompt": "notes.md"}, "shotPrefix": tag, "installTimeoutMs": 600_000},
            tag=tag,
        )
    step: dict[str, Any] = result["steps"]["bundled"]
    if not step.get("ok"):
        raise RuntimeError(f"{tag}: {step.get('error')}")
    return float(step["msWorkbenchToCount"]) / 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default=str(HERE / "results"))
    args = parser.parse_args()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    times: dict[str, dict[str, list[float]]] = {m: {"first": [], "later": []} for m in MODES}
    for r in range(args.rounds):
        for mode, vsix in MODES.items():
            with tempfile.TemporaryDirectory() as tmp:
                env = clean_env(Path(tmp), vsix, offline="offline" in mode)
                slug = mode.split()[0].replace(",", "")
                times[mode]["first"].append(start(env, f"bench-{slug}-{r}-first"))
                times[mode]["later"].append(start(env, f"bench-{slug}-{r}-later"))
            print(mode, {k: v[-1] for k, v in times[mode].items()}, flush=True)
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    lines = [
        f"{args.rounds} rounds, each .vsix on a new code-server profile; seconds from the "
        "workbench being loaded to the count in the status bar, medians. Load average at the "
        f"end (1 / 5 / 15 min, {os.cpu_count()} cores): {load}.",
        "",
        "| .vsix | size | first start | later start | first start adds |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    summary: dict[str, dict[str, float]] = {}
    for mode, vsix in MODES.items():
        first = statistics.median(times[mode]["first"])
        later = statistics.median(times[mode]["later"])
        mib = vsix.stat().st_size / 2**20
        summary[mode] = {"first_s": first, "later_s": later, "vsix_mib": mib}
        lines.append(
            f"| {mode} | {mib:.1f} MiB | {first:.1f} s | {later:.1f} s | {first - later:.1f} s |"
        )
    text = "\n".join(lines)
    print(text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "first_start.json").write_text(json.dumps({"summary": summary, "runs": times}, indent=2))
    (out / "first_start.md").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
