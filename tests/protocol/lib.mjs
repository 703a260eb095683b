// Helpers for the protocol tests: start a daemon, talk to it through
// vscode-jsonrpc (a real LSP client library), or through raw frames for the
// malformed-input tests.
import { spawn } from 'node:child_process';
import { after } from 'node:test';
import { createRequire } from 'node:module';
import net from 'node:net';

const require = createRequire(import.meta.url);
let rpc;
try {
  rpc = require('vscode-jsonrpc/node');
} catch {
  console.error('vscode-jsonrpc is not installed (run ./bootstrap.sh): skipped');
  process.exit(77);
}
export { rpc };

export const TESTD = process.env.INFILLD_TESTD;
export const REAL = process.env.INFILLD_BIN;
if (!TESTD) {
  console.error('INFILLD_TESTD is not set: skipped');
  process.exit(77);
}

// Daemons still running when the tests end (a failed test) are killed, so
// that a failure never turns into a hang.
const children = new Set();
after(() => {
  for (const p of children) p.kill('SIGKILL');
});

// Starts bin with args; resolves when spawned. stderr is collected.
export function start(bin, args = [], env = {}) {
  const proc = spawn(bin, args, {
    env: { ...process.env, XDG_CONFIG_HOME: '/nonexistent-infilld-test', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const d = { proc, stderr: '' };
  proc.stderr.on('data', (b) => { d.stderr += b.toString(); });
  children.add(proc);
  d.exited = new Promise((resolve) => proc.on('exit', (code, signal) => {
    children.delete(proc);
    resolve({ code, signal });
  }));
  return d;
}

// An LSP connection over the daemon's stdio (or over any pair of streams).
export function connect(readable, writable) {
  const conn = rpc.createMessageConnection(
    new rpc.StreamMessageReader(readable), new rpc.StreamMessageWriter(writable));
  const notes = [];
  const waiters = [];
  const record = (method, params) => {
    notes.push({ method, params });
    for (const w of [...waiters]) {
      if (w.method === method && w.pred(params)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(params);
      }
    }
  };
  conn.onNotification(record);
  // The library consumes these two itself unless we register for them.
  conn.onNotification('$/logTrace', (params) => record('$/logTrace', params));
  conn.onNotification('$/progress', (params) => record('$/progress', params));
  conn.onError(() => {});
  conn.edits = [];
  conn.onRequest('workspace/applyEdit', (params) => { conn.edits.push(params); return { applied: true }; });
  conn.onRequest('window/workDoneProgress/create', (params) => {
    notes.push({ method: 'window/workDoneProgress/create', params });
    return null;
  });
  conn.listen();
  // Resolves with the params of the first (past or future) notification that matches.
  conn.waitNote = (method, pred = () => true, ms = 5000) => {
    const seen = notes.find((n) => n.method === method && pred(n.params));
    if (seen) return Promise.resolve(seen.params);
    return new Promise((resolve, reject) => {
      const w = { method, pred, resolve };
      waiters.push(w);
      // unref: a pending timeout must not keep the test process alive.
      setTimeout(() => {
        if (waiters.includes(w)) reject(new Error(`no ${method} notification within ${ms} ms`));
      }, ms).unref();
    });
  };
  conn.notes = notes;
  return conn;
}

export function initParams(opts = {}) {
  return {
    processId: opts.processId ?? null,
    clientInfo: { name: 'infilld-protocol-test' },
    rootUri: null,
    capabilities: {
      general: { positionEncodings: opts.encodings ?? ['utf-16'] },
      workspace: { applyEdit: true, configuration: false },
      window: { workDoneProgress: true },
      textDocument: {
        inlineCompletion: { dynamicRegistration: false },
        codeAction: { resolveSupport: { properties: ['edit'] } },
        synchronization: { didSave: true },
      },
    },
    initializationOptions: opts.initOptions ?? {},
    trace: 'off',
  };
}

// Spawns bin, connects, initializes. Returns {d, conn, init}.
export async function session(bin, opts = {}) {
  const d = start(bin, opts.args ?? [], opts.env ?? {});
  const conn = connect(d.proc.stdout, d.proc.stdin);
  const init = await conn.sendRequest('initialize', initParams(opts));
  await conn.sendNotification('initialized', {});
  return { d, conn, init };
}

export async function close({ d, conn }) {
  try {
    await conn.sendRequest('shutdown');
    await conn.sendNotification('exit');
  } catch { /* already gone */ }
  const r = await d.exited;
  conn.dispose();
  return r;
}

export function open(conn, uri, text, languageId = 'python', version = 1) {
  return conn.sendNotification('textDocument/didOpen', {
    textDocument: { uri, languageId, version, text },
  });
}

export function inline(conn, uri, line, character, context = { triggerKind: 1 }, token) {
  const params = { textDocument: { uri }, position: { line, character }, context };
  return token ? conn.sendRequest('textDocument/inlineCompletion', params, token)
    : conn.sendRequest('textDocument/inlineCompletion', params);
}

export async function viewText(conn, uri) {
  return conn.sendRequest('infilld/viewFileText', { textDocument: { uri } });
}

// Expects promise to reject with a ResponseError of this code; returns it.
export async function rejectsWith(promise, code) {
  try {
    await promise;
  } catch (e) {
    if (e.code !== code) throw new Error(`expected error ${code}, got ${e.code}: ${e.message}`);
    return e;
  }
  throw new Error(`expected error ${code}, got a result`);
}

// ---- raw frames ----

export function frame(body) {
  const b = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  return Buffer.concat([Buffer.from(`Content-Length: ${b.length}\r\n\r\n`), b]);
}

// Parses frames from a stream; every byte on it must belong to a frame.
export function rawReader(stream) {
  let buf = Buffer.alloc(0);
  const msgs = [];
  const waiters = [];
  const r = { msgs, junk: false };
  stream.on('data', (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    for (;;) {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) break;
      const header = buf.subarray(0, end).toString();
      const m = /^Content-Length: (\d+)$/.exec(header);
      if (!m) { r.junk = true; buf = Buffer.alloc(0); break; }
      const len = Number(m[1]);
      if (buf.length < end + 4 + len) break;
      const msg = JSON.parse(buf.subarray(end + 4, end + 4 + len).toString());
      buf = buf.subarray(end + 4 + len);
      msgs.push(msg);
      for (const w of [...waiters]) {
        if (w.pred(msg)) { waiters.splice(waiters.indexOf(w), 1); w.resolve(msg); }
      }
    }
  });
  r.wait = (pred, ms = 5000) => {
    const seen = msgs.find(pred);
    if (seen) { msgs.splice(msgs.indexOf(seen), 1); return Promise.resolve(seen); }
    return new Promise((resolve, reject) => {
      const w = { pred, resolve: (m) => { msgs.splice(msgs.indexOf(m), 1); resolve(m); } };
      waiters.push(w);
      setTimeout(() => {
        if (waiters.includes(w)) {
          waiters.splice(waiters.indexOf(w), 1);
          reject(new Error(`no matching message within ${ms} ms; have ${JSON.stringify(msgs).slice(0, 400)}`));
        }
      }, ms);
    });
  };
  r.id = (id, ms) => r.wait((m) => m.id === id && !m.method, ms);
  return r;
}

export function tcpConnect(port) {
  return new Promise((resolve, reject) => {
    const s = net.createConnection({ host: '127.0.0.1', port }, () => resolve(s));
    s.on('error', reject);
  });
}

// Waits for "listening on HOST:PORT" on the daemon's stderr.
export async function listeningPort(d, ms = 5000) {
  const t0 = Date.now();
  while (Date.now() - t0 < ms) {
    const m = /listening on [^\s]*:(\d+)/.exec(d.stderr);
    if (m) return Number(m[1]);
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`daemon did not listen: ${d.stderr}`);
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// p's value, or 'HANG' after ms. The timer is cleared when p settles: a bare
// sleep() in a Promise.race keeps the process alive until it fires, long
// after the test has passed.
export function orHang(p, ms) {
  let t;
  const hang = new Promise((r) => { t = setTimeout(() => r('HANG'), ms); });
  return Promise.race([p, hang]).finally(() => clearTimeout(t));
}
