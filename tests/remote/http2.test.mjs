// The remote source's transport against TLS servers this test starts with
// Node's own http2 / https / net modules: HTTP/2 where the server offers it
// (ALPN), parallel candidates sharing that connection, a cancelled request
// resetting its stream, and the retry rule — a connection that failed before
// the request was sent is retried with backoff (50 ms, then 150 ms), a sent
// one never (tests/remote/remote.test.mjs checks that half over HTTP/1.1).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http2 from 'node:http2';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { REAL, session, close, open, inline, rpc, sleep } from '../protocol/lib.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const FIX = JSON.parse(fs.readFileSync(path.join(HERE, 'fixtures', 'openai-fim.json')));
const KEY = 'sk-infilld-h2-test-0c5e81d9a4b7';
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'infilld-h2-'));
const DOC = 'def add(a, b):\n    return \n';

if (!REAL) {
  console.error('INFILLD_BIN is not set');
  process.exit(process.env.CI === 'true' ? 1 : 77);
}
const cert = path.join(TMP, 'cert.pem'), keyPem = path.join(TMP, 'key.pem');
const g = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyPem, '-out', cert, '-days', '2',
  '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'], { encoding: 'utf8' });
if (g.status !== 0) {
  console.error(`openssl: ${g.stderr}`);
  process.exit(process.env.CI === 'true' ? 1 : 77);
}
const tls = { key: fs.readFileSync(keyPem), cert: fs.readFileSync(cert) };

// Every request: {proto, session, t, body, closedEarly}. Scenarios as in
// fake_remote.py: ok, slow (5 s unless the client goes first), cands (0.3 s,
// then the next of the fixture's candidate texts).
const seen = [];
let sessions = 0, nextText = 0;
function handler(req, res) {
  let body = '';
  req.on('data', (b) => { body += b; });
  req.on('end', () => {
    const sc = (/SCENARIO:(\w+)/.exec(body) || [])[1] || 'ok';
    const e = { proto: req.httpVersion, session: req.stream?.session?.infilldId ?? null, port: req.socket?.remotePort, t: Date.now() / 1000, body, sc, closedEarly: null };
    seen.push(e);
    const send = (text) => {
      if (res.destroyed || res.writableEnded) return;
      const r = JSON.parse(JSON.stringify(FIX.response));
      r.choices[0].text = text;
      const b = JSON.stringify(r);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(b) });
      res.end(b);
    };
    if (sc === 'slow') {
      const timer = setTimeout(() => send('a + b'), 5000);
      const gone = () => { if (!res.writableEnded && !e.closedEarly) { clearTimeout(timer); e.closedEarly = Date.now() / 1000; } };
      res.on('close', gone);
      req.on('aborted', gone);
      req.stream?.on('close', gone); // HTTP/2: the client's RST_STREAM
      return;
    }
    if (sc === 'cands') {
      const t = FIX.candidates.texts[nextText++ % FIX.candidates.texts.length];
      setTimeout(() => send(t), 300);
      return;
    }
    send('a + b');
  });
}
const h2 = http2.createSecureServer({ ...tls, allowHTTP1: false }, handler);
h2.on('session', (s) => { s.infilldId = ++sessions; });
const h1 = https.createServer({ ...tls }, handler); // HTTP/1.1 only over TLS
const listen = (srv) => new Promise((resolve) => srv.listen(0, '127.0.0.1', () => resolve(srv.address().port)));
const H2 = await listen(h2), H1 = await listen(h1);
// A gate in front of the HTTP/2 server: the first TCP connection is dropped
// during the TLS handshake (nothing of the request was sent), later ones are
// passed through.
let gateConns = 0;
const gate = net.createServer((c) => {
  gateConns++;
  if (gateConns === 1) {
    c.once('data', () => c.destroy());
    return;
  }
  const up = net.connect(H2, '127.0.0.1');
  c.pipe(up).pipe(c);
  c.on('error', () => up.destroy());
  up.on('error', () => c.destroy());
});
const GATE = await listen(gate);
// A port where nothing listens.
const CLOSED = await new Promise((resolve) => {
  const s = net.createServer();
  s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
});
after(() => {
  h2.close(); h1.close(); gate.close();
  fs.rmSync(TMP, { recursive: true, force: true });
});

const SRC = (port, extra = {}) => ({ kind: 'remote', api: 'openai-fim', url: `https://localhost:${port}/v1`, model: 'mercury-coder', caFile: cert, apiKeyEnv: 'INFILLD_TEST_KEY', timeoutMs: 10000, ...extra });

async function remote(source, extra = {}) {
  const logFile = path.join(TMP, `d${Math.random().toString(36).slice(2)}.log`);
  const s = await session(REAL, {
    args: ['--log-file', logFile, '--log-level', 'debug'],
    env: { INFILLD_TEST_KEY: KEY },
    initOptions: { source, timeBudgetMs: 20000, candidates: 1, ...extra },
  });
  await s.conn.sendNotification('$/setTrace', { value: 'verbose' });
  s.log = () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '');
  return s;
}

async function done(s) {
  const r = await close(s);
  assert.equal(r.code, 0, s.d.stderr.slice(-2000));
  assert.ok(!/Sanitizer/.test(s.d.stderr), s.d.stderr.slice(-2000));
  assert.ok(!(JSON.stringify(s.conn.notes) + s.d.stderr + s.log()).includes(KEY), 'no sink carries the key');
}

async function ask(s, uri, text, line, ch, token) {
  await open(s.conn, uri, text);
  return inline(s.conn, uri, line, ch, { triggerKind: 1 }, token);
}

// Asynchronous: the servers live in this process.
async function doctor(src) {
  const cf = path.join(TMP, `cfg${Math.random().toString(36).slice(2)}.json`);
  fs.writeFileSync(cf, JSON.stringify({ source: src }));
  const p = spawn(REAL, ['doctor', '--config', cf], { env: { ...process.env, INFILLD_TEST_KEY: KEY } });
  let out = '', err = '';
  p.stdout.on('data', (b) => { out += b; });
  p.stderr.on('data', (b) => { err += b; });
  const code = await new Promise((resolve) => p.on('close', resolve));
  assert.equal(code, 0, err);
  assert.ok(!(out + err).includes(KEY));
  return out;
}

test('HTTP/2 where the server offers it: the requests arrive as HTTP/2 on one connection; doctor names the version', async () => {
  const s = await remote(SRC(H2));
  const n0 = seen.length, s0 = sessions;
  for (const u of ['a', 'b', 'c']) {
    const r = await ask(s, `file:///w/${u}.py`, DOC, 1, 11);
    assert.equal(r.items[0].insertText, 'a + b');
  }
  const got = seen.slice(n0);
  assert.equal(got.length, 3);
  for (const e of got) assert.equal(e.proto, '2.0');
  assert.equal(sessions - s0, 1, 'one HTTP/2 connection for all three');
  await done(s);
  assert.match(await doctor(SRC(H2)), /remote: ok: reachable, authenticated, answered in \d+ ms over HTTP\/2 \(1 candidate\)/);
  assert.match(await doctor(SRC(H1)), /remote: ok: reachable, authenticated, answered in \d+ ms over HTTP\/1\.1/);
});

test('parallel candidates: three streams on the one HTTP/2 connection; over TLS HTTP/1.1 three connections at once', async () => {
  for (const [port, proto] of [[H2, '2.0'], [H1, '1.1']]) {
    const s = await remote(SRC(port), { candidates: 3 });
    const n0 = seen.length, s0 = sessions;
    const r = await ask(s, 'file:///w/p.py', `# SCENARIO:cands\n${DOC}`, 2, 11);
    const got = seen.slice(n0);
    assert.equal(got.length, 3, proto);
    for (const e of got) assert.equal(e.proto, proto);
    const ts = got.map((e) => e.t);
    assert.ok(Math.max(...ts) - Math.min(...ts) < 0.3, `${proto}: sent at once (${(Math.max(...ts) - Math.min(...ts)).toFixed(3)} s apart)`);
    if (proto === '2.0') assert.equal(sessions - s0, 1, 'multiplexed on one connection');
    else assert.equal(new Set(got.map((e) => e.port)).size, 3);
    assert.deepEqual(r.items.map((i) => i.insertText).sort(), ['a + b', 'b + a'], 'the invalid candidate dropped');
    await done(s);
  }
});

// libcurl would only queue the stream's reset until the connection's next
// use, so infilld closes a cancelled transfer's connection (HTTP/2 too).
test('HTTP/2: a cancelled request closes its stream at once; the next request answers on a new connection', async () => {
  const s = await remote(SRC(H2));
  await ask(s, 'file:///w/warm.py', DOC, 1, 11);
  const s0 = sessions, n0 = seen.length;
  const src = new rpc.CancellationTokenSource();
  const p = ask(s, 'file:///w/slow.py', `# SCENARIO:slow\n${DOC}`, 2, 11, src.token);
  for (let i = 0; i < 500 && seen.length === n0; i++) await sleep(10);
  assert.equal(seen.length, n0 + 1, 'the request reached the server');
  await sleep(100);
  const t0 = Date.now() / 1000;
  src.cancel();
  let res;
  try { res = await p; } catch (e) { res = e; }
  assert.ok(res === null || res.code === -32800, JSON.stringify(res));
  const e = seen[n0];
  for (let i = 0; i < 100 && !e.closedEarly; i++) await sleep(10);
  assert.ok(e.closedEarly, 'the server saw the stream closed');
  assert.ok(e.closedEarly - t0 < 0.5, `reset ${(e.closedEarly - t0).toFixed(3)} s after the cancel`);
  const r = await ask(s, 'file:///w/after.py', DOC, 1, 11);
  assert.equal(r.items[0].insertText, 'a + b');
  assert.equal(sessions, s0 + 1, 'a new connection served the next request');
  await done(s);
});

test('retry: a TLS handshake that broke off is retried after 50 ms and answers; a refused connection is tried three times', async () => {
  const s = await remote(SRC(GATE));
  const n0 = seen.length;
  const r = await ask(s, 'file:///w/a.py', DOC, 1, 11);
  assert.equal(r.items[0].insertText, 'a + b');
  assert.equal(gateConns, 2, 'the dropped connection and the retried one');
  assert.equal(seen.length, n0 + 1, 'the request reached the server once');
  assert.match(s.log(), /connecting to https:\/\/localhost:\d+\/v1 failed \(.*\); retry 1 in 50 ms/);
  assert.ok(!/retry 2 in/.test(s.log()));
  await done(s);

  const s2 = await remote(SRC(CLOSED));
  const t0 = Date.now();
  let err = null;
  try { await ask(s2, 'file:///w/b.py', DOC, 1, 11); } catch (e2) { err = e2; }
  const ms = Date.now() - t0;
  assert.ok(err, 'an error, not a result');
  assert.match(err.message, /remote: https:\/\/localhost:\d+\/v1: .*(Connection refused|Couldn't connect|Failed to connect)/i);
  assert.match(s2.log(), /retry 1 in 50 ms[\s\S]*retry 2 in 150 ms/);
  assert.ok(!/retry 3 in/.test(s2.log()), 'two retries, no more');
  assert.ok(ms >= 200, `the backoff waited (${ms} ms)`);
  // Still serving: the next request goes elsewhere only when settings change;
  // here it fails the same way, and quickly.
  await done(s2);
});
