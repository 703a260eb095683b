// Protocol tests through vscode-jsonrpc: every LSP method the daemon serves,
// all three position encodings, and the error paths, against the test daemon
// (fake provider) and, for what needs no model, the real binary.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import {
  rpc, TESTD, REAL, session, close, open, inline, viewText, rejectsWith, start, connect, initParams,
  sleep,
} from './lib.mjs';

const URI = 'file:///work/t.py';
// Line 1: "h é l l o ␣ 😀 ␣ w" — the emoji is 4 UTF-8 bytes, 2 UTF-16 units, 1 code point.
const TEXT = 'x = 1\nhéllo 😀 w\n';
// The position just after the emoji + space, per encoding.
const AFTER = { 'utf-8': 12, 'utf-16': 9, 'utf-32': 8 };

test('lifecycle: -32002 before initialize, -32600 after shutdown, exit code 0', async () => {
  const d = start(TESTD);
  const conn = connect(d.proc.stdout, d.proc.stdin);
  await rejectsWith(conn.sendRequest('infilld/viewFileText', { textDocument: { uri: URI } }), -32002);
  const init = await conn.sendRequest('initialize', initParams({ encodings: ['utf-8', 'utf-16'] }));
  const caps = init.capabilities;
  assert.equal(caps.positionEncoding, 'utf-8');
  assert.equal(caps.textDocumentSync.change, 2);
  assert.equal(caps.textDocumentSync.openClose, true);
  assert.ok(caps.textDocumentSync.save);
  assert.equal(caps.inlineCompletionProvider, true);
  assert.ok(caps.completionProvider);
  assert.deepEqual(caps.codeActionProvider.codeActionKinds, ['refactor.rewrite']);
  assert.equal(caps.codeActionProvider.resolveProvider, true);
  assert.deepEqual(caps.executeCommandProvider.commands, ['infilld.regenerate', 'infilld.accepted']);
  assert.equal(init.serverInfo.name, 'infilld');
  await rejectsWith(conn.sendRequest('initialize', initParams()), -32600);
  await conn.sendNotification('initialized', {});
  assert.equal(await conn.sendRequest('shutdown'), null);
  await rejectsWith(conn.sendRequest('infilld/viewFileText', { textDocument: { uri: URI } }), -32600);
  await conn.sendNotification('exit');
  const r = await d.exited;
  assert.equal(r.code, 0);
  conn.dispose();
});

test('exit without shutdown: exit code 1', async () => {
  const d = start(TESTD);
  const conn = connect(d.proc.stdout, d.proc.stdin);
  await conn.sendRequest('initialize', initParams());
  await conn.sendNotification('exit');
  assert.equal((await d.exited).code, 1);
  conn.dispose();
});

for (const enc of ['utf-8', 'utf-16', 'utf-32']) {
  test(`position encoding ${enc}: incremental edits and answer ranges`, async () => {
    const s = await session(TESTD, { encodings: [enc] });
    assert.equal(s.init.capabilities.positionEncoding, enc);
    const { conn } = s;
    await open(conn, URI, TEXT);
    const ch = AFTER[enc];
    // Insert "NEW" after the emoji and the space; then replace "w" by "W".
    await conn.sendNotification('textDocument/didChange', {
      textDocument: { uri: URI, version: 2 },
      contentChanges: [
        { range: { start: { line: 1, character: ch }, end: { line: 1, character: ch } }, text: 'NEW ' },
        { range: { start: { line: 1, character: ch + 4 }, end: { line: 1, character: ch + 5 } }, text: 'W' },
        { range: { start: { line: 2, character: 0 }, end: { line: 2, character: 0 } }, text: 'end' },
      ],
    });
    assert.equal(await viewText(conn, URI), 'x = 1\nhéllo 😀 NEW W\nend');
    const res = await inline(conn, URI, 1, ch, { triggerKind: 2 });
    assert.equal(res.items.length, 1);
    assert.equal(res.items[0].insertText, 'fake()');
    assert.deepEqual(res.items[0].range, { start: { line: 1, character: ch }, end: { line: 1, character: ch } });
    assert.equal(res.items[0].command.command, 'infilld.accepted');
    assert.equal((await close(s)).code, 0);
  });
}

test('utf-16 fallback when the client offers nothing; CRLF and surrogate pairs', async () => {
  const s = await session(TESTD, { encodings: undefined });
  const { conn } = s;
  assert.equal(s.init.capabilities.positionEncoding, 'utf-16');
  await open(conn, URI, 'a😀b\r\nc\r\n');
  await conn.sendNotification('textDocument/didChange', {
    textDocument: { uri: URI, version: 2 },
    contentChanges: [
      // after the emoji (UTF-16 3), then past the end of line 1 (clamped before \r\n)
      { range: { start: { line: 0, character: 3 }, end: { line: 0, character: 3 } }, text: '+' },
      { range: { start: { line: 1, character: 99 }, end: { line: 1, character: 99 } }, text: '!' },
    ],
  });
  assert.equal(await viewText(conn, URI), 'a😀+b\r\nc!\r\n');
  // full sync replaces everything
  await conn.sendNotification('textDocument/didChange', {
    textDocument: { uri: URI, version: 3 }, contentChanges: [{ text: 'full' }],
  });
  assert.equal(await viewText(conn, URI), 'full');
  await conn.sendNotification('textDocument/didSave', { textDocument: { uri: URI } });
  await conn.sendNotification('textDocument/didClose', { textDocument: { uri: URI } });
  await rejectsWith(viewText(conn, URI), -32602);
  await close(s);
});

test('inline completion: selectedCompletionInfo, accepted command, completion item', async () => {
  const s = await session(TESTD, { encodings: ['utf-16'] });
  const { conn } = s;
  await open(conn, URI, 'import os\nos.pa\n');
  const res = await inline(conn, URI, 1, 5, {
    triggerKind: 2,
    selectedCompletionInfo: { range: { start: { line: 1, character: 3 }, end: { line: 1, character: 5 } }, text: 'path' },
  });
  assert.equal(res.items.length, 1);
  assert.ok(res.items[0].insertText.startsWith('path'));
  assert.deepEqual(res.items[0].range, { start: { line: 1, character: 3 }, end: { line: 1, character: 5 } });
  // Accepting runs the item's command.
  const cmd = res.items[0].command;
  assert.equal(await conn.sendRequest('workspace/executeCommand', { command: cmd.command, arguments: cmd.arguments }), null);
  await conn.waitNote('window/logMessage', (p) => /accepted requestId=\d+ acceptedLength=10/.test(p.message));
  // textDocument/completion: one item with a textEdit at the cursor.
  const list = await conn.sendRequest('textDocument/completion', {
    textDocument: { uri: URI }, position: { line: 1, character: 5 }, context: { triggerKind: 1 },
  });
  assert.equal(list.items.length, 1);
  assert.equal(list.items[0].textEdit.newText, 'fake()');
  assert.deepEqual(list.items[0].textEdit.range, { start: { line: 1, character: 5 }, end: { line: 1, character: 5 } });
  await close(s);
});

test('code action resolves lazily; infilld.regenerate applies a workspace edit', async () => {
  const s = await session(TESTD);
  const { conn } = s;
  await open(conn, URI, 'def f():\n    return 1\n');
  const range = { start: { line: 1, character: 4 }, end: { line: 1, character: 12 } };
  const actions = await conn.sendRequest('textDocument/codeAction', {
    textDocument: { uri: URI }, range, context: { diagnostics: [] },
  });
  assert.equal(actions.length, 1);
  assert.equal(actions[0].kind, 'refactor.rewrite');
  assert.equal(actions[0].title, 'Regenerate selection');
  assert.equal(actions[0].edit, undefined);
  const resolved = await conn.sendRequest('codeAction/resolve', actions[0]);
  const edits = resolved.edit.changes[URI];
  assert.deepEqual(edits, [{ range, newText: 'REGENERATED' }]);
  // An empty selection offers nothing.
  const none = await conn.sendRequest('textDocument/codeAction', {
    textDocument: { uri: URI }, range: { start: range.start, end: range.start }, context: { diagnostics: [] },
  });
  assert.deepEqual(none, []);
  const r = await conn.sendRequest('workspace/executeCommand', {
    command: 'infilld.regenerate', arguments: [{ uri: URI, range }],
  });
  assert.equal(r.text, 'REGENERATED');
  await sleep(50);
  assert.equal(conn.edits.length, 1);
  assert.equal(conn.edits[0].edit.changes[URI][0].newText, 'REGENERATED');
  await rejectsWith(conn.sendRequest('workspace/executeCommand', { command: 'infilld.nope' }), -32602);
  const e = await rejectsWith(conn.sendRequest('workspace/executeCommand', {
    command: 'infilld.regenerate', arguments: [{ uri: URI }],
  }), -32602);
  assert.match(e.message, /arguments\[0\]\.range/);
  await close(s);
});

test('supersession answers the older request with null; $/cancelRequest gives -32800', async () => {
  const s = await session(TESTD, { initOptions: { fake: { delayMs: 400 } } });
  const { conn } = s;
  await open(conn, URI, 'a = \n');
  const first = inline(conn, URI, 0, 4);
  await sleep(30);
  const second = inline(conn, URI, 0, 4);
  assert.equal(await first, null);
  const r2 = await second;
  assert.equal(r2.items[0].insertText, 'fake()');
  // Cancellation through the client library's token.
  const src = new rpc.CancellationTokenSource();
  const third = inline(conn, URI, 0, 4, { triggerKind: 1 }, src.token);
  await sleep(30);
  src.cancel();
  await rejectsWith(third, -32800);
  // The server keeps serving.
  assert.equal(await viewText(conn, URI), 'a = \n');
  await close(s);
});

// Regression (docs/perf/editors.md): a valid end-of-line request after a
// matching didChange was answered -32602 "out of range" when the model
// pipeline failed inside (an id the tokenizer cannot decode). A provider
// failure is the server's: -32803 naming the request, never "invalid params".
test('a provider failure after a matching didChange is -32803, not -32602', async () => {
  const s = await session(TESTD, { initOptions: { fake: { failRange: true } } });
  const { conn } = s;
  await open(conn, URI, 'def f(x):\n    # abcd\n');
  await conn.sendNotification('textDocument/didChange', {
    textDocument: { uri: URI, version: 2 },
    contentChanges: [{ range: { start: { line: 1, character: 10 }, end: { line: 1, character: 10 } }, text: 'e' }],
  });
  const err = await rejectsWith(inline(conn, URI, 1, 11, { triggerKind: 2 }), -32803);
  assert.match(err.message, /^textDocument\/inlineCompletion failed: out of range$/);
  await rejectsWith(conn.sendRequest('textDocument/completion', { textDocument: { uri: URI }, position: { line: 1, character: 11 } }), -32803);
  // The same request is fine when the provider is: the position was valid.
  await conn.sendNotification('workspace/didChangeConfiguration', { settings: { fake: { failRange: false } } });
  const r = await inline(conn, URI, 1, 11, { triggerKind: 2 });
  assert.deepEqual(r.items[0].range, { start: { line: 1, character: 11 }, end: { line: 1, character: 11 } });
  assert.equal(await viewText(conn, URI), 'def f(x):\n    # abcde\n');
  await close(s);
});

test('infilld/partial (opt-in), status, showMessage and progress on a model change', async () => {
  const s = await session(TESTD, { initOptions: { partial: true, status: true, fake: { delayMs: 90, steps: 3 } } });
  const { conn } = s;
  await open(conn, URI, 'b = \n');
  const res = await inline(conn, URI, 0, 4);
  assert.equal(res.items[0].insertText, 'fake()');
  const parts = conn.notes.filter((n) => n.method === 'infilld/partial').map((n) => n.params);
  assert.deepEqual(parts.map((p) => p.step), [1, 2]);
  assert.equal(parts[0].steps, 3);
  assert.equal(parts[0].uri, URI);
  assert.equal(typeof parts[0].requestId, 'number');
  assert.deepEqual(parts[0].range, { start: { line: 0, character: 4 }, end: { line: 0, character: 4 } });
  // A changed model path reloads without dropping the session.
  await conn.sendNotification('workspace/didChangeConfiguration', { settings: { infilld: { model: '/models/m2' } } });
  const st = await conn.waitNote('infilld/status', (p) => p.state === 'ready');
  assert.deepEqual(Object.keys(st).sort(), ['device', 'lastLatencyMs', 'model', 'state']);
  assert.equal(st.model, '/models/m2');
  await conn.waitNote('window/showMessage', (p) => p.message.includes('/models/m2'));
  await conn.waitNote('window/workDoneProgress/create');
  await conn.waitNote('$/progress', (p) => p.value.kind === 'end');
  await conn.sendNotification('workspace/didChangeConfiguration', { settings: { model: 'fail' } });
  const err = await conn.waitNote('window/showMessage', (p) => p.type === 1);
  assert.match(err.message, /failed to load/);
  assert.equal((await inline(conn, URI, 0, 4)).items[0].insertText, 'fake()');
  await close(s);
});

test('clients that opt into nothing see no infilld notifications', async () => {
  const s = await session(TESTD, { initOptions: { fake: { delayMs: 60, steps: 2 } } });
  const { conn } = s;
  await open(conn, URI, 'c = \n');
  await inline(conn, URI, 0, 4);
  await conn.sendNotification('workspace/didChangeConfiguration', { settings: { model: '/m3' } });
  await conn.waitNote('window/showMessage');
  assert.equal(conn.notes.filter((n) => n.method.startsWith('infilld/')).length, 0);
  await close(s);
});

test('$/setTrace turns on $/logTrace', async () => {
  const s = await session(TESTD);
  const { conn } = s;
  await conn.sendNotification('$/setTrace', { value: 'verbose' });
  await open(conn, URI, 'x');
  const t = await conn.waitNote('$/logTrace', (p) => p.message.includes('textDocument/didOpen'));
  assert.ok(t.verbose.includes('file:///work/t.py'));
  await conn.sendNotification('$/setTrace', { value: 'off' });
  await viewText(conn, URI); // the setTrace itself is still traced
  const n = conn.notes.length;
  await viewText(conn, URI);
  assert.equal(conn.notes.slice(n).filter((x) => x.method === '$/logTrace').length, 0);
  await close(s);
});

test('bad params name the field; unknown methods; unknown documents', async () => {
  const s = await session(TESTD);
  const { conn } = s;
  await open(conn, URI, 'x = 1\n');
  let e = await rejectsWith(conn.sendRequest('textDocument/inlineCompletion', {
    textDocument: { uri: URI }, position: { line: 0, character: 1 },
  }), -32602);
  assert.match(e.message, /context/);
  e = await rejectsWith(inline(conn, URI, 0, 1, { triggerKind: 7 }), -32602);
  assert.match(e.message, /context\.triggerKind/);
  e = await rejectsWith(conn.sendRequest('textDocument/inlineCompletion', {
    textDocument: { uri: 5 }, position: { line: 0, character: 1 }, context: { triggerKind: 1 },
  }), -32602);
  assert.match(e.message, /textDocument\.uri/);
  e = await rejectsWith(inline(conn, URI, 99, 0), -32602);
  assert.match(e.message, /position/);
  e = await rejectsWith(inline(conn, 'file:///not-open.py', 0, 0), -32602);
  assert.match(e.message, /not open/);
  await rejectsWith(conn.sendRequest('textDocument/hover', { textDocument: { uri: URI }, position: { line: 0, character: 0 } }), -32601);
  await rejectsWith(conn.sendRequest('$/weird', {}), -32601);
  // Changes for unknown documents or outside the text are reported, not applied.
  await conn.sendNotification('textDocument/didChange', {
    textDocument: { uri: 'file:///nope', version: 2 }, contentChanges: [{ text: 'x' }],
  });
  await conn.waitNote('window/logMessage', (p) => p.message.includes('not open'));
  await conn.sendNotification('textDocument/didChange', {
    textDocument: { uri: URI, version: 2 },
    contentChanges: [{ range: { start: { line: 7, character: 0 }, end: { line: 7, character: 0 } }, text: 'boom' }],
  });
  await conn.waitNote('window/logMessage', (p) => p.message.includes('outside'));
  assert.equal(await viewText(conn, URI), 'x = 1\n');
  await close(s);
});

test('excluded buffers never reach the provider', async () => {
  const s = await session(TESTD, { initOptions: { exclude: ['*.secret.py'], languages: { markdown: { enabled: false } } } });
  const { conn } = s;
  for (const [uri, lang] of [['file:///p/.env', 'dotenv'], ['file:///p/server.pem', 'plaintext'],
    ['file:///home/u/.ssh/id_rsa', 'plaintext'], ['file:///p/k.secret.py', 'python'], ['file:///p/R.md', 'markdown']]) {
    await open(conn, uri, 'KEY=\n', lang);
    const r = await inline(conn, uri, 0, 4);
    assert.deepEqual(r.items, [], uri);
  }
  await open(conn, 'file:///p/ok.py', 'KEY=\n');
  assert.equal((await inline(conn, 'file:///p/ok.py', 0, 4)).items.length, 1);
  await close(s);
});

test('10,000 incremental edits in a burst', async () => {
  const s = await session(TESTD, { encodings: ['utf-16'] });
  const { conn } = s;
  await open(conn, URI, '\n');
  for (let i = 0; i < 10000; i++) {
    conn.sendNotification('textDocument/didChange', {
      textDocument: { uri: URI, version: i + 2 },
      contentChanges: [{ range: { start: { line: 0, character: i }, end: { line: 0, character: i } }, text: 'é' }],
    });
  }
  const t = await viewText(conn, URI);
  assert.equal(t.length, 10001);
  assert.equal(t, 'é'.repeat(10000) + '\n');
  await close(s);
});

test('config file and precedence: initializationOptions over the file', async () => {
  const fs = await import('node:fs');
  const os = await import('node:os');
  const path = await import('node:path');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'infilld-cfg-'));
  fs.mkdirSync(path.join(dir, 'infilld'));
  fs.writeFileSync(path.join(dir, 'infilld', 'config.json'), JSON.stringify({ fake: { text: 'fromfile' } }));
  let s = await session(TESTD, { env: { XDG_CONFIG_HOME: dir } });
  await open(s.conn, URI, 'x');
  assert.equal((await inline(s.conn, URI, 0, 1)).items[0].insertText, 'fromfile');
  await close(s);
  s = await session(TESTD, { env: { XDG_CONFIG_HOME: dir }, initOptions: { fake: { text: 'frominit' } } });
  await open(s.conn, URI, 'x');
  assert.equal((await inline(s.conn, URI, 0, 1)).items[0].insertText, 'frominit');
  await close(s);
  fs.rmSync(dir, { recursive: true });
});

// The embedded tiny model next to the binary (target tiny_model), if built.
// The embedded default is the trained model (models/infilld-tiny-code, issue 13).
const TINY = REAL ? path.join(path.dirname(REAL), 'models', 'infilld-tiny-code') : null;
const HAVE_TINY = TINY && fs.existsSync(path.join(TINY, 'config.json'));

test('the real binary serves documents and answers', { skip: !REAL }, async () => {
  const s = await session(REAL, { encodings: ['utf-8'], initOptions: { steps: 2, candidates: 1 } });
  const { conn } = s;
  assert.equal(s.init.capabilities.positionEncoding, 'utf-8');
  await open(conn, URI, TEXT);
  assert.equal(await viewText(conn, URI), TEXT);
  const r = await inline(conn, URI, 1, 12, { triggerKind: 2 });
  assert.ok(r === null || Array.isArray(r.items));
  await rejectsWith(conn.sendRequest('nope/nope'), -32601);
  assert.equal((await close(s)).code, 0);
});

test('no --model, config or initializationOptions model: the embedded tiny model loads',
  { skip: !HAVE_TINY }, async () => {
    const s = await session(REAL, { initOptions: { status: true } });
    const st = await s.conn.waitNote('infilld/status', (p) => p.state === 'ready' || p.state === 'error', 60000);
    assert.equal(st.state, 'ready');
    assert.equal(fs.realpathSync(st.model), fs.realpathSync(TINY));
    assert.match(st.device, /^cpu|^cuda/);
    assert.equal((await close(s)).code, 0);
  });

test('infilld doctor reports the model it would use and the backend', { skip: !HAVE_TINY }, () => {
  const env = { ...process.env, XDG_CONFIG_HOME: '/nonexistent-infilld-test' };
  let r = spawnSync(REAL, ['doctor', '--device', 'cpu'], { env });
  assert.equal(r.status, 0);
  const out = r.stdout.toString();
  assert.ok(out.includes(`model: ${TINY} (embedded default)\n`), out);
  assert.match(out, /^model family: dream \(DreamModel\), 4 layers, hidden \d+, vocab \d+, weights [\d.]+ MiB$/m);
  assert.match(out, /^backend: cpu/m);
  // K/V bytes per token: 2 (K and V) x layers x kv heads x head dim x 4.
  assert.match(out, /^context K\/V: \d+ bytes per token \(F32\), [\d.]+ MiB for \d+ tokens$/m);
  // The store of contexts kept between requests (setting contextCache).
  assert.match(out, /^context K\/V kept between requests \(contextCache on\): budgets 64 MiB per document, 256 MiB in all: \d+ documents with full contexts$/m);
  // The kernels chosen at run time, and the CUDA devices or why none is usable.
  assert.match(out, /^cpu: (AVX-512|AVX2\+FMA|portable) kernels(, BF16 matmuls on AMX)?$/m);
  // AMX is named exactly where the CPU reports it (Linux grants the tile
  // state from 5.16 on) and the AVX-512 kernels are in use.
  let cpuinfo = '';
  try { cpuinfo = fs.readFileSync('/proc/cpuinfo', 'utf8'); } catch { /* not Linux */ }
  if (/^cpu: AVX-512 /m.test(out) && process.env.INFILLD_CPU_AMX !== '0')
    assert.equal(/, BF16 matmuls on AMX$/m.test(out), /\bamx_bf16\b/.test(cpuinfo), out);
  const noAmx = spawnSync(REAL, ['doctor', '--device', 'cpu'],
                          { env: { ...env, INFILLD_CPU_AMX: '0' } });
  assert.doesNotMatch(noAmx.stdout.toString(), /AMX/);
  assert.match(out, /^cuda: (not built \(.+\)|built in; .+|\d+ device\(s\); 0: .+, sm_\d+, .+)$/m);
  r = spawnSync(REAL, ['doctor', '--model', '/nonexistent-model'], { env });
  assert.equal(r.status, 0);
  assert.match(r.stdout.toString(), /^model: \/nonexistent-model \(cannot load: .+\)$/m);
  assert.match(r.stdout.toString(), /^backend: none$/m);
});
