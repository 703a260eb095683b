#!/usr/bin/env bash
# Installs everything a fresh Debian 12 machine lacks to build, run and test
# infilld. Idempotent: a second run installs nothing and takes seconds.
#   ./bootstrap.sh            system packages (as root) + npm packages from lock files
#   ./bootstrap.sh --no-apt   npm packages only
set -euo pipefail
cd "$(dirname "$0")"

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  libjansson-dev libuv1-dev libpcre2-dev libutf8proc-dev libopenblas-dev zlib1g-dev
  libcurl4-openssl-dev
  # infilld serve-http's HTTP server (TLS through its GnuTLS); openssl makes
  # tests/remote's self-signed certificate
  libmicrohttpd-dev openssl
  python3 python3-numpy python3-regex python3-torch
  clang clang-format libclang-rt-14-dev valgrind
  neovim netcat-openbsd
  # editor tests: tmux for the terminal run, aha + chromium to render it to PNG;
  # apt, dpkg and debian-archive-keyring (always on Debian) fetch Neovim 0.10/0.12
  tmux aha chromium debian-archive-keyring
  # the real-VS-Code test (chromium above is also the browser playwright-core
  # drives): the rg VS Code's search may fall back to, and the Kerberos headers
  # code-server's native kerberos module compiles against (tests/editors/vscode/setup.sh)
  ripgrep libkrb5-dev
)

want_apt=1
[ "${1:-}" = "--no-apt" ] && want_apt=0

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js 18+ with npm: use the one on PATH when present, else Debian's.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  missing+=(nodejs npm)
fi

if [ ${#missing[@]} -gt 0 ]; then
  if [ $want_apt -eq 0 ]; then
    echo "bootstrap: missing system packages (not installing, --no-apt): ${missing[*]}" >&2
  elif [ "$(id -u)" -eq 0 ]; then
    echo "bootstrap: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q --no-install-recommends "${missing[@]}"
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    echo "bootstrap: installing ${missing[*]} with sudo"
    sudo DEBIAN_FRONTEND=noninteractive apt-get update -q
    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
  else
    echo "bootstrap: these Debian packages are missing; as root run:" >&2
    echo "  apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi

# npm packages, pinned by the lock file next to each package.json. Install
# scripts are off: grammars are compiled by our build, not by node-gyp.
for dir in grammars tests editors/vscode; do
  [ -f "$dir/package-lock.json" ] || continue
  stamp="$dir/node_modules/.infilld-lock-stamp"
  if [ -f "$stamp" ] && cmp -s "$stamp" "$dir/package-lock.json"; then
    continue
  fi
  echo "bootstrap: npm ci in $dir"
  (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
  cp "$dir/package-lock.json" "$stamp"
done
echo "bootstrap: ok"
