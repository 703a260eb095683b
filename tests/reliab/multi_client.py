#!/usr/bin/env python3
"""Several clients of one daemon at once (real binary, tiny model): a stdio
session and TCP sessions in one process (`--listen 127.0.0.1:0 --stdio`),
sharing one model and worker, each with its own documents and LSP state.
A TCP client killed mid-request (a reset socket) must not disturb the
others; a TCP client's `exit` ends its session only; the stdio client's
`exit` ends the daemon.

usage: multi_client.py   (INFILLD_BIN: the daemon)
"""
import os
import socket
import struct
import subprocess
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "protocol"))
from lspclient import Checks, Client, RpcError, init_params  # noqa: E402

REAL = os.environ["INFILLD_BIN"]
MODELS = os.environ.get("INFILLD_MODELS") or os.path.join(os.path.dirname(REAL), "models")
TINY = os.path.join(MODELS, "tiny-dream")
LINES = os.path.join(MODELS, "tiny-dream-lines")
URI = "file:///shared/name.py"
# Short requests (as in tests/soak/soak.py): only that each is answered counts.
FAST = {"candidates": 1, "steps": 2, "maxSteps": 2, "validate": False,
        "latencyBudgetMs": {"automatic": 150, "invoked": 300}}
check = Checks()


def start_daemon():
    """The daemon with stdio and a TCP listener; returns (stdio client, port,
    stderr lines)."""
    c = Client.spawn([REAL, "--device", "cpu", "--model", TINY, "--listen", "127.0.0.1:0",
                      "--stdio"], stderr=subprocess.PIPE)
    lines = []
    port = [None]
    got = threading.Event()

    def drain():
        for raw in c.proc.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            lines.append(line)
            if line.startswith("infilld: listening on ") and port[0] is None:
                port[0] = int(line.rsplit(":", 1)[1])
                got.set()
        got.set()

    threading.Thread(target=drain, daemon=True).start()
    if not got.wait(30) or port[0] is None:
        raise SystemExit("FAIL the daemon did not say where it listens:\n" + "\n".join(lines))
    return c, port[0], lines


def init(c):
    r = c.request("initialize", init_params(options=dict(FAST)), timeout=60)
    c.notify("initialized", {})
    return r


def open_doc(c, text, version=1):
    c.notify("textDocument/didOpen", {"textDocument": {"uri": URI, "languageId": "python",
                                                       "version": version, "text": text}})


def ask(c, line=1, ch=11):
    return c.send_request("textDocument/inlineCompletion",
                          {"textDocument": {"uri": URI}, "position": {"line": line, "character": ch},
                           "context": {"triggerKind": 1}})


def answered(c, rid, timeout=120):
    """True for a result (a list or null), False for an error."""
    try:
        r = c.wait_response(rid, timeout)
        return r is None or isinstance(r.get("items"), list)
    except RpcError as e:
        print(f"     error {e.code}: {e.message}")
        return False


def view(c):
    return c.request("infilld/viewFileText", {"textDocument": {"uri": URI}}, timeout=60)


def kill_rst(c):
    """Close the socket with a reset, as a client that crashed does."""
    c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    c.sock.close()


def main():
    for m in (TINY, LINES):
        if not os.path.isfile(os.path.join(m, "config.json")):
            print(f"FAIL no tiny model at {m}")
            return 1
    stdio, port, errlines = start_daemon()
    init(stdio)
    a = Client.tcp("127.0.0.1", port)
    b = Client.tcp("127.0.0.1", port)
    init(a)
    init(b)
    texts = {"stdio": "def area(w, h):\n    return \n", "a": "def a(x):\n    return \n",
             "b": "def b(y):\n    return y\n"}
    for name, c in (("stdio", stdio), ("a", a), ("b", b)):
        open_doc(c, texts[name])
    # One URI, three sessions: each keeps its own copy.
    check(view(stdio) == texts["stdio"] and view(a) == texts["a"] and view(b) == texts["b"],
          "each session has its own document set (one URI, three texts)")

    # B asks and dies at once, with requests of A and stdio in flight.
    rb = [ask(b) for _ in range(3)]
    ra = ask(a)
    rs = ask(stdio)
    kill_rst(b)
    check(answered(a, ra), "TCP client A answered while B was killed mid-request")
    check(answered(stdio, rs), "stdio client answered while B was killed mid-request")
    del rb

    # A new TCP client after the kill is served like the first ones.
    c = Client.tcp("127.0.0.1", port)
    init(c)
    open_doc(c, texts["a"])
    check(answered(c, ask(c)), "a TCP client connecting after the kill is served")

    # The model is shared: A reloads it, every session is served by the new one.
    a.notify("workspace/didChangeConfiguration", {"settings": {"infilld": {"model": LINES}}})
    check(answered(stdio, ask(stdio)), "stdio served after A changed the model")
    check(answered(a, ask(a)), "A served after its model change")

    # Edits in one session do not reach another's copy.
    a.notify("textDocument/didChange", {"textDocument": {"uri": URI, "version": 2},
                                        "contentChanges": [{"text": "changed in a\n"}]})
    check(view(a) == "changed in a\n" and view(stdio) == texts["stdio"] and view(c) == texts["a"],
          "an edit in A changes A's copy only")

    # A TCP client's exit ends its session only.
    a.request("shutdown", None)
    a.notify("exit", None)
    a.close()
    check(answered(stdio, ask(stdio)) and answered(c, ask(c)),
          "after A's exit the stdio client and C are served")
    c.close()

    # The stdio client owns the process: its exit ends the daemon, code 0.
    stdio.request("shutdown", None)
    stdio.notify("exit", None)
    try:
        code = stdio.wait_exit(30)
    except subprocess.TimeoutExpired:
        code = None
    check(code == 0, f"the stdio client's exit ends the daemon with code 0 (got {code})")
    stdio.close()
    bad = [x for x in errlines if "AddressSanitizer" in x or "runtime error" in x
           or "ThreadSanitizer" in x]
    check(not bad, "no sanitizer report on stderr")
    print(f"{check.failures} failure(s)")
    return 1 if check.failures else 0


if __name__ == "__main__":
    sys.exit(main())
