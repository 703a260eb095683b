// End to end in a REAL VS Code: code-server (Code 1.139) in Debian's Chromium,
// driven by playwright-core, with the built .vsix installed and the real daemon
// running the tiny random-weight model. The model writes random text, so every
// check compares what the editor shows or inserts with what the daemon sent,
// read from the daemon's own log file (debug level logs each answer).
//
// Usage (run with the Node 24 of setup.sh):
//   node e2e.mjs --env ENV --vsix X.vsix --daemon INFILLD --model DIR
//                --compiled OUT --out DIR [--chromium BIN] [--keep]
// ENV: the folder setup.sh filled; --keep leaves the temporary folders; OUT: the extension compiled by
// vscode_check.sh (for partial.js, the word split the extension uses);
// DIR: where the screenshots and logs go.
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values: arg } = parseArgs({
  options: {
    env: { type: 'string' },
    vsix: { type: 'string' },
    daemon: { type: 'string' },
    model: { type: 'string' },
    compiled: { type: 'string' },
    out: { type: 'string' },
    chromium: { type: 'string', default: process.env.INFILLD_CHROMIUM ?? '/usr/bin/chromium' },
    keep: { type: 'boolean', default: false },
  },
});
for (const k of ['env', 'vsix', 'daemon', 'model', 'compiled', 'out']) {
  if (!arg[k]) {
    console.error(`e2e.mjs: --${k} is required`);
    process.exit(2);
  }
}
const t0 = Date.now();
const secs = () => ((Date.now() - t0) / 1000).toFixed(1);
const log = (m) => console.log(`[${secs()}s] ${m}`);
let failures = 0;
function check(cond, what, detail) {
  console.log(`${cond ? 'ok  ' : 'FAIL'} ${what}${!cond && detail !== undefined ? `\n     ${detail}` : ''}`);
  if (!cond) failures++;
  return cond;
}
function need(file, what) {
  if (!fs.existsSync(file)) {
    console.error(`FAIL ${what} missing: ${file}`);
    process.exit(1);
  }
}
const envDir = path.resolve(arg.env);
const codeServer = path.join(envDir, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
need(codeServer, 'code-server (tests/editors/vscode/setup.sh installs it)');
need(arg.chromium, 'Chromium (Debian package chromium; ./bootstrap.sh installs it)');
need(arg.vsix, 'the .vsix');
need(arg.daemon, 'the daemon');
need(path.join(arg.model, 'config.json'), 'the tiny model');
const require = createRequire(path.join(envDir, 'package.json'));
const { chromium } = require('playwright-core');
const { splitAccept } = require(path.resolve(arg.compiled, 'src', 'partial.js'));

const outDir = path.resolve(arg.out);
fs.mkdirSync(outDir, { recursive: true });
// A fresh user-data dir, extensions dir, HOME and workspace copy per run.
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'infilld-vscode-e2e-'));
const userData = path.join(tmp, 'user-data');
const extDir = path.join(tmp, 'extensions');
const home = path.join(tmp, 'home');
const work = path.join(tmp, 'workspace');
for (const d of [userData, extDir, home, work, path.join(userData, 'User')]) fs.mkdirSync(d, { recursive: true });
const daemonLog = path.join(outDir, 'daemon.log');
fs.rmSync(daemonLog, { force: true });
// A second model folder, for the model change through settings: a copy, so
// the status bar shows a different name.
const model2 = path.join(tmp, 'models', 'tiny-second');
fs.cpSync(path.resolve(arg.model), model2, { recursive: true });
// The tiny model's text rarely parses: no syntax validation, a fixed seed,
// one candidate, few steps (the same as the Neovim end-to-end test). The
// settings and the file are shared with first_state.py, which checks the
// daemon's answer for the first suggestion's state at the LSP level.
const here = path.dirname(fileURLToPath(import.meta.url));
const daemonConf = path.join(tmp, 'infilld.json');
fs.copyFileSync(path.join(here, 'infilld.json'), daemonConf);
const src = fs.readFileSync(path.join(here, 'sample.py.in'), 'utf8');
const file = path.join(work, 'sample.py');
fs.writeFileSync(file, src);

const settingsFile = path.join(userData, 'User', 'settings.json');
const settings = {
  'files.autoSave': 'off',
  'files.hotExit': 'off',
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
  'security.workspace.trust.enabled': false,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoUpdate': false,
  'extensions.autoCheckUpdates': false,
  'extensions.ignoreRecommendations': true,
  'chat.disableAIFeatures': true,
  'git.enabled': false,
  'editor.inlineSuggest.enabled': true,
  // No suggest widget: Tab must go to the inline suggestion.
  'editor.quickSuggestions': { other: 'off', comments: 'off', strings: 'off' },
  'editor.suggestOnTriggerCharacters': false,
  'editor.wordBasedSuggestions': 'off',
  'editor.minimap.enabled': false,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'editor.tabSize': 4,
  'editor.detectIndentation': false,
  'window.zoomLevel': 0,
  'infilld.path': path.resolve(arg.daemon),
  'infilld.modelPath': path.resolve(arg.model),
  'infilld.device': 'cpu',
  'infilld.debounceMs': 50,
  'infilld.logLevel': 'debug',
  'infilld.extraArgs': ['--config', daemonConf, '--log-file', daemonLog],
};
fs.writeFileSync(settingsFile, JSON.stringify(settings, null, 2));
// Code 1.139 binds no key to editor.action.inlineSuggest.trigger (older ones
// had Alt+\): the first suggestion's explicit request needs one.
fs.writeFileSync(path.join(userData, 'User', 'keybindings.json'), JSON.stringify([
  { key: 'alt+\\', command: 'editor.action.inlineSuggest.trigger', when: 'editorTextFocus' },
], null, 2));

// code-server runs under the Node 24 that runs this script; the gallery
// points at a dead loopback port so nothing looks for a marketplace.
const env = {
  ...process.env,
  HOME: home,
  XDG_CONFIG_HOME: path.join(home, '.config'),
  XDG_DATA_HOME: path.join(home, '.local', 'share'),
  XDG_CACHE_HOME: path.join(home, '.cache'),
  PATH: `${path.dirname(process.execPath)}:${process.env.PATH}`,
  EXTENSIONS_GALLERY: JSON.stringify({ serviceUrl: 'http://127.0.0.1:9/gallery', itemUrl: 'http://127.0.0.1:9/item' }),
};
delete env.VSCODE_IPC_HOOK_CLI;
const common = ['--user-data-dir', userData, '--extensions-dir', extDir];

// code-server's CLI now and then dies at exit ("double free or corruption",
// SIGABRT) or hangs after its work, on fresh machines as on ours; that process
// holds none of our code, so a failed attempt that left no extension behind is
// retried once. What is checked is the installed extension itself.
const installed = () => fs.existsSync(extDir) && fs.readdirSync(extDir).some((d) => d.startsWith('infilld.infilld'));
const install = () => spawnSync(process.execPath,
  [codeServer, ...common, '--install-extension', path.resolve(arg.vsix), '--force'],
  { env, encoding: 'utf8', timeout: 60000 });
log('installing the .vsix');
let inst = install();
if (inst.status !== 0 && !installed()) {
  log(`code-server --install-extension ended with ${inst.status ?? inst.signal}: ` +
      `${(inst.stderr || '').trim().slice(-300)}; retrying once`);
  inst = install();
}
check(/infilld/.test(inst.stdout || '') && installed(),
  'code-server --install-extension installed the .vsix', `${inst.status ?? inst.signal} ${(inst.stdout || '').trim()}`);

const port = await new Promise((resolve, reject) => {
  const s = net.createServer();
  s.once('error', reject);
  s.listen(0, '127.0.0.1', () => {
    const p = s.address().port;
    s.close(() => resolve(p));
  });
});
log(`starting code-server on 127.0.0.1:${port}`);
const serverLog = fs.createWriteStream(path.join(outDir, 'code-server.log'));
const server = spawn(process.execPath, [codeServer, ...common, '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`,
  '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', '--disable-getting-started-override',
  '--ignore-last-opened', work], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
server.stdout.pipe(serverLog);
server.stderr.pipe(serverLog);
let serverExited = false;
server.on('exit', () => {
  serverExited = true;
});

let browser;
const cleanup = async () => {
  try {
    await browser?.close();
  } catch {
    /* already gone */
  }
  try {
    process.kill(-server.pid, 'SIGTERM');
  } catch {
    /* already gone */
  }
  if (!arg.keep) fs.rmSync(tmp, { recursive: true, force: true });
};
const deadline = setTimeout(async () => {
  console.log('FAIL the whole test ran past 300 s');
  await cleanup();
  process.exit(1);
}, 300000);

async function until(what, fn, ms = 60000, every = 100) {
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    last = await fn();
    if (last) return last;
    if (serverExited) throw new Error(`code-server exited while waiting for ${what}`);
    await new Promise((r) => setTimeout(r, every));
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}`);
}

// The daemon's answers, from its log: [{token, kind, value}] in order.
function answers() {
  let text = '';
  try {
    text = fs.readFileSync(daemonLog, 'utf8');
  } catch {
    return [];
  }
  const out = [];
  for (const line of text.split('\n')) {
    const m = /answer to request (\d+), (items|edit): (.*)$/.exec(line);
    if (!m) continue;
    try {
      out.push({ token: Number(m[1]), kind: m[2], value: JSON.parse(m[3]) });
    } catch {
      out.push({ token: Number(m[1]), kind: m[2], value: null, broken: m[3] });
    }
  }
  return out;
}
const daemonStarts = () => {
  try {
    return (fs.readFileSync(daemonLog, 'utf8').match(/serving LSP on stdio/g) ?? []).length;
  } catch {
    return 0;
  }
};

// Runs in the page: the editor's lines and the ghost text, as a user sees
// them. text[i] is document line i+1 (from the line-number gutter at the same
// height); lines scrolled out of view are undefined. Ghost spans are dropped
// from the lines; the view zone holding span.ghost-text gives the further
// lines of a multi-line suggestion.
const READ_EDITOR = () => {
  const ed = document.querySelector('.editor-instance .monaco-editor');
  if (!ed) return null;
  const fix = (s) => s.replace(/\u00a0/g, ' ');
  const byTop = (a, b) => parseFloat(a.style.top) - parseFloat(b.style.top);
  const numberAt = new Map();
  for (const d of ed.querySelectorAll('.margin-view-overlays > div')) {
    const n = d.querySelector('.line-numbers');
    if (n) numberAt.set(parseFloat(d.style.top), Number(n.textContent));
  }
  const text = [];
  for (const l of ed.querySelectorAll('.view-lines > .view-line')) {
    const n = numberAt.get(parseFloat(l.style.top));
    if (!n) continue;
    const c = l.cloneNode(true);
    c.querySelectorAll('.ghost-text-decoration, .ghost-text-decoration-preview, .ghost-text').forEach((g) => g.remove());
    text[n - 1] = fix(c.textContent);
  }
  const first = [...ed.querySelectorAll('.view-lines span.ghost-text-decoration')].map((g) => fix(g.textContent)).join('');
  const zones = [...ed.querySelectorAll('.view-zones > [monaco-view-zone]')].filter((z) => z.querySelector('span.ghost-text'));
  const more = zones.flatMap((z) => [...z.querySelectorAll('.view-line')].sort(byTop).map((l) => fix(l.textContent)));
  return { text, first, more, hasGhost: first !== '' || more.length > 0 };
};
const readEditor = () => page.evaluate(READ_EDITOR);
const statusText = () => page.evaluate(() => {
  const items = [...document.querySelectorAll('.statusbar-item')];
  const it = items.find((i) => /infilld/.test(i.id ?? '') || /infilld/.test(i.getAttribute('aria-label') ?? ''));
  return it ? it.textContent.replace(/\u00a0/g, ' ').trim() : '';
});
// The daemon's state as the status bar shows it (editors/vscode/src/status.ts:
// a spinner while loading or busy, a sparkle when ready).
const statusState = () => page.evaluate(() => {
  const items = [...document.querySelectorAll('.statusbar-item')];
  const it = items.find((i) => /infilld/.test(i.id ?? '') || /infilld/.test(i.getAttribute('aria-label') ?? ''));
  if (!it) return 'none';
  for (const [cls, state] of [['codicon-loading', 'loading'], ['codicon-sync', 'busy'], ['codicon-error', 'error'],
    ['codicon-circle-slash', 'none'], ['codicon-sparkle', 'ready']]) {
    if (it.querySelector(`.${cls}`)) return state;
  }
  return 'unknown';
});

// Monaco renders a tab as the spaces up to the next tab stop (tabSize 4):
// `shown` matches `sent` when each tab became 1 to 4 spaces, all else equal.
const escapeRe = (t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
function renders(shown, sent) {
  if (typeof shown !== 'string') return false;
  return new RegExp(`^${sent.split('\t').map(escapeRe).join(' {1,4}')}$`, 'u').test(shown);
}
const sameLines = (shown, sent) => shown.length === sent.length && sent.every((l, i) => renders(shown[i], l));

let page;
try {
  await until('code-server /healthz', async () => {
    try {
      return (await fetch(`http://127.0.0.1:${port}/healthz`)).ok;
    } catch {
      return false;
    }
  }, 90000, 250);
  log('code-server answers; launching Chromium');
  browser = await chromium.launch({
    executablePath: arg.chromium,
    headless: true,
    // launch() gives every run a fresh, temporary profile.
    args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update',
      '--disable-dev-shm-usage', '--no-first-run', '--disable-gpu'],
  });
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
  page = await ctx.newPage();
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(work)}`);
  await page.waitForSelector('.monaco-workbench', { timeout: 90000 });
  log('workbench up');

  // Open the file through Quick Open, as a user would.
  // The file index may not be ready at first: wait for a result row naming
  // the file, else close the box and try again.
  const openFile = () => until('the file open in an editor', async () => {
    await page.keyboard.press('Escape');
    await page.keyboard.press('Control+P');
    try {
      await page.waitForSelector('.quick-input-widget input', { state: 'visible', timeout: 3000 });
      await page.keyboard.type('sample.py');
      await page.waitForSelector('.quick-input-list .monaco-list-row[aria-label*="sample.py"]', { timeout: 3000 });
    } catch {
      return false;
    }
    await page.keyboard.press('Enter');
    try {
      await page.waitForSelector('.editor-instance .monaco-editor .view-line', { timeout: 5000 });
    } catch {
      return false;
    }
    return (await readEditor())?.text.some((l) => l.includes('def scale'));
  }, 60000, 500);
  await openFile();
  check(true, 'sample.py opened through Quick Open');
  await until('the daemon to start', async () => daemonStarts() >= 1, 60000);
  const model1 = path.basename(path.resolve(arg.model));
  await until('the status bar item', async () => (await statusText()).includes(model1), 60000);
  check(true, `status bar shows the model: "${await statusText()}"`);
  // The first request goes to an idle daemon: the status bar names the model
  // while it still loads (twice at start: the default, then the configured one).
  let readyPolls = 0;
  await until('the daemon to be ready', async () => {
    readyPolls = (await statusState()) === 'ready' ? readyPolls + 1 : 0;
    return readyPolls >= 2;
  }, 60000, 250);

  // Cursor to the blank, indented line 7 of the body, then type.
  // Keys only (no dialog whose focus could lag): top, n-1 lines down, end.
  const toLineEnd = async (n) => {
    await page.keyboard.press('Escape');
    await page.keyboard.press('Control+Home');
    for (let i = 1; i < n; i++) await page.keyboard.press('ArrowDown');
    await page.keyboard.press('End');
  };

  // The latest items answer logged since `before`, or false.
  const latestAnswer = (before) => {
    const a = answers().slice(before).filter((x) => x.kind === 'items');
    return a.length > 0 ? a[a.length - 1] : false;
  };

  // Types `typed`, waits for ghost text whose lines equal the daemon's latest
  // answer; retries with one more character (the random model's text can be
  // dropped whole by post-processing) at most 4 times.
  // sameState: the answer must be for the document exactly as `typed` left it
  // (the first suggestion, whose several lines the checks need): no character
  // is added. While the daemon is busy the wait goes on (a loaded machine);
  // once it has been idle 2 s with no answer (VS Code sent no inline request
  // after the last keystroke), the suggestion is asked for explicitly at that
  // same state (editor.action.inlineSuggest.trigger, Alt+\).
  async function typeForGhost(typed, what, { sameState = false } = {}) {
    for (let attempt = 0; attempt < 5; attempt++) {
      const before = answers().length;
      await page.keyboard.type(attempt === 0 ? typed : 'x', { delay: 30 });
      let got;
      if (sameState) {
        const t1 = Date.now();
        let triggered = 0;
        let idlePolls = 0;
        try {
          got = await until(`${what}: an answer`, async () => {
            const a = latestAnswer(before);
            if (a) return a;
            idlePolls = (await statusState()) === 'ready' ? idlePolls + 1 : 0;
            if (triggered < 3 && idlePolls >= 20) {
              triggered++;
              idlePolls = 0;
              log(`${what}: no answer and the daemon idle ${((Date.now() - t1) / 1000).toFixed(1)} s ` +
                `after typing; asking explicitly at the same state (Alt+\\, ${triggered} of 3)`);
              await page.keyboard.press('Alt+Backslash');
            }
            return false;
          }, 150000);
        } catch (e) {
          check(false, `${what}: the daemon answered for the typed state`, String(e));
          return undefined;
        }
        log(`${what}: answered ${triggered ? 'after the explicit request' : 'to the typing'} ` +
          `${((Date.now() - t1) / 1000).toFixed(1)} s after the last keystroke`);
        if (got.broken === undefined && (!got.value[0] || got.value[0].insertText.trim() === '')) {
          check(false, `${what}: a non-empty answer for the typed state`, JSON.stringify(got.value));
          return undefined;
        }
      } else {
        try {
          got = await until(`${what}: an answer`, async () => latestAnswer(before), 45000);
        } catch (e) {
          // A keystroke VS Code did not follow with an inline request (the
          // widget was still settling) leaves nothing to wait for: type on.
          if (attempt < 4) {
            log(`${what}: no answer within 45 s, typing one more character (attempt ${attempt + 1})`);
            continue;
          }
          check(false, `${what}: the daemon answered`, String(e));
          return undefined;
        }
      }
      if (got.broken !== undefined) {
        check(false, `${what}: the daemon's logged answer is whole JSON`, got.broken.slice(0, 200));
        return undefined;
      }
      if (!got.value[0] || got.value[0].insertText.trim() === '') {
        log(`${what}: empty answer, typing one more character (attempt ${attempt + 1})`);
        continue;
      }
      // Each poll re-reads the latest answer: an answer to an earlier
      // keystroke may be logged first and be superseded by the one shown.
      let shown;
      try {
        shown = await until(`${what}: ghost text`, async () => {
          const all = answers().slice(before).filter((x) => x.kind === 'items' && x.value?.[0]);
          const item = all[all.length - 1].value[0];
          // Both parts, when the text has them: the zone can come first.
          const v = await readEditor();
          const lines = item.insertText.split('\n');
          const firstOk = lines[0] === '' || v?.first !== '';
          const moreOk = v?.more.length >= lines.length - 1;
          return v?.hasGhost && firstOk && moreOk ? { item, view: v } : false;
        }, 20000);
      } catch (e) {
        check(false, `${what}: ghost text shown for answer ${JSON.stringify(got.value[0].insertText)}`, String(e));
        return undefined;
      }
      return shown;
    }
    check(false, `${what}: a non-empty answer in 5 tries`);
    return undefined;
  }

  // 1. Ghost text equals the daemon's answer; Tab accepts it.
  await toLineEnd(7);
  const g1 = await typeForGhost('for v in values:\n', 'first suggestion', { sameState: true });
  if (g1) {
    const { item, view } = g1;
    const ln = item.range.start.line;
    const lines = item.insertText.split('\n');
    check(renders(view.first, lines[0]),
      'first ghost line (span.ghost-text-decoration) equals the daemon\'s first line',
      `shown ${JSON.stringify(view.first)} vs sent ${JSON.stringify(lines[0])}`);
    // Several lines exercise the view-zone rendering below: the peaked model's
    // answer for this state (seed 7) has them. The one-line answers seen here
    // were the answer for another state (the 'x' once typed after a missed
    // inline request), never a different answer for this one.
    check(lines.length > 1, 'the suggestion has several lines (else pick another seed in infilld.json)',
      JSON.stringify(item.insertText));
    check(view.more.length === lines.length - 1 && lines.slice(1).every((l, i) => renders(view.more[i], l)),
      'further ghost lines (view-zone span.ghost-text) equal the daemon\'s further lines',
      `shown ${JSON.stringify(view.more)} vs sent ${JSON.stringify(lines.slice(1))}`);
    await page.screenshot({ path: path.join(outDir, 'vscode-ghost-text.png') });
    log('screenshot written');
    // The buffer the suggestion should make: the line up to the item's range
    // start, the text, then the rest of the document.
    const want = [...view.text.slice(0, ln),
      ...(view.text[ln].slice(0, item.range.start.character) + item.insertText).split('\n'),
      ...view.text.slice(ln + 1)];
    check(view.text[6] === '    for v in values:' && ln === 7, 'the hole is the new, indented body line 8',
      JSON.stringify({ line7: view.text[6], range: item.range }));
    await page.keyboard.press('Tab');
    const after = await until('the buffer to take the suggestion', async () => {
      const v = await readEditor();
      return v && !v.hasGhost && v.text.join('\n') !== view.text.join('\n') ? v : false;
    }, 10000).catch(() => undefined);
    // Lines from the one above the hole to the one after the insertion.
    const from = ln - 1;
    const to = ln + lines.length + 1;
    const got = after?.text.slice(from, to);
    check(got !== undefined && sameLines(got, want.slice(from, to)), 'Tab inserted exactly the suggestion into the buffer',
      `buffer ${JSON.stringify(got)}\n     want   ${JSON.stringify(want.slice(from, to))}`);
  }

  // 2. Accept the next word (infilld.acceptNextWord, Ctrl+Alt+Right).
  await page.keyboard.press('End');
  await page.keyboard.press('Enter');
  const g2 = await typeForGhost('total = ', 'second suggestion');
  if (g2) {
    const { item, view } = g2;
    const ln = item.range.start.line;
    const lineBefore = view.text[ln];
    const { taken } = splitAccept(item.insertText, 'word');
    await page.keyboard.press('Control+Alt+ArrowRight');
    const w = await until('the word to land', async () => {
      const x = await readEditor();
      return x && x.text[ln] !== lineBefore ? x : false;
    }, 10000).catch(() => undefined);
    const want = lineBefore + taken.split('\n')[0];
    check(w !== undefined && taken.length < item.insertText.length && renders(w.text[ln], want),
      `accept-word inserted the next word ${JSON.stringify(taken)} and no more`,
      `line ${JSON.stringify(w?.text[ln])} want ${JSON.stringify(want)}`);
  }

  // 3. Regenerate selection: select line 2's expression `a + b` (End, then
  // Shift+Left five times), Ctrl+Alt+R; the daemon's workspace/applyEdit must
  // replace exactly the selection.
  await page.keyboard.press('Escape');
  await toLineEnd(2);
  for (let i = 0; i < 5; i++) await page.keyboard.press('Shift+ArrowLeft');
  const line2 = (await readEditor()).text[1];
  const nEdits = answers().filter((a) => a.kind === 'edit').length;
  await page.keyboard.press('Control+Alt+KeyR');
  try {
    const e = await until('the regenerate edit', async () => {
      const a = answers().filter((x) => x.kind === 'edit');
      return a.length > nEdits ? a[a.length - 1] : false;
    }, 90000);
    const change = (Object.values(e.value.changes ?? {})[0] ?? [])[0];
    const sel = { start: { line: 1, character: 11 }, end: { line: 1, character: 16 } };
    check(change !== undefined && JSON.stringify(change.range) === JSON.stringify(sel),
      'the regenerate edit covers the selection', JSON.stringify(change?.range));
    const nl = change?.newText.split('\n') ?? [''];
    const want = line2.slice(0, 11) + nl[0] + (nl.length === 1 ? line2.slice(16) : '');
    const x = await until('the edit in the buffer', async () => {
      const v = await readEditor();
      return v && v.text[1] !== line2 ? v : false;
    }, 10000).catch(() => undefined);
    check(x !== undefined && renders(x.text[1], want), 'regenerate selection replaced the selection with the daemon\'s text',
      `line ${JSON.stringify(x?.text[1])} want ${JSON.stringify(want)}`);
  } catch (err) {
    check(false, 'regenerate selection: the daemon answered with an edit', String(err));
  }

  // 4. The status bar: model · device · latency.
  const st = await statusText();
  check(new RegExp(`${escapeRe(model1)} · cpu · \\d+ ms`).test(st), `status bar text after completions: "${st}"`);

  // 5. A model change through the Settings editor, as a user makes it: the
  // running daemon reloads, the status bar names the new model.
  try {
    await page.keyboard.press('Escape');
    await page.keyboard.press('Control+Comma');
    await page.waitForSelector('.settings-editor', { state: 'visible', timeout: 20000 });
    await page.waitForTimeout(500);
    await page.keyboard.type('infilld.modelPath');
    // The list re-renders while the search settles: a row found can be
    // detached before the click, so finding and clicking are retried together.
    await until('the infilld.modelPath row', async () => {
      try {
        for (const r of await page.$$('.settings-editor .setting-item-text')) {
          if (!/modelPath|Model Path/i.test(await r.innerText())) continue;
          const input = await r.$('input');
          if (!input) return false;
          await input.click({ timeout: 2000 });
          return true;
        }
      } catch {
        /* detached meanwhile: look again */
      }
      return false;
    }, 20000, 250);
    await page.keyboard.press('Control+A');
    await page.keyboard.type(model2);
    await page.keyboard.press('Tab');
    await until('settings.json to hold the new model', async () =>
      fs.readFileSync(settingsFile, 'utf8').includes('tiny-second'), 20000);
    check(true, 'the Settings editor wrote infilld.modelPath to settings.json');
    await until('the new model in the status bar', async () => /tiny-second/.test(await statusText()), 60000);
    await until('the new model in the status bar', async () => /tiny-second/.test(await statusText()), 60000);
    check(true, `model change through settings: "${await statusText()}"`);
  } catch (err) {
    check(false, 'model change through settings shows the new model', `${err}; status "${await statusText()}"`);
  }
  check(daemonStarts() === 1, 'the model change kept the same daemon process');

  // 6. Restart the daemon from the command palette; suggestions come back.
  await page.keyboard.press('Escape');
  await page.keyboard.press('F1');
  await page.waitForSelector('.quick-input-widget input', { state: 'visible', timeout: 10000 });
  await page.keyboard.type('infilld: Restart the infilld daemon');
  await page.waitForTimeout(500);
  await page.keyboard.press('Enter');
  try {
    await until('a second daemon start', async () => daemonStarts() >= 2, 60000);
    check(true, 'infilld.restart started a new daemon');
  } catch (err) {
    check(false, 'infilld.restart started a new daemon', String(err));
  }
  await openFile();
  await toLineEnd(7);
  await page.keyboard.press('Enter');
  const g3 = await typeForGhost('z = ', 'suggestion after the restart');
  check(g3 !== undefined && renders(g3.view.first, g3.item.insertText.split('\n')[0]),
    'after the restart the new daemon\'s answer is shown as ghost text',
    JSON.stringify({ shown: g3?.view.first, sent: g3?.item.insertText }));
} catch (err) {
  check(false, 'the session ran to the end', err?.stack ?? String(err));
  try {
    await page?.screenshot({ path: path.join(outDir, 'failure.png') });
  } catch {
    /* no page */
  }
}
clearTimeout(deadline);
await cleanup();
console.log(`${failures === 0 ? 'PASS' : 'FAIL'} vscode e2e in ${secs()} s (${failures} failed)`);
process.exit(failures === 0 ? 0 : 1);
