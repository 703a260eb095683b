#!/usr/bin/env python3
"""A loopback HTTP server speaking the remote APIs infilld supports, for
tests/remote. Python's stdlib only. Prints its port on the first stdout line,
logs every request as one JSON line to argv[1], and exits when stdin closes
or after argv[2] seconds (default 120), so a failed test cannot leave it.

The scenario comes from a marker in the prompt: SCENARIO:<name> with name
ok (default; the fixture's response, byte for byte), slow (answers after 5 s,
logging when the client closes the connection first), drop (closes the
connection without an answer), 401 (echoes the Authorization header in the
error, to prove the daemon redacts it), 429, 500, badjson, huge (2 MiB);
chatprose (openai-chat: the fixture's "prose" answer); hold (answers after
0.8 s, logging "answered" when it does: several requests in flight at once
overlap at the server). A request with
"stream": true is answered with the fixture's "stream" events as
server-sent events (chunked), under the scenarios ok, streamdrop (the
connection closes after two events), streamslow (0.4 s between events) and
streambad (a malformed second event). Several candidates: cands answers a
request with "n" by the fixture's candidates.response, and a request
without it (openai-fim, llama-infill: one request per candidate) after
0.3 s by the fixture's response with the text replaced by the next of
candidates.texts; candsdup answers every such request with the same text."""
import json, os, re, select, socket, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = {p: json.load(open(os.path.join(HERE, 'fixtures', f)))
       for p, f in (('/v1/fim/completions', 'openai-fim.json'), ('/infill', 'llama-infill.json'),
                    ('/v1/completions', 'openai-completions-suffix.json'),
                    ('/v1/completions#template', 'openai-completions-template.json'),
                    ('/v1/chat/completions', 'openai-chat.json'))}
LOG = open(sys.argv[1], 'a', buffering=1)
LOCK = threading.Lock()
COUNT = {}  # scenario → requests seen (picks the next candidate text)

def log(**kw):
    kw['t'] = time.time()
    with LOCK:
        LOG.write(json.dumps(kw) + '\n')

class H(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'  # keep-alive, as real servers

    def log_message(self, *a):
        pass

    def send(self, code, body, ctype='application/json'):
        b = body if isinstance(body, bytes) else body.encode()
        self.send_response(code)
        self.send_header('Content-Type', ctype)
        self.send_header('Content-Length', str(len(b)))
        self.end_headers()
        self.wfile.write(b)

    def chunk(self, b):
        self.wfile.write(b'%x\r\n%s\r\n' % (len(b), b))
        self.wfile.flush()

    def sse(self, fx, sc):
        self.send_response(200)
        self.send_header('Content-Type', 'text/event-stream')
        self.send_header('Cache-Control', 'no-cache')
        self.send_header('Transfer-Encoding', 'chunked')
        self.end_headers()
        events = list(fx['stream'])
        if sc == 'streambad':
            events[1] = '{"choices": [{"index": 0, "delta": {"content": "oops'
        for i, ev in enumerate(events):
            if sc == 'streamdrop' and i == 2:
                log(event='stream_dropped', port=self.client_address[1])
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            try:
                self.chunk(('data: ' + ev + '\n\n').encode())
            except OSError:
                log(event='client_closed', port=self.client_address[1])
                self.close_connection = True
                return
            if self.wait_closed(0.4 if sc == 'streamslow' else 0.02):
                log(event='client_closed', port=self.client_address[1])
                self.close_connection = True
                return
        self.chunk(b'')

    def wait_closed(self, secs):
        """Sleeps secs; True as soon as the client closes the connection."""
        end = time.time() + secs
        while True:
            left = end - time.time()
            if left <= 0:
                return False
            r, _, _ = select.select([self.connection], [], [], min(left, 0.02))
            if r and not self.connection.recv(1, socket.MSG_PEEK):
                return True

    def do_POST(self):
        n = int(self.headers.get('Content-Length') or 0)
        if n > 8 << 20:
            return self.send(413, '{"error":"too large"}')
        raw = self.rfile.read(n)
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        text = json.dumps(body) if body is not None else ''
        m = re.search(r'SCENARIO:(\w+)', text)
        sc = m.group(1) if m else 'ok'
        log(event='request', path=self.path, auth=self.headers.get('Authorization'),
            headers={k: v for k, v in self.headers.items() if k.lower() != 'authorization'},
            body=raw.decode('utf-8', 'replace'), port=self.client_address[1], scenario=sc)
        path = self.path
        if path == '/v1/completions' and isinstance(body, dict) and 'suffix' not in body:
            path += '#template'
        fx = FIX.get(path)
        if fx is None:
            return self.send(404, '{"error":{"message":"no such endpoint"}}')
        if isinstance(body, dict) and body.get('stream') and sc in ('ok', 'streamdrop', 'streamslow', 'streambad'):
            return self.sse(fx, sc)
        if sc in ('cands', 'candsdup'):
            cf = fx['candidates']
            if isinstance(body, dict) and 'n' in body:
                return self.send(200, json.dumps(cf['response']))
            with LOCK:
                k = COUNT.get(sc, 0)
                COUNT[sc] = k + 1
            time.sleep(0.3)  # the others arrive meanwhile: they were sent at once
            t = cf['texts'][0 if sc == 'candsdup' else k % len(cf['texts'])]
            r = json.loads(json.dumps(fx['response']))
            if 'content' in r:
                r['content'] = t
            else:
                r['choices'][0]['text'] = t
            return self.send(200, json.dumps(r))
        if sc == 'chatprose':
            r = json.loads(json.dumps(fx['response']))
            r['choices'][0]['message']['content'] = fx['prose']
            return self.send(200, json.dumps(r))
        if sc == 'ok':
            return self.send(200, json.dumps(fx['response']))
        if sc == 'slow':
            end = time.time() + 5
            while time.time() < end:
                r, _, _ = select.select([self.connection], [], [], 0.02)
                if r and not self.connection.recv(1, socket.MSG_PEEK):
                    log(event='client_closed', port=self.client_address[1])
                    self.close_connection = True
                    return
            return self.send(200, json.dumps(fx['response']))
        if sc == 'hold':
            time.sleep(0.8)
            log(event='answered', port=self.client_address[1])
            return self.send(200, json.dumps(fx['response']))
        if sc == 'drop':
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if sc == '401':
            return self.send(401, json.dumps({'error': {'message': 'invalid key ' + str(self.headers.get('Authorization'))}}))
        if sc == '429':
            return self.send(429, '{"error":{"message":"rate limit exceeded"}}')
        if sc == '500':
            return self.send(500, '{"error":{"message":"internal error"}}')
        if sc == 'badjson':
            return self.send(200, '{"choices": [{"text": "a + b"')
        if sc == 'huge':
            return self.send(200, json.dumps({'content': 'x' * (2 << 20), 'choices': [{'text': 'x' * (2 << 20)}]}))
        return self.send(400, '{"error":{"message":"unknown scenario"}}')

def main():
    srv = ThreadingHTTPServer(('127.0.0.1', 0), H)
    srv.daemon_threads = True
    print(srv.server_address[1], flush=True)
    limit = float(sys.argv[2]) if len(sys.argv) > 2 else 120
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    end = time.time() + limit
    while time.time() < end:
        r, _, _ = select.select([sys.stdin], [], [], 0.5)
        if r and not sys.stdin.read(1):
            break
    srv.shutdown()

main()
