#!/usr/bin/env bash
# Fetches a real Neovim from Debian's archive into a private folder, without
# touching the system: Debian 12 ships 0.7.2, and trixie's 0.10 / sid's 0.12
# need a newer glibc than bookworm's, so they run on their own unpacked libc.
#
#   fetch.sh OUT 0.10   trixie's neovim, exactly 0.10.4
#   fetch.sh OUT 0.12   the current 0.12.x of sid (else forky), floor 0.12.0
#
# A separate apt configuration (its own sources list naming bookworm plus the
# suite, own lists and cache folders, an empty dpkg status, no system sources
# parts or pins) downloads neovim with every dependency down to libc6;
# `dpkg -x` unpacks them into OUT/tree-VERSION; patchelf (itself unpacked from
# bookworm, not installed) points the binary at the unpacked loader and
# libraries. The binary then finds its runtime from its own path (VIMRUNTIME =
# the nvim/runtime folder inside OUT/tree-VERSION) and starts children with the
# system's libraries (no LD_LIBRARY_PATH leaks into the daemon it spawns).
#
# Leaves OUT/SERIES/nvim (a link to the patched binary) and OUT/SERIES/version.
# Trees are cached by version: a later run reuses the one it finds and goes
# to the network only when it has none (INFILLD_NVIM_REFRESH=1 asks again).
set -euo pipefail

out=${1:?usage: fetch.sh OUT 0.10|0.12}
series=${2:?usage: fetch.sh OUT 0.10|0.12}
mirror=${INFILLD_DEBIAN_MIRROR:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

case "$series" in
0.10) suites=(trixie) ;;
0.12) suites=(sid forky) ;;
*)
  echo "fetch.sh: unknown series '$series' (0.10 or 0.12)" >&2
  exit 2
  ;;
esac

# Does version $1 belong to the series we want?
wanted() {
  case "$series" in
  0.10) [[ "$1" == 0.10.4-* ]] ;;
  0.12) dpkg --compare-versions "$1" ge 0.12.0 && dpkg --compare-versions "$1" lt 0.13~ ;;
  esac
}

mkdir -p "$out/$series"
out=$(cd "$out" && pwd)
link="$out/$series/nvim"

if [ "${INFILLD_NVIM_REFRESH:-0}" != 1 ] && [ -x "$link" ] && [ -f "$out/$series/version" ]; then
  v=$(cat "$out/$series/version")
  if wanted "${v#* }" && [ -f "$out/tree-${v#* }/.complete" ]; then
    echo "fetch.sh: neovim ${v} (cached in $out/tree-${v#* })"
    exit 0
  fi
fi

for tool in apt-get apt-cache dpkg dpkg-deb; do
  command -v "$tool" >/dev/null || {
    echo "fetch.sh: $tool not found (this script needs Debian's apt and dpkg)" >&2
    exit 1
  }
done
[ -r "$keyring" ] || {
  echo "fetch.sh: $keyring missing (package debian-archive-keyring)" >&2
  exit 1
}

start=$(date +%s)

# apt with a configuration of its own; $1 = the folder that holds it.
papt() {
  local d=$1 tool=$2
  shift 2
  "$tool" \
    -o Dir::Etc::sourcelist="$d/sources.list" \
    -o Dir::Etc::sourceparts="$d/sources.list.d" \
    -o Dir::Etc::preferences="$d/preferences" \
    -o Dir::Etc::preferencesparts="$d/preferences.d" \
    -o Dir::State="$d/state" \
    -o Dir::State::Lists="$d/lists" \
    -o Dir::State::status="$d/status" \
    -o Dir::Cache="$d/cache" \
    -o Debug::NoLocking=1 \
    -o APT::Architecture=amd64 \
    -o APT::Architectures::=amd64 \
    -o Acquire::Languages=none \
    -o APT::Install-Recommends=0 \
    -o APT::Sandbox::User="$(id -un)" \
    -q "$@"
}

setup_apt() {
  local d=$1 suite=$2
  mkdir -p "$d/sources.list.d" "$d/preferences.d" "$d/state" "$d/lists/partial" \
    "$d/cache/archives/partial"
  : >"$d/status" # empty: every dependency, libc6 included, gets downloaded
  : >"$d/preferences"
  cat >"$d/sources.list" <<EOF
deb [signed-by=$keyring] $mirror bookworm main
deb [signed-by=$keyring] $mirror $suite main
EOF
  papt "$d" apt-get update >"$d/update.log" 2>&1 || {
    cat "$d/update.log" >&2
    echo "fetch.sh: apt-get update for bookworm + $suite failed (network or mirror $mirror)" >&2
    return 1
  }
}

# The version of package $2 in suite $3 as the apt folder $1 sees it.
suite_version() {
  papt "$1" apt-cache madison "$2" | awk -F' *[|] *' -v s=" $3/" 'index($3, s) {print $2; exit}'
}

chosen= apt_dir= found=()
for suite in "${suites[@]}"; do
  d="$out/apt-$suite"
  setup_apt "$d" "$suite" || exit 1
  v=$(suite_version "$d" neovim "$suite")
  found+=("$suite: ${v:-none}")
  if [ -n "$v" ] && wanted "$v"; then
    chosen=$v apt_dir=$d chosen_suite=$suite
    break
  fi
done
if [ -z "$chosen" ]; then
  echo "fetch.sh: no neovim $series.x in Debian ${suites[*]} (found ${found[*]})." >&2
  echo "  The $series end-to-end tests cannot run without it; see docs/EDITORS-TESTING.md." >&2
  exit 1
fi

tree="$out/tree-$chosen"
if [ ! -f "$tree/.complete" ]; then
  rm -rf "$apt_dir/cache/archives/"*.deb "$tree"
  papt "$apt_dir" apt-get install --download-only -y \
    "neovim=$chosen" "neovim-runtime=$chosen" >"$apt_dir/install.log" 2>&1 || {
    cat "$apt_dir/install.log" >&2
    echo "fetch.sh: downloading neovim $chosen from $chosen_suite failed" >&2
    exit 1
  }
  mkdir -p "$tree"
  for deb in "$apt_dir/cache/archives/"*.deb; do
    dpkg-deb -x "$deb" "$tree"
  done
  (cd "$apt_dir/cache/archives" && ls ./*.deb | sed 's|^\./||') >"$tree/.debs"

  # patchelf from bookworm, so it runs on this system's libc.
  pe="$out/patchelf-$series" # one per series: two fetches may run at once
  if [ ! -x "$pe/usr/bin/patchelf" ]; then
    rm -rf "$pe" && mkdir -p "$pe/deb"
    (cd "$pe/deb" && papt "$apt_dir" apt-get download patchelf/bookworm >/dev/null 2>&1) || {
      echo "fetch.sh: cannot download patchelf from bookworm" >&2
      exit 1
    }
    dpkg-deb -x "$pe"/deb/patchelf_*.deb "$pe"
  fi
  lib="$tree/usr/lib/x86_64-linux-gnu"
  ld="$lib/ld-linux-x86-64.so.2"
  [ -e "$ld" ] || {
    echo "fetch.sh: the unpacked libc6 has no $ld" >&2
    exit 1
  }
  # DT_RPATH (not RUNPATH) so the libraries' own dependencies resolve there too.
  "$pe/usr/bin/patchelf" --set-interpreter "$ld" --force-rpath \
    --set-rpath "$lib:$tree/lib/x86_64-linux-gnu" "$tree/usr/bin/nvim"
  touch "$tree/.complete"
fi

ln -sfn "$tree/usr/bin/nvim" "$link"
echo "$chosen_suite $chosen" >"$out/$series/version"
# The binary must run, and be the version we asked for.
got=$("$link" --version | head -n 1)
case "$got" in
"NVIM v${chosen%%-*}"*) ;;
*)
  echo "fetch.sh: $link says '$got', expected NVIM v${chosen%%-*}" >&2
  exit 1
  ;;
esac
echo "fetch.sh: neovim $chosen from $chosen_suite in $tree ($(($(date +%s) - start)) s, $(du -sh "$tree" | cut -f1))"
