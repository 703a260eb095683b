#!/usr/bin/python3
"""The committed held-out infill set is well formed (issue 13 §1 data).

  test_heldout.py SRCDIR

Each tests/data/quality/heldout/<lang>.jsonl line has exactly the documented fields with
the right types; ids are unique; there are >= 300 items for python, c, javascript, go and
lua; every middle has >= 3 non-whitespace tokens; all four cursor kinds and both
single- and multi-line middles occur in every language; multiline says whether the
middle holds a newline; every package is in tools/train/data.lock with role heldout
(none with role train: the split is by package) at the recorded version, and
SOURCES.md names it with that archive's sha256.
"""

import json
import os
import re
import sys

FIELDS = {"id": str, "lang": str, "package": str, "version": str, "file": str, "cursor": str,
          "multiline": bool, "prefix": str, "middle": str, "suffix": str}
CURSORS = {"line_end", "in_line", "blank_line", "after_comment"}
LANGS = {"python": 300, "c": 300, "javascript": 300, "typescript": 100, "go": 300, "lua": 300}
TOKEN = re.compile(r"\w+|[^\w\s]+")


def main():
    src = sys.argv[1]
    d = os.path.join(src, "tests", "data", "quality", "heldout")
    lock = {}
    with open(os.path.join(src, "tools", "train", "data.lock"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            c = line.rstrip("\n").split("\t")
            lock.setdefault(c[2], []).append(c)
    sources = open(os.path.join(d, "SOURCES.md"), encoding="utf-8").read()
    fails, checked, ids = [], 0, set()
    for lang, want in LANGS.items():
        items = [json.loads(x) for x in open(os.path.join(d, lang + ".jsonl"), encoding="utf-8")]
        if len(items) < want:
            fails.append("%s: %d items < %d" % (lang, len(items), want))
        kinds, multi = set(), set()
        for it in items:
            checked += 1
            if set(it) != set(FIELDS):
                fails.append("%s: fields %s" % (it.get("id"), sorted(it)))
                continue
            for k, t in FIELDS.items():
                if not isinstance(it[k], t):
                    fails.append("%s: %s is not %s" % (it["id"], k, t.__name__))
            if it["id"] in ids:
                fails.append("duplicate id %s" % it["id"])
            ids.add(it["id"])
            if it["lang"] != lang or it["cursor"] not in CURSORS:
                fails.append("%s: lang %s cursor %s" % (it["id"], it["lang"], it["cursor"]))
            if len(TOKEN.findall(it["middle"])) < 3:
                fails.append("%s: middle %r has < 3 tokens" % (it["id"], it["middle"]))
            if it["multiline"] != ("\n" in it["middle"]):
                fails.append("%s: multiline flag is wrong" % it["id"])
            rows = lock.get(it["package"], [])
            if not rows or any(r[0] != "heldout" for r in rows):
                fails.append("%s: package %s is not held out" % (it["id"], it["package"]))
            elif rows[0][3] != it["version"] or rows[0][5] not in sources:
                fails.append("%s: %s version/sha256 not in data.lock/SOURCES.md" %
                             (it["id"], it["package"]))
            kinds.add(it["cursor"])
            multi.add(it["multiline"])
        if kinds != CURSORS or multi != {True, False}:
            fails.append("%s: cursor kinds %s, multiline %s" % (lang, sorted(kinds), multi))
    for f in fails[:20]:
        print("FAIL:", f)
    print("%d items checked" % checked)
    print("%d passed, %d failed" % (0 if fails else 1, 1 if fails else 0))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
