// The `initialize` request the VS Code extension really sends. Runs the
// compiled extension (activate → vscode-languageclient 10 → a stdio server)
// in Node with a `vscode` module shim that provides only what constructing
// and starting the client touches; the "server" is a recorder that writes
// the initialize params to a file and answers. Regression test for the
// missing client.registerProposedFeatures(): without it the request carries
// no textDocument.inlineCompletion capability and VS Code never asks for
// ghost text.
// Usage: node vscode_initialize.test.mjs COMPILED_OUT_DIR WORK_DIR
import { createRequire } from 'node:module';
import Module from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const extDir = path.resolve(here, '../../editors/vscode');
const [outArg, workArg] = process.argv.slice(2);
if (!outArg || !workArg) {
  console.error('usage: node vscode_initialize.test.mjs COMPILED_OUT_DIR WORK_DIR');
  process.exit(2);
}
const outDir = path.resolve(outArg);
const work = path.resolve(workArg);
const extJs = path.join(outDir, 'src', 'extension.js');
// Missing inputs fail: this runs after editors_vscode_check compiled them.
if (!fs.existsSync(extJs)) {
  console.error(`FAIL: no compiled extension at ${extJs} (editors_vscode_check compiles it)`);
  process.exit(1);
}
if (!fs.existsSync(path.join(extDir, 'node_modules', 'vscode-languageclient'))) {
  console.error('FAIL: editors/vscode/node_modules missing (run ./bootstrap.sh)');
  process.exit(1);
}
fs.rmSync(work, { recursive: true, force: true });
fs.mkdirSync(work, { recursive: true });
const capture = path.join(work, 'initialize.json');

// The recorder server: LSP frames on stdio, initialize params to $CAPTURE.
const server = path.join(work, 'recorder.js');
fs.writeFileSync(
  server,
  `#!${process.execPath}
const fs = require('fs');
let buf = Buffer.alloc(0);
function send(m) {
  const b = Buffer.from(JSON.stringify({ jsonrpc: '2.0', ...m }));
  process.stdout.write('Content-Length: ' + b.length + '\\r\\n\\r\\n');
  process.stdout.write(b);
}
process.stdin.on('data', (d) => {
  buf = Buffer.concat([buf, d]);
  for (;;) {
    const h = buf.indexOf('\\r\\n\\r\\n');
    if (h < 0) return;
    const len = Number(/Content-Length: *(\\d+)/i.exec(buf.subarray(0, h).toString())[1]);
    if (buf.length < h + 4 + len) return;
    const msg = JSON.parse(buf.subarray(h + 4, h + 4 + len).toString());
    buf = buf.subarray(h + 4 + len);
    if (msg.method === 'initialize') {
      fs.writeFileSync(process.env.CAPTURE, JSON.stringify(msg.params));
      send({ id: msg.id, result: { capabilities: { inlineCompletionProvider: true, textDocumentSync: 2 } } });
    } else if (msg.method === 'shutdown') {
      send({ id: msg.id, result: null });
    } else if (msg.method === 'exit') {
      process.exit(0);
    } else if (msg.id !== undefined && msg.method) {
      send({ id: msg.id, result: null });
    }
  }
});
process.stdin.on('end', () => process.exit(0));
`,
);
fs.chmodSync(server, 0o755);
process.env.CAPTURE = capture;

// ---- the `vscode` shim --------------------------------------------------
// Explicit values where the client reads them; anything else is an inert
// stand-in that can be called, constructed, read and written.
function inert(name) {
  const fn = function () {};
  const props = new Map();
  return new Proxy(fn, {
    get(_t, k) {
      if (k === Symbol.toPrimitive) return () => `[vscode shim ${name}]`;
      if (k === 'then') return undefined; // not a thenable
      if (k === 'dispose') return () => {};
      if (props.has(k)) return props.get(k);
      const v = inert(`${name}.${String(k)}`);
      props.set(k, v);
      return v;
    },
    set(_t, k, v) {
      props.set(k, v);
      return true;
    },
    apply() {
      return inert(`${name}()`);
    },
    construct() {
      return inert(`new ${name}`);
    },
  });
}
class Disposable {
  constructor(fn) {
    this.fn = fn;
  }
  static from(...ds) {
    return new Disposable(() => ds.forEach((d) => d?.dispose?.()));
  }
  dispose() {
    this.fn?.();
  }
}
class EventEmitter {
  constructor() {
    this.ls = [];
    this.event = (l) => {
      this.ls.push(l);
      return new Disposable(() => (this.ls = this.ls.filter((x) => x !== l)));
    };
  }
  fire(e) {
    this.ls.forEach((l) => l(e));
  }
  dispose() {
    this.ls = [];
  }
}
const noEvent = () => new Disposable();
const settings = { path: server, logLevel: 'warn', extraArgs: [], debounceMs: 150, device: 'auto' };
const enums = (...names) => Object.fromEntries(names.map((n, i) => [n, i + 1]));
const shim = {
  version: '1.91.0',
  Disposable,
  EventEmitter,
  ThemeColor: class {},
  StatusBarAlignment: { Left: 1, Right: 2 },
  InlineCompletionTriggerKind: { Invoke: 0, Automatic: 1 },
  DiagnosticSeverity: enums('Error', 'Warning', 'Information', 'Hint'),
  Uri: {
    parse: (s) => ({ toString: () => s, scheme: s.split(':')[0], fsPath: s.replace(/^file:\/\//, '') }),
    file: (p) => ({ toString: () => `file://${p}`, scheme: 'file', fsPath: p }),
  },
  env: { language: 'en', appName: 'Visual Studio Code (shim)', machineId: 'shim', uiKind: 1 },
  workspace: {
    workspaceFolders: undefined,
    textDocuments: [],
    notebookDocuments: [],
    getConfiguration: (section) => ({
      get: (k, d) => (section === 'infilld' && k in settings ? settings[k] : d),
      has: () => false,
    }),
    getWorkspaceFolder: () => undefined,
    onDidChangeConfiguration: noEvent,
    onDidOpenTextDocument: noEvent,
    onDidChangeTextDocument: noEvent,
    onDidCloseTextDocument: noEvent,
    onDidSaveTextDocument: noEvent,
    onWillSaveTextDocument: noEvent,
    onDidChangeWorkspaceFolders: noEvent,
    onDidOpenNotebookDocument: noEvent,
    onDidChangeNotebookDocument: noEvent,
    onDidCloseNotebookDocument: noEvent,
    onDidSaveNotebookDocument: noEvent,
    onDidCreateFiles: noEvent,
    onDidRenameFiles: noEvent,
    onDidDeleteFiles: noEvent,
    onWillCreateFiles: noEvent,
    onWillRenameFiles: noEvent,
    onWillDeleteFiles: noEvent,
    createFileSystemWatcher: () => ({ onDidCreate: noEvent, onDidChange: noEvent, onDidDelete: noEvent, dispose() {} }),
  },
  window: {
    activeTextEditor: undefined,
    visibleTextEditors: [],
    tabGroups: { all: [], onDidChangeTabs: noEvent, onDidChangeTabGroups: noEvent },
    onDidChangeActiveTextEditor: noEvent,
    onDidChangeVisibleTextEditors: noEvent,
    onDidChangeTextEditorSelection: noEvent,
    createOutputChannel: (name) => {
      const ch = inert(`output ${name}`);
      ch.name = name;
      // The client routes its own log through these; show them on stderr.
      for (const k of ['appendLine', 'append', 'error', 'warn', 'info', 'debug', 'trace'])
        ch[k] = (...a) => k === 'error' && console.error(`client ${k}:`, ...a.map(String));
      return ch;
    },
    createStatusBarItem: () => inert('statusItem'),
    showErrorMessage: async (...a) => {
      console.error('showErrorMessage:', ...a.map(String));
      return undefined;
    },
    showWarningMessage: async () => undefined,
    showInformationMessage: async () => undefined,
  },
  commands: { registerCommand: () => new Disposable(), executeCommand: async () => undefined },
};
shim.languages = new Proxy(
  { match: () => 0, onDidChangeDiagnostics: noEvent, createDiagnosticCollection: () => inert('diagnostics') },
  { get: (t, k) => (k in t ? t[k] : () => new Disposable()) },
);
const vscode = new Proxy(shim, { get: (t, k) => (k in t ? t[k] : inert(`vscode.${String(k)}`)) });

const realResolve = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  if (request === 'vscode') return 'vscode';
  try {
    return realResolve.call(this, request, parent, ...rest);
  } catch (e) {
    // The compiled JS lives in the build tree; its packages in editors/vscode.
    return realResolve.call(this, request, { ...parent, paths: Module._nodeModulePaths(extDir) }, ...rest);
  }
};
const require = createRequire(import.meta.url);
require.cache.vscode = { id: 'vscode', filename: 'vscode', loaded: true, exports: vscode };

const ext = require(extJs);
const context = { subscriptions: [], extensionPath: extDir, asAbsolutePath: (p) => path.join(extDir, p) };
const timer = setTimeout(() => {
  console.error('FAIL: no initialize request reached the server within 20 s');
  process.exit(1);
}, 20000);
await ext.activate(context);
for (let i = 0; i < 200 && !fs.existsSync(capture); i++) await new Promise((r) => setTimeout(r, 50));
clearTimeout(timer);
if (!fs.existsSync(capture)) {
  console.error('FAIL: the extension started but sent no initialize request');
  process.exit(1);
}
const params = JSON.parse(fs.readFileSync(capture, 'utf8'));
let failures = 0;
function check(cond, what) {
  console.log(`${cond ? 'ok  ' : 'FAIL'} ${what}`);
  if (!cond) failures++;
}
const td = params.capabilities?.textDocument ?? {};
check(typeof td.inlineCompletion === 'object', 'initialize carries capabilities.textDocument.inlineCompletion');
check(typeof td.completion === 'object', 'and textDocument.completion (the client is the real one)');
check(params.initializationOptions && typeof params.initializationOptions === 'object', 'initializationOptions sent');
check(typeof params.processId === 'number', 'processId is the extension host pid');
await Promise.race([ext.deactivate(), new Promise((r) => setTimeout(r, 5000))]);
process.exit(failures ? 1 : 0);
