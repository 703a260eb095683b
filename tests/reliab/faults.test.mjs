// Faults injected into a running daemon (real binary, tiny model): the log
// file on a full disk or deleted, stdout closed by the editor (SIGPIPE), the
// model directory deleted or its safetensors truncated while mapped, and
// `ulimit -n 64` with more connections than descriptors. Each time the
// daemon must not die of a signal, must say what happened, and must keep
// serving. (A monotonic-clock jump during a request, as on system suspend,
// cannot be produced without privileges this test does not have.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  REAL, start, connect, initParams, open, viewText, sleep, orHang, tcpConnect, listeningPort, frame,
} from '../protocol/lib.mjs';

const TINY = path.join(path.dirname(REAL), 'models', 'tiny-dream');
if (!fs.existsSync(path.join(TINY, 'config.json'))) {
  console.error(`no tiny model at ${TINY}: skipped`);
  process.exit(77);
}
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'infilld-faults-'));
process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

const URI = 'file:///f.py';
const TEXT = 'def area(w, h):\n    return \n';
// Invoked (triggerKind 1): never answered from the typing cache.
// Small, quick requests: this machine is shared. The random tiny model's text
// rarely parses and a budget planned from a loaded machine may answer null,
// so validation and the budget are off: every request on a sound model is
// served.
const FAST = { candidates: 1, maxSteps: 8, validate: false, latencyBudgetMs: 0 };
const ask = (conn, uri = URI) => conn.sendRequest('textDocument/inlineCompletion', {
  textDocument: { uri }, position: { line: 1, character: 11 }, context: { triggerKind: 1 } });
// Writes to sockets the daemon refused fail with EPIPE inside the client
// library, after the test has moved on.
process.on('unhandledRejection', (e) => {
  if (e?.code !== 'EPIPE' && e?.code !== 'ECONNRESET') throw e;
});

// A copy of the tiny model that the test may damage.
function modelCopy(name) {
  const d = path.join(tmp, name);
  fs.cpSync(fs.realpathSync(TINY), d, { recursive: true, dereference: true });
  return d;
}

async function stdioDaemon(args, opts = {}) {
  const initOptions = { ...FAST, ...opts };
  const d = start(REAL, ['--device', 'cpu', ...args]);
  const conn = connect(d.proc.stdout, d.proc.stdin);
  await conn.sendRequest('initialize', initParams({ initOptions }));
  await conn.sendNotification('initialized', {});
  await open(conn, URI, TEXT);
  return { d, conn };
}

async function finish({ d, conn }) {
  await conn.sendRequest('shutdown');
  await conn.sendNotification('exit');
  const ex = await d.exited;
  assert.equal(ex.signal, null, d.stderr.slice(-2000));
  assert.equal(ex.code, 0, d.stderr.slice(-2000));
}

test('log file on a full disk: the daemon serves on', async () => {
  const s = await stdioDaemon(['--model', TINY, '--log-file', '/dev/full', '--log-level', 'debug']);
  const r = await ask(s.conn);
  assert.ok(Array.isArray(r.items));
  await finish(s);
});

test('log file deleted: it is created again (mode 0600) and takes the next lines', async () => {
  const log = path.join(tmp, 'd.log');
  const s = await stdioDaemon(['--model', TINY, '--log-file', log, '--log-level', 'debug']);
  await ask(s.conn);
  assert.equal(fs.statSync(log).mode & 0o777, 0o600);
  fs.unlinkSync(log);
  await sleep(1200); // the file is looked at once a second
  await ask(s.conn);
  await open(s.conn, 'file:///g.py', TEXT);
  await ask(s.conn, 'file:///g.py');
  await finish(s);
  assert.ok(fs.existsSync(log), 'the log file was not created again');
  assert.ok(fs.readFileSync(log, 'utf8').length > 0);
  assert.equal(fs.statSync(log).mode & 0o777, 0o600);
});

test('stdout closed by the editor: the daemon ends (code 1), not by SIGPIPE', async () => {
  const s = await stdioDaemon(['--model', TINY]);
  await ask(s.conn);
  s.d.proc.stdout.destroy();
  s.conn.dispose();
  // Requests keep coming on stdin; their answers cannot be written.
  s.d.proc.stdin.on('error', () => {});
  for (let i = 0; i < 20; i++) {
    s.d.proc.stdin.write(frame({ jsonrpc: '2.0', id: 100 + i, method: 'textDocument/inlineCompletion',
      params: { textDocument: { uri: URI }, position: { line: 1, character: 11 },
        context: { triggerKind: 1 } } }));
    await sleep(50);
  }
  const ex = await orHang(s.d.exited, 20000);
  assert.notEqual(ex, 'HANG', 'the daemon did not notice its stdout was closed');
  assert.equal(ex.signal, null);
  assert.equal(ex.code, 1);
  assert.match(s.d.stderr, /cannot write to the client/);
});

test('safetensors truncated while mapped: request fails, showMessage, serving goes on without the model', async () => {
  const dir = modelCopy('trunc');
  const s = await stdioDaemon(['--model', dir]);
  const r1 = await ask(s.conn);
  assert.ok(Array.isArray(r1.items) && r1.items.length > 0, 'served before the damage');
  fs.truncateSync(path.join(dir, 'model.safetensors'), 4096);
  let failed = false;
  try {
    await ask(s.conn);
  } catch (e) {
    failed = true;
  }
  assert.ok(failed, 'the request on the damaged model did not fail');
  const msg = await s.conn.waitNote('window/showMessage', (p) => /model lost/.test(p.message), 10000);
  assert.match(msg.message, /truncated/);
  // Without a model: empty answers, documents still edited exactly.
  const r3 = await ask(s.conn);
  assert.ok(r3 === null || r3.items.length === 0);
  await s.conn.sendNotification('textDocument/didChange', {
    textDocument: { uri: URI, version: 2 },
    contentChanges: [{ range: { start: { line: 1, character: 11 }, end: { line: 1, character: 11 } }, text: 'w * h' }],
  });
  assert.equal(await viewText(s.conn, URI), 'def area(w, h):\n    return w * h\n');
  await finish(s);
});

test('model directory deleted: the mapped model serves on; a reload fails with a message', async () => {
  const dir = modelCopy('gone');
  const s = await stdioDaemon(['--device', 'cpu'], { model: dir });
  const r1 = await ask(s.conn);
  assert.ok(r1.items.length > 0);
  fs.rmSync(dir, { recursive: true });
  const r2 = await ask(s.conn);
  assert.ok(r2.items.length > 0, 'the mapped weights stay readable');
  await s.conn.sendNotification('workspace/didChangeConfiguration', {
    settings: { infilld: { model: dir + '/' } } });
  const msg = await s.conn.waitNote('window/showMessage', (p) => /cannot load model/.test(p.message), 10000);
  assert.ok(msg);
  const r3 = await ask(s.conn);
  assert.ok(r3 === null || r3.items.length === 0);
  await finish(s);
});

test('ulimit -n 64: connections past the limit are refused, the others are served', async () => {
  const d = start('/bin/sh', ['-c', `ulimit -n 64 && exec "$0" --listen 127.0.0.1:0 --model "$1" --device cpu`, REAL, TINY]);
  const port = await listeningPort(d, 20000);
  const sessions = [];
  // Raw frames: an initialize, answered or not within 3 s.
  const mk = async () => {
    const sock = await tcpConnect(port);
    sock.on('error', () => {});
    const init = new Promise((resolve) => {
      let got = '';
      sock.on('data', (b) => { got += b; if (/"capabilities"/.test(got)) resolve(true); });
      sock.on('close', () => resolve(false));
      setTimeout(() => resolve(false), 3000).unref();
    });
    sock.write(frame({ jsonrpc: '2.0', id: 1, method: 'initialize', params: initParams() }));
    return { sock, init };
  };
  const firstSock = await tcpConnect(port);
  const first = { sock: firstSock, conn: connect(firstSock, firstSock) };
  first.init = first.conn.sendRequest('initialize', initParams({ initOptions: FAST }));
  assert.ok(await first.init, 'the first session');
  await first.conn.sendNotification('initialized', {});
  await open(first.conn, URI, TEXT);
  for (let i = 0; i < 80; i++) sessions.push(await mk().catch(() => null));
  const inits = await Promise.all(sessions.map((x) => (x ? x.init : null)));
  const ok = inits.filter(Boolean).length;
  console.log(`${ok} of 80 extra sessions initialized under ulimit -n 64`);
  assert.ok(ok < 80, 'the descriptor limit was not reached');
  const r = await orHang(ask(first.conn), 20000);
  assert.notEqual(r, 'HANG', 'the first session stalled');
  for (const x of sessions) if (x) x.sock.destroy();
  await sleep(500);
  const again = await mk();
  assert.ok(await again.init, 'a new session after the others closed');
  again.sock.destroy();
  first.sock.destroy();
  d.proc.kill('SIGTERM');
  const ex = await d.exited;
  assert.equal(ex.signal, null, d.stderr.slice(-2000));
  assert.equal(ex.code, 0);
});
