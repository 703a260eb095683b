#!/bin/sh
# Runs a command as on a fresh Debian 12 machine as far as Node goes: Debian
# 12's own nodejs 18 (with libnode108 and the builtins it keeps outside the
# binary: node-acorn, node-cjs-module-lexer, node-undici, node-busboy) is
# downloaded with apt-get download, unpacked with dpkg -x into DIR, and in a
# private mount namespace becomes /usr/bin/node and the first node on PATH,
# with its /usr/share/nodejs overlaid on the system's. Nothing on the system
# changes. For checking what a machine with a newer Node hides, e.g.
#   sudo tests/fresh/node18.sh build/node18 ctest --preset ci -R editors_vscode_package
# Needs root (unshare, mount) and an apt that can reach Debian 12's archive.
set -eu
dir=${1:?usage: node18.sh DIR COMMAND...}
shift
[ "$(id -u)" -eq 0 ] || { echo "node18.sh: needs root (unshare, mount)" >&2; exit 1; }
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
if [ ! -x "$dir/root/usr/bin/node" ]; then
  ver=$(apt-cache madison nodejs | awk '$3 ~ /^18\./ { print $3; exit }')
  [ -n "$ver" ] || { echo "node18.sh: no nodejs 18 in the apt sources" >&2; exit 1; }
  (cd "$dir" && apt-get download -q "nodejs=$ver" "libnode108=$ver" node-acorn \
    node-cjs-module-lexer node-undici node-busboy)
  for d in "$dir"/*.deb; do dpkg -x "$d" "$dir/root"; done
fi
mkdir -p "$dir/bin"
cat >"$dir/bin/node" <<EOW
#!/bin/sh
LD_LIBRARY_PATH=$dir/root/usr/lib/x86_64-linux-gnu exec $dir/root/usr/bin/node "\$@"
EOW
chmod +x "$dir/bin/node"
[ -e /usr/bin/node ] || { echo "node18.sh: no /usr/bin/node to stand in for" >&2; exit 1; }
exec unshare -m --propagation private sh -c '
d=$1; shift
mount -t overlay overlay -o "lowerdir=$d/root/usr/share:/usr/share" /usr/share
mount --bind "$d/bin/node" /usr/bin/node
PATH=$d/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH
echo "node18.sh: node $(node --version) at $(command -v node) and /usr/bin/node" >&2
exec "$@"' sh "$dir" "$@"
