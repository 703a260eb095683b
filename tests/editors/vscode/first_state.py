#!/usr/bin/env python3
"""The real-VS-Code test's first suggestion at the LSP level: the daemon with
the e2e's settings (infilld.json) and the peaked tiny model, sample.py.in
edited as VS Code sends it (one didChange per typed character of
"for v in values:", then Enter with VS Code's indent), and an inline request
at the new line 8, column 8 -- automatic (triggerKind 2), then invoked
(triggerKind 1, what e2e.mjs sends when VS Code sent no request after the
last keystroke). Both answers must be the same several lines: e2e.mjs
checks the ghost text of that answer line by line.

usage: first_state.py INFILLD MODEL_DIR
"""
import json
import os
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "protocol"))
from lspclient import Checks, Client  # noqa: E402

exe, model = sys.argv[1], sys.argv[2]
check = Checks()
URI = "file:///work/e2e/sample.py"
text = open(os.path.join(here, "sample.py.in"), encoding="utf-8").read()
with tempfile.TemporaryDirectory() as tmp:
    # No config file of the machine's: XDG_CONFIG_HOME is the temporary folder.
    env = dict(os.environ, XDG_CONFIG_HOME=tmp, HOME=tmp)
    c = Client.spawn([exe, "--config", os.path.join(here, "infilld.json")], env=env)
    c.request("initialize", {
        "processId": None, "rootUri": None,
        "capabilities": {"textDocument": {"inlineCompletion": {}}, "window": {"workDoneProgress": True}},
        # what editors/vscode sends (settings.ts initializationOptions)
        "initializationOptions": {"model": model, "device": "cpu", "partial": False, "status": True,
                                  "clientLogLevel": "warn"},
    })
    c.notify("initialized", {})
    c.notify("textDocument/didOpen", {"textDocument": {"uri": URI, "languageId": "python", "version": 1,
                                                       "text": text}})
    version = 1
    col = 4
    for ch in list("for v in values:") + ["\n        "]:
        version += 1
        c.notify("textDocument/didChange", {
            "textDocument": {"uri": URI, "version": version},
            "contentChanges": [{"range": {"start": {"line": 6, "character": col},
                                          "end": {"line": 6, "character": col}},
                                "rangeLength": 0, "text": ch}],
        })
        col += len(ch)
    answers = {}
    for kind in (2, 1):
        r = c.request("textDocument/inlineCompletion", {
            "textDocument": {"uri": URI}, "position": {"line": 7, "character": 8},
            "context": {"triggerKind": kind}}, timeout=240)
        items = r.get("items") if isinstance(r, dict) else r
        answers[kind] = items[0] if items else None
        name = "automatic" if kind == 2 else "invoked"
        check(answers[kind] is not None, f"{name}: an item for line 8, column 8")
        if answers[kind]:
            it = answers[kind]
            check(it["range"]["start"] == {"line": 7, "character": 8},
                  f"{name}: the item starts at the cursor ({json.dumps(it['range']['start'])})")
            n = len(it["insertText"].split("\n"))
            check(n > 1, f"{name}: the answer has several lines ({n})")
    a, i = answers[2], answers[1]
    check(a is not None and i is not None and a["insertText"] == i["insertText"],
          "automatic and invoked requests at the same state answer the same text")
    c.request("shutdown", None)
    c.notify("exit", None)
    rc = c.proc.wait(timeout=30)
    check(rc == 0, f"the daemon exited with 0 ({rc})")
print(f"{'PASS' if check.failures == 0 else 'FAIL'} first_state ({check.failures} failed)")
sys.exit(1 if check.failures else 0)
