// bench_session: replays a realistic LSP editing session against the real
// daemon (a benchmark program, not a test; issue 19) and reports per request
// latency, the share answered inside the budget, the null rate, steps, rows
// recomputed and what the typing-through cache served.
//
// For each file of tests/data/session/sessions.json (1,000-line C, JavaScript
// and Lua files): open it with one function's lines removed (an empty line in
// their place), stay idle 5 s, then
//   1. type the function back line by line, each line in one or two bursts
//      (one didChange per keystroke), an automatic inlineCompletion request
//      after every burst, then a pause of 300-800 ms (seeded) before the next;
//   2. edit inside existing code at six places (seeded): delete the tail of a
//      line, ask, retype the tail in two bursts, asking after each;
//   3. accept some suggestions: every third non-empty answer is typed through
//      (up to 3 keystrokes, each asked again: the typing-through cache
//      answers), its rest accepted (didChange + infilld.accepted), and after
//      a pause undone, so the script's text goes on as planned.
// The simulated user waits for every answer before typing on (so every
// latency is measured in full); an answer later than its pause is counted
// as "late" (a real user would have typed over it).
//
// Requests are served by the model (infilld/status went busy: the plan of
// that job is read from the status that follows), by the typing-through
// cache (no job), or answered at once without a job.
//
// --llama URL replays the same session against llama.cpp's llama-server
// `/infill` (cache_prompt, llama.vim's request layout: 256 lines of prefix,
// 64 of suffix, the cursor line's start as `prompt`) instead of the daemon,
// with --n-predict tokens (default 16); the editing script is the same, the
// answers come from the server, and no validation applies.
//
// Usage: node bench_session.mjs --infilld EXE --model DIR [--label NAME]
//          [--lang c,javascript,lua] [--seed N] [--max-requests N] [--idle-ms MS]
//          [--settings JSON] [--json OUT] [--data DIR] [--no-accept] [--ask-delay-ms MS]
//          [--no-cursor] [--open-request]
//        node bench_session.mjs --compare A.json B.json
//        node bench_session.mjs --llama URL [--n-predict N] ...
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '..', 'package.json'));

// ---- options ----------------------------------------------------------------------
const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : def;
};
const exe = opt('--infilld');
const modelDir = opt('--model');
const llamaUrl = opt('--llama');
const label = opt('--label', llamaUrl ? 'llama-server' : path.basename(modelDir || 'default'));
const langs = opt('--lang', 'c,javascript,lua').split(',');
const seed = Number(opt('--seed', '1'));
const maxRequests = Number(opt('--max-requests', '0')); // per language, 0 = the whole script
const idleMs = Number(opt('--idle-ms', '5000'));
const extra = JSON.parse(opt('--settings', '{}'));
const jsonOut = opt('--json');
// --expect-requests N (the smoke test): exit 1 unless N requests were made and
// every model-served one came with its plan.
const expectRequests = Number(opt('--expect-requests', '0'));
const nPredict = Number(opt('--n-predict', '16'));
const dataDir = opt('--data', path.join(here, '..', 'data', 'session'));
// --no-accept: never type through or accept, so that the script (and with
// latencyBudgetMs 0 every request) is the same whatever the answers are.
const noAccept = args.includes('--no-accept');
// --ask-delay-ms N: the user pauses N ms after a burst before the request
// (an editor whose inline-suggest delay is longer than the daemon's
// idlePrefillDelayMs, or a request invoked after a pause); 0 = at once.
const askDelayMs = Number(opt('--ask-delay-ms', '0'));
// The cursor as our editor clients report it (infilld/didChangeCursor): on
// open and on every move to a new place; --no-cursor: never (LSP alone).
const sendCursor = !args.includes('--no-cursor');
// --open-request: one automatic request at the cursor right after the idle
// wait on the newly opened file, before any typing (phase "open", counted as
// the first request).
const openRequest = args.includes('--open-request');
// --compare A.json B.json: agreement of two runs' answers, request by request
// (identical first line / identical full text), e.g. mode exact vs cached.
const cmpI = args.indexOf('--compare');
if (cmpI >= 0) {
  const [a, b] = [args[cmpI + 1], args[cmpI + 2]].map((f) => JSON.parse(fs.readFileSync(f, 'utf8')));
  const ra = a.records.filter((r) => r.phase !== 'accept');
  const rb = b.records.filter((r) => r.phase !== 'accept');
  const n = Math.min(ra.length, rb.length);
  let line = 0, full = 0, bothEmpty = 0, aligned = 0;
  for (let i = 0; i < n; i++) {
    if (ra[i].lang !== rb[i].lang || ra[i].phase !== rb[i].phase) break;
    aligned++;
    const x = ra[i].fullText, y = rb[i].fullText;
    if (x === y) full++;
    if (x.split('\n')[0] === y.split('\n')[0]) line++;
    if (!x && !y) bothEmpty++;
  }
  const pc = (k) => `${((100 * k) / Math.max(1, aligned)).toFixed(1)} %`;
  console.log(`compare ${a.label} vs ${b.label}: ${aligned} aligned requests (of ${ra.length} / ${rb.length}); ` +
    `identical first line ${pc(line)}, identical full text ${pc(full)}; both empty ${pc(bothEmpty)}`);
  process.exit(0);
}
const BUDGET_MS = extra.latencyBudgetMs !== undefined
  ? (typeof extra.latencyBudgetMs === 'object' ? extra.latencyBudgetMs.automatic
    : extra.latencyBudgetMs)
  : 400;
if (!llamaUrl && !exe) {
  console.error('usage: bench_session.mjs --infilld EXE [--model DIR] | --llama URL');
  process.exit(2);
}

// ---- deterministic pseudo-random numbers (mulberry32) -------------------------------
function rng(s) {
  let a = s >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
const now = () => Number(process.hrtime.bigint()) / 1e6;

// ---- the document as the editor holds it (UTF-16 positions) ------------------------
class Doc {
  constructor(text) { this.text = text; }
  pos(off) {
    let line = 0, start = 0;
    for (let i = this.text.indexOf('\n'); i >= 0 && i < off; i = this.text.indexOf('\n', i + 1)) {
      line++;
      start = i + 1;
    }
    return { line, character: off - start };
  }
  lineStart(n) { // offset of 0-based line n
    let off = 0;
    for (let i = 0; i < n; i++) off = this.text.indexOf('\n', off) + 1;
    return off;
  }
}

// ---- a completion server: the daemon over LSP, or llama-server over HTTP -------------
class Daemon {
  async start() {
    let rpc;
    try {
      rpc = require('vscode-jsonrpc/node');
    } catch {
      console.error('vscode-jsonrpc is not installed (run ./bootstrap.sh)');
      process.exit(2);
    }
    const argv = modelDir ? ['--model', modelDir] : [];
    this.proc = spawn(exe, [...argv, '--device', 'cpu', '--log-level', 'warn'], {
      env: { ...process.env, XDG_CONFIG_HOME: '/nonexistent-infilld-bench' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.stderr = '';
    this.proc.stderr.on('data', (b) => { this.stderr += b.toString(); });
    this.conn = rpc.createMessageConnection(new rpc.StreamMessageReader(this.proc.stdout),
      new rpc.StreamMessageWriter(this.proc.stdin));
    this.statuses = [];
    this.waiters = [];
    this.conn.onNotification('infilld/status', (p) => {
      this.statuses.push(p);
      if (p.idlePrefill) this.lastPrefill = p.idlePrefill;
      for (const w of this.waiters.splice(0)) w();
    });
    this.conn.onNotification(() => {});
    this.conn.onRequest('window/workDoneProgress/create', () => null);
    this.conn.onRequest('workspace/applyEdit', () => ({ applied: true }));
    this.conn.onError(() => {});
    this.conn.listen();
    await this.conn.sendRequest('initialize', {
      processId: process.pid,
      rootUri: null,
      capabilities: { textDocument: { inlineCompletion: { dynamicRegistration: false } } },
      initializationOptions: { status: true, seed, ...extra },
    });
    this.conn.sendNotification('initialized', {});
    const t0 = now();
    await this.until((s) => s.state === 'ready' || s.state === 'error', 600000);
    const last = this.statuses[this.statuses.length - 1];
    if (!last || last.state !== 'ready') throw new Error('model did not load: ' + this.stderr);
    this.model = last.model;
    this.loadMs = now() - t0;
  }
  // Resolves when a status from index `from` on satisfies pred (or after ms).
  until(pred, ms, from = 0) {
    return new Promise((resolve) => {
      const t = setTimeout(() => resolve(null), ms);
      const check = () => {
        for (let i = from; i < this.statuses.length; i++) {
          if (pred(this.statuses[i])) {
            clearTimeout(t);
            resolve(this.statuses[i]);
            return;
          }
        }
        this.waiters.push(check);
      };
      check();
    });
  }
  open(uri, languageId, text) {
    this.version = 1;
    this.conn.sendNotification('textDocument/didOpen',
      { textDocument: { uri, languageId, version: 1, text } });
  }
  change(uri, range, text) {
    this.conn.sendNotification('textDocument/didChange', {
      textDocument: { uri, version: ++this.version }, contentChanges: [{ range, text }],
    });
  }
  close(uri) { this.conn.sendNotification('textDocument/didClose', { textDocument: { uri } }); }
  cursor(uri, doc, off) {
    this.conn.sendNotification('infilld/didChangeCursor',
      { textDocument: { uri, version: this.version }, position: doc.pos(off) });
  }
  // One automatic request: {ms, item, served, plan}.
  async complete(uri, doc, off) {
    const from = this.statuses.length;
    const t0 = now();
    const res = await this.conn.sendRequest('textDocument/inlineCompletion', {
      textDocument: { uri }, position: doc.pos(off), context: { triggerKind: 2 },
    });
    const ms = now() - t0;
    const items = Array.isArray(res) ? res : (res && res.items) || [];
    const it = items[0];
    const text = it ? (typeof it.insertText === 'string' ? it.insertText : it.insertText.value) : '';
    const busy = this.statuses.slice(from).some((s) => s.state === 'busy');
    let plan = null;
    if (busy) {
      // The job's plan comes with the "ready" after it.
      const st = await this.until((s) => s.state === 'ready', 5000, from);
      plan = st && st.plan ? st.plan : null;
    }
    return {
      ms, text, command: it && it.command, served: busy ? 'model' : (it ? 'cache' : 'none'), plan,
    };
  }
  accepted(command) {
    if (command) {
      this.conn.sendRequest('workspace/executeCommand',
        { command: command.command, arguments: command.arguments }).catch(() => {});
    }
  }
  async stop() {
    try {
      await this.conn.sendRequest('shutdown');
      this.conn.sendNotification('exit');
    } catch { /* the daemon is gone */ }
    await sleep(200);
    this.proc.kill('SIGKILL');
  }
}

class Llama {
  async start() {
    const t0 = now();
    const r = await fetch(llamaUrl + '/props').then((x) => x.json()).catch(() => null);
    if (!r) throw new Error(`no llama-server at ${llamaUrl}`);
    this.model = (r.model_path || 'llama-server') + ' @ ' + llamaUrl;
    this.loadMs = now() - t0;
  }
  open(uri, languageId, text) { this.doc = text; }
  change() {}
  cursor() {}
  close() {}
  accepted() {}
  async complete(uri, doc, off) {
    // llama.vim's layout: n_prefix 256 lines, n_suffix 64, the cursor line's
    // text before the cursor as `prompt`, the rest of it in the suffix.
    const p = doc.pos(off);
    const lines = doc.text.split('\n');
    const cur = lines[p.line];
    const prefix = lines.slice(Math.max(0, p.line - 256), p.line).map((l) => l + '\n').join('');
    const suffix = [cur.slice(p.character), ...lines.slice(p.line + 1, p.line + 1 + 64)]
      .join('\n') + '\n';
    const body = {
      input_prefix: prefix, input_suffix: suffix, input_extra: [], prompt: cur.slice(0, p.character),
      n_predict: nPredict, top_k: 40, top_p: 0.99, stream: false, samplers: ['top_k', 'top_p', 'infill'],
      cache_prompt: true, t_max_prompt_ms: 500, t_max_predict_ms: 1000, response_fields: ['content', 'timings/prompt_n', 'timings/predicted_n', 'timings/prompt_ms', 'timings/predicted_ms'],
    };
    const t0 = now();
    const r = await fetch(llamaUrl + '/infill', {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
    }).then((x) => x.json());
    const ms = now() - t0;
    const text = r.content || '';
    const plan = {
      steps: r['timings/predicted_n'], rowsComputed: r['timings/prompt_n'],
      promptMs: r['timings/prompt_ms'], predictMs: r['timings/predicted_ms'],
    };
    return { ms, text, command: null, served: 'model', plan };
  }
  async stop() {}
}

// ---- one language's session ---------------------------------------------------------
async function runSession(srv, sess, rand, records) {
  const full = fs.readFileSync(path.join(dataDir, sess.file), 'utf8');
  const lines = full.split('\n');
  const [a, b] = sess.type; // 1-based inclusive
  const typed = lines.slice(a - 1, b);
  const text0 = [...lines.slice(0, a - 1), '', ...lines.slice(b)].join('\n');
  const doc = new Doc(text0);
  const uri = 'file:///bench/' + path.basename(sess.file);
  srv.open(uri, sess.languageId, text0);
  let nReq = 0;
  let nonEmpty = 0;
  const done = () => maxRequests > 0 && nReq >= maxRequests;

  const edit = (off, delLen, ins) => {
    const range = { start: doc.pos(off), end: doc.pos(off + delLen) };
    doc.text = doc.text.slice(0, off) + ins + doc.text.slice(off + delLen);
    srv.change(uri, range, ins);
  };
  const type = (off, s) => { // one didChange per keystroke; returns the new cursor
    for (const ch of s) {
      edit(off, 0, ch);
      off += ch.length;
    }
    return off;
  };
  const ask = async (off, phase, pause) => {
    if (askDelayMs > 0 && phase !== 'typethrough') await sleep(askDelayMs);
    const r = await srv.complete(uri, doc, off);
    nReq++;
    const rec = {
      lang: sess.languageId, phase, ms: r.ms, nonNull: r.text.length > 0, served: r.served,
      pauseMs: pause, late: r.ms > pause, plan: r.plan, text: r.text.slice(0, 80), fullText: r.text,
    };
    records.push(rec);
    return r;
  };
  // After a non-empty answer: every third is typed through, accepted, undone.
  const maybeAccept = async (off, r) => {
    if (!r.text || noAccept) return;
    nonEmpty++;
    if (nonEmpty % 3 !== 0 || done()) return;
    const first = r.text.split('\n')[0];
    const k = Math.min(3, first.length);
    let cur = off;
    for (let i = 0; i < k && !done(); i++) {
      cur = type(cur, r.text[i]);
      await ask(cur, 'typethrough', 120);
    }
    const rest = r.text.slice(cur - off);
    edit(cur, 0, rest);
    srv.accepted(r.command);
    records.push({ lang: sess.languageId, phase: 'accept', accepted: r.text.length });
    await sleep(300 + 500 * rand());
    edit(off, r.text.length, ''); // undo: the script's own text goes on
  };
  const pauseAfter = async (r) => {
    const pause = 300 + 500 * rand();
    await sleep(pause - r.ms);
    return pause;
  };

  // 1. the new function, line by line.
  let off = doc.lineStart(a - 1);
  if (sendCursor) srv.cursor(uri, doc, off);
  await sleep(idleMs);
  if (openRequest) {
    const pause = 300 + 500 * rand();
    const r = await ask(off, 'first', pause);
    await sleep(pause - r.ms);
  }
  for (let i = 0; i < typed.length && !done(); i++) {
    const line = typed[i] + (i + 1 < typed.length ? '\n' : '');
    const content = typed[i].trimStart();
    let bursts = [line];
    if (content.length > 20) {
      const ind = typed[i].length - content.length;
      let cut = typed[i].indexOf(' ', ind + Math.floor(content.length / 2));
      if (cut < 0) cut = ind + Math.floor(content.length / 2);
      bursts = [line.slice(0, cut), line.slice(cut)];
    }
    for (const bst of bursts) {
      if (done()) break;
      off = type(off, bst);
      const pause = 300 + 500 * rand();
      const r = await ask(off, nReq === 0 ? 'first' : 'type', pause);
      await sleep(pause - r.ms);
      await maybeAccept(off, r);
    }
  }
  // 2. edits inside existing code, outside the typed function.
  const cand = [];
  for (let n = 0; n < lines.length; n++) {
    if (n >= a - 1 && n < b) continue;
    if (lines[n].trim().length >= 16 && !/^\s*(\/\/|--|\*|\/\*)/.test(lines[n])) cand.push(n);
  }
  for (let e = 0; e < 6 && !done(); e++) {
    const n = cand[Math.floor(rand() * cand.length)];
    // Line n of the original file is line n of the document past the typed region.
    const ls = doc.lineStart(n);
    const line = lines[n];
    const ind = line.length - line.trimStart().length;
    const mid = ind + Math.floor((line.length - ind) * (0.3 + 0.4 * rand()));
    let cut = line.indexOf(' ', mid);
    if (cut < 0 || cut >= line.length - 2) cut = mid;
    const tail = line.slice(cut);
    if (sendCursor) srv.cursor(uri, doc, ls + line.length);
    edit(ls + cut, tail.length, '');
    let cur = ls + cut;
    let r = await ask(cur, 'edit', 0);
    const p0 = await pauseAfter(r);
    records[records.length - 1].pauseMs = p0;
    records[records.length - 1].late = r.ms > p0;
    await maybeAccept(cur, r);
    const h = Math.ceil(tail.length / 2);
    for (const bst of [tail.slice(0, h), tail.slice(h)]) {
      if (done() || !bst) break;
      cur = type(cur, bst);
      const pause = 300 + 500 * rand();
      r = await ask(cur, 'edit', pause);
      await sleep(pause - r.ms);
      await maybeAccept(cur, r);
    }
  }
  srv.close(uri);
}

// ---- statistics -------------------------------------------------------------------------
const pct = (xs, p) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.floor((s.length - 1) * p + 0.5))];
};
const f0 = (x) => (Number.isFinite(x) ? x.toFixed(0) : '-');
const share = (n, d) => (d ? `${((100 * n) / d).toFixed(0)} %` : '-');

function summary(recs) {
  const reqs = recs.filter((r) => r.phase !== 'accept');
  const model = reqs.filter((r) => r.served === 'model');
  const cache = reqs.filter((r) => r.served === 'cache');
  const ms = reqs.map((r) => r.ms);
  const mms = model.map((r) => r.ms);
  const inBudget = reqs.filter((r) => r.nonNull && r.ms <= BUDGET_MS).length;
  const nulls = reqs.filter((r) => !r.nonNull).length;
  const steps = model.map((r) => (r.plan && r.plan.steps) || 0);
  const rows = model.map((r) => (r.plan && r.plan.rowsComputed) || 0);
  const first = reqs.find((r) => r.phase === 'first');
  return {
    requests: reqs.length,
    model: model.length,
    cache: cache.length,
    p50: pct(ms, 0.5), p90: pct(ms, 0.9), p99: pct(ms, 0.99),
    modelP50: pct(mms, 0.5), modelP90: pct(mms, 0.9), modelP99: pct(mms, 0.99),
    answeredInBudget: reqs.length ? inBudget / reqs.length : NaN,
    nullRate: reqs.length ? nulls / reqs.length : NaN,
    late: reqs.filter((r) => r.late).length,
    stepsMean: steps.length ? steps.reduce((x, y) => x + y, 0) / steps.length : NaN,
    stepsP50: pct(steps, 0.5),
    rowsMean: rows.length ? rows.reduce((x, y) => x + y, 0) / rows.length : NaN,
    overBudgetModel: model.filter((r) => r.ms > BUDGET_MS).length,
    firstMs: first ? first.ms : NaN,
    firstPrefilled: first ? !!(first.plan && first.plan.prefillHit) : false,
    accepted: recs.filter((r) => r.phase === 'accept').length,
    rejected: model.reduce((x, r) => x + ((r.plan && r.plan.rejected) || 0), 0),
    noPlan: model.filter((r) => !r.plan).length,
    // context K/V kept between requests (setting contextCache): the store's
    // decision for each model-served request's last run, rows it reused
    kv: model.reduce((o, r) => {
      const w = r.plan && r.plan.contextCache;
      if (w) o[w] = (o[w] || 0) + 1;
      return o;
    }, {}),
    rowsReusedMean: model.length
      ? model.reduce((x, r) => x + ((r.plan && r.plan.rowsReused) || 0), 0) / model.length : NaN,
    // idle prefill: model-served requests whose first step was prefilled
    prefillHits: model.filter((r) => r.plan && r.plan.prefillHit).length,
  };
}

function printRow(name, s) {
  console.log(`${name.padEnd(11)} ${String(s.requests).padStart(4)} ` +
    `${f0(s.p50).padStart(6)} ${f0(s.p90).padStart(6)} ${f0(s.p99).padStart(6)}   ` +
    `${f0(s.modelP50).padStart(6)} ${f0(s.modelP90).padStart(6)}   ` +
    `${share(s.answeredInBudget * s.requests, s.requests).padStart(6)} ` +
    `${share(s.nullRate * s.requests, s.requests).padStart(6)} ` +
    `${String(s.model).padStart(5)} ${String(s.cache).padStart(5)} ${String(s.late).padStart(4)} ` +
    `${f0(s.stepsMean).padStart(5)} ${f0(s.rowsMean).padStart(7)} ${f0(s.firstMs).padStart(6)}`);
}

// ---- main -------------------------------------------------------------------------------
const cfg = JSON.parse(fs.readFileSync(path.join(dataDir, 'sessions.json'), 'utf8'));
const srv = llamaUrl ? new Llama() : new Daemon();
const watchdog = setTimeout(() => {
  console.error('bench_session: no progress for 30 min, giving up');
  process.exit(1);
}, 30 * 60 * 1000);
await srv.start();
const records = [];
const rand = rng(seed);
const tStart = now();
for (const sess of cfg.sessions) {
  if (!langs.includes(sess.languageId)) continue;
  await runSession(srv, sess, rand, records);
}
const wallS = (now() - tStart) / 1000;
await srv.stop();
clearTimeout(watchdog);

console.log(`bench_session: ${label} (${srv.model}), load ${f0(srv.loadMs)} ms, ` +
  `automatic budget ${BUDGET_MS} ms, seed ${seed}, ${wallS.toFixed(0)} s`);
console.log('lang        reqs    p50    p90    p99    mdl50  mdl90   inBdgt  nulls model cache late steps    rows  first');
const byLang = {};
for (const l of langs) {
  const rs = records.filter((r) => r.lang === l);
  if (!rs.length) continue;
  byLang[l] = summary(rs);
  printRow(l, byLang[l]);
}
const all = summary(records);
printRow('all', all);
console.log(`accepted ${all.accepted}, candidates the syntax check rejected ${all.rejected}, ` +
  `first steps from the idle prefill ${all.prefillHits} of ${all.model}` +
  (askDelayMs > 0 ? ` (asking ${askDelayMs} ms after each burst)` : ''));
console.log('first requests (after the idle wait on a newly opened file' +
  (openRequest ? ', before typing' : ', after the first burst') + `): ${
  Object.entries(byLang).map(([l, x]) => `${l} ${f0(x.firstMs)} ms${x.firstPrefilled ? ' (prefilled)' : ''}`).join(', ')}`);
if (srv.lastPrefill) console.log(`idle prefill: ${JSON.stringify(srv.lastPrefill)}`);
if (Object.keys(all.kv).length) {
  console.log(`context K/V: ${Object.entries(all.kv).map(([k, v]) => `${k} ${v}`).join(', ')}; ` +
    `rows reused per model-served request ${f0(all.rowsReusedMean)}`);
}
console.log('(ms; p50/p90/p99 over every automatic request, mdl50/90 over those the model served; ' +
  'inBdgt = non-empty validated answer within the budget, of all requests; late = answered ' +
  'after the user would have typed again; steps and rows recomputed per model-served request; ' +
  'first = the first request, after the idle wait on a newly opened file)');
if (jsonOut) {
  fs.writeFileSync(jsonOut, JSON.stringify({
    label, model: srv.model, loadMs: srv.loadMs, budgetMs: BUDGET_MS, seed, wallS, all, byLang,
    records,
  }, null, 1));
}
if (expectRequests > 0 && (all.requests !== expectRequests || all.noPlan > 0 ||
    records.some((r) => r.phase !== 'accept' && !(r.ms >= 0)))) {
  console.log(`FAIL expected ${expectRequests} requests with plans, got ${all.requests} ` +
    `(${all.noPlan} model-served without a plan)`);
  process.exit(1);
}
