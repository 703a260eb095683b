#!/usr/bin/env bash
# The fresh-machine check: builds a clean Debian 12 root with debootstrap in
# a folder of the build tree, copies a clean clone of the current HEAD in,
# and runs the README's two Quick-start commands inside it (chroot) as a new
# user would, with network only to the same package archives (Debian's apt
# archive as this machine's apt sources name it, and the npm registry).
# Prints both results with their wall times and the disk used.
#
# Too slow for every CI run (tens of minutes on two cores): run it before
# resolving an issue that touches the bootstrap or the build, and put its
# figures in docs/PERFORMANCE.md.
#
# usage: sudo tests/fresh/run.sh [WORKDIR]   (default build/fresh; wiped first)
#   FRESH_MIRROR  the Debian mirror for debootstrap (default: the first URI of
#                 this machine's apt sources, else http://deb.debian.org/debian)
#   FRESH_KEEP=1  keep the root afterwards (default: removed once measured)
#   FRESH_ONLY=1  run only the first Quick-start command
# Needs root (debootstrap, chroot, mounts) and debootstrap itself
# (apt-get install debootstrap); bootstrap.sh does not install it.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-$src/build/fresh}
suite=bookworm

die() {
  echo "fresh: $*" >&2
  exit 1
}
[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot and mounts)"
command -v debootstrap >/dev/null 2>&1 || die "debootstrap is missing: apt-get install debootstrap"
command -v git >/dev/null 2>&1 || die "git is missing"

mirror=${FRESH_MIRROR:-}
if [ -z "$mirror" ]; then
  mirror=$(grep -hsE '^(URIs:|deb )' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list |
    grep -v security | head -1 | sed -E 's/^URIs: *//; s/^deb +(\[[^]]*\] +)?//; s/ .*//' || true)
  mirror=${mirror:-http://deb.debian.org/debian}
fi

root=$work/root
mounts=()
cleanup() {
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
    umount -l "${mounts[$i]}" 2>/dev/null || true
  done
  mounts=()
}
trap cleanup EXIT

# A previous run's mounts go before its files.
if [ -d "$root" ]; then
  for m in dev/pts dev proc sys; do
    mountpoint -q "$root/$m" 2>/dev/null && umount -l "$root/$m"
  done
  rm -rf --one-file-system "$root"
fi
mkdir -p "$work"
log=$work/log
: >"$log"

secs() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(secs)" 'BEGIN { printf "%.0f", b - a }'; }
du_mb() { du -sxm "$1" 2>/dev/null | cut -f1; }

echo "fresh: debootstrap $suite (minbase + git, what a user needs to clone) from $mirror into $root"
t0=$(secs)
debootstrap --variant=minbase --include=git,ca-certificates "$suite" "$root" "$mirror" >>"$log" 2>&1 ||
  { tail -30 "$log" >&2; die "debootstrap failed (log: $log)"; }
t_debootstrap=$(elapsed "$t0")
mb_base=$(du_mb "$root")
echo "fresh: base root ${mb_base} MB in ${t_debootstrap} s"

# The same archives as this machine: its apt sources and apt settings.
rm -f "$root/etc/apt/sources.list"
cp -a /etc/apt/sources.list.d/. "$root/etc/apt/sources.list.d/" 2>/dev/null || true
[ -f /etc/apt/sources.list ] && cp /etc/apt/sources.list "$root/etc/apt/"
find "$root/etc/apt/sources.list.d" -name '*.disabled*' -delete
for f in /etc/apt/apt.conf.d/*; do
  case $(basename "$f") in docker-* | 20packagekit | 50appstream) ;; *) cp "$f" "$root/etc/apt/apt.conf.d/" ;; esac
done
# A network that inspects TLS (a proxy with its own CA) needs that CA in the
# new system too: this machine's local CAs go in, as its proxy settings do.
# On an open network there are none and nothing changes.
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  mkdir -p "$root/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
  chroot "$root" update-ca-certificates >>"$log" 2>&1
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
[ -f /etc/hosts ] && cp /etc/hosts "$root/etc/hosts"

for m in proc sys dev dev/pts; do
  mkdir -p "$root/$m"
  case $m in
    proc) mount -t proc proc "$root/proc" ;;
    sys) mount -t sysfs sys "$root/sys" ;;
    *) mount --bind "/$m" "$root/$m" ;;
  esac
  mounts+=("$root/$m")
done

# A clean clone of the current HEAD (committed state only), where a user
# would put it.
head=$(git -C "$src" rev-parse HEAD)
git clone -q --no-local "$src" "$root/root/infilld"
git -C "$root/root/infilld" checkout -q "$head"
echo "fresh: clone of $(git -C "$src" log -1 --format='%h %s' "$head" | cut -c1-70)"
# CI lays a copy of shared/ (the evaluation data) beside the clone; so does this.
if [ -d "$src/../shared" ]; then
  cp -r "$src/../shared" "$root/root/shared"
fi

# The Quick-start commands exactly as README.md shows them.
mapfile -t quick < <(awk '/<!-- readme-test: quick-start -->/ { on = 1; next }
  on && /^```sh/ { inblock = 1; next } inblock && /^```/ { exit } inblock { print }' "$src/README.md")
[ ${#quick[@]} -eq 2 ] || die "README's Quick start should show two commands, found ${#quick[@]}"

run_in_root() {
  # A login shell of root in the new system: its own PATH and HOME, a
  # non-interactive apt, CI=true as CI runs it, and the proxy settings of
  # this machine's environment, if any, so the archives are reachable.
  local env=(HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
    LANG=C.UTF-8 TERM=dumb CI=true DEBIAN_FRONTEND=noninteractive)
  local v
  for v in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY NODE_EXTRA_CA_CERTS; do
    [ -n "${!v:-}" ] && env+=("$v=${!v}")
  done
  chroot "$root" /usr/bin/env -i "${env[@]}" /bin/bash -lc "cd /root/infilld && $1"
}

declare -a rc=() secs_taken=()
n=${#quick[@]}
[ "${FRESH_ONLY:-0}" = 1 ] && n=1
for ((i = 0; i < n; i++)); do
  echo "fresh: [$((i + 1))] ${quick[$i]}"
  t0=$(secs)
  set +e
  run_in_root "${quick[$i]}" >"$work/quick-$((i + 1)).log" 2>&1
  rc[$i]=$?
  set -e
  secs_taken[$i]=$(elapsed "$t0")
  echo "fresh: [$((i + 1))] exit ${rc[$i]} in ${secs_taken[$i]} s (log: $work/quick-$((i + 1)).log)"
  tail -15 "$work/quick-$((i + 1)).log" | sed 's/^/    /'
done

cleanup
mb_total=$(du_mb "$root")
mb_repo=$(du_mb "$root/root/infilld")
echo
echo "== fresh-machine check: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, commit ${head:0:9}"
echo "debootstrap (minbase + git):    ${t_debootstrap} s, ${mb_base} MB"
status=0
for ((i = 0; i < n; i++)); do
  printf '%-32s exit %d, %s s\n' "quick start [$((i + 1))]:" "${rc[$i]}" "${secs_taken[$i]}"
  [ "${rc[$i]}" -eq 0 ] || status=1
done
echo "disk: root ${mb_total} MB in all (${mb_repo} MB checkout + build + node_modules)"
if [ "${FRESH_KEEP:-0}" != 1 ]; then
  rm -rf --one-file-system "$root"
fi
exit $status
