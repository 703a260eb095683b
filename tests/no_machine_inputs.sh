#!/bin/sh
# Tests read only what the repository holds or a pinned package brings, never
# files of the machine (their versions differ between machines). Executables
# named by absolute path (/usr/bin/env, python3, node, nvim...) are fine, and
# so are the install steps of the real-editor tests, which unpack Debian
# packages (paths inside the unpacked tree) and check build tools, and the
# fresh-machine helper that overlays Debian 12's own Node on a private mount; the
# held-out quality set is source text, whose comments may name such paths.
set -eu
cd "$(dirname "$0")/.."
if ! git rev-parse --git-dir >/dev/null 2>&1; then
  echo "FAIL: not a git checkout (this check lists tracked files)"
  exit 1
fi
hits=$(git grep -nE '/usr/(share|lib|include|bin)/' -- tests ':!tests/no_machine_inputs.sh' \
  ':!tests/data/quality/heldout/*.jsonl' ':!tests/editors/nvim/fetch.sh' \
  ':!tests/editors/vscode/setup.sh' ':!tests/editors/vscode/run.sh' ':!tests/fresh/node18.sh' |
  grep -vE '/usr/bin/(env|python3|perl|node|nvim|tmux|sh|bash|chromium)\b' || true)
if [ -n "$hits" ]; then
  echo "FAIL: tests refer to files of the machine:"
  echo "$hits"
  exit 1
fi
echo "ok   no test refers to a file of the machine"
