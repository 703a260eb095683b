#!/bin/sh
# Packages the VS Code extension into a .vsix (editors/vscode/scripts/package.sh,
# which runs vsce under its own pinned Node 24, whatever node is on PATH) and
# checks the result. Usage: vscode_package.sh OUTPUT.vsix
# Outside CI missing npm packages skip (77); under CI=true they fail.
set -eu
ext=$(cd "$(dirname "$0")/../../editors/vscode" && pwd)
if ! command -v npm >/dev/null 2>&1 || [ ! -x "$ext/node_modules/.bin/vsce" ]; then
  if [ "${CI:-}" = true ]; then
    echo "FAIL: npm or editors/vscode/node_modules missing (run ./bootstrap.sh)" >&2
    exit 1
  fi
  echo "SKIP: npm or editors/vscode/node_modules missing (run ./bootstrap.sh)"
  exit 77
fi
rm -f "$1"
log=$(sh "$ext/scripts/package.sh" "$1") || {
  printf '%s\n' "$log" | tail -20 >&2
  exit 1
}
test -s "$1"
# The packaging Node must be 20+ (vsce's undici needs the `File` global).
printf '%s\n' "$log" | grep -E 'packaged under Node v(2[0-9]|[3-9][0-9])\.' || {
  printf '%s\n' "$log" | tail -5 >&2
  echo "FAIL: packaging did not report a Node 20+" >&2
  exit 1
}
echo "ok: $1"
