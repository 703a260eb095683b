#!/usr/bin/python3
"""Writes snippets.tsv: source snippets for the tokenizer agreement test.

Snippets are cut deterministically (fixed seed) from files the repository
holds (tests/corpus: copies of permissively licensed Debian files, see
tests/corpus/SOURCES.md) and from the npm packages pinned by the lock files
(grammars/, tests/, editors/vscode/node_modules) -- never from files of the
machine. Each line is: language, path relative to the repository root, byte
offset, byte length, sha256 of the snippet bytes. Snippets start and end on
UTF-8 character boundaries and are valid UTF-8 (Hugging Face tokenizers only
takes valid strings).

Run from anywhere after ./bootstrap.sh: python3 tests/tokenizer/make_manifest.py
"""
import glob
import hashlib
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

# language -> (glob patterns relative to the repository, snippets wanted)
SOURCES = [
    ("c", ["grammars/node_modules/tree-sitter/vendor/tree-sitter/lib/src/*.[ch]",
           "grammars/node_modules/**/src/scanner.c",
           "grammars/node_modules/**/src/tree_sitter/*.h"], 260),
    ("cpp", ["tests/corpus/cpp/**/*.hpp", "grammars/node_modules/tree-sitter/src/*.cc",
             "grammars/node_modules/tree-sitter/src/*.h"], 200),
    ("python", ["tests/corpus/python/**/*.py", "editors/vscode/node_modules/flatted/python/*.py"], 260),
    ("javascript", ["tests/node_modules/**/*.js"], 220),
    ("typescript", ["tests/node_modules/**/*.d.ts"], 160),
    ("shell", ["tests/corpus/shell/**/*.sh"], 200),
    ("perl", ["tests/corpus/perl/**/*.pm"], 200),
    ("lua", ["tests/corpus/lua/**/*.lua"], 200),
    ("vim", ["tests/corpus/vim/**/*.vim"], 200),
    ("cmake", ["tests/corpus/cmake/**/*.cmake"], 150),
    ("rust", ["tests/node_modules/@anush008/tokenizers/src/*.rs"], 60),
    ("go", ["editors/vscode/node_modules/flatted/golang/**/*.go"], 40),
    ("text", ["tests/corpus/text/**/*.txt"], 160),
]


def is_shell(path):
    try:
        with open(path, "rb") as f:
            head = f.read(64)
    except OSError:
        return False
    return head.startswith(b"#!") and (b"sh" in head.split(b"\n")[0])


def candidates(lang, patterns):
    files = set()
    for pat in patterns:
        full = os.path.join(REPO, pat)
        for p in glob.glob(full, recursive=True):
            if not os.path.isfile(p) or os.path.islink(p):
                continue
            if lang == "shell" and not is_shell(p):
                continue
            if lang == "javascript" and p.endswith(".d.ts"):
                continue
            size = os.path.getsize(p)
            if size < 200 or size > 4_000_000:
                continue
            files.add(p)
    return sorted(files)


def cut(data, rng):
    """A valid UTF-8 snippet of 40..3000 bytes, or None."""
    n = len(data)
    want = min(n, int(rng.choice([40, 120, 300, 700, 1500, 3000]) * (0.5 + rng.random())))
    start = rng.randrange(0, max(1, n - want))
    while start > 0 and (data[start] & 0xC0) == 0x80:
        start -= 1
    end = min(n, start + want)
    while end < n and (data[end] & 0xC0) == 0x80:
        end += 1
    chunk = data[start:end]
    try:
        chunk.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not chunk.strip():
        return None
    return start, end - start


def main():
    rng = random.Random(20261130)
    rows = []
    for lang, patterns, count in SOURCES:
        files = candidates(lang, patterns)
        if not files:
            raise SystemExit(f"no {lang} files: run ./bootstrap.sh (npm packages) first")
        rng.shuffle(files)
        per_file = max(1, count // min(len(files), count) )
        got, fi = 0, 0
        while got < count and fi < len(files) * 3:
            path = files[fi % len(files)]
            fi += 1
            with open(path, "rb") as f:
                data = f.read()
            for _ in range(per_file):
                c = cut(data, rng)
                if c is None:
                    continue
                off, ln = c
                sha = hashlib.sha256(data[off : off + ln]).hexdigest()
                shown = os.path.relpath(path, REPO)
                rows.append((lang, shown, off, ln, sha))
                got += 1
                if got >= count:
                    break
        print(f"{lang}: {got} snippets from {min(fi, len(files))} of {len(files)} files")
    with open(os.path.join(HERE, "data", "snippets.tsv"), "w") as f:
        f.write("# language\tpath\toffset\tlength\tsha256 (of the snippet bytes); "
                "written by make_manifest.py\n")
        for r in rows:
            f.write("%s\t%s\t%d\t%d\t%s\n" % r)
    print(f"total: {len(rows)} snippets")


if __name__ == "__main__":
    main()
