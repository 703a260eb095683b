#!/bin/sh
# The VS Code extension without VS Code: strict TypeScript build, eslint
# (typescript-eslint, type-aware) and node --test on its pure modules.
# Usage: vscode_check.sh OUTDIR   (compiled JS goes there, not into the tree)
set -eu
ext=$(cd "$(dirname "$0")/../../editors/vscode" && pwd)
out=${1:?usage: vscode_check.sh OUTDIR}
if ! command -v node >/dev/null 2>&1 || [ ! -x "$ext/node_modules/.bin/tsc" ]; then
  echo "SKIP: node or editors/vscode/node_modules missing (run ./bootstrap.sh)"
  exit 77
fi
cd "$ext"
rm -rf "$out"
node_modules/.bin/tsc -p . --outDir "$out"
node_modules/.bin/eslint --max-warnings 0 src test
node --test "$out/test/"
