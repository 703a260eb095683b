// The remote source against a loopback server (fake_remote.py) speaking
// openai-fim and llama-infill from the providers' documented examples
// (fixtures/), plus slow, dropped, 401/429/500, malformed and oversized
// answers, cancellation, excluded files, key files and key leaks.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { REAL, session, close, open, inline, rpc } from '../protocol/lib.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const FIX = (n) => JSON.parse(fs.readFileSync(path.join(HERE, 'fixtures', n)));
const KEY = 'sk-infilld-test-7f3a9c2e51d04b8b';
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'infilld-remote-'));
const LOG = path.join(TMP, 'server.jsonl');

if (!REAL) {
  console.error('INFILLD_BIN is not set');
  process.exit(process.env.CI === 'true' ? 1 : 77);
}
const py = spawnSync('python3', ['-c', 'import http.server']);
if (py.status !== 0) {
  console.error('python3 is missing');
  process.exit(process.env.CI === 'true' ? 1 : 77);
}

const server = spawn('python3', [path.join(HERE, 'fake_remote.py'), LOG, '240'], { stdio: ['pipe', 'pipe', 'inherit'] });
const PORT = await new Promise((resolve, reject) => {
  server.stdout.once('data', (b) => resolve(Number(String(b).trim())));
  server.once('exit', () => reject(new Error('fake server exited')));
});
after(() => { server.stdin.end(); server.kill(); fs.rmSync(TMP, { recursive: true, force: true }); });

const entries = () => fs.readFileSync(LOG, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const requests = () => entries().filter((e) => e.event === 'request');

const FIM = { kind: 'remote', api: 'openai-fim', url: `http://127.0.0.1:${PORT}/v1`, model: 'mercury-coder', apiKeyEnv: 'INFILLD_TEST_KEY' };
const INFILL = { kind: 'remote', api: 'llama-infill', url: `http://127.0.0.1:${PORT}` };
const DOC = 'def add(a, b):\n    return \n';

// Everything a session wrote to the client, its stderr and log file, as text.
function sinks(s, logFile) {
  return JSON.stringify(s.conn.notes) + s.d.stderr + (logFile && fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '');
}

async function remote(source, extra = {}) {
  const logFile = path.join(TMP, `d${Math.random().toString(36).slice(2)}.log`);
  const s = await session(REAL, {
    args: ['--log-file', logFile, '--log-level', 'debug'],
    env: { INFILLD_TEST_KEY: KEY },
    // A generous budget: these tests are about the remote source, and the
    // sanitizer build on two shared cores can spend the default one before
    // the request reaches the server.
    // One candidate unless a test asks for more: each extra one is another
    // request for the APIs without "n", and these tests count requests.
    initOptions: { source, timeBudgetMs: 20000, candidates: 1, ...extra },
  });
  await s.conn.sendNotification('$/setTrace', { value: 'verbose' });
  s.logFile = logFile;
  return s;
}

// Ends a session: a clean exit, nothing the sanitizers complain about.
async function done(s) {
  const r = await close(s);
  assert.equal(r.code, 0, s.d.stderr.slice(-2000));
  assert.ok(!/Sanitizer/.test(s.d.stderr), s.d.stderr.slice(-2000));
}

async function ask(s, uri, text, line, ch, token) {
  await open(s.conn, uri, text);
  return inline(s.conn, uri, line, ch, { triggerKind: 1 }, token);
}

test('openai-fim: the documented request, the documented answer, one kept-alive connection', async () => {
  const s = await remote(FIM);
  const n0 = requests().length;
  const r = await ask(s, 'file:///w/a.py', DOC, 1, 11);
  assert.equal(r.items.length, 1);
  assert.equal(r.items[0].insertText, 'a + b');
  const r2 = await ask(s, 'file:///w/b.py', DOC, 1, 11);
  assert.equal(r2.items[0].insertText, 'a + b');
  const got = requests().slice(n0);
  assert.equal(got.length, 2);
  const want = FIX('openai-fim.json').request;
  for (const g of got) {
    assert.equal(g.path, '/v1/fim/completions');
    assert.equal(g.auth, `Bearer ${KEY}`);
    assert.equal(g.headers['Content-Type'], 'application/json');
    const b = JSON.parse(g.body);
    assert.deepEqual(Object.keys(b).sort(), Object.keys(want).filter((k) => k in b).sort());
    for (const k of ['model', 'prompt', 'suffix', 'stream']) assert.deepEqual(b[k], want[k], k);
    assert.ok(Number.isInteger(b.max_tokens) && b.max_tokens > 0);
    if ('stop' in b) assert.deepEqual(b.stop, want.stop);
  }
  assert.equal(got[0].port, got[1].port, 'the second request reuses the connection');
  assert.ok(!sinks(s, s.logFile).includes(KEY));
  await done(s);
});

test('llama-infill: /infill with input_prefix / input_suffix / n_predict; no key, no Authorization', async () => {
  const s = await remote(INFILL);
  const n0 = requests().length;
  const r = await ask(s, 'file:///w/c.py', DOC, 1, 11);
  assert.equal(r.items[0].insertText, 'a + b');
  const g = requests().slice(n0)[0];
  assert.equal(g.path, '/infill');
  assert.equal(g.auth, null);
  const b = JSON.parse(g.body);
  const want = FIX('llama-infill.json').request;
  assert.equal(b.input_prefix, want.input_prefix);
  assert.equal(b.input_suffix, want.input_suffix);
  assert.ok(Number.isInteger(b.n_predict) && b.n_predict > 0);
  for (const k of Object.keys(b)) assert.ok(k in want, `undocumented field ${k}`);
  await done(s);
});

test('server failures: each a clear error, the daemon keeps serving, the key never shows', async () => {
  const s = await remote({ ...FIM, timeoutMs: 700, maxResponseBytes: 1 << 20 });
  const cases = [
    ['401', /refused the credentials \(HTTP 401\)/],
    ['429', /rate limiting \(HTTP 429\)/],
    ['500', /answered HTTP 500: internal error/],
    ['badjson', /not a JSON object/],
    ['huge', /larger than 1048576 bytes/],
    ['drop', /closed the connection after the request was sent \(it is not sent again\)|Empty reply from server/],
    ['slow', /no answer from .* within 700 ms/],
  ];
  for (const [sc, re] of cases) {
    const t0 = Date.now();
    let err = null;
    try {
      await ask(s, `file:///w/${sc}.py`, `# SCENARIO:${sc}\n${DOC}`, 2, 11);
    } catch (e) { err = e; }
    assert.ok(err, `${sc}: an error, not a result`);
    assert.match(err.message, re, sc);
    assert.ok(!err.message.includes(KEY), `${sc}: the key is redacted`);
    assert.ok(Date.now() - t0 < 4000, `${sc}: answered within the timeout`);
    const ok = await ask(s, 'file:///w/ok.py', DOC, 1, 11);
    assert.equal(ok.items[0].insertText, 'a + b', `${sc}: still serving`);
  }
  // A request that reached the server is never sent again (only a connection
  // that failed before sending is retried).
  assert.equal(requests().filter((e) => e.scenario === 'drop').length, 1, 'the dropped request was not retried');
  assert.ok(!/retry \d in/.test(fs.readFileSync(s.logFile, 'utf8')), 'no retry was logged');
  // The 401 body echoed the Authorization header: no sink carries it.
  assert.ok(requests().some((e) => e.scenario === '401'));
  assert.ok(!sinks(s, s.logFile).includes(KEY), 'no log, trace or message carries the key');
  assert.ok(fs.readFileSync(s.logFile, 'utf8').includes('HTTP 401'), 'the log file was written');
  await done(s);
});

test('a cancelled request closes its connection at once', async () => {
  const s = await remote({ ...FIM, timeoutMs: 10000 });
  const src = new rpc.CancellationTokenSource();
  const n0 = requests().length;
  const before = entries().filter((e) => e.event === 'client_closed').length;
  const p = ask(s, 'file:///w/slow.py', `# SCENARIO:slow\n${DOC}`, 2, 11, src.token);
  // Wait until the server has the request, then cancel.
  for (let i = 0; i < 300 && requests().length === n0; i++)
    await new Promise((r) => setTimeout(r, 10));
  assert.equal(requests().length, n0 + 1, 'the request reached the server');
  await new Promise((r) => setTimeout(r, 100));
  const t0 = Date.now() / 1000;
  src.cancel();
  let res;
  try { res = await p; } catch (e) { res = e; }
  assert.ok(res === null || res.code === -32800, `null or RequestCancelled, got ${JSON.stringify(res)}`);
  let closed = null;
  for (let i = 0; i < 100 && !closed; i++) {
    closed = entries().filter((e) => e.event === 'client_closed')[before];
    if (!closed) await new Promise((r) => setTimeout(r, 10));
  }
  assert.ok(closed, 'the server saw the connection close');
  assert.ok(closed.t - t0 < 0.5, `closed ${(closed.t - t0).toFixed(3)} s after the cancel`);
  const ok = await ask(s, 'file:///w/ok.py', DOC, 1, 11);
  assert.equal(ok.items[0].insertText, 'a + b');
  await done(s);
});

test('excluded files are never sent', async () => {
  const s = await remote(FIM, { exclude: ['*.secret.py'] });
  const n0 = requests().length;
  for (const uri of ['file:///p/.env', 'file:///p/server.pem', 'file:///p/k.secret.py']) {
    const r = await ask(s, uri, 'TOKEN=hunter2\n' + DOC, 2, 11);
    assert.deepEqual(r.items, [], uri);
  }
  assert.equal(requests().length, n0, 'nothing reached the server');
  assert.ok(!requests().some((e) => e.body.includes('hunter2')));
  await done(s);
});

test('settings: key files must be 0600, http:// only to loopback, no inline keys', async () => {
  const kf = path.join(TMP, 'key');
  fs.writeFileSync(kf, KEY + '\n', { mode: 0o644 });
  fs.chmodSync(kf, 0o644);
  const bad = [
    [{ ...FIM, apiKeyEnv: undefined, apiKeyFile: kf }, /mode 0644.*chmod 600/],
    [{ ...FIM, url: 'http://10.1.2.3:8080/v1' }, /allowInsecure/],
    [{ ...FIM, apiKeyEnv: undefined, apiKey: KEY }, /apiKey is not accepted/],
    [{ ...FIM, apiKeyEnv: 'INFILLD_NO_SUCH_VAR' }, /INFILLD_NO_SUCH_VAR is not set/],
    [{ ...FIM, api: 'openai-nope' }, /must be one of openai-fim, openai-completions-suffix/],
    [{ ...FIM, api: 'openai-completions-template', model: 'my-own-model' }, /names no known FIM template: set source.template/],
    [{ ...FIM, api: 'openai-completions-template', template: 'nope' }, /template "nope" is not one of qwen2.5-coder/],
    [{ ...FIM, stream: 'yes' }, /stream must be true or false/],
    [{ ...FIM, url: `http://user:${KEY}@127.0.0.1:${PORT}/v1` }, /must not carry credentials/],
  ];
  for (const [src, re] of bad) {
    const s = await remote(src);
    const n0 = requests().length;
    // The settings came with initialize, before the client had a window:
    // each request answers with the reason (and the log has it).
    let err = null;
    try { await ask(s, 'file:///w/a.py', DOC, 1, 11); } catch (e) { err = e; }
    assert.ok(err, 'an error, not a result');
    assert.match(err.message, re);
    assert.match(err.message, /infilld: remote source: /);
    assert.equal(requests().length, n0, 'nothing was sent');
    assert.match(fs.readFileSync(s.logFile, 'utf8'), re);
    assert.ok(!sinks(s, s.logFile).includes(KEY));
    await done(s);
  }
  fs.chmodSync(kf, 0o600);
  const s = await remote({ ...FIM, apiKeyEnv: undefined, apiKeyFile: kf });
  const n0 = requests().length;
  const r = await ask(s, 'file:///w/a.py', DOC, 1, 11);
  assert.equal(r.items[0].insertText, 'a + b');
  assert.equal(requests()[n0].auth, `Bearer ${KEY}`);
  assert.ok(!sinks(s, s.logFile).includes(KEY));
  await done(s);
});

test('doctor checks reachability and authentication', () => {
  const run = (src) => {
    const cf = path.join(TMP, `cfg${Math.random().toString(36).slice(2)}.json`);
    fs.writeFileSync(cf, JSON.stringify({ source: src }));
    const r = spawnSync(REAL, ['doctor', '--config', cf], { env: { ...process.env, INFILLD_TEST_KEY: KEY }, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.ok(!(r.stdout + r.stderr).includes(KEY), 'doctor never prints the key');
    return r.stdout;
  };
  const ok = run(FIM);
  assert.match(ok, /source: remote, api openai-fim, url http:\/\/127\.0\.0\.1:\d+\/v1, model mercury-coder, key from environment variable INFILLD_TEST_KEY/);
  assert.match(ok, /remote: ok: reachable, authenticated/);
  const down = run({ ...INFILL, url: 'http://127.0.0.1:1' });
  assert.match(down, /remote: FAILED: remote: http:\/\/127\.0\.0\.1:1: /);
  const denied = run({ ...FIM, headers: { 'X-Scenario': 'x' }, model: 'SCENARIO:401' });
  assert.match(denied, /remote: FAILED: .*HTTP 401/);
});

test('shared pipeline: typing through a remote answer asks nothing; a newer request supersedes and closes the old one', async () => {
  const s = await remote({ ...FIM, timeoutMs: 10000 });
  const { conn } = s;
  const uri = 'file:///w/t.py';
  const r = await ask(s, uri, DOC, 1, 11);
  assert.equal(r.items[0].insertText, 'a + b');
  const n0 = requests().length;
  await conn.sendNotification('textDocument/didChange', {
    textDocument: { uri, version: 2 },
    contentChanges: [{ range: { start: { line: 1, character: 11 }, end: { line: 1, character: 11 } }, text: 'a' }],
  });
  const typed = await inline(conn, uri, 1, 12, { triggerKind: 2 });
  assert.equal(typed.items[0].insertText, ' + b', 'answered from the typing-through cache');
  assert.equal(requests().length, n0, 'without a request to the server');

  // A slow request, then a newer one for the same document: the first is
  // answered null and its connection closes; the second answers.
  const u2 = 'file:///w/s.py';
  await open(conn, u2, `# SCENARIO:slow\n${DOC}`);
  const closed0 = entries().filter((e) => e.event === 'client_closed').length;
  const first = inline(conn, u2, 2, 11);
  for (let i = 0; i < 300 && requests().length === n0; i++) await new Promise((res) => setTimeout(res, 10));
  assert.equal(requests().length, n0 + 1);
  await conn.sendNotification('textDocument/didChange', {
    textDocument: { uri: u2, version: 2 },
    contentChanges: [{ range: { start: { line: 0, character: 0 }, end: { line: 1, character: 0 } }, text: '' }],
  });
  const t0 = Date.now() / 1000;
  const second = inline(conn, u2, 1, 11);
  assert.equal(await first, null, 'superseded: null');
  assert.equal((await second).items[0].insertText, 'a + b');
  let closed = null;
  for (let i = 0; i < 100 && !closed; i++) {
    closed = entries().filter((e) => e.event === 'client_closed')[closed0];
    if (!closed) await new Promise((res) => setTimeout(res, 10));
  }
  assert.ok(closed && closed.t - t0 < 0.5, 'the superseded transfer was closed at once');
  console.log(`# superseded: the server saw the connection close ${((closed.t - t0) * 1000).toFixed(0)} ms after the newer request was sent`);
  await done(s);
});

test('two documents at once: both requests are at the server together, both answered', async () => {
  // The transfers run on the daemon's loop, not one at a time on the worker
  // thread: the second request reaches the server while the first waits.
  const s = await remote({ ...FIM, timeoutMs: 10000 });
  const e0 = entries().length;
  const u1 = 'file:///w/h1.py', u2 = 'file:///w/h2.py';
  await open(s.conn, u1, `# SCENARIO:hold one\n${DOC}`);
  await open(s.conn, u2, `# SCENARIO:hold two\n${DOC}`);
  const [a, b] = await Promise.all([inline(s.conn, u1, 2, 11), inline(s.conn, u2, 2, 11)]);
  assert.equal(a.items[0].insertText, 'a + b');
  assert.equal(b.items[0].insertText, 'a + b');
  const got = entries().slice(e0);
  const reqs = got.filter((e) => e.event === 'request');
  const answered = got.filter((e) => e.event === 'answered');
  assert.equal(reqs.length, 2, 'one request per document');
  assert.equal(answered.length, 2);
  const lastReq = Math.max(...reqs.map((e) => e.t)), firstAns = Math.min(...answered.map((e) => e.t));
  assert.ok(lastReq < firstAns, 'both requests were in flight at once');
  assert.notEqual(reqs[0].port, reqs[1].port, 'on two connections');
  console.log(`# two documents: the second request reached the server ${((lastReq - Math.min(...reqs.map((e) => e.t))) * 1000).toFixed(0)} ms after the first, ${((firstAns - lastReq) * 1000).toFixed(0)} ms before the first answer`);
  await done(s);
});

test('contextBytes: the far ends are cut at line starts, 3/4 prefix and 1/4 suffix', async () => {
  const s = await remote({ ...FIM, contextBytes: 64 });
  const head = Array.from({ length: 20 }, (_, i) => `x${i} = ${i}\n`).join('');
  const tail = Array.from({ length: 20 }, (_, i) => `y${i} = ${i}\n`).join('');
  const text = `${head}def add(a, b):\n    return \n${tail}`;
  const n0 = requests().length;
  const r = await ask(s, 'file:///w/cut.py', text, 21, 11);
  assert.equal(r.items[0].insertText, 'a + b');
  const b = JSON.parse(requests()[n0].body);
  const prefix = `${head}def add(a, b):\n    return `;
  const suffix = `\n${tail}`;
  assert.ok(prefix.endsWith(b.prompt) && b.prompt.length <= 48 && b.prompt.length > 20, b.prompt);
  assert.ok(b.prompt.startsWith('x') || b.prompt.startsWith('def'), 'starts at a line');
  assert.ok(suffix.startsWith(b.suffix) && b.suffix.length <= 16 + 48 - b.prompt.length, b.suffix);
  assert.ok(b.suffix === '' || b.suffix.endsWith('\n'), 'ends at a line');
  await done(s);
});

const V1 = `http://127.0.0.1:${PORT}/v1`;
const SUFFIX = { kind: 'remote', api: 'openai-completions-suffix', url: V1, model: 'gpt-3.5-turbo-instruct', apiKeyEnv: 'INFILLD_TEST_KEY' };
const TEMPLATE = { kind: 'remote', api: 'openai-completions-template', url: `http://127.0.0.1:${PORT}`, model: 'Qwen/Qwen2.5-Coder-1.5B' };
const CHAT = { kind: 'remote', api: 'openai-chat', url: V1, model: 'google/diffusiongemma', apiKeyEnv: 'INFILLD_TEST_KEY' };

// The fields sent equal the fixture's (max_tokens: any positive integer).
function sameRequest(got, want, keys) {
  const b = JSON.parse(got.body);
  for (const k of Object.keys(b)) assert.ok(k in want, `undocumented field ${k}`);
  for (const k of keys) assert.deepEqual(b[k], want[k], k);
  const mt = b.max_tokens ?? b.n_predict;
  assert.ok(Number.isInteger(mt) && mt > 0);
  return b;
}

test('openai-completions-suffix: /v1/completions with prompt + suffix, the documented answer', async () => {
  const s = await remote(SUFFIX);
  const n0 = requests().length;
  const r = await ask(s, 'file:///w/a.py', DOC, 1, 11);
  assert.equal(r.items[0].insertText, 'a + b');
  const g = requests()[n0];
  assert.equal(g.path, '/v1/completions');
  assert.equal(g.auth, `Bearer ${KEY}`);
  sameRequest(g, FIX('openai-completions-suffix.json').request, ['model', 'prompt', 'suffix', 'stop', 'stream']);
  await done(s);
});

test('openai-completions-template: the model\'s own FIM prompt and end markers, picked by name or set', async () => {
  const want = FIX('openai-completions-template.json').request;
  for (const src of [TEMPLATE, { ...TEMPLATE, model: 'served-name', template: 'qwen2.5-coder' }]) {
    const s = await remote(src);
    const n0 = requests().length;
    const r = await ask(s, 'file:///w/a.py', DOC, 1, 11);
    assert.equal(r.items[0].insertText, 'a + b');
    const g = requests()[n0];
    assert.equal(g.path, '/v1/completions');
    assert.equal(g.auth, null);
    const b = sameRequest(g, want, ['prompt', 'stop', 'stream']);
    assert.equal(b.model, src.model);
    assert.ok(!('suffix' in b), 'vLLM rejects suffix');
    await done(s);
  }
  // Other families render their own markers.
  const cases = [
    ['bigcode/starcoder2-3b', '<fim_prefix>def add(a, b):\n    return <fim_suffix>\n<fim_middle>', '<|endoftext|>'],
    ['codellama/CodeLlama-7b-hf', '<PRE> def add(a, b):\n    return  <SUF>\n <MID>', '<EOT>'],
    ['deepseek-ai/deepseek-coder-1.3b-base', '<｜fim▁begin｜>def add(a, b):\n    return <｜fim▁hole｜>\n<｜fim▁end｜>', '<｜end▁of▁sentence｜>'],
    ['codestral-latest', '[SUFFIX]\n[PREFIX]def add(a, b):\n    return ', '</s>'],
  ];
  for (const [model, prompt, stop] of cases) {
    const s = await remote({ ...TEMPLATE, model });
    const n0 = requests().length;
    await ask(s, 'file:///w/a.py', DOC, 1, 11);
    const b = JSON.parse(requests()[n0].body);
    assert.equal(b.prompt, prompt, model);
    assert.ok(b.stop.includes(stop), model);
    await done(s);
  }
});

test('openai-chat: a FIM instruction; fences, prose and the echoed line are cleaned off', async () => {
  const s = await remote(CHAT);
  const want = FIX('openai-chat.json').request;
  const n0 = requests().length;
  const r = await ask(s, 'file:///w/a.py', DOC, 1, 11);
  assert.equal(r.items[0].insertText, 'a + b', 'fence and echo removed');
  const g = requests()[n0];
  assert.equal(g.path, '/v1/chat/completions');
  const b = sameRequest(g, want, ['model', 'stream']);
  assert.equal(b.messages.length, 2);
  assert.equal(b.messages[0].role, 'system');
  assert.match(b.messages[0].content, /only the text that replaces <\|HOLE\|>/);
  assert.deepEqual(b.messages[1], want.messages[1]);
  const p = await ask(s, 'file:///w/p.py', `# SCENARIO:chatprose\n${DOC}`, 2, 11);
  assert.equal(p.items[0].insertText, 'a + b', 'prose around the fence removed');
  await done(s);
});

test('streaming: server-sent events feed infilld/partial for every API, the final answer is the whole text', async () => {
  const apis = [[FIM, 'openai-fim.json'], [INFILL, 'llama-infill.json'], [SUFFIX, 'openai-completions-suffix.json'],
    [TEMPLATE, 'openai-completions-template.json'], [CHAT, 'openai-chat.json']];
  for (const [src, fx] of apis) {
    const s = await remote({ ...src, stream: true }, { partial: true });
    const n0 = requests().length;
    const uri = `file:///w/stream-${src.api}.py`;
    const r = await ask(s, uri, DOC, 1, 11);
    assert.equal(r.items[0].insertText, 'a + b', src.api);
    const g = requests()[n0];
    assert.equal(JSON.parse(g.body).stream, true, src.api);
    assert.equal(g.headers.Accept, 'text/event-stream');
    const parts = s.conn.notes.filter((n) => n.method === 'infilld/partial' && n.params.uri === uri).map((n) => n.params.text);
    if (FIX(fx).stream) {
      assert.ok(parts.length >= 2, `${src.api}: ${parts.length} partials`);
      assert.ok(parts[parts.length - 1].startsWith('a + b') || parts[parts.length - 1] === 'a + b', `${src.api}: ${JSON.stringify(parts)}`);
      for (let i = 1; i < parts.length; i++) assert.ok(parts[i].length >= parts[i - 1].length, 'partials grow');
    }
    assert.ok(!sinks(s, s.logFile).includes(KEY));
    await done(s);
  }
});

test('streaming failures: a dropped stream, a malformed event, a stream too slow; the daemon keeps serving', async () => {
  const s = await remote({ ...FIM, stream: true, timeoutMs: 700 }, { partial: true });
  const cases = [
    ['streamdrop', /the stream from .* (broke off|ended) after 2 events/],
    ['streambad', /malformed event \(event 2 is not a JSON object\)/],
    ['streamslow', /the stream from .* did not finish within 700 ms/],
    ['401', /refused the credentials \(HTTP 401\)/],
  ];
  for (const [sc, re] of cases) {
    let err = null;
    try { await ask(s, `file:///w/${sc}.py`, `# SCENARIO:${sc}\n${DOC}`, 2, 11); } catch (e) { err = e; }
    assert.ok(err, `${sc}: an error, not a result`);
    assert.match(err.message, re, sc);
    assert.ok(!err.message.includes(KEY));
    const ok = await ask(s, 'file:///w/ok.py', DOC, 1, 11);
    assert.equal(ok.items[0].insertText, 'a + b', `${sc}: still serving`);
  }
  assert.ok(!sinks(s, s.logFile).includes(KEY));
  await done(s);
});

test('streaming: a cancelled request closes its stream (the server sees it at its next event)', async () => {
  const s = await remote({ ...FIM, stream: true, timeoutMs: 10000 }, { partial: true });
  const src = new rpc.CancellationTokenSource();
  const uri = 'file:///w/stream-cancel.py';
  const before = entries().filter((e) => e.event === 'client_closed').length;
  const p = ask(s, uri, `# SCENARIO:streamslow\n${DOC}`, 2, 11, src.token);
  // Cancel once the first partial arrived: the stream is under way.
  for (let i = 0; i < 500 && !s.conn.notes.some((n) => n.method === 'infilld/partial' && n.params.uri === uri); i++)
    await new Promise((r) => setTimeout(r, 10));
  assert.ok(s.conn.notes.some((n) => n.method === 'infilld/partial' && n.params.uri === uri), 'a partial came first');
  const t0 = Date.now() / 1000;
  src.cancel();
  let res;
  try { res = await p; } catch (e) { res = e; }
  assert.ok(res === null || res.code === -32800, JSON.stringify(res));
  let closed = null;
  for (let i = 0; i < 200 && !closed; i++) {
    closed = entries().filter((e) => e.event === 'client_closed')[before];
    if (!closed) await new Promise((r) => setTimeout(r, 10));
  }
  assert.ok(closed, 'the server saw the stream closed');
  assert.ok(closed.t - t0 < 1.0, `closed ${(closed.t - t0).toFixed(3)} s after the cancel (one event interval is 0.4 s)`);
  await done(s);
});

// llama.cpp server README, POST /infill: "input_extra": [{"filename": ..., "text": ...}],
// chunks of other files. infilld sends the session's other open documents.
test('llama-infill input_extra: other open files, most recently edited first, never excluded ones, bounded', async () => {
  const UTIL = 'def helper(x):\n    return x * 2\n';
  const NOTES = 'def note():\n    pass\n';
  const body = async (extra, edit) => {
    const s = await remote({ ...INFILL, ...extra }, { exclude: ['*.secret.py'] });
    await open(s.conn, 'file:///w/util.py', UTIL);
    await open(s.conn, 'file:///w/.env', 'TOKEN=hunter2\n');
    await open(s.conn, 'file:///w/k.secret.py', 'KEY = "hunter3"\n');
    await open(s.conn, 'file:///w/notes.py', NOTES);
    if (edit) // util.py becomes the most recently edited
      await s.conn.sendNotification('textDocument/didChange',
        { textDocument: { uri: 'file:///w/util.py', version: 2 }, contentChanges: [{ text: edit }] });
    const n0 = requests().length;
    const r = await ask(s, 'file:///w/main.py', DOC, 1, 11);
    assert.equal(r.items[0].insertText, 'a + b');
    const g = requests().slice(n0)[0];
    assert.equal(g.path, '/infill');
    assert.ok(!g.body.includes('hunter2') && !g.body.includes('hunter3'), 'an excluded file was sent');
    await done(s);
    return JSON.parse(g.body);
  };
  const want = FIX('llama-infill.json').request;
  // Default bound: both allowed files whole, the newest first; not the current file.
  let b = await body({});
  assert.deepEqual(Object.keys(want.input_extra[0]).sort(), ['filename', 'text']);
  assert.deepEqual(b.input_extra, [{ filename: '/w/notes.py', text: NOTES }, { filename: '/w/util.py', text: UTIL }]);
  const EDITED = 'def helper(x):\n    return x * 3\n# more\n';
  b = await body({}, EDITED);
  assert.deepEqual(b.input_extra.map((c) => c.filename), ['/w/util.py', '/w/notes.py']);
  assert.equal(b.input_extra[0].text, EDITED);
  // A bound of 50 bytes: whole lines of the newest file first, the total within it.
  b = await body({ extraContextChars: 50 }, EDITED + 'x = 1\n'.repeat(20));
  const total = b.input_extra.reduce((n, c) => n + Buffer.byteLength(c.text), 0);
  assert.ok(total > 0 && total <= 50, `total ${total}`);
  assert.equal(b.input_extra[0].filename, '/w/util.py');
  // 39 + 6 bytes of whole lines fit, the next line would not; notes.py's
  // first line does not fit in the 5 left.
  assert.deepEqual(b.input_extra, [{ filename: '/w/util.py', text: EDITED + 'x = 1\n' }]);
  // 0 switches it off.
  b = await body({ extraContextChars: 0 });
  assert.ok(!('input_extra' in b));
});

// The pipeline's candidate count (invoked: "candidates", default 3): "n" for
// the APIs that take it (OpenAI completions and chat, vLLM), else that many
// requests at once (openai-fim, llama-infill). Every candidate is validated
// like a local one (the syntax check drops "a + ("), equal texts count once,
// and they are ranked by mean token probability where the API reports
// logprobs (else in the server's order).
test('several candidates: n where the API takes it, else parallel requests; validated, deduplicated, ranked', async () => {
  for (const [src, fx] of [[SUFFIX, 'openai-completions-suffix.json'], [TEMPLATE, 'openai-completions-template.json'], [CHAT, 'openai-chat.json']]) {
    const s = await remote(src, { candidates: 3 });
    const n0 = requests().length;
    const r = await ask(s, `file:///w/n-${src.api}.py`, `# SCENARIO:cands\n${DOC}`, 2, 11);
    const got = requests().slice(n0);
    assert.equal(got.length, 1, `${src.api}: one request`);
    const want = FIX(fx).candidates.request;
    const b = sameRequest(got[0], want, ['n', 'logprobs', 'temperature', 'stream']);
    assert.equal(b.n, 3);
    assert.deepEqual(r.items.map((i) => i.insertText), ['a * b', 'a + b'], `${src.api}: ranked by mean probability, the invalid one dropped`);
    await done(s);
  }
  for (const [src, fx] of [[FIM, 'openai-fim.json'], [INFILL, 'llama-infill.json']]) {
    const s = await remote(src, { candidates: 3 });
    const n0 = requests().length;
    const t0 = Date.now();
    const r = await ask(s, `file:///w/p-${src.api}.py`, `# SCENARIO:cands\n${DOC}`, 2, 11);
    const got = requests().slice(n0);
    assert.equal(got.length, 3, `${src.api}: three requests`);
    const want = FIX(fx).candidates.request;
    for (const g of got) {
      const b = sameRequest(g, want, ['temperature']);
      assert.ok(!('n' in b), `${src.api}: no n`);
    }
    // Each answer waits 0.3 s: all three were sent before the first came back.
    const ts = got.map((g) => g.t);
    assert.ok(Math.max(...ts) - Math.min(...ts) < 0.3, `${src.api}: sent at once (${(Math.max(...ts) - Math.min(...ts)).toFixed(3)} s apart)`);
    assert.equal(new Set(got.map((g) => g.port)).size, 3, 'three connections (HTTP/1.1)');
    assert.ok(Date.now() - t0 < 3000);
    assert.deepEqual(r.items.map((i) => i.insertText).sort(), ['a + b', 'b + a'], `${src.api}: the invalid one dropped`);
    const d = await ask(s, `file:///w/d-${src.api}.py`, `# SCENARIO:candsdup\n${DOC}`, 2, 11);
    assert.deepEqual(d.items.map((i) => i.insertText), ['a + b'], `${src.api}: equal answers are one candidate`);
    await done(s);
  }
  // An automatic request wants one candidate: one request, no n.
  const s = await remote(FIM, { candidates: 3 });
  const n0 = requests().length;
  await open(s.conn, 'file:///w/auto.py', DOC);
  const r = await inline(s.conn, 'file:///w/auto.py', 1, 11, { triggerKind: 2 });
  assert.equal(r.items[0].insertText, 'a + b');
  assert.equal(requests().length, n0 + 1);
  await done(s);
});

// Every sink a key could reach, for a session that used it: the log file at
// debug level, stderr, every notification ($/logTrace at "verbose",
// window/logMessage, infilld/status, infilld/partial), every answer and
// error, doctor, and a crash's output (SIGSEGV and SIGABRT mid-request).
test('keys never leak: every log sink, trace, answer, doctor and crash output grepped for the key', async () => {
  const s = await remote({ ...FIM, stream: true }, { partial: true });
  const r = await ask(s, 'file:///w/k.py', DOC, 1, 11);
  assert.equal(r.items[0].insertText, 'a + b');
  let err = null;
  try { await ask(s, 'file:///w/k401.py', `# SCENARIO:401\n${DOC}`, 2, 11); } catch (e) { err = e; }
  assert.ok(err && !err.message.includes(KEY) && /HTTP 401/.test(err.message));
  const answers = JSON.stringify(r) + err.message;
  // The 401's warning reaches the trace (it may come after the answer).
  await s.conn.waitNote('$/logTrace', (p) => /HTTP 401/.test(p.message), 5000);
  assert.ok(requests().some((e) => e.scenario === '401' && e.auth === `Bearer ${KEY}`), 'the key was in use');
  assert.ok(!(sinks(s, s.logFile) + answers).includes(KEY));
  await done(s);
  for (const sig of ['SIGSEGV', 'SIGABRT']) {
    const c = await remote({ ...FIM, timeoutMs: 10000 });
    const n0 = requests().length;
    // Never answered: the daemon dies first.
    ask(c, 'file:///w/crash.py', `# SCENARIO:slow\n${DOC}`, 2, 11).catch(() => null);
    for (let i = 0; i < 300 && requests().length === n0; i++) await new Promise((res) => setTimeout(res, 10));
    assert.equal(requests().length, n0 + 1, 'a request was in flight');
    c.d.proc.kill(sig);
    const ex = await c.d.exited;
    assert.ok(ex.signal === sig || ex.code !== 0, `${sig}: the daemon died (${JSON.stringify(ex)})`);
    assert.ok(!sinks(c, c.logFile).includes(KEY), `${sig}: the crash output does not carry the key`);
    c.conn.dispose();
  }
});

test('settings reach the server: headers, temperature, maxTokens; the latency budget caps timeoutMs', async () => {
  const s = await remote({ ...FIM, headers: { 'X-Team': 'a' }, temperature: 0.2, maxTokens: 7 });
  const n0 = requests().length;
  const r = await ask(s, 'file:///w/set.py', DOC, 1, 11);
  assert.equal(r.items[0].insertText, 'a + b');
  const g = requests()[n0];
  assert.equal(g.headers['X-Team'], 'a');
  const b = JSON.parse(g.body);
  assert.equal(b.temperature, 0.2);
  assert.equal(b.max_tokens, 7);
  await done(s);
  // timeoutMs 10 s, but the request's budget is 400 ms: the slow server is
  // given what is left of the budget, not 10 s.
  const s2 = await remote({ ...FIM, timeoutMs: 10000 }, { timeBudgetMs: 400 });
  const t0 = Date.now();
  let err = null;
  try { await ask(s2, 'file:///w/slowb.py', `# SCENARIO:slow\n${DOC}`, 2, 11); } catch (e) { err = e; }
  const ms = Date.now() - t0;
  assert.ok(err, 'an error, not a result');
  const m = /no answer from .* within (\d+) ms|time budget ran out/.exec(err.message);
  assert.ok(m, err.message);
  if (m[1]) assert.ok(Number(m[1]) <= 400, `timeout ${m[1]} ms`);
  assert.ok(ms < 3000, `answered after ${ms} ms`);
  await done(s2);
});
