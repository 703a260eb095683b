#!/bin/sh
# Packages the VS Code extension into a .vsix (editors/vscode/scripts/package.sh)
# and checks the result. Usage: vscode_package.sh OUTPUT.vsix
set -eu
ext=$(cd "$(dirname "$0")/../../editors/vscode" && pwd)
if ! command -v node >/dev/null 2>&1 || [ ! -x "$ext/node_modules/.bin/vsce" ]; then
  echo "SKIP: node or editors/vscode/node_modules missing (run ./bootstrap.sh)"
  exit 77
fi
rm -f "$1"
sh "$ext/scripts/package.sh" "$1" >/dev/null
test -s "$1"
echo "ok: $1"
