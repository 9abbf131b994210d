#!/usr/bin/env bash
# Sets up everything the tests need on a fresh machine, then runs every test: static checks,
# the core's differential fuzzing, the language server end to end (pytest-lsp and headless
# Neovim) and the VS Code extension in a real VS Code (code-server in headless Chromium).
#
#   bash tests/run.sh [pytest arguments]
#
# Environment: TOKENLINE_VENV (default .venv), HYPOTHESIS_PROFILE (ci when CI=true, else dev;
# "deep" for long fuzzing runs), TOKENLINE_CI_CACHE (npm/code-server cache, outside git).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
venv=${TOKENLINE_VENV:-.venv}
step() { printf '\n==> %s\n' "$*"; }

step "Python environment in $venv (the core compiled with mypyc)"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip wheel
"$venv/bin/python" -m pip install --quiet '.[test]'
"$venv/bin/python" -c 'import tokenline.core as c; assert c.COMPILED, "the core did not compile"; print("compiled core:", c.COMPILED)'

step "Lint, format and strict type checks"
"$venv/bin/ruff" check core server cli tests benchmarks
"$venv/bin/ruff" format --check core server cli tests benchmarks
"$venv/bin/mypy" --strict -p tokenline

step "Emacs and lsp-mode for the second editor's end-to-end test (apt)"
if ! command -v emacs >/dev/null \
  || ! dpkg-query -W -f='${Status}' elpa-lsp-mode 2>/dev/null | grep -q "install ok installed"; then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends emacs-nox elpa-lsp-mode
fi
export TOKENLINE_REQUIRE_EMACS=1

step "VS Code end-to-end prerequisites (apt, npm, the .vsix)"
bash tests/vscode/setup.sh

step "Tests"
PATH="$PWD/$venv/bin:$PATH" "$venv/bin/python" -m pytest tests "$@"
