#!/usr/bin/python3
"""A scripted infilld stand-in for the editor-plugin tests.

Speaks LSP over stdio with the same contracts as the real daemon
(docs/PROTOCOL.md): textDocument/inlineCompletion, infilld/partial,
infilld/status, workspace/executeCommand infilld.regenerate (answered through
workspace/applyEdit) and infilld.accepted. Its answers are fixed, so the tests
can assert exact text. Extra requests for the tests:
  fake/log      -> every executeCommand and inlineCompletion it received
  fake/hold     -> the next inlineCompletion sends partials and waits
  fake/release  -> answer the held request
"""
import json
import sys
import threading

AUTO_TEXT = "alpha_beta(gamma) + delta\n    return omega"
INVOKED_TEXTS = [AUTO_TEXT, "second_choice()", "third_choice()"]
REGEN_TEXT = "regenerated"

out_lock = threading.Lock()
state = {
    "log": [],
    "hold": False,
    "held": None,
    "partial": False,
    "next_token": 1,
    "next_out_id": 1000,
}


def send(msg):
    body = json.dumps(msg).encode("utf-8")
    with out_lock:
        sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body))
        sys.stdout.buffer.write(body)
        sys.stdout.buffer.flush()


def read_message():
    length = None
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        key, _, value = line.partition(b":")
        if key.lower() == b"content-length":
            length = int(value.strip())
    if length is None:
        return None
    return json.loads(sys.stdin.buffer.read(length).decode("utf-8"))


def utf16_len(s):
    return len(s.encode("utf-16-le")) // 2


def item(text, token, pos):
    return {
        "insertText": text,
        "range": {"start": pos, "end": pos},
        "command": {
            "title": "accepted",
            "command": "infilld.accepted",
            "arguments": [{"requestId": token, "acceptedLength": utf16_len(text)}],
        },
    }


def answer_completion(msg_id, params, token):
    pos = params["position"]
    invoked = params.get("context", {}).get("triggerKind") == 1
    texts = INVOKED_TEXTS if invoked else [AUTO_TEXT]
    send({"jsonrpc": "2.0", "id": msg_id,
          "result": {"items": [item(t, token, pos) for t in texts]}})
    send({"jsonrpc": "2.0", "method": "infilld/status",
          "params": {"model": "/models/fake-model", "device": "cpu", "state": "ready",
                     "lastLatencyMs": 12.4}})


def handle(msg):
    method = msg.get("method")
    msg_id = msg.get("id")
    params = msg.get("params") or {}
    if method is None:
        return  # a response to our applyEdit
    if method == "initialize":
        opts = params.get("initializationOptions") or {}
        state["partial"] = bool(opts.get("partial"))
        state["log"].append({"initializationOptions": opts})
        send({"jsonrpc": "2.0", "id": msg_id, "result": {
            "capabilities": {
                "positionEncoding": "utf-16",
                "textDocumentSync": {"openClose": True, "change": 2},
                "inlineCompletionProvider": True,
                "executeCommandProvider": {"commands": ["infilld.regenerate", "infilld.accepted"]},
            },
            "serverInfo": {"name": "fake-infilld", "version": "0"},
        }})
    elif method == "shutdown":
        send({"jsonrpc": "2.0", "id": msg_id, "result": None})
    elif method == "exit":
        sys.exit(0)
    elif method == "textDocument/inlineCompletion":
        token = state["next_token"]
        state["next_token"] += 1
        state["log"].append({"inlineCompletion": params})
        if state["partial"]:
            pos = params["position"]
            for step, text in ((1, "al___"), (2, "alpha_b___")):
                send({"jsonrpc": "2.0", "method": "infilld/partial", "params": {
                    "requestId": token, "uri": params["textDocument"]["uri"],
                    "range": {"start": pos, "end": pos}, "text": text,
                    "step": step, "steps": 4}})
        if state["hold"]:
            state["hold"] = False
            state["held"] = (msg_id, params, token)
        else:
            answer_completion(msg_id, params, token)
    elif method == "workspace/executeCommand":
        state["log"].append({"executeCommand": params})
        if params.get("command") == "infilld.regenerate":
            arg = params["arguments"][0]
            out_id = state["next_out_id"]
            state["next_out_id"] += 1
            send({"jsonrpc": "2.0", "id": out_id, "method": "workspace/applyEdit", "params": {
                "label": "infilld: regenerate",
                "edit": {"changes": {arg["uri"]: [{"range": arg["range"], "newText": REGEN_TEXT}]}},
            }})
        send({"jsonrpc": "2.0", "id": msg_id, "result": None})
    elif method == "fake/log":
        send({"jsonrpc": "2.0", "id": msg_id, "result": state["log"]})
    elif method == "fake/hold":
        state["hold"] = True
        send({"jsonrpc": "2.0", "id": msg_id, "result": None})
    elif method == "fake/release":
        held = state["held"]
        state["held"] = None
        if held:
            answer_completion(*held)
        send({"jsonrpc": "2.0", "id": msg_id, "result": held is not None})
    elif method == "$/cancelRequest":
        held = state["held"]
        if held and held[0] == params.get("id"):
            state["held"] = None
            send({"jsonrpc": "2.0", "id": held[0],
                  "error": {"code": -32800, "message": "cancelled"}})
    elif msg_id is not None:
        send({"jsonrpc": "2.0", "id": msg_id,
              "error": {"code": -32601, "message": "unknown method " + str(method)}})


def main():
    while True:
        msg = read_message()
        if msg is None:
            return
        handle(msg)


if __name__ == "__main__":
    main()
