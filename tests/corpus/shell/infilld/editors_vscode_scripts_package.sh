#!/bin/sh
# Builds the extension (strict TypeScript) and packages it into a .vsix with
# @vscode/vsce, offline. Usage: scripts/package.sh [OUTPUT.vsix]
# Needs the npm packages from package-lock.json (bootstrap.sh installs them).
set -eu
cd "$(dirname "$0")/.."
out=${1:-infilld-$(node -p 'require("./package.json").version').vsix}
case $out in /*) ;; *) out=$PWD/$out ;; esac
if [ ! -x node_modules/.bin/vsce ] || [ ! -x node_modules/.bin/tsc ]; then
  echo "package.sh: node_modules missing; run ./bootstrap.sh (or npm ci) first" >&2
  exit 2
fi
rm -rf out
node_modules/.bin/tsc -p .
# --skip-license: the licence lives at the repository root, not in this folder.
node_modules/.bin/vsce package --skip-license --allow-missing-repository -o "$out"
# The package must hold the compiled entry point and the language client.
node -e '
const fs = require("fs");
const buf = fs.readFileSync(process.argv[1]);
const need = ["extension/out/src/extension.js", "extension/package.json",
              "extension/node_modules/vscode-languageclient/package.json"];
const miss = need.filter((n) => buf.indexOf(Buffer.from(n)) < 0);
if (miss.length) { console.error("package.sh: missing in vsix: " + miss.join(", ")); process.exit(1); }
' "$out"
echo "package.sh: wrote $out"
