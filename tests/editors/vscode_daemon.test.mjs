// The VS Code extension's contract with the REAL daemon, without VS Code: the
// command line and initializationOptions the extension derives from its
// settings (compiled settings.js) start a daemon that answers
// textDocument/inlineCompletion in the shape vscode-languageclient turns into
// ghost text, its infilld/status formats into the status bar text
// (compiled status.js), infilld.accepted is accepted, and infilld.regenerate
// comes back as a workspace/applyEdit for the selection.
// Usage: node vscode_daemon.test.mjs INFILLD MODEL_DIR COMPILED_OUT_DIR   (77 = skipped)
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const require = createRequire(import.meta.url);
const [exe, modelDir, outArg] = process.argv.slice(2);
const outDir = outArg ? path.resolve(outArg) : undefined;
function skip(why) {
  console.error(`SKIP: ${why}`);
  process.exit(77);
}
if (!exe || !fs.existsSync(exe)) skip('no daemon binary');
if (!modelDir || !fs.existsSync(path.join(modelDir, 'config.json'))) skip('no tiny model');
let rpc;
try {
  rpc = require('../node_modules/vscode-jsonrpc/node');
} catch {
  skip('tests/node_modules missing (run ./bootstrap.sh)');
}
const settingsJs = path.join(outDir ?? '', 'src', 'settings.js');
if (!fs.existsSync(settingsJs)) skip(`no compiled extension modules in ${outDir}`);
const { readSettings, initializationOptions, serverArgs } = require(settingsJs);
const { formatStatus } = require(path.join(outDir, 'src', 'status.js'));

let failures = 0;
function check(cond, what) {
  console.log(`${cond ? 'ok  ' : 'FAIL'} ${what}`);
  if (!cond) failures++;
}

// What a user would put in settings.json.
const userSettings = {
  path: exe,
  modelPath: modelDir,
  device: 'cpu',
  logLevel: 'error',
  extraArgs: [],
};
const s = readSettings((k) => userSettings[k]);
// No latency budget: plumbing, not speed (a loaded machine would answer null).
const init = { ...initializationOptions(s), validate: false, seed: 3, candidates: 1, latencyBudgetMs: 0 };

const proc = spawn(exe, serverArgs(s), { stdio: ['pipe', 'pipe', 'inherit'] });
const conn = rpc.createMessageConnection(
  new rpc.StreamMessageReader(proc.stdout),
  new rpc.StreamMessageWriter(proc.stdin),
);
const statuses = [];
const edits = [];
conn.onNotification('infilld/status', (p) => statuses.push(p));
conn.onNotification(() => {});
conn.onRequest('workspace/applyEdit', (p) => {
  edits.push(p);
  return { applied: true };
});
const registrations = [];
conn.onRequest('client/registerCapability', (p) => {
  registrations.push(...(p?.registrations ?? []));
  return null;
});
conn.onRequest(() => null);
conn.listen();

const timer = setTimeout(() => {
  console.log('FAIL timed out');
  proc.kill();
  process.exit(1);
}, 240000);

try {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'infilld-vscode-'));
  const uri = 'file://' + path.join(dir, 'calc.py');
  const text = 'def add(a, b):\n    # return the sum of a and b\n    return a + b\n';
  const initRes = await conn.sendRequest('initialize', {
    processId: process.pid,
    rootUri: null,
    capabilities: {
      // what vscode-languageclient 10 announces for these features
      textDocument: { inlineCompletion: { dynamicRegistration: true }, synchronization: {} },
      workspace: { applyEdit: true, workspaceEdit: { documentChanges: true } },
      general: { positionEncodings: ['utf-16'] },
    },
    initializationOptions: init,
  });
  const caps = initRes.capabilities;
  // The client announces dynamic registration, so the provider is registered
  // with client/registerCapability after `initialized`, not in the result.
  check(caps.inlineCompletionProvider === undefined,
    'no static inlineCompletionProvider for a client that registers dynamically');
  check((caps.positionEncoding ?? 'utf-16') === 'utf-16', 'UTF-16 positions, as VS Code uses');
  const cmds = caps.executeCommandProvider?.commands ?? [];
  check(cmds.includes('infilld.regenerate') && cmds.includes('infilld.accepted'),
    'infilld.regenerate and infilld.accepted are server commands');
  conn.sendNotification('initialized', {});
  conn.sendNotification('textDocument/didOpen', {
    textDocument: { uri, languageId: 'python', version: 1, text },
  });
  const t0 = Date.now();
  const inlineReg = () => registrations.find((r) => r.method === 'textDocument/inlineCompletion');
  while (!inlineReg() && Date.now() - t0 < 5000) await new Promise((r) => setTimeout(r, 20));
  check(inlineReg() !== undefined && inlineReg().registerOptions?.documentSelector === null,
    'inline completion registered for every document (the client applies its own selector)');

  // Automatic inline completion at the end of the comment line. An error
  // fails the test at once (no retry may hide a daemon bug); an empty answer is
  // legitimate (post-processing may drop the random model's whole text), so
  // only that is retried, one character to the left, at most twice.
  let items = [];
  for (let attempt = 0; attempt < 3 && items.length === 0; attempt++) {
    let res = null;
    try {
      res = await conn.sendRequest('textDocument/inlineCompletion', {
        textDocument: { uri },
        position: { line: 1, character: 29 - attempt },
        context: { triggerKind: 2 },
      });
    } catch (e) {
      check(false, `inlineCompletion answered an error: ${e?.code} ${e?.message ?? e}`);
      break;
    }
    items = (Array.isArray(res) ? res : res?.items ?? []).filter(
      (i) => typeof i.insertText === 'string' && i.insertText !== '',
    );
    if (items.length === 0) console.log(`note: attempt ${attempt + 1} answered without text`);
  }
  check(items.length >= 1, 'inlineCompletion returns an item with text');
  const item = items[0];
  if (item) {
    const r = item.range;
    check(!r || (r.start.line === 1 && r.end.line === 1), 'item range (if any) stays on the cursor line');
    check(item.command?.command === 'infilld.accepted', 'item carries the infilld.accepted command');
    const arg = item.command?.arguments?.[0];
    check(arg && arg.acceptedLength === item.insertText.length,
      'acceptedLength of a full accept = insertText length in UTF-16 units');
    // What VS Code runs after a full accept, then a partial accept report.
    await conn.sendRequest('workspace/executeCommand', item.command);
    await conn.sendRequest('workspace/executeCommand', {
      command: 'infilld.accepted',
      arguments: [{ requestId: arg.requestId, acceptedLength: 1 }],
    });
    check(true, 'infilld.accepted (full and partial) answered without error');
  }

  // Status bar text from infilld/status.
  for (let i = 0; i < 100 && !statuses.some((p) => p.state === 'ready'); i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
  const last = statuses[statuses.length - 1];
  check(last !== undefined, 'infilld/status arrives (opted in by initializationOptions.status)');
  if (last) {
    const view = formatStatus(last);
    check(view.text.includes(path.basename(modelDir)), `status bar shows the model: ${view.text}`);
    check(typeof last.lastLatencyMs === 'number' && view.text.endsWith(`${Math.round(last.lastLatencyMs)} ms`),
      'status bar shows the last latency');
  }

  // Regenerate selection: "a + b" on line 2.
  const range = { start: { line: 2, character: 11 }, end: { line: 2, character: 16 } };
  await conn.sendRequest('workspace/executeCommand', {
    command: 'infilld.regenerate',
    arguments: [{ uri, range }],
  });
  for (let i = 0; i < 2400 && edits.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
  check(edits.length === 1, 'regenerate comes back as one workspace/applyEdit');
  if (edits.length === 1) {
    const e = edits[0].edit;
    const list = e.changes?.[uri] ?? e.documentChanges?.[0]?.edits ?? [];
    check(list.length === 1 && JSON.stringify(list[0].range) === JSON.stringify(range),
      'the edit replaces exactly the selection');
  }

  await conn.sendRequest('shutdown');
  conn.sendNotification('exit');
} catch (e) {
  console.log(`FAIL ${e?.stack ?? e}`);
  failures++;
}
clearTimeout(timer);
setTimeout(() => {
  proc.kill();
  console.log(failures === 0 ? 'all ok' : `${failures} failed`);
  process.exit(failures === 0 ? 0 : 1);
}, 200);
