// Malformed input over raw frames: every case gets the right error (or is
// ignored per spec), and the daemon keeps serving. stdout must carry only
// frames throughout.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TESTD, start, frame, rawReader, tcpConnect, listeningPort, sleep } from './lib.mjs';

const URI = 'file:///m.py';
let nextId = 1000;

// Starts the test daemon with a small message limit and initializes it.
async function raw(args = []) {
  const d = start(TESTD, ['--max-message', '4096', ...args]);
  const r = rawReader(d.proc.stdout);
  const w = (b) => d.proc.stdin.write(b);
  w(frame({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { processId: null, capabilities: {}, initializationOptions: { fake: { delayMs: 300 } } } }));
  await r.id(1);
  w(frame({ jsonrpc: '2.0', method: 'initialized', params: {} }));
  w(frame({ jsonrpc: '2.0', method: 'textDocument/didOpen', params: { textDocument: { uri: URI, languageId: 'python', version: 1, text: 'x = 1\n' } } }));
  return { d, r, w };
}

// The daemon still answers a normal request.
async function alive({ r, w }) {
  const id = nextId++;
  w(frame({ jsonrpc: '2.0', id, method: 'infilld/viewFileText', params: { textDocument: { uri: URI } } }));
  const m = await r.id(id);
  assert.equal(m.result, 'x = 1\n');
}

const nullError = (code) => (m) => m.id === null && m.error && m.error.code === code;

async function finish(c) {
  c.w(frame({ jsonrpc: '2.0', id: 2, method: 'shutdown' }));
  await c.r.id(2);
  c.w(frame({ jsonrpc: '2.0', method: 'exit' }));
  const res = await c.d.exited;
  assert.equal(res.code, 0);
  assert.equal(c.r.junk, false, 'stdout carried something that is not a frame');
}

test('bad Content-Length headers: missing, non-numeric, negative, huge, over the limit', async () => {
  const c = await raw();
  c.w('Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}');
  let m = await c.r.wait(nullError(-32700));
  assert.match(m.error.message, /missing Content-Length/);
  await alive(c);
  c.w('Content-Length: abc\r\n\r\n{}');
  m = await c.r.wait(nullError(-32700));
  assert.match(m.error.message, /abc/);
  await alive(c);
  c.w('Content-Length: -12\r\n\r\n{"jsonrpc":"2.0"}');
  m = await c.r.wait(nullError(-32700));
  assert.match(m.error.message, /-12/);
  await alive(c);
  c.w('Content-Length: 999999999999999999999999999\r\n\r\n');
  m = await c.r.wait(nullError(-32700));
  assert.match(m.error.message, /too big/);
  await alive(c);
  const big = JSON.stringify({ jsonrpc: '2.0', id: 77, method: 'infilld/viewFileText', params: { pad: 'x'.repeat(5000) } });
  c.w(frame(big));
  m = await c.r.wait(nullError(-32600));
  assert.match(m.error.message, /too large.*4096/);
  await alive(c);
  // A truncated header completed by later bytes still parses.
  c.w('Content-Len');
  await sleep(20);
  c.w('gth: 2\r\n\r\n{}');
  m = await c.r.wait(nullError(-32600));
  await alive(c);
  await finish(c);
});

test('invalid JSON, invalid UTF-8, wrong shapes and types', async () => {
  const c = await raw();
  c.w(frame('{"jsonrpc":"2.0","id":5,'));
  await c.r.wait(nullError(-32700));
  c.w(frame(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]))); // {"a":"\xff\xfe"}
  await c.r.wait(nullError(-32700));
  c.w(frame('[1,2]'));
  await c.r.wait(nullError(-32600));
  c.w(frame('"hello"'));
  await c.r.wait(nullError(-32600));
  c.w(frame({ id: 6, method: 'infilld/viewFileText' }));
  assert.equal((await c.r.id(6)).error.code, -32600); // no "jsonrpc"
  c.w(frame({ jsonrpc: '2.0', id: 7, method: 42 }));
  assert.equal((await c.r.id(7)).error.code, -32600);
  c.w(frame({ jsonrpc: '2.0', id: 8, method: 'textDocument/inlineCompletion', params: { textDocument: { uri: URI }, position: { line: -1, character: 0 }, context: { triggerKind: 1 } } }));
  let m = await c.r.id(8);
  assert.equal(m.error.code, -32602);
  assert.match(m.error.message, /position\.line/);
  c.w(frame({ jsonrpc: '2.0', id: 9, method: 'textDocument/inlineCompletion', params: [1, 2] }));
  m = await c.r.id(9);
  assert.equal(m.error.code, -32602);
  c.w(frame({ jsonrpc: '2.0', id: 10, method: 'workspace/executeCommand', params: { command: 'infilld.accepted', arguments: [{ requestId: 'x', acceptedLength: 3 }] } }));
  m = await c.r.id(10);
  assert.equal(m.error.code, -32602);
  assert.match(m.error.message, /arguments\[0\]\.requestId/);
  c.w(frame({ jsonrpc: '2.0', method: 'textDocument/didChange', params: { textDocument: { uri: URI, version: 'two' }, contentChanges: [] } }));
  m = await c.r.wait((x) => x.method === 'window/logMessage');
  assert.match(m.params.message, /textDocument\.version/);
  await alive(c);
  await finish(c);
});

test('duplicate ids, notification with an id, response with an unknown id', async () => {
  const c = await raw();
  const req = { jsonrpc: '2.0', id: 20, method: 'textDocument/inlineCompletion', params: { textDocument: { uri: URI }, position: { line: 0, character: 5 }, context: { triggerKind: 1 } } };
  c.w(frame(req));
  c.w(frame(req));
  let m = await c.r.id(20);
  assert.equal(m.error.code, -32600);
  assert.match(m.error.message, /duplicate/);
  m = await c.r.id(20); // the original still completes
  assert.equal(m.result.items[0].insertText, 'fake()');
  c.w(frame({ jsonrpc: '2.0', id: 21, method: 'textDocument/didSave', params: { textDocument: { uri: URI } } }));
  m = await c.r.id(21);
  assert.equal(m.error.code, -32600);
  c.w(frame({ jsonrpc: '2.0', id: 424242, result: { ok: true } }));
  m = await c.r.wait((x) => x.method === 'window/logMessage' && /unknown id/.test(x.params.message));
  c.w(frame({ jsonrpc: '2.0', method: 'some/unknownNotification', params: {} })); // ignored
  await alive(c);
  await finish(c);
});

test('stdio client disconnecting mid-request: daemon exits 1 cleanly', async () => {
  const c = await raw();
  c.w(frame({ jsonrpc: '2.0', id: 30, method: 'textDocument/inlineCompletion', params: { textDocument: { uri: URI }, position: { line: 0, character: 5 }, context: { triggerKind: 1 } } }));
  c.w('Content-Length: 100\r\n\r\n{"jsonrpc"');
  await sleep(20);
  c.d.proc.stdin.end();
  const res = await c.d.exited;
  assert.equal(res.code, 1);
  assert.equal(res.signal, null);
  assert.equal(c.r.junk, false);
});

test('TCP client disconnecting mid-request; other sessions keep working', async () => {
  const d = start(TESTD, ['--listen', '127.0.0.1:0']);
  const port = await listeningPort(d);
  const a = await tcpConnect(port);
  const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { processId: null, capabilities: {}, initializationOptions: { fake: { delayMs: 300 } } } };
  a.write(frame(init));
  a.write(frame({ jsonrpc: '2.0', method: 'textDocument/didOpen', params: { textDocument: { uri: URI, languageId: 'python', version: 1, text: 'x = 1\n' } } }));
  a.write(frame({ jsonrpc: '2.0', id: 2, method: 'textDocument/inlineCompletion', params: { textDocument: { uri: URI }, position: { line: 0, character: 5 }, context: { triggerKind: 1 } } }));
  await sleep(50);
  a.destroy();
  const b = await tcpConnect(port);
  const rb = rawReader(b);
  b.write(frame(init));
  await rb.id(1);
  b.write(frame({ jsonrpc: '2.0', method: 'textDocument/didOpen', params: { textDocument: { uri: URI, languageId: 'python', version: 1, text: 'y\n' } } }));
  b.write(frame({ jsonrpc: '2.0', id: 3, method: 'infilld/viewFileText', params: { textDocument: { uri: URI } } }));
  assert.equal((await rb.id(3)).result, 'y\n');
  b.destroy();
  d.proc.kill('SIGTERM');
  assert.equal((await d.exited).code, 0);
});

// JSON-RPC clients send "params": null, or omit params, for parameterless
// methods; both are accepted, and exit after that shutdown ends with 0.
for (const [what, extra] of [['null', { params: null }], ['omitted', {}], ['empty object', { params: {} }]]) {
  test(`params ${what} on shutdown and exit: accepted, exit code 0`, async () => {
    const c = await raw();
    await alive(c);
    c.w(frame({ jsonrpc: '2.0', id: 9, method: 'shutdown', ...extra }));
    const m = await c.r.id(9);
    assert.equal(m.error, undefined, `shutdown refused: ${JSON.stringify(m.error)}`);
    assert.equal(m.result, null);
    c.w(frame({ jsonrpc: '2.0', method: 'exit', ...extra }));
    assert.equal((await c.d.exited).code, 0);
    assert.equal(c.r.junk, false, 'stdout carried something that is not a frame');
  });
}

test('params null where params are required: invalid params, still serving', async () => {
  const c = await raw();
  c.w(frame({ jsonrpc: '2.0', id: 11, method: 'textDocument/inlineCompletion', params: null }));
  const m = await c.r.id(11);
  assert.equal(m.error?.code, -32602);
  c.w(frame({ jsonrpc: '2.0', method: 'initialized', params: null }));
  c.w(frame({ jsonrpc: '2.0', method: 'textDocument/didChange', params: null }));
  await alive(c);
  await finish(c);
});
