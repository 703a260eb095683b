// infilld for VS Code: starts the infilld daemon over stdio with
// vscode-languageclient, whose LSP 3.18 inline-completion feature turns the
// daemon's textDocument/inlineCompletion answers into ghost text. This file
// adds what the generic client lacks: a debounce for automatic requests, the
// "Regenerate selection" command (infilld.regenerate; the daemon applies the
// new text through workspace/applyEdit), word/line accept commands that
// report infilld.accepted, and a status bar item fed by infilld/status.
import * as fs from 'fs';
import * as os from 'os';
import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  TransportKind,
} from 'vscode-languageclient/node';
import { CursorNotifier, CursorParams } from './cursor';
import { Debouncer } from './debounce';
import { AcceptKind, acceptedLength, splitAccept, typeThrough } from './partial';
import { Settings, initializationOptions, readSettings, resolveBinary, serverArgs } from './settings';
import { PartialParams, StatusParams, formatPartial, formatStatus } from './status';

// The last suggestion the daemon gave for the active editor, for the
// word/line accept commands.
interface Shown {
  uri: string;
  line: number;
  character: number;
  insertText: string;
  requestId?: number;
}

let client: LanguageClient | undefined;
let statusItem: vscode.StatusBarItem;
let output: vscode.LogOutputChannel;
let lastStatus: StatusParams | undefined;
let shown: Shown | undefined;
const debouncer = new Debouncer(150);
// infilld/didChangeCursor: where the user is, so the daemon works ahead there.
const cursorNotifier = new CursorNotifier((p: CursorParams) => {
  void client?.sendNotification('infilld/didChangeCursor', p).catch(() => undefined);
});

function cursorMoved(editor: vscode.TextEditor | undefined): void {
  const doc = editor?.document;
  if (!editor || !doc || doc.uri.scheme !== 'file' || !client?.isRunning()) {
    return;
  }
  const pos = editor.selection.active;
  cursorNotifier.moved(doc.uri.toString(), doc.version, pos.line, pos.character);
}

function settings(): Settings {
  const conf = vscode.workspace.getConfiguration('infilld');
  return readSettings((k) => conf.get(k));
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function updateStatus(progress = ''): void {
  const view = formatStatus(lastStatus);
  statusItem.text = progress === '' ? view.text : `${view.text} · ${progress}`;
  statusItem.tooltip = view.tooltip;
  statusItem.backgroundColor = view.warning
    ? new vscode.ThemeColor('statusBarItem.warningBackground')
    : undefined;
  statusItem.show();
}

function requestIdOf(command: vscode.Command | undefined): number | undefined {
  if (command?.command !== 'infilld.accepted') {
    return undefined;
  }
  const arg: unknown = command.arguments?.[0];
  if (typeof arg === 'object' && arg !== null && 'requestId' in arg) {
    const id = arg.requestId;
    return typeof id === 'number' ? id : undefined;
  }
  return undefined;
}

function remember(
  document: vscode.TextDocument,
  position: vscode.Position,
  result: vscode.InlineCompletionItem[] | vscode.InlineCompletionList | null | undefined,
): void {
  const items = Array.isArray(result) ? result : result?.items;
  const first = items?.[0];
  if (!first || typeof first.insertText !== 'string') {
    shown = undefined;
    return;
  }
  // The daemon inserts at the cursor, or replaces from the range start.
  const start = first.range ? first.range.start : position;
  shown = {
    uri: document.uri.toString(),
    line: start.line,
    character: start.character,
    insertText: first.insertText,
    requestId: requestIdOf(first.command),
  };
}

async function acceptPart(kind: AcceptKind): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  const s = shown;
  if (!editor || !s || editor.document.uri.toString() !== s.uri) {
    return;
  }
  const cur = editor.selection.active;
  if (cur.line !== s.line || cur.character < s.character) {
    return;
  }
  const typed = editor.document.getText(new vscode.Range(s.line, s.character, cur.line, cur.character));
  const rest = typeThrough(s.insertText, typed);
  if (rest === undefined || rest === '') {
    return;
  }
  const { taken } = splitAccept(rest, kind);
  const ok = await editor.edit((b) => b.insert(cur, taken));
  if (!ok || !client || s.requestId === undefined) {
    return;
  }
  await client.sendRequest(ExecuteCommandRequest.type, {
    command: 'infilld.accepted',
    arguments: [{ requestId: s.requestId, acceptedLength: acceptedLength(s.insertText, rest, taken) }],
  });
  await vscode.commands.executeCommand('editor.action.inlineSuggest.trigger');
}

async function regenerateSelection(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.selection.isEmpty) {
    void vscode.window.showInformationMessage('infilld: select the text to regenerate first.');
    return;
  }
  if (!client) {
    void vscode.window.showWarningMessage('infilld: the daemon is not running.');
    return;
  }
  const c2p = client.code2ProtocolConverter;
  try {
    await client.sendRequest(ExecuteCommandRequest.type, {
      command: 'infilld.regenerate',
      arguments: [{ uri: c2p.asUri(editor.document.uri), range: c2p.asRange(editor.selection) }],
    });
  } catch (e) {
    void vscode.window.showErrorMessage(`infilld: regenerate failed: ${String(e)}`);
  }
}

async function startClient(context: vscode.ExtensionContext): Promise<void> {
  const s = settings();
  debouncer.delayMs = s.debounceMs;
  const binary = resolveBinary(s.path, process.env.PATH, isExecutable, os.homedir());
  if (!binary) {
    lastStatus = { state: 'error', model: null, device: null, lastLatencyMs: null };
    updateStatus();
    const choice = await vscode.window.showErrorMessage(
      `infilld: cannot find "${s.path}" on the PATH. Set infilld.path to the daemon binary.`,
      'Open Settings',
    );
    if (choice === 'Open Settings') {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'infilld.path');
    }
    return;
  }
  const run = { command: binary, args: serverArgs(s), transport: TransportKind.stdio };
  const serverOptions: ServerOptions = { run, debug: run };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
    initializationOptions: initializationOptions(s),
    outputChannel: output,
    middleware: {
      provideInlineCompletionItems: async (document, position, ctx, token, next) => {
        const invoked = ctx.triggerKind === vscode.InlineCompletionTriggerKind.Invoke;
        if (!(await debouncer.wait(token, invoked))) {
          return null;
        }
        const result = await next(document, position, ctx, token);
        remember(document, position, result);
        updateStatus();
        return result;
      },
    },
  };
  client = new LanguageClient('infilld', 'infilld', serverOptions, clientOptions);
  // vscode-languageclient 10 ships LSP 3.18 inline completion as a proposed
  // feature: without this the initialize request carries no
  // textDocument.inlineCompletion capability and no ghost text ever appears.
  client.registerProposedFeatures();
  context.subscriptions.push(
    client.onNotification('infilld/status', (p: StatusParams) => {
      lastStatus = p;
      updateStatus();
    }),
    client.onNotification('infilld/partial', (p: PartialParams) => updateStatus(formatPartial(p))),
  );
  // vscode-languageclient 10 offers textDocument.inlineCompletion only
  // through its proposed features; without them no ghost text ever appears.
  client.registerProposedFeatures();
  try {
    await client.start();
    // a new daemon knows no cursor yet: the active editor's, now
    cursorNotifier.reset();
    cursorMoved(vscode.window.activeTextEditor);
  } catch (e) {
    lastStatus = { state: 'error' };
    updateStatus();
    void vscode.window.showErrorMessage(`infilld: the daemon did not start: ${String(e)}`);
  }
}

async function stopClient(): Promise<void> {
  const c = client;
  client = undefined;
  shown = undefined;
  if (c) {
    await c.stop();
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel('infilld', { log: true });
  statusItem = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
  statusItem.command = 'infilld.showLog';
  context.subscriptions.push(
    output,
    statusItem,
    debouncer,
    cursorNotifier,
    vscode.window.onDidChangeTextEditorSelection((e) => cursorMoved(e.textEditor)),
    vscode.window.onDidChangeActiveTextEditor((e) => cursorMoved(e)),
    vscode.commands.registerCommand('infilld.regenerateSelection', regenerateSelection),
    vscode.commands.registerCommand('infilld.acceptNextWord', () => acceptPart('word')),
    vscode.commands.registerCommand('infilld.acceptNextLine', () => acceptPart('line')),
    vscode.commands.registerCommand('infilld.showLog', () => output.show(true)),
    vscode.commands.registerCommand('infilld.restart', async () => {
      await stopClient();
      await startClient(context);
    }),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (!e.affectsConfiguration('infilld')) {
        return;
      }
      const s = settings();
      debouncer.delayMs = s.debounceMs;
      // The command line needs a new daemon; model, device and partial go to
      // the running one (it reloads the model without dropping the session).
      const restart = ['path', 'logLevel', 'extraArgs'].some((k) =>
        e.affectsConfiguration(`infilld.${k}`),
      );
      if (restart || !client) {
        await stopClient();
        await startClient(context);
      } else if (['modelPath', 'device', 'partial'].some((k) => e.affectsConfiguration(`infilld.${k}`))) {
        await client.sendNotification(DidChangeConfigurationNotification.type, {
          settings: initializationOptions(s),
        });
      }
    }),
  );
  updateStatus();
  await startClient(context);
}

export async function deactivate(): Promise<void> {
  await stopClient();
}
