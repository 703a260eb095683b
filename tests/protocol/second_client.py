#!/usr/bin/env python3
"""The protocol checks again, through a second, independent client: lspclient.py,
written from the LSP specification in Python (the other suites use
vscode-jsonrpc). It sends what plain clients send -- params omitted or null
on parameterless methods, integer ids, the spec's capability shapes -- and
answers the server's own requests itself.

usage: second_client.py   (INFILLD_TESTD: the daemon with the fake provider;
                           INFILLD_BIN: the real daemon)
"""
import os
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lspclient import Checks, Client, RpcError, init_params  # noqa: E402

TESTD = os.environ.get("INFILLD_TESTD")
REAL = os.environ.get("INFILLD_BIN")
URI = "file:///work/t.py"
TEXT = "x = 1\nh\u00e9llo \U0001F600 w\n"
AFTER = {"utf-8": 12, "utf-16": 9, "utf-32": 8}
check = Checks()


def error_code(fn):
    try:
        fn()
    except RpcError as e:
        return e.code
    return None


def session(exe=TESTD, options=None, args=(), **kw):
    c = Client.spawn([exe, *args])
    p = init_params(**kw)
    if options is not None:
        p["initializationOptions"] = options
    init = c.request("initialize", p)
    c.notify("initialized", {})
    return c, init


def finish(c, omit=False, null=True):
    r = c.request("shutdown", None, omit_params=omit) if not null or omit else c.request("shutdown", None)
    c.notify("exit", None, omit_params=omit)
    code = c.wait_exit()
    c.close()
    return r, code


def open_doc(c, uri, text, lang="python", version=1):
    c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": lang,
                                                       "version": version, "text": text}})


def view(c, uri):
    return c.request("infilld/viewFileText", {"textDocument": {"uri": uri}})


def inline(c, uri, line, ch, kind=1, **extra):
    ctx = {"triggerKind": kind, **extra}
    return c.request("textDocument/inlineCompletion", {"textDocument": {"uri": uri},
                                                       "position": {"line": line, "character": ch},
                                                       "context": ctx})


def t_lifecycle():
    c = Client.spawn([TESTD])
    check(error_code(lambda: view(c, URI)) == -32002, "lifecycle: -32002 before initialize")
    init = c.request("initialize", init_params(encodings=["utf-8", "utf-16"]))
    caps = init["capabilities"]
    check(caps.get("positionEncoding") == "utf-8", "lifecycle: utf-8 negotiated")
    check(caps.get("inlineCompletionProvider") is True, "lifecycle: inlineCompletionProvider")
    check(caps["textDocumentSync"]["change"] == 2, "lifecycle: incremental sync")
    check(init["serverInfo"]["name"] == "infilld", "lifecycle: serverInfo")
    check(error_code(lambda: c.request("initialize", init_params())) == -32600,
          "lifecycle: a second initialize is -32600")
    c.notify("initialized", {})
    check(c.request("shutdown", omit_params=True) is None, "lifecycle: shutdown without params")
    check(error_code(lambda: view(c, URI)) == -32600, "lifecycle: requests after shutdown are -32600")
    c.notify("exit", omit_params=True)
    check(c.wait_exit() == 0, "lifecycle: exit (no params) after shutdown ends with 0")
    c.close()

    c, _ = session()
    c.notify("exit", None)
    check(c.wait_exit() == 1, "lifecycle: exit (params null) without shutdown ends with 1")
    c.close()

    c, _ = session()
    _, code = finish(c, null=True)
    check(code == 0, "lifecycle: shutdown and exit with params null end with 0")


def t_encodings():
    for enc, ch in AFTER.items():
        c, init = session(encodings=[enc])
        check(init["capabilities"]["positionEncoding"] == enc, f"{enc}: negotiated")
        open_doc(c, URI, TEXT)
        c.notify("textDocument/didChange", {
            "textDocument": {"uri": URI, "version": 2},
            "contentChanges": [
                {"range": {"start": {"line": 1, "character": ch}, "end": {"line": 1, "character": ch}}, "text": "NEW "},
                {"range": {"start": {"line": 1, "character": ch + 4}, "end": {"line": 1, "character": ch + 5}}, "text": "W"},
                {"range": {"start": {"line": 2, "character": 0}, "end": {"line": 2, "character": 0}}, "text": "end"},
            ]})
        check(view(c, URI) == "x = 1\nh\u00e9llo \U0001F600 NEW W\nend", f"{enc}: incremental edits")
        r = inline(c, URI, 1, ch, kind=2)
        item = (r or {}).get("items", [{}])[0]
        check(item.get("insertText") == "fake()" and item.get("range") ==
              {"start": {"line": 1, "character": ch}, "end": {"line": 1, "character": ch}},
              f"{enc}: answer range in {enc} units")
        _, code = finish(c)
        check(code == 0, f"{enc}: exit 0")


def t_features():
    c, _ = session()
    open_doc(c, URI, "import os\nos.pa\n")
    r = inline(c, URI, 1, 5, kind=2, selectedCompletionInfo={
        "range": {"start": {"line": 1, "character": 3}, "end": {"line": 1, "character": 5}}, "text": "path"})
    item = r["items"][0]
    check(item["insertText"].startswith("path"), "inline: selectedCompletionInfo honoured")
    cmd = item["command"]
    check(c.request("workspace/executeCommand", {"command": cmd["command"], "arguments": cmd.get("arguments")}) is None,
          "inline: the accepted command runs")
    lst = c.request("textDocument/completion", {"textDocument": {"uri": URI},
                                                "position": {"line": 1, "character": 5}})
    check(lst["items"][0]["textEdit"]["newText"] == "fake()", "completion: without context (optional in the spec)")
    # infilld.regenerate comes back as workspace/applyEdit, which this client answers.
    rng = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 6}}
    r = c.request("workspace/executeCommand", {"command": "infilld.regenerate", "arguments": [{"uri": URI, "range": rng}]})
    time.sleep(0.1)
    check(r.get("text") == "REGENERATED" and len(c.apply_edits) == 1, "regenerate: workspace/applyEdit received and applied")
    acts = c.request("textDocument/codeAction", {"textDocument": {"uri": URI}, "range": rng,
                                                 "context": {"diagnostics": []}})
    # This client declares no codeAction.resolveSupport: the action runs the
    # regenerate command instead of carrying a lazily resolved edit.
    cmd = acts[0].get("command") or {}
    check(acts[0].get("kind") == "refactor.rewrite" and cmd.get("command") == "infilld.regenerate"
          and cmd.get("arguments", [{}])[0].get("range") == rng,
          "code action for a client without resolveSupport runs infilld.regenerate")
    res = c.request("codeAction/resolve", acts[0])
    check(res == acts[0], "codeAction/resolve of a complete action returns it unchanged")
    check(error_code(lambda: c.request("no/such", {})) == -32601, "unknown request: -32601")
    c.notify("no/such", None)
    c.notify("$/progress", {"token": 1, "value": {"kind": "end"}})
    c.notify("$/setTrace", {"value": "off"})
    check(view(c, URI) == "import os\nos.pa\n", "unknown notifications ignored; still serving")
    # String ids are allowed by JSON-RPC.
    c.write_raw(b'Content-Length: 61\r\n\r\n{"jsonrpc":"2.0","id":"s1","method":"shutdown","params":null}')
    check(c.wait_response("s1") is None, "a string id with params null is answered")
    c.notify("exit")
    check(c.wait_exit() == 0, "exit 0 after a string-id shutdown")
    c.close()


def t_cancel_and_registration():
    c, _ = session(options={"fake": {"delayMs": 400}})
    open_doc(c, URI, "a = \n")
    first = c.send_request("textDocument/inlineCompletion", {
        "textDocument": {"uri": URI}, "position": {"line": 0, "character": 4}, "context": {"triggerKind": 1}})
    time.sleep(0.03)
    c.notify("$/cancelRequest", {"id": first})
    check(error_code(lambda: c.wait_response(first)) == -32800, "$/cancelRequest: -32800")
    _, code = finish(c)
    check(code == 0, "cancel: exit 0")
    # Dynamic registration: the server asks, this client answers null.
    c, _ = session(dynamic=True)
    deadline = time.time() + 5
    while time.time() < deadline and not any(
            r["method"] == "client/registerCapability" for r in c.server_requests):
        time.sleep(0.02)
    regs = [r for r in c.server_requests if r["method"] == "client/registerCapability"]
    check(len(regs) == 1 and regs[0]["params"]["registrations"][0]["method"] == "textDocument/inlineCompletion",
          "dynamic registration: client/registerCapability for inline completion")
    open_doc(c, URI, "a = \n")
    check(inline(c, URI, 0, 4)["items"][0]["insertText"] == "fake()", "dynamic registration: serving after it")
    _, code = finish(c)
    check(code == 0, "registration: exit 0")


def t_real():
    if not REAL:
        check(False, "INFILLD_BIN is not set")
        return
    c, init = session(REAL)
    check(init["serverInfo"]["name"] == "infilld", "real daemon: initialize on stdio")
    open_doc(c, URI, "def f():\n    return 1\n")
    check(view(c, URI) == "def f():\n    return 1\n", "real daemon: document stored")
    _, code = finish(c, omit=True)
    check(code == 0, "real daemon: shutdown/exit without params end with 0")
    # TCP: the same client over a socket.
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    d = subprocess.Popen([REAL, "--listen", f"127.0.0.1:{port}"], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        c = Client.tcp("127.0.0.1", port)
        c.request("initialize", init_params())
        c.notify("initialized", None)
        check(c.request("shutdown", None) is None, "real daemon over TCP: shutdown with params null")
        c.notify("exit", None)
        c.close()
        d.send_signal(signal.SIGTERM)
        check(d.wait(15) == 0, "real daemon over TCP: SIGTERM ends it with 0")
    finally:
        if d.poll() is None:
            d.kill()
            d.wait()


def main():
    if not TESTD:
        print("FAIL INFILLD_TESTD is not set")
        sys.exit(1)
    for t in (t_lifecycle, t_encodings, t_features, t_cancel_and_registration, t_real):
        try:
            t()
        except Exception as e:  # a crash in one group must not hide the others
            check(False, f"{t.__name__}: {type(e).__name__}: {e}")
    print("FAILED: %d" % check.failures if check.failures else "OK", flush=True)
    sys.exit(1 if check.failures else 0)


if __name__ == "__main__":
    main()
