"""A small LSP client written from the specification (base protocol + the
lifecycle), independent of vscode-jsonrpc: Content-Length framing, requests
with integer ids, notifications, and answers to the requests a server sends
(client/registerCapability, workspace/configuration, window/workDoneProgress/
create, workspace/applyEdit). Standard library only.

    c = Client.spawn([exe, ...])          # stdio
    c = Client.tcp(host, port)            # socket
    r = c.request('initialize', {...})    # result, or raises RpcError
    c.notify('initialized', {})
    c.wait_notification('infilld/status', lambda p: p.get('state') == 'ready')
"""
import json
import queue
import socket
import subprocess
import threading
import time


class RpcError(Exception):
    def __init__(self, error):
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.code = error.get("code")
        self.message = error.get("message")
        self.data = error.get("data")


class Closed(Exception):
    pass


class Client:
    def __init__(self, rfile, wfile, proc=None, sock=None):
        self.rfile = rfile
        self.wfile = wfile
        self.proc = proc
        self.sock = sock
        self.next_id = 1
        self.lock = threading.Lock()
        self.pending = {}
        self.notifications = []
        self.cond = threading.Condition()
        self.server_requests = []
        self.apply_edits = []
        self.closed = False
        self.junk = False
        self.reader = threading.Thread(target=self._read_loop, daemon=True)
        self.reader.start()

    @classmethod
    def spawn(cls, argv, env=None, cwd=None, stderr=None, shell=False):
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr if stderr is not None else subprocess.DEVNULL,
            env=env,
            cwd=cwd,
            shell=shell,
            start_new_session=True,
        )
        return cls(proc.stdout, proc.stdin, proc=proc)

    @classmethod
    def tcp(cls, host, port, timeout=10.0):
        deadline = time.monotonic() + timeout
        while True:
            try:
                sock = socket.create_connection((host, port), timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        sock.settimeout(None)
        return cls(sock.makefile("rb"), sock.makefile("wb"), sock=sock)

    # ---- framing ----------------------------------------------------------
    def _read_frame(self):
        headers = {}
        while True:
            line = self.rfile.readline()
            if not line:
                raise Closed()
            if line in (b"\r\n", b"\n"):
                if headers:
                    break
                continue
            if b":" not in line:
                self.junk = True
                continue
            k, v = line.decode("ascii", "replace").split(":", 1)
            headers[k.strip().lower()] = v.strip()
        n = int(headers["content-length"])
        body = b""
        while len(body) < n:
            chunk = self.rfile.read(n - len(body))
            if not chunk:
                raise Closed()
            body += chunk
        return json.loads(body.decode("utf-8"))

    def _write(self, msg):
        body = json.dumps(msg, ensure_ascii=False).encode("utf-8")
        data = b"Content-Length: %d\r\n\r\n" % len(body) + body
        with self.lock:
            self.wfile.write(data)
            self.wfile.flush()

    def write_raw(self, data):
        with self.lock:
            self.wfile.write(data)
            self.wfile.flush()

    def _read_loop(self):
        try:
            while True:
                msg = self._read_frame()
                self._dispatch(msg)
        except (Closed, OSError, ValueError):
            pass
        with self.cond:
            self.closed = True
            self.cond.notify_all()

    def _dispatch(self, msg):
        if "method" in msg and "id" in msg:
            self._answer_server_request(msg)
            return
        with self.cond:
            if "method" in msg:
                self.notifications.append(msg)
            else:
                self.pending[msg.get("id")] = msg
            self.cond.notify_all()

    def _answer_server_request(self, msg):
        m = msg["method"]
        self.server_requests.append(msg)
        if m == "workspace/configuration":
            items = (msg.get("params") or {}).get("items", [])
            self._write({"jsonrpc": "2.0", "id": msg["id"], "result": [None] * len(items)})
        elif m == "workspace/applyEdit":
            self.apply_edits.append(msg.get("params"))
            self._write({"jsonrpc": "2.0", "id": msg["id"], "result": {"applied": True}})
        elif m in ("client/registerCapability", "client/unregisterCapability",
                   "window/workDoneProgress/create", "window/showMessageRequest"):
            self._write({"jsonrpc": "2.0", "id": msg["id"], "result": None})
        else:
            self._write({"jsonrpc": "2.0", "id": msg["id"],
                         "error": {"code": -32601, "message": "method not found: " + m}})

    # ---- API --------------------------------------------------------------
    def send_request(self, method, params=None, omit_params=False):
        with self.cond:
            rid = self.next_id
            self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if not omit_params:
            msg["params"] = params
        self._write(msg)
        return rid

    def wait_response(self, rid, timeout=30.0):
        deadline = time.monotonic() + timeout
        with self.cond:
            while rid not in self.pending:
                left = deadline - time.monotonic()
                if self.closed:
                    raise Closed(f"connection closed before the answer to request {rid}")
                if left <= 0:
                    raise TimeoutError(f"no answer to request {rid} within {timeout} s")
                self.cond.wait(left)
            msg = self.pending.pop(rid)
        if "error" in msg:
            raise RpcError(msg["error"])
        return msg.get("result")

    def request(self, method, params=None, timeout=30.0, omit_params=False):
        return self.wait_response(self.send_request(method, params, omit_params), timeout)

    def notify(self, method, params=None, omit_params=False):
        msg = {"jsonrpc": "2.0", "method": method}
        if not omit_params:
            msg["params"] = params
        self._write(msg)

    def wait_notification(self, method, pred=lambda p: True, timeout=30.0, start=0):
        """The params of the first `method` notification (from index `start`
        of those received) that satisfies pred."""
        deadline = time.monotonic() + timeout
        with self.cond:
            i = start
            while True:
                while i < len(self.notifications):
                    n = self.notifications[i]
                    i += 1
                    if n["method"] == method and pred(n.get("params")):
                        return n.get("params")
                left = deadline - time.monotonic()
                if self.closed or left <= 0:
                    raise TimeoutError(f"no matching {method} within {timeout} s")
                self.cond.wait(left)

    def wait_exit(self, timeout=15.0):
        return self.proc.wait(timeout)

    def close(self):
        # Closing the buffered reader waits for its lock, which the reader
        # thread holds while it blocks in readline: wake it with EOF first.
        if self.sock:
            try:
                self.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for f in (self.wfile, self.rfile):
            try:
                f.close()
            except OSError:
                pass
        if self.sock:
            try:
                self.sock.close()
            except OSError:
                pass
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def init_params(**kw):
    """initialize params as a plain client sends them."""
    caps = {
        "general": {"positionEncodings": kw.pop("encodings", ["utf-16"])},
        "textDocument": {
            "synchronization": {"dynamicRegistration": False},
            "inlineCompletion": {"dynamicRegistration": kw.pop("dynamic", False)},
        },
        "workspace": {"applyEdit": True, "configuration": True},
        "window": {"workDoneProgress": kw.pop("progress", False)},
    }
    p = {
        "processId": None,
        "clientInfo": {"name": "lspclient.py", "version": "1"},
        "rootUri": None,
        "capabilities": caps,
    }
    if "options" in kw:
        p["initializationOptions"] = kw.pop("options")
    p.update(kw)
    return p


class Checks:
    """A test script's checks: each prints an ok/FAIL line; failures counts the FAILs."""

    def __init__(self):
        self.failures = 0

    def __call__(self, cond, what):
        print(("ok   " if cond else "FAIL ") + what, flush=True)
        if not cond:
            self.failures += 1
        return cond
