#!/usr/bin/python3
"""Builds the held-out infill set of issue 13 §1 from the held-out packages.

  make_heldout.py [--cache DIR] [--out tests/data/quality/heldout] [--seed 13]

Reads CACHE/corpus/heldout.jsonl (corpus.py: only packages with role=heldout in
data.lock, deduplicated against nothing the training set holds) and writes
OUT/<lang>.jsonl and OUT/SOURCES.md. One JSON object a line:
  {"id", "lang", "package", "version", "file", "cursor", "multiline", "prefix", "middle",
   "suffix"}
prefix + middle + suffix is the file text cut to a window around the cursor (at most
--prefix-chars before it, starting at a line start, and --suffix-chars after the
middle). Cursor kinds, drawn the way editors produce them:
  line_end       typing at the end of a line: the rest of the line is the middle
  in_line        inside a line: a few tokens, with text left after them on the line
  blank_line     a fresh line inside an indented block: the line (or lines) that follow
  after_comment  the line (or lines) right after a comment line
Every middle has at least 3 non-whitespace tokens (identifiers, numbers, punctuation
runs). Deterministic given the corpus and the seed.
"""

import argparse
import json
import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fetch  # noqa: E402

TARGET = {"python": 350, "c": 350, "javascript": 350, "typescript": 150, "go": 350,
          "lua": 350}
COMMENT = {"python": ("#",), "c": ("//", "/*", "*"), "javascript": ("//", "/*", "*"),
           "typescript": ("//", "/*", "*"), "go": ("//", "/*"), "lua": ("--",)}
TOKEN = re.compile(r"\w+|[^\w\s]+")
KINDS = (("line_end", 0.35), ("in_line", 0.2), ("blank_line", 0.25), ("after_comment", 0.2))
MAX_MIDDLE = 400


def ntok(s):
    return len(TOKEN.findall(s))


def lines_of(text):
    """[(start, end)] of every line, end excluding the newline."""
    out, s = [], 0
    for ln in text.split("\n"):
        out.append((s, s + len(ln)))
        s += len(ln) + 1
    return out


def indent(text, s, e):
    ln = text[s:e]
    return len(ln) - len(ln.lstrip())


def is_comment(lang, line):
    st = line.strip()
    return bool(st) and st.startswith(COMMENT[lang])


def extend_lines(text, ls, i, k):
    """End offset of k lines starting at line i (stops at the file end)."""
    j = min(len(ls) - 1, i + k - 1)
    return ls[j][1]


def draw(kind, lang, text, ls, rng):
    """(cursor, end, multiline) or None."""
    n = len(ls)
    if kind in ("line_end", "in_line"):
        i = rng.randrange(n)
        s, e = ls[i]
        body = text[s:e]
        if not body.strip() or is_comment(lang, body):
            return None
        toks = [m for m in TOKEN.finditer(body)]
        if len(toks) < (3 if kind == "line_end" else 5):
            return None
        if kind == "line_end":
            k = rng.randint(0, len(toks) - 3)
            return s + toks[k].start(), e, False
        k = rng.randint(0, len(toks) - 4)
        m = rng.randint(3, min(8, len(toks) - k - 1))
        return s + toks[k].start(), s + toks[k + m - 1].end(), False
    def ok(i):
        s, e = ls[i]
        ps, pe = ls[i - 1]
        body, prev = text[s:e], text[ps:pe]
        if not body.strip() or is_comment(lang, body):
            return False
        if kind == "blank_line":
            return bool(prev.strip()) and indent(text, s, e) > 0
        return is_comment(lang, prev)

    cands = [i for i in range(1, n) if ok(i)]
    if not cands:
        return None
    i = rng.choice(cands)
    s, e = ls[i]
    multi = rng.random() < 0.4
    end = extend_lines(text, ls, i, rng.randint(2, 5)) if multi else e
    multi = "\n" in text[s:end]
    return s + indent(text, s, e), end, multi


def make_item(rec, lang, rng, args):
    text = rec["text"]
    ls = lines_of(text)
    for _ in range(30):
        r, kind = rng.random(), KINDS[-1][0]
        for name, p in KINDS:
            if r < p:
                kind = name
                break
            r -= p
        got = draw(kind, lang, text, ls, rng)
        if not got:
            continue
        c, e, multi = got
        middle = text[c:e]
        if ntok(middle) < 3 or len(middle) > MAX_MIDDLE or not middle.strip():
            continue
        lo = max(0, c - args.prefix_chars)
        if lo > 0:
            nl = text.find("\n", lo)
            lo = nl + 1 if 0 <= nl < c else lo
        prefix = text[lo:c]
        suffix = text[e:e + args.suffix_chars]
        return dict(lang=lang, package=rec["package"], version=rec["version"],
                    file=rec["file"], cursor=kind, multiline=multi, prefix=prefix,
                    middle=middle, suffix=suffix)
    return None


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cache", default=fetch.default_cache())
    p.add_argument("--out", default=os.path.join(HERE, "..", "..", "tests", "data", "quality",
                                                 "heldout"))
    p.add_argument("--seed", type=int, default=13)
    p.add_argument("--prefix-chars", type=int, default=2048)
    p.add_argument("--suffix-chars", type=int, default=1024)
    args = p.parse_args(argv)
    by_lang = {}
    with open(os.path.join(args.cache, "corpus", "heldout.jsonl"), encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            by_lang.setdefault(r["lang"], []).append(r)
    lock = fetch.read_lock()
    held = {e["name"] for e in lock.values() if e["role"] == "heldout"}
    os.makedirs(args.out, exist_ok=True)
    used = {}
    for lang, want in TARGET.items():
        rng = random.Random("%d-%s" % (args.seed, lang))
        recs = sorted(by_lang.get(lang, []), key=lambda r: (r["package"], r["file"]))
        for r in recs:
            if r["package"] not in held:
                raise SystemExit("make_heldout: %s is not a held-out package" % r["package"])
        rng.shuffle(recs)
        items, fails = [], 0
        while len(items) < want and recs and fails < 50 * want:
            for r in recs:
                if len(items) >= want:
                    break
                it = make_item(r, lang, rng, args)
                if it is None:
                    fails += 1
                    continue
                items.append(it)
        if len(items) < want:
            raise SystemExit("make_heldout: only %d %s items" % (len(items), lang))
        with open(os.path.join(args.out, lang + ".jsonl"), "w", encoding="utf-8") as f:
            for k, it in enumerate(items):
                it = dict(id="%s-%04d" % (lang, k), **it)
                f.write(json.dumps(it, ensure_ascii=False, sort_keys=False) + "\n")
                used.setdefault(it["package"], set()).add(lang)
        kinds = {}
        for it in items:
            kinds[it["cursor"]] = kinds.get(it["cursor"], 0) + 1
        print("heldout: %-10s %d items %s, %d multi-line" %
              (lang, len(items), kinds, sum(it["multiline"] for it in items)))
    with open(os.path.join(args.out, "SOURCES.md"), "w", encoding="utf-8") as f:
        f.write("# Sources of the held-out infill set\n\n"
                "Built by `tools/train/make_heldout.py` (seed %d) from these packages, which "
                "are listed in `tools/train/data.lock` with role `heldout` and were never used "
                "for training (the split is by package). Each item keeps its package, version "
                "and file path.\n\n"
                "| package | source | version | licence | languages | sha256 of the archive |\n"
                "|---|---|---|---|---|---|\n" % args.seed)
        for e in sorted(lock.values(), key=lambda e: e["name"]):
            if e["role"] != "heldout" or e["name"] not in used:
                continue
            f.write("| %s | %s | %s | %s | %s | `%s` |\n" %
                    (e["name"], e["source"], e["version"], e["licence"],
                     ", ".join(sorted(used[e["name"]])), e["sha256"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
