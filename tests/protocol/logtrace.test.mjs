// Daemon log lines reach the client ($/logTrace with a trace, window/logMessage
// from "clientLogLevel"), and inline completion is registered dynamically for
// clients that ask for it (client/registerCapability, unregisterCapability).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  rpc, TESTD, REAL, session, close, open, inline, start, connect, initParams, sleep,
} from './lib.mjs';

const BAD = '/nonexistent-infilld-model';

test('real binary: a failed model load reaches the client as $/logTrace only with a trace',
  { skip: !REAL }, async () => {
    // Without a trace: the error arrives as window/logMessage, no $/logTrace.
    const a = await session(REAL, { args: ['--device', 'cpu'] });
    await a.conn.sendNotification('workspace/didChangeConfiguration', { settings: { model: BAD } });
    const lm = await a.conn.waitNote('window/logMessage', (p) => p.type === 1 && p.message.includes(BAD));
    assert.match(lm.message, /^\w+: /); // "module: message"
    assert.equal(a.conn.notes.filter((n) => n.method === '$/logTrace').length, 0);
    assert.equal((await close(a)).code, 0);

    // With $/setTrace verbose: the same lines, and the debug ones, as $/logTrace.
    const b = await session(REAL, { args: ['--device', 'cpu'] });
    await b.conn.sendNotification('$/setTrace', { value: 'verbose' });
    await b.conn.sendNotification('workspace/didChangeConfiguration', { settings: { model: BAD } });
    const tr = await b.conn.waitNote('$/logTrace', (p) => p.message.startsWith('[error] ') && p.message.includes(BAD));
    assert.match(tr.message, /^\[error\] \w+: /);
    await b.conn.waitNote('window/logMessage', (p) => p.type === 1 && p.message.includes(BAD));
    // The warning that accompanies the shown message is traced too.
    await b.conn.waitNote('$/logTrace', (p) => p.message.startsWith('[warn] ') && p.message.includes(BAD));
    // Back to off: a later failure is logged but not traced.
    await b.conn.sendNotification('$/setTrace', { value: 'off' });
    // (Received messages are traced too; log lines start with "[level]".)
    const lines = () => b.conn.notes.filter((n) => n.method === '$/logTrace' && n.params.message.startsWith('[')).length;
    const before = lines();
    await b.conn.sendNotification('workspace/didChangeConfiguration', { settings: { model: `${BAD}-2` } });
    await b.conn.waitNote('window/logMessage', (p) => p.type === 1 && p.message.includes(`${BAD}-2`));
    await sleep(100);
    assert.equal(lines(), before);
    assert.equal((await close(b)).code, 0);
  });

test('clientLogLevel: info lines as window/logMessage type 3; error keeps warnings out', async () => {
  // The test daemon logs "model set to …" at info, then shows (and logs as a
  // warning) "fake: loaded model …".
  const s = await session(TESTD, { initOptions: { clientLogLevel: 'info' } });
  await s.conn.sendNotification('workspace/didChangeConfiguration', { settings: { model: '/m/info' } });
  const info = await s.conn.waitNote('window/logMessage', (p) => p.type === 3 && p.message.includes('/m/info'));
  assert.equal(info.message, 'fake: model set to /m/info');
  await s.conn.sendNotification('workspace/didChangeConfiguration', { settings: { clientLogLevel: 'error' } });
  await s.conn.sendNotification('workspace/didChangeConfiguration', { settings: { model: '/m/quiet' } });
  await s.conn.waitNote('window/showMessage', (p) => p.message.includes('/m/quiet'));
  await sleep(100);
  assert.ok(!s.conn.notes.some((n) => n.method === 'window/logMessage' && n.params.message.includes('/m/quiet')));
  assert.equal((await close(s)).code, 0);
});

// Spawns bin and initializes a client that registers inline completion
// dynamically; requests from the server are recorded in conn.requests.
async function dynamicSession(bin, refuse = false) {
  const d = start(bin);
  const conn = connect(d.proc.stdout, d.proc.stdin);
  conn.requests = [];
  const waiters = [];
  const record = (method) => (params) => {
    conn.requests.push({ method, params });
    for (const w of [...waiters]) if (w.method === method) { waiters.splice(waiters.indexOf(w), 1); w.resolve(params); }
    if (refuse && method === 'client/registerCapability') {
      throw new rpc.ResponseError(-32601, 'not today');
    }
    return null;
  };
  conn.onRequest('client/registerCapability', record('client/registerCapability'));
  conn.onRequest('client/unregisterCapability', record('client/unregisterCapability'));
  conn.nextRequest = (method, ms = 5000) => new Promise((resolve, reject) => {
    const w = { method, resolve };
    waiters.push(w);
    setTimeout(() => { if (waiters.includes(w)) reject(new Error(`no ${method} within ${ms} ms`)); }, ms).unref();
  });
  const params = initParams();
  params.capabilities.textDocument.inlineCompletion = { dynamicRegistration: true };
  const init = await conn.sendRequest('initialize', params);
  const registered = conn.nextRequest('client/registerCapability');
  await conn.sendNotification('initialized', {});
  return { d, conn, init, registered };
}

test('dynamic registration: register after initialized, unregister/re-register on settings', async () => {
  const s = await dynamicSession(TESTD);
  assert.equal(s.init.capabilities.inlineCompletionProvider, undefined);
  const reg = await s.registered;
  assert.equal(reg.registrations.length, 1);
  const r = reg.registrations[0];
  assert.equal(r.method, 'textDocument/inlineCompletion');
  assert.ok(typeof r.id === 'string' && r.id.length > 0);
  assert.equal(r.registerOptions.documentSelector, null);
  // Inline completion is served as usual.
  await open(s.conn, 'file:///r.py', 'x = \n');
  assert.equal((await inline(s.conn, 'file:///r.py', 0, 4)).items[0].insertText, 'fake()');
  // Switched off: unregistered with the same id.
  const unreg = s.conn.nextRequest('client/unregisterCapability');
  await s.conn.sendNotification('workspace/didChangeConfiguration', { settings: { enabled: false } });
  const u = await unreg;
  assert.deepEqual(u.unregisterations, [{ id: r.id, method: 'textDocument/inlineCompletion' }]);
  // Switched on again: a new registration.
  const again = s.conn.nextRequest('client/registerCapability');
  await s.conn.sendNotification('workspace/didChangeConfiguration', { settings: { enabled: true } });
  const r2 = (await again).registrations[0];
  assert.equal(r2.method, 'textDocument/inlineCompletion');
  assert.notEqual(r2.id, r.id);
  assert.equal(s.conn.requests.length, 3);
  // No warning was shown: the client accepted every registration.
  await sleep(50);
  assert.ok(!s.conn.notes.some((n) => n.method === 'window/showMessage'));
  assert.equal((await close(s)).code, 0);
});

test('dynamic registration refused: one warning shown; a static client gets the provider', async () => {
  const s = await dynamicSession(TESTD, true);
  await s.registered;
  const w = await s.conn.waitNote('window/showMessage', (p) => p.type === 2 && p.message.includes('not today'));
  assert.match(w.message, /inline completion/);
  assert.equal((await close(s)).code, 0);

  const st = await session(TESTD);
  assert.equal(st.init.capabilities.inlineCompletionProvider, true);
  await sleep(100);
  assert.ok(!st.conn.notes.some((n) => n.method === 'window/showMessage'));
  assert.equal((await close(st)).code, 0);
});
