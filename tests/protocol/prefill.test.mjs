// Idle prefill and the kept context K/V over LSP, against the real daemon
// with the embedded default model (issue 19 items 2 and 3):
//   - idlePrefill on: after an edit and the quiet delay, the automatic request
//     at the edit's end finds the prefilled first step (infilld/status
//     idlePrefill.hits, plan.prefillHit) and answers exactly what a session
//     without prefill answers;
//   - idlePrefill off: no prefill work at all (the counters stay 0);
//   - contextCache on: a second request near the first reuses kept rows
//     (plan.contextCache "warm", rowsReused > 0); a settings change refreshes
//     (the next request is "cold").
// A generous latency budget keeps the plan the same for the prefill and the
// request (the test is about reuse, not about time).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { REAL, session, close, open, inline, sleep } from './lib.mjs';

const TINY = REAL ? path.join(path.dirname(REAL), 'models', 'infilld-tiny-code') : null;
const HAVE_TINY = TINY && fs.existsSync(path.join(TINY, 'config.json'));
if (!HAVE_TINY && process.env.CI === 'true') {
  console.error(`no embedded model at ${TINY} under CI=true`);
  process.exit(1);
}

const URI = 'file:///work/prefill_t.py';
let BODY = '';
for (let i = 0; i < 30; i++) BODY += `def f${i}(a, b):\n    return a * ${i + 2} + b\n\n`;
const DOC = `${BODY}def add(a, b):\n    return a + b\n\ndef mul(a, b):\n    \n\nclass Stats:\n    def __init__(self, xs):\n        self.xs = list(xs)\n`;
const HOLE_LINE = DOC.split('\n').indexOf('def mul(a, b):') + 1; // its empty body line
const BUDGET = { automatic: 30000, invoked: 30000 };

async function ready(conn) {
  const st = await conn.waitNote('infilld/status', (p) => p.state === 'ready' || p.state === 'error', 60000);
  assert.equal(st.state, 'ready');
}

// Status after the next job: the "ready" that follows its "busy".
async function statusAfter(conn, from) {
  const idx = () => conn.notes.slice(from).findIndex((n) => n.method === 'infilld/status' && n.params.state === 'busy');
  for (let i = 0; i < 600 && idx() < 0; i++) await sleep(50);
  const b = from + idx();
  assert.ok(idx() >= 0, 'no busy status');
  for (let i = 0; i < 600; i++) {
    const n = conn.notes.slice(b).find((x) => x.method === 'infilld/status' && x.params.state === 'ready');
    if (n) return n.params;
    await sleep(50);
  }
  throw new Error('no ready status after the job');
}

function type(conn, version, line, character, text) {
  return conn.sendNotification('textDocument/didChange', {
    textDocument: { uri: URI, version },
    contentChanges: [{ range: { start: { line, character }, end: { line, character } }, text }],
  });
}

const itemText = (r) => {
  const items = Array.isArray(r) ? r : (r && r.items) || [];
  return items.length ? (typeof items[0].insertText === 'string' ? items[0].insertText : items[0].insertText.value) : null;
};

async function editThenAsk(settings) {
  const s = await session(REAL, { initOptions: { status: true, seed: 1, latencyBudgetMs: BUDGET, ...settings } });
  await ready(s.conn);
  await open(s.conn, URI, DOC);
  await type(s.conn, 2, HOLE_LINE, 4, 'r');
  await sleep(2500); // quiet: the prefill (delay 50 ms) runs and completes
  const from = s.conn.notes.length;
  const r = await inline(s.conn, URI, HOLE_LINE, 5, { triggerKind: 2 });
  const st = await statusAfter(s.conn, from);
  assert.equal((await close(s)).code, 0);
  return { text: itemText(r), st };
}

test('idle prefill: the request after the quiet delay takes the prefilled step and answers the same',
  { skip: !HAVE_TINY }, async () => {
    const on = await editThenAsk({ idlePrefill: true, idlePrefillDelayMs: 50 });
    const off = await editThenAsk({ idlePrefill: false });
    const pf = on.st.idlePrefill;
    assert.ok(pf, JSON.stringify(on.st));
    assert.equal(pf.enabled, true);
    assert.ok(pf.queued >= 1 && pf.runs >= 1, JSON.stringify(pf));
    assert.equal(pf.completed, 1, JSON.stringify(pf));
    assert.equal(pf.hits, 1, JSON.stringify(pf));
    assert.equal(on.st.plan.prefillHit, true);
    assert.ok(pf.chunkMs > 0, JSON.stringify(pf));
    // setting off: no prefill work
    const q = off.st.idlePrefill;
    assert.equal(q.enabled, false);
    assert.equal(q.queued, 0);
    assert.equal(q.runs, 0);
    assert.equal(q.hits, 0);
    assert.equal(off.st.plan.prefillHit, false);
    // bit for bit: the same answer with and without the prefill
    assert.equal(on.text, off.text);
  });

test('contextCache over LSP: a nearby second request reuses kept rows; a settings change refreshes',
  { skip: !HAVE_TINY }, async () => {
    // maxHole 16: one run per request, so the status's decision (that of a
    // request's last run; a grown hole's later runs reuse its first run's
    // rows) is the request's own, whatever the model writes.
    const settings = { status: true, seed: 1, latencyBudgetMs: BUDGET, contextCache: true, idlePrefill: false, candidates: 1, maxHole: 16 };
    const s = await session(REAL, { initOptions: settings });
    await ready(s.conn);
    await open(s.conn, URI, DOC);
    let from = s.conn.notes.length;
    await inline(s.conn, URI, HOLE_LINE, 4, { triggerKind: 1 });
    let st = await statusAfter(s.conn, from);
    assert.equal(st.plan.contextCache, 'cold', JSON.stringify(st.plan));
    await type(s.conn, 2, HOLE_LINE, 4, 'r');
    from = s.conn.notes.length;
    await inline(s.conn, URI, HOLE_LINE, 5, { triggerKind: 1 });
    st = await statusAfter(s.conn, from);
    assert.equal(st.plan.contextCache, 'warm', JSON.stringify(st.plan));
    assert.ok(st.plan.rowsReused > 0, JSON.stringify(st.plan));
    // a settings change drops every kept context
    await s.conn.sendNotification('workspace/didChangeConfiguration', { settings: { ...settings, contextCacheMargin: 24 } });
    await sleep(200);
    from = s.conn.notes.length;
    await inline(s.conn, URI, HOLE_LINE, 5, { triggerKind: 1 });
    st = await statusAfter(s.conn, from);
    assert.equal(st.plan.contextCache, 'cold', JSON.stringify(st.plan));
    assert.equal(st.plan.rowsReused, 0);
    assert.equal((await close(s)).code, 0);
  });

// infilld/didChangeCursor (docs/PROTOCOL.md): the editor reports its cursor,
// so a newly opened document is prefilled where the user is, without an edit.
async function openCursorAsk(settings, cursor) {
  const s = await session(REAL, { initOptions: { status: true, seed: 1, latencyBudgetMs: BUDGET, ...settings } });
  await ready(s.conn);
  await open(s.conn, URI, DOC);
  if (cursor) {
    await s.conn.sendNotification('infilld/didChangeCursor', {
      textDocument: { uri: URI, version: 1 }, position: { line: HOLE_LINE, character: 4 },
    });
    // a repeat at the same place and version changes nothing
    await s.conn.sendNotification('infilld/didChangeCursor', {
      textDocument: { uri: URI, version: 1 }, position: { line: HOLE_LINE, character: 4 },
    });
    // bad ones are dropped: a stale version, a document not open, a bad position
    await s.conn.sendNotification('infilld/didChangeCursor', {
      textDocument: { uri: URI, version: 7 }, position: { line: 0, character: 0 },
    });
    await s.conn.sendNotification('infilld/didChangeCursor', {
      textDocument: { uri: 'file:///nowhere.py' }, position: { line: 0, character: 0 },
    });
    await s.conn.sendNotification('infilld/didChangeCursor', { textDocument: { uri: URI }, position: { line: -1 } });
  }
  await sleep(2500); // quiet: the prefill (delay 50 ms) runs and completes
  const from = s.conn.notes.length;
  const r = await inline(s.conn, URI, HOLE_LINE, 4, { triggerKind: 2 });
  const st = await statusAfter(s.conn, from);
  const logs = s.conn.notes.filter((n) => n.method === 'window/logMessage').map((n) => n.params.message);
  assert.equal((await close(s)).code, 0);
  return { text: itemText(r), st, logs };
}

test('infilld/didChangeCursor after didOpen: the request there takes the prefilled step and answers the same',
  { skip: !HAVE_TINY }, async () => {
    const on = await openCursorAsk({ idlePrefill: true, idlePrefillDelayMs: 50 }, true);
    const off = await openCursorAsk({ idlePrefill: false }, true);
    const none = await openCursorAsk({ idlePrefill: true, idlePrefillDelayMs: 50 }, false);
    const pf = on.st.idlePrefill;
    assert.equal(pf.queued, 1, JSON.stringify(pf)); // the repeat and the bad ones queued nothing
    assert.equal(pf.completed, 1, JSON.stringify(pf));
    assert.equal(pf.hits, 1, JSON.stringify(pf));
    assert.equal(on.st.plan.prefillHit, true);
    assert.ok(pf.boundMs >= pf.chunkMs && pf.maxSliceMs >= 0, JSON.stringify(pf));
    assert.ok(pf.slicesMs && typeof pf.slicesMs.count === 'number', JSON.stringify(pf));
    assert.ok(on.logs.some((m) => /didChangeCursor ignored/.test(m)), JSON.stringify(on.logs));
    assert.equal(off.st.idlePrefill.queued, 0);
    assert.equal(off.st.plan.prefillHit, false);
    // without the notification a newly opened document is not prefilled
    assert.equal(none.st.idlePrefill.queued, 0);
    assert.equal(none.st.plan.prefillHit, false);
    assert.equal(on.text, off.text);
    assert.equal(on.text, none.text);
  });

test('automatic requests sample the model folder\'s candidates, or automaticCandidates', { skip: !HAVE_TINY }, async () => {
  const gen = JSON.parse(fs.readFileSync(path.join(TINY, 'generation_config.json'), 'utf8'));
  const byModel = gen.candidates || 1;
  const base = { status: true, seed: 1, latencyBudgetMs: BUDGET, idlePrefill: false, maxHole: 16 };
  for (const [extra, want] of [[{}, byModel], [{ automaticCandidates: 2 }, 2], [{ automaticCandidates: 1 }, 1]]) {
    const s = await session(REAL, { initOptions: { ...base, ...extra } });
    await ready(s.conn);
    await open(s.conn, URI, DOC);
    const from = s.conn.notes.length;
    await inline(s.conn, URI, HOLE_LINE, 4, { triggerKind: 2 });
    const st = await statusAfter(s.conn, from);
    assert.equal(st.plan.candidates, want, JSON.stringify({ extra, plan: st.plan }));
    assert.equal((await close(s)).code, 0);
  }
});
