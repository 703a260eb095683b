// Daemon behaviour: TCP sessions sharing one provider, exit and dead
// processId ending one session only, loopback/token policy, signals, and
// the stdio watchdog.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  TESTD, REAL, start, connect, initParams, tcpConnect, listeningPort, open, inline, viewText,
  rejectsWith, sleep,
} from './lib.mjs';

const URI = 'file:///d.py';

async function tcpSession(port, opts = {}) {
  const sock = await tcpConnect(port);
  const conn = connect(sock, sock);
  const closed = new Promise((resolve) => sock.on('close', resolve));
  return { sock, conn, closed, init: () => conn.sendRequest('initialize', initParams(opts)) };
}

test('TCP: sessions share the daemon; exit ends one session only; SIGTERM ends all', async () => {
  const d = start(TESTD, ['--listen', '127.0.0.1:0']);
  const port = await listeningPort(d);
  const a = await tcpSession(port, { initOptions: { status: true } });
  const b = await tcpSession(port, { initOptions: { status: true } });
  await a.init();
  await b.init();
  await open(a.conn, URI, 'a = \n');
  await open(b.conn, URI, 'b = \n');
  // Documents are per session.
  assert.equal(await viewText(a.conn, URI), 'a = \n');
  assert.equal(await viewText(b.conn, URI), 'b = \n');
  // A model change from one session is seen by every session (one shared model).
  await a.conn.sendNotification('workspace/didChangeConfiguration', { settings: { model: '/shared/m' } });
  await b.conn.waitNote('infilld/status', (p) => p.model === '/shared/m' && p.state === 'ready');
  await a.conn.sendRequest('shutdown');
  await a.conn.sendNotification('exit');
  await a.closed;
  assert.equal((await inline(b.conn, URI, 0, 4)).items[0].insertText, 'fake()');
  // New connections are still accepted, and learn the current model state.
  const c = await tcpSession(port, { initOptions: { status: true } });
  await c.init();
  await c.conn.sendNotification('initialized', {});
  const st = await c.conn.waitNote('infilld/status');
  assert.equal(st.model, '/shared/m');
  assert.equal(st.state, 'ready');
  c.sock.destroy();
  d.proc.kill('SIGTERM');
  const r = await d.exited;
  assert.equal(r.code, 0);
  await b.closed;
  for (const s of [a, b, c]) s.conn.dispose();
});

test('TCP: a dead processId ends that session only', async () => {
  const d = start(TESTD, ['--listen', '127.0.0.1:0']);
  const port = await listeningPort(d);
  const editor = spawn('sleep', ['30'], { stdio: 'ignore' });
  editor.unref();
  const a = await tcpSession(port, { processId: editor.pid });
  const b = await tcpSession(port, { processId: process.pid });
  await a.init();
  await b.init();
  editor.kill('SIGKILL');
  await a.closed; // the watchdog closes it within about a second
  await open(b.conn, URI, 'ok');
  assert.equal(await viewText(b.conn, URI), 'ok');
  d.proc.kill('SIGINT');
  assert.equal((await d.exited).code, 0);
  a.conn.dispose();
  b.conn.dispose();
});

test('stdio: a dead processId ends the daemon', async () => {
  const editor = spawn('sleep', ['30'], { stdio: 'ignore' });
  editor.unref();
  const d = start(TESTD);
  const conn = connect(d.proc.stdout, d.proc.stdin);
  await conn.sendRequest('initialize', initParams({ processId: editor.pid }));
  editor.kill('SIGKILL');
  const r = await d.exited;
  assert.equal(r.code, 1);
  assert.equal(r.signal, null);
  conn.dispose();
});

test('stdio: SIGTERM shuts down cleanly', async () => {
  const d = start(TESTD);
  const conn = connect(d.proc.stdout, d.proc.stdin);
  await conn.sendRequest('initialize', initParams());
  d.proc.kill('SIGTERM');
  const r = await d.exited;
  assert.equal(r.code, 0);
  assert.equal(r.signal, null);
  conn.dispose();
});

test('non-loopback addresses are refused without --allow-remote; tokens are enforced', async () => {
  let d = start(TESTD, ['--listen', '0.0.0.0:0']);
  let r = await d.exited;
  assert.equal(r.code, 2);
  assert.match(d.stderr, /not a loopback address/);
  d = start(TESTD, ['--listen', '0.0.0.0:0', '--allow-remote']);
  r = await d.exited;
  assert.equal(r.code, 2);
  assert.match(d.stderr, /--token-file/);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'infilld-tok-'));
  const tf = path.join(dir, 'token');
  fs.writeFileSync(tf, 's3cret-token-123\n');
  d = start(TESTD, ['--listen', '0.0.0.0:0', '--allow-remote', '--token-file', tf]);
  const port = await listeningPort(d);
  const bad = await tcpSession(port, { initOptions: { token: 'wrong-token-xyz' } });
  await rejectsWith(bad.init(), -32600);
  await bad.closed;
  const none = await tcpSession(port);
  await rejectsWith(none.init(), -32600);
  await none.closed;
  const good = await tcpSession(port, { initOptions: { token: 's3cret-token-123' } });
  const init = await good.init();
  assert.equal(init.serverInfo.name, 'infilld');
  good.sock.destroy();
  d.proc.kill('SIGTERM');
  assert.equal((await d.exited).code, 0);
  for (const s of [bad, none, good]) s.conn.dispose();
  fs.rmSync(dir, { recursive: true });
});

test('command line: --version, --help, bad options, logs never on stdout', () => {
  for (const bin of [TESTD, REAL].filter(Boolean)) {
    let r = spawnSync(bin, ['--version']);
    assert.equal(r.status, 0);
    assert.match(r.stdout.toString(), /^infilld \d+\.\d+\.\d+/);
    r = spawnSync(bin, ['--help']);
    assert.equal(r.status, 0);
    assert.match(r.stdout.toString(), /--listen/);
    r = spawnSync(bin, ['--device', 'tpu']);
    assert.equal(r.status, 2);
    assert.match(r.stderr.toString(), /--device/);
    r = spawnSync(bin, ['--log-level', 'debug'], { input: '' });
    assert.equal(r.status, 1); // input ended without shutdown
    assert.equal(r.stdout.length, 0);
    assert.match(r.stderr.toString(), /serving LSP on stdio/);
  }
});

test('--log-file takes the logs', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'infilld-log-'));
  const lf = path.join(dir, 'd.log');
  const r = spawnSync(TESTD, ['--log-file', lf], { input: '' });
  assert.equal(r.status, 1);
  assert.equal(r.stderr.length, 0);
  assert.match(fs.readFileSync(lf, 'utf8'), /serving LSP on stdio/);
  fs.rmSync(dir, { recursive: true });
});
