#!/usr/bin/env python3
"""Memory per open document (a benchmark, not a test; docs/perf/syntax.md).

Starts the daemon on stdio with a tiny model, opens documents of one kind
one at a time, asks for an inline completion in the middle of each (so that
its tree is built and the span located), waits past the daemon's heap trim
(500 ms) and reads its RSS from /proc. Prints the RSS after every document
and the slope: MiB of RSS per MB of open text.

  INFILLD_BIN=build/ci/infilld tests/bench/bench_docmem.py [--kind K] [--docs N] [--mb M]

Kinds: `paste` (the soak's pasted lines, `x = '...'`, Python), `python`
(functions of eight lines), `c` (functions of nine lines). Set
INFILLD_TREE_KEEP_BYTES=all in the environment to keep every tree.
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "protocol"))
from lspclient import Client, init_params  # noqa: E402


def gen(kind, mb):
    out, n, i = [], 0, 0
    while n < mb * 1_000_000:
        if kind == "paste":
            s = "x = '" + "abcdefghij" * 6 + "'\n"
        elif kind == "python":
            s = (f"def func_{i}(xs, limit={i}):\n    total = 0\n    for x in xs:\n"
                 f"        if x < limit:  # small ones\n            total += x * {i % 7}\n"
                 f"    return [total, len(xs), {{'f': {i}}}]\n\n\n")
        else:
            s = (f"static int func_{i}(const int *xs, int n) {{\n    int total = 0; /* sum */\n"
                 f"    for (int i = 0; i < n; i++) {{\n        if (xs[i] < {i})\n"
                 f"            total += xs[i] * {i % 7};\n    }}\n    return total;\n}}\n\n")
        out.append(s)
        n += len(s)
        i += 1
    return "".join(out)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kind", default="paste", choices=["paste", "python", "c"])
    ap.add_argument("--docs", type=int, default=6)
    ap.add_argument("--mb", type=float, default=1.0)
    a = ap.parse_args()
    exe = os.environ.get("INFILLD_BIN")
    if not exe:
        sys.exit("INFILLD_BIN is not set")
    model = os.path.join(os.path.dirname(exe), "models", "tiny-dream")
    c = Client.spawn([exe, "--device", "cpu", "--model", model, "--log-level", "warn"])
    opts = {"steps": 1, "maxSteps": 1, "validate": False, "idlePrefill": False,
            "latencyBudgetMs": {"automatic": 200, "invoked": 200}}
    c.request("initialize", init_params(options=opts), timeout=120)
    c.notify("initialized", {})
    text = gen(a.kind, a.mb)
    lang = "c" if a.kind == "c" else "python"
    lines = text.count("\n")
    time.sleep(1.0)
    base = rss_kib(c.proc.pid)
    keep = os.environ.get("INFILLD_TREE_KEEP_BYTES", "default")
    print(f"kind {a.kind}, {len(text) / 1e6:.2f} MB and {lines} lines per document, "
          f"INFILLD_TREE_KEEP_BYTES={keep}; RSS before {base / 1024:.1f} MiB")
    pts = [(0.0, base)]
    for k in range(a.docs):
        uri = f"file:///bench/doc{k}.{'c' if lang == 'c' else 'py'}"
        c.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": lang, "version": 1, "text": text}})
        c.request("textDocument/inlineCompletion", {
            "textDocument": {"uri": uri}, "position": {"line": lines // 2, "character": 4},
            "context": {"triggerKind": 1}}, timeout=120)
        time.sleep(1.2)  # past the 500 ms heap trim
        r = rss_kib(c.proc.pid)
        mb_open = (k + 1) * len(text) / 1e6
        pts.append((mb_open, r))
        print(f"  {k + 1} open ({mb_open:.1f} MB): RSS {r / 1024:.1f} MiB")
    n = len(pts)
    mx = sum(p[0] for p in pts) / n
    my = sum(p[1] for p in pts) / n
    b = sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)
    print(f"slope: {b / 1024:.1f} MiB of RSS per MB of open documents")
    c.close()


if __name__ == "__main__":
    main()
