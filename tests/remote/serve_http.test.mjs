// infilld serve-http with the real engine and the tiny model: the endpoints,
// its limits (413, 401, 429, 503), the refusal off loopback, cancellation
// when the client hangs up, TLS, and infilld's own remote source as its
// client (plain, streamed and over TLS with a bearer token).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { REAL, session, close, open, inline } from '../protocol/lib.mjs';

if (!REAL) {
  console.error('INFILLD_BIN is not set');
  process.exit(process.env.CI === 'true' ? 1 : 77);
}
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'infilld-serve-http-'));
const TOKEN = 'tok-serve-http-5c1e9a7b3d';
const procs = [];
after(() => {
  for (const p of procs) if (p.exitCode === null) p.kill('SIGKILL');
  fs.rmSync(TMP, { recursive: true, force: true });
});

// Starts serve-http; resolves {proc, port, log()} once it listens.
async function serve(args = []) {
  const p = spawn(REAL, ['serve-http', '--listen', '127.0.0.1:0', '--log-level', 'info', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  procs.push(p);
  let err = '';
  p.stderr.on('data', (b) => { err += b; });
  const port = await new Promise((resolve, reject) => {
    let out = '';
    p.stdout.on('data', (b) => {
      out += b;
      const m = /listening on 127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    p.once('exit', (c) => reject(new Error(`serve-http exited ${c}: ${err}`)));
  });
  return { proc: p, port, log: () => err };
}

async function stop(s) {
  const done = new Promise((r) => s.proc.once('exit', (code, sig) => r({ code, sig })));
  s.proc.kill('SIGTERM');
  const r = await done;
  assert.equal(r.code, 0, s.log());
  assert.ok(!/Sanitizer/.test(s.log()), s.log());
}

function req(port, method, p, body, headers = {}) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : (typeof body === 'string' ? body : JSON.stringify(body));
    const r = http.request({ host: '127.0.0.1', port, method, path: p, agent: false, headers: { 'Content-Type': 'application/json', ...headers } }, (res) => {
      let b = '';
      res.on('data', (c) => { b += c; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: b, json: (() => { try { return JSON.parse(b); } catch { return null; } })() }));
    });
    r.on('error', reject);
    if (data !== undefined) r.write(data);
    r.end();
  });
}

const FIM = { prompt: 'def add(a, b):\n    return ', suffix: '\n', max_tokens: 8 };

test('endpoints: /health, /v1/models, /v1/fim/completions in the OpenAI FIM shape; bad requests answered 4xx', async () => {
  const s = await serve(['--max-body', '4096']);
  const h = await req(s.port, 'GET', '/health');
  assert.equal(h.status, 200);
  assert.deepEqual(h.json, { status: 'ok' });
  const m = await req(s.port, 'GET', '/v1/models');
  assert.equal(m.json.object, 'list');
  assert.equal(m.json.data[0].id, 'infilld-tiny-code');
  const r = await req(s.port, 'POST', '/v1/fim/completions', FIM);
  assert.equal(r.status, 200, r.body);
  assert.equal(r.json.object, 'fim.completion');
  assert.equal(r.json.choices.length, 1);
  assert.equal(typeof r.json.choices[0].text, 'string');
  assert.ok(r.json.usage.prompt_tokens > 0 && r.json.usage.completion_tokens === 8);
  // Deterministic at temperature 0: the same request, the same text.
  const r2 = await req(s.port, 'POST', '/v1/fim/completions', FIM);
  assert.equal(r2.json.choices[0].text, r.json.choices[0].text);
  assert.notEqual(r2.json.id, r.json.id);
  // A stop sequence cuts the text.
  const st = await req(s.port, 'POST', '/v1/fim/completions', { ...FIM, max_tokens: 24, stop: ['\n'] });
  assert.ok(!st.json.choices[0].text.includes('\n'));
  // stream: one event and [DONE].
  const sse = await req(s.port, 'POST', '/v1/fim/completions', { ...FIM, stream: true });
  assert.equal(sse.headers['content-type'], 'text/event-stream');
  const evs = sse.body.split('\n\n').filter(Boolean);
  assert.equal(evs.length, 2);
  assert.equal(JSON.parse(evs[0].slice(6)).choices[0].text, r.json.choices[0].text);
  assert.equal(evs[1], 'data: [DONE]');
  const bad = [
    [await req(s.port, 'POST', '/v1/fim/completions', '{"prompt": '), 400, /JSON object/],
    [await req(s.port, 'POST', '/v1/fim/completions', { prompt: 3 }), 400, /prompt must be a string/],
    [await req(s.port, 'POST', '/v1/fim/completions', { ...FIM, max_tokens: -1 }), 400, /max_tokens/],
    [await req(s.port, 'POST', '/v1/fim/completions', { ...FIM, n: 3 }), 400, /n = 1/],
    [await req(s.port, 'POST', '/v1/fim/completions', { ...FIM, prompt: 'x'.repeat(8000) }), 413, /larger than 4096 bytes/],
    [await req(s.port, 'GET', '/v1/fim/completions'), 405, /POST/],
    [await req(s.port, 'GET', '/nope'), 404, /no such endpoint/],
  ];
  for (const [res, code, re] of bad) {
    assert.equal(res.status, code, res.body);
    assert.match(res.json.error.message, re);
  }
  assert.equal((await req(s.port, 'GET', '/health')).status, 200, 'still serving');
  await stop(s);
});

test('batching: requests arriving together run as one padded batch, each answer what it is alone', async () => {
  // The random-weight tiny model: its text differs for every prompt, so a
  // row mixed up or disturbed by the padding would show.
  const model = path.join(path.dirname(REAL), 'models', 'tiny-dream');
  if (!fs.existsSync(path.join(model, 'config.json'))) assert.fail(`no model at ${model}`);
  const prompts = ['def add(a, b):\n    return ', 'x = 1\ny = ',
    '# a longer prefix, so that the rows differ in length\nclass Foo:\n    def bar(self):\n        return self.'];
  const bodies = prompts.map((p, i) => ({ prompt: p, suffix: i % 2 ? '\n' : '\n\nprint(1)\n', max_tokens: 6 }));
  const solo = await serve(['--model', model, '--batch-max', '1']);
  const alone = [];
  for (const b of bodies) alone.push((await req(solo.port, 'POST', '/v1/fim/completions', b)).json.choices[0].text);
  await stop(solo);
  assert.match(solo.log(), /3 runs for 3 requests/);
  assert.equal(new Set(alone).size, alone.length, 'distinct texts');
  const s = await serve(['--model', model, '--batch-ms', '200', '--per-client', '8']);
  const rs = await Promise.all(bodies.map((b) => req(s.port, 'POST', '/v1/fim/completions', b)));
  assert.deepEqual(rs.map((r) => r.json.choices[0].text), alone);
  // Another max_tokens cannot share the batch: it runs on its own.
  const mixed = await Promise.all([req(s.port, 'POST', '/v1/fim/completions', bodies[0]),
    req(s.port, 'POST', '/v1/fim/completions', { ...bodies[1], max_tokens: 4 })]);
  assert.equal(mixed[0].json.choices[0].text, alone[0]);
  await stop(s);
  const m = /(\d+) runs for 5 requests/.exec(s.log());
  assert.ok(m && Number(m[1]) <= 3, s.log());
});

// Issue 16's lost answer: a hole whose tokens end inside a UTF-8 character
// (an untrained model's often do) made jansson refuse the text; the handler
// returned MHD_NO, libmicrohttpd logged "Application reported internal
// error" and closed the connection with nothing sent, while the server
// counted the request as answered. With the random-weight tiny model,
// "# request 2" is such a prompt (found before the fix: its answer was lost,
// alone as well as under load).
test('every request is answered, many at once: text that is not valid UTF-8 comes back with U+FFFD', async () => {
  const model = path.join(path.dirname(REAL), 'models', 'tiny-dream');
  if (!fs.existsSync(path.join(model, 'config.json'))) assert.fail(`no model at ${model}`);
  const s = await serve(['--model', model, '--per-client', '32', '--queue', '32', '--batch-ms', '50']);
  const bodies = [];
  for (let k = 0; k < 8; k++) {
    const prompt = `# request ${k}\ndef add(a, b):\n    return `;
    bodies.push({ prompt, suffix: '\n', max_tokens: 8 }, { prompt, suffix: '\n', max_tokens: 8, stream: true });
  }
  const rs = await Promise.all(bodies.map((b) => req(s.port, 'POST', '/v1/fim/completions', b).catch((e) => ({ status: 0, body: String(e) }))));
  const texts = rs.map((r, i) => {
    assert.equal(r.status, 200, `request ${i}: ${r.body}`);
    const j = bodies[i].stream ? JSON.parse(/^data: (.*)$/m.exec(r.body)[1]) : r.json;
    assert.match(r.body, bodies[i].stream ? /data: \[DONE\]/ : /^\{/);
    assert.equal(typeof j.choices[0].text, 'string');
    return { id: j.id, text: j.choices[0].text };
  });
  assert.equal(new Set(texts.map((t) => t.id)).size, bodies.length, 'an id per answer');
  // The plain and the streamed answer of a prompt agree (temperature 0).
  for (let k = 0; k < 8; k++) assert.equal(texts[2 * k].text, texts[2 * k + 1].text);
  assert.ok(texts.some((t) => t.text.includes('\uFFFD')), 'no answer went through the replacement: ' + JSON.stringify(texts));
  await stop(s);
  assert.ok(!/internal error/.test(s.log()), s.log());
  assert.match(s.log(), /stopped: 16 answered, 0 cancelled, 0 errors/);
});

test('off loopback: refuses to start without both TLS and a bearer token', () => {
  const tf = path.join(TMP, 'tok0');
  fs.writeFileSync(tf, TOKEN, { mode: 0o600 });
  for (const extra of [[], ['--token-file', tf], ['--tls-cert', tf, '--tls-key', tf]]) {
    const r = spawnSync(REAL, ['serve-http', '--listen', '0.0.0.0:0', ...extra], { encoding: 'utf8', timeout: 20000 });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /0\.0\.0\.0 is not a loopback address: serving it needs TLS \(--tls-cert and --tls-key\) and a bearer token \(--token-file\); refusing to start/);
  }
  fs.chmodSync(tf, 0o644);
  const r = spawnSync(REAL, ['serve-http', '--listen', '127.0.0.1:0', '--token-file', tf], { encoding: 'utf8', timeout: 20000 });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /mode 0644: others can read it/);
});

test('bearer token: 401 without it or with a wrong one', async () => {
  const tf = path.join(TMP, 'tok1');
  fs.writeFileSync(tf, TOKEN + '\n', { mode: 0o600 });
  const s = await serve(['--token-file', tf]);
  assert.equal((await req(s.port, 'POST', '/v1/fim/completions', FIM)).status, 401);
  assert.equal((await req(s.port, 'POST', '/v1/fim/completions', FIM, { Authorization: 'Bearer nope' })).status, 401);
  assert.equal((await req(s.port, 'POST', '/v1/fim/completions', FIM, { Authorization: `Bearer ${TOKEN}x` })).status, 401);
  const ok = await req(s.port, 'POST', '/v1/fim/completions', FIM, { Authorization: `Bearer ${TOKEN}` });
  assert.equal(ok.status, 200);
  assert.ok(!s.log().includes(TOKEN));
  await stop(s);
});

test('limits: per-client concurrency answers 429, a full queue 503, with Retry-After', async () => {
  const long = { ...FIM, max_tokens: 64 };
  let s = await serve(['--per-client', '1']);
  let rs = await Promise.all([0, 1, 2].map(() => req(s.port, 'POST', '/v1/fim/completions', long)));
  let codes = rs.map((r) => r.status).sort();
  assert.deepEqual(codes, [200, 429, 429], JSON.stringify(codes));
  assert.equal(rs.find((r) => r.status === 429).headers['retry-after'], '1');
  await stop(s);
  s = await serve(['--per-client', '16', '--queue', '1']);
  rs = await Promise.all([0, 1, 2, 3, 4].map(() => req(s.port, 'POST', '/v1/fim/completions', long)));
  codes = rs.map((r) => r.status);
  const n200 = codes.filter((c) => c === 200).length, n503 = codes.filter((c) => c === 503).length;
  // One runs, at most one waits (two when the first was taken off the queue first).
  assert.ok(n200 >= 1 && n200 <= 3 && n200 + n503 === 5, JSON.stringify(codes));
  assert.match(rs.find((r) => r.status === 503).json.error.message, /queue is full/);
  await stop(s);
});

test('a client that hangs up cancels its request; the next one is served at once', async () => {
  const s = await serve();
  const sock = net.connect(s.port, '127.0.0.1');
  await new Promise((r) => sock.once('connect', r));
  const body = JSON.stringify({ ...FIM, max_tokens: 128 });
  sock.write(`POST /v1/fim/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
  await new Promise((r) => setTimeout(r, 150)); // a 128-token run takes seconds here
  const tc = Date.now();
  sock.destroy();
  for (let i = 0; i < 200 && !/client hung up; cancelled/.test(s.log()); i++) await new Promise((r) => setTimeout(r, 10));
  assert.match(s.log(), /request \d+: the client hung up; cancelled/);
  const cancelMs = Date.now() - tc;
  assert.ok(cancelMs < 1000, `cancelled ${cancelMs} ms after the hang-up`);
  const r = await req(s.port, 'POST', '/v1/fim/completions', FIM);
  assert.equal(r.status, 200);
  await stop(s);
  assert.match(s.log(), /stopped: \d+ answered, 1 cancelled/);
});

// The remote source (openai-fim) against serve-http through the whole LSP pipeline.
const DOC = 'def add(a, b):\n    return \n';
async function viaRemote(source, extra = {}) {
  // One candidate: each further one is another request to the server, and
  // these tests count the server's answers. The transfer's own timeout (5 s by
  // default) is raised to the budget: under ASan on a loaded machine a TLS
  // handshake plus a completion by the serving daemon takes longer.
  const s = await session(REAL, { env: { INFILLD_TEST_TOKEN: TOKEN }, initOptions: { source: { timeoutMs: 20000, ...source }, timeBudgetMs: 20000, candidates: 1, ...extra } });
  await open(s.conn, 'file:///w/a.py', DOC);
  const r = await inline(s.conn, 'file:///w/a.py', 1, 11);
  const c = await close(s);
  assert.equal(c.code, 0, s.d.stderr.slice(-2000));
  return { r, s };
}

test('infilld\'s remote source against infilld serve-http: plain, streamed', async () => {
  const s = await serve();
  const direct = await req(s.port, 'POST', '/v1/fim/completions', { prompt: 'def add(a, b):\n    return ', suffix: '\n', max_tokens: 4 });
  assert.equal(direct.status, 200);
  for (const stream of [false, true]) {
    const { r } = await viaRemote({ kind: 'remote', api: 'openai-fim', url: `http://127.0.0.1:${s.port}/v1`, model: 'infilld-tiny-code', maxTokens: 16, stream }, { partial: true });
    assert.ok(r === null || Array.isArray(r.items), JSON.stringify(r));
  }
  await stop(s);
  // Every request it sent was answered.
  assert.match(s.log(), /stopped: 3 answered, 0 cancelled, 0 errors/);
});

test('over TLS with a bearer token: the remote source verifies the certificate and sends the token', async (t) => {
  const cert = path.join(TMP, 'cert.pem'), key = path.join(TMP, 'key.pem');
  const g = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '2',
    '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'], { encoding: 'utf8' });
  if (g.status !== 0) {
    if (process.env.CI === 'true') assert.fail(`openssl: ${g.stderr}`);
    t.skip('openssl is missing');
    return;
  }
  fs.chmodSync(key, 0o600);
  const tf = path.join(TMP, 'tok2');
  fs.writeFileSync(tf, TOKEN, { mode: 0o600 });
  const s = await serve(['--tls-cert', cert, '--tls-key', key, '--token-file', tf]);
  const src = { kind: 'remote', api: 'openai-fim', url: `https://localhost:${s.port}/v1`, model: 'infilld-tiny-code', maxTokens: 16, caFile: cert, apiKeyEnv: 'INFILLD_TEST_TOKEN' };
  const { r } = await viaRemote(src);
  assert.ok(r === null || Array.isArray(r.items), JSON.stringify(r));
  // Without the CA the certificate is refused; without the token the server refuses.
  let err = null;
  try {
    const s2 = await session(REAL, { env: { INFILLD_TEST_TOKEN: TOKEN }, initOptions: { source: { ...src, caFile: undefined }, timeBudgetMs: 20000, candidates: 1 } });
    await open(s2.conn, 'file:///w/a.py', DOC);
    try { await inline(s2.conn, 'file:///w/a.py', 1, 11); } catch (e) { err = e; }
    await close(s2);
  } catch (e) { err = e; }
  assert.ok(err && /certificate|SSL|TLS/i.test(err.message), String(err && err.message));
  err = null;
  const s3 = await session(REAL, { initOptions: { source: { ...src, apiKeyEnv: undefined }, timeBudgetMs: 20000, candidates: 1 } });
  await open(s3.conn, 'file:///w/a.py', DOC);
  try { await inline(s3.conn, 'file:///w/a.py', 1, 11); } catch (e) { err = e; }
  await close(s3);
  assert.ok(err && /refused the credentials \(HTTP 401\)/.test(err.message), String(err && err.message));
  await stop(s);
  assert.match(s.log(), /stopped: 1 answered/);
  assert.ok(!s.log().includes(TOKEN));
});
