#!/usr/bin/env bash
# Installs everything the VS Code end-to-end tests need on a fresh Debian machine, then builds the
# extension's .vsix. Idempotent: each step is skipped when its result is already there.
#
#   apt:   chromium (the browser playwright-core drives), build headers for code-server's native
#          modules, ripgrep (seeds code-server's ripgrep download, which cannot reach GitHub here)
#   npm:   vscode-extension/ dependencies (npm ci), code-server@4.100.3 and playwright-core into the
#          cache folder $TOKENLINE_CI_CACHE (default: $HOME/.cache/tokenline-ci, outside git)
#   build: vscode-extension/tokenline-<version>.vsix and tokenline-linux-x64-<version>.vsix;
#          `npm run package` first builds the tokenline wheels they carry (the core compiled for
#          each CPython 3.10+ found: python3.x on PATH, pyenv; a pure one; the sdist) in
#          vscode-extension/build/wheel-env-3.X, then downloads every dependency wheel for CPython
#          3.10-3.14 into bundled/deps for the linux-x64 one (about 5 minutes on 2 cores)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${TOKENLINE_CI_CACHE:-$HOME/.cache/tokenline-ci}
code_server_version=4.100.3
playwright_version=1.65.1
log() { printf '[vscode-setup] %s\n' "$*"; }

# --- apt ------------------------------------------------------------------------------------------
apt_pkgs=(chromium libkrb5-dev libxkbfile-dev libsecret-1-dev ripgrep curl)
missing=()
for p in "${apt_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "apt-get install ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# --- code-server + playwright-core into the cache -------------------------------------------------
mkdir -p "$cache"
cs_bin="$cache/node_modules/.bin/code-server"
stamp="$cache/.installed-code-server-$code_server_version-playwright-core-$playwright_version"
if [ ! -f "$stamp" ] || [ ! -x "$cs_bin" ]; then
  log "npm install code-server@$code_server_version playwright-core@$playwright_version into $cache"
  [ -f "$cache/package.json" ] || echo '{"name":"tokenline-ci-cache","private":true}' > "$cache/package.json"
  # code-server's ripgrep package downloads rg from GitHub, which is not reachable: seed its cache
  # with Debian's rg (the file name it would download).
  rgcache="${TMPDIR:-/tmp}/vscode-ripgrep-cache-1.15.11"
  mkdir -p "$rgcache"
  for f in ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz ripgrep-v13.0.0-4-x86_64-unknown-linux-musl.tar.gz; do
    [ -s "$rgcache/$f" ] || tar czf "$rgcache/$f" -C /usr/bin rg
  done
  # npm_config_yes: the machine's npmrc says yes=false, which stops node-pty's setup otherwise.
  # npm_config_unsafe_perm: code-server's postinstall refuses to run as root without it, though
  # npm 7+ no longer knows the setting and warns 'Unknown env config "unsafe-perm"': that one
  # line is dropped (passing --unsafe-perm as an option instead warns the same way).
  # code-server's postinstall runs nested `npm install`s that build native modules; npm 11.16+
  # blocks dependency install scripts unless allowed, and the nested installs have no allowScripts
  # of their own, so allow them for this one install (older npm ignores the variable).
  (cd "$cache" && npm_config_yes=true npm_config_unsafe_perm=true npm_config_dangerously_allow_all_scripts=true \
      npm install --no-save --no-audit --no-fund \
      "code-server@$code_server_version" "playwright-core@$playwright_version") \
    2> >(grep -v '^npm warn Unknown env config "unsafe-perm"' >&2)
  "$cs_bin" --version 2>/dev/null | grep -q "^$code_server_version " \
    || { log "code-server $code_server_version does not run from $cs_bin"; exit 1; }
  touch "$stamp"
fi

# --- the extension ----------------------------------------------------------------------------------
ext="$repo/vscode-extension"
lock_sum=$(sha256sum "$ext/package-lock.json" | cut -d' ' -f1)
if [ "$(cat "$ext/node_modules/.tokenline-lock-sha256" 2>/dev/null)" != "$lock_sum" ]; then
  log "npm ci in vscode-extension"
  (cd "$ext" && npm ci --no-audit --no-fund)
  echo "$lock_sum" > "$ext/node_modules/.tokenline-lock-sha256"
fi
log "npm run package"
(cd "$ext" && npm run --silent package)
ls -l "$ext"/*.vsix
log "done (cache: $cache)"
