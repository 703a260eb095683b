#!/usr/bin/python3
"""Downloads the hand-picked source packages of packages.tsv and writes data.lock.

  fetch.py [--cache DIR]            resolve the current versions, download, write data.lock
  fetch.py --locked [--cache DIR]   download exactly what data.lock names and check sha256

Debian packages come through `apt-get download NAME=VERSION`, npm packages through
`npm pack NAME@VERSION`: the ordinary clients, one named package at a time, no crawl.
The archives land in CACHE/archives (outside git; default /work/cache/train or
$INFILLD_TRAIN_CACHE). data.lock is TSV: role source name version licence sha256 file.
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGES = os.path.join(HERE, "packages.tsv")
LOCK = os.path.join(HERE, "data.lock")


def default_cache():
    return os.environ.get("INFILLD_TRAIN_CACHE", "/work/cache/train")


def read_packages(path=PACKAGES):
    """[(role, source, name, licence, include)] in file order."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            cols = line.split("\t")
            if len(cols) < 4:
                raise SystemExit("packages.tsv: bad line: %r" % line)
            include = cols[4] if len(cols) > 4 else ""
            out.append((cols[0], cols[1], cols[2], cols[3], include))
    return out


def read_lock(path=LOCK):
    """{(source, name): dict(role, source, name, version, licence, sha256, file)}."""
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            role, source, name, version, licence, sha, fname = line.rstrip("\n").split("\t")
            out[(source, name)] = dict(role=role, source=source, name=name, version=version,
                                       licence=licence, sha256=sha, file=fname)
    return out


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def deb_versions(names):
    """{name: candidate version} from one `apt-cache policy` call."""
    out = subprocess.run(["apt-cache", "policy"] + list(names), capture_output=True,
                         text=True, check=True).stdout
    found, cur = {}, None
    for line in out.splitlines():
        if line and not line.startswith(" ") and line.endswith(":"):
            cur = line[:-1]
        elif line.strip().startswith("Candidate:") and cur:
            v = line.split(None, 1)[1]
            if v != "(none)":
                found[cur] = v
    missing = [n for n in names if n not in found]
    if missing:
        raise SystemExit("fetch: no Debian candidate for %s (run apt-get update)" % missing)
    return found


def deb_file(name, version):
    # apt-get download names the file NAME_VERSION_ARCH.deb with ':' escaped as %3a.
    return "%s_%s_" % (name, version.replace(":", "%3a"))


def fetch_debs(pairs, adir):
    """Downloads [(name, version)] with one apt-get call; returns {name: file name}."""
    if pairs:
        subprocess.run(["apt-get", "download", "-q"] + ["%s=%s" % nv for nv in pairs],
                       cwd=adir, check=True, stdout=subprocess.DEVNULL)
    files = os.listdir(adir)
    out = {}
    for name, version in pairs:
        cands = sorted(f for f in files if f.startswith(deb_file(name, version))
                       and f.endswith(".deb"))
        if not cands:
            raise SystemExit("fetch: apt-get download %s=%s left no file" % (name, version))
        out[name] = cands[0]
    return out


def fetch_npm(specs, adir):
    """npm pack of [spec] in one call; returns [(file name, version)] in order."""
    if not specs:
        return []
    out = subprocess.run(["npm", "pack"] + specs + ["--json", "--pack-destination", adir,
                          "--loglevel=error"], capture_output=True, text=True, check=True).stdout
    return [(i["filename"], i["version"]) for i in json.loads(out)]


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cache", default=default_cache())
    p.add_argument("--locked", action="store_true", help="download exactly data.lock")
    args = p.parse_args(argv)
    adir = os.path.join(args.cache, "archives")
    os.makedirs(adir, exist_ok=True)
    pkgs = read_packages()
    lock = read_lock() if args.locked else {}
    for _, source, name, _, _ in pkgs:
        if source not in ("debian", "npm"):
            raise SystemExit("fetch: unknown source %s for %s" % (source, name))
        if args.locked and (source, name) not in lock:
            raise SystemExit("fetch: %s %s is not in data.lock" % (source, name))
    if args.locked:
        vers = {(e["source"], e["name"]): e["version"] for e in lock.values()}
    else:
        debs = [n for _, s, n, _, _ in pkgs if s == "debian"]
        vers = {("debian", n): v for n, v in deb_versions(debs).items()}
    deb_pairs = [(n, vers[("debian", n)]) for _, s, n, _, _ in pkgs if s == "debian"]
    deb_files = fetch_debs(deb_pairs, adir)
    npm_names = [n for _, s, n, _, _ in pkgs if s == "npm"]
    specs = ["%s@%s" % (n, vers[("npm", n)]) if args.locked else n for n in npm_names]
    npm_files = dict(zip(npm_names, fetch_npm(specs, adir)))
    rows = []
    for role, source, name, licence, _ in pkgs:
        if source == "debian":
            fname, version = deb_files[name], vers[("debian", name)]
        else:
            fname, version = npm_files[name]
        sha = sha256_file(os.path.join(adir, fname))
        if args.locked and sha != lock[(source, name)]["sha256"]:
            raise SystemExit("fetch: %s %s %s: sha256 %s differs from data.lock" %
                             (source, name, version, sha))
        rows.append(dict(role=role, source=source, name=name, version=version, licence=licence,
                         sha256=sha, file=fname))
    print("fetch: %d packages (%d Debian, %d npm) in %s" % (len(rows), len(deb_pairs),
                                                           len(npm_names), adir))
    if not args.locked:
        with open(LOCK, "w", encoding="utf-8") as f:
            f.write("# Written by tools/train/fetch.py from packages.tsv; fetch.py --locked "
                    "reproduces it.\n# role\tsource\tname\tversion\tlicence\tsha256\tfile\n")
            for r in rows:
                f.write("\t".join(r[k] for k in ("role", "source", "name", "version", "licence",
                                                 "sha256", "file")) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
