// Load benchmark for infilld serve-http: N concurrent sessions (default 32),
// each a keep-alive HTTP client sending /v1/fim/completions back to back for
// a bounded time. Checks that every request got exactly one answer (none
// lost, none duplicated: each answer's id is new, each request's own marker
// comes back through usage/ordering) and reports p50/p99 latency and
// throughput as one JSON line.
//
//   node tests/remote/bench_serve_http.mjs INFILLD_BIN [--sessions 32]
//        [--seconds 10] [--max-tokens 8] [--model DIR] [--device cpu|cuda]
//        [--batch-ms 5] [--batch-max 8]   (serve-http's batching; --batch-max 1 = off)
//        [--check]    (exit 1 on a lost/duplicated answer or a server error)
import { spawn } from 'node:child_process';
import http from 'node:http';

const argv = process.argv.slice(2);
const bin = argv[0] ?? process.env.INFILLD_BIN;
if (!bin) {
  console.error('usage: bench_serve_http.mjs INFILLD_BIN [--sessions N] [--seconds S] [--max-tokens T]');
  process.exit(2);
}
const opt = (name, def) => {
  const i = argv.indexOf(name);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : def;
};
const SESSIONS = Number(opt('--sessions', 32));
const SECONDS = Number(opt('--seconds', 10));
const MAX_TOKENS = Number(opt('--max-tokens', 8));
const CHECK = argv.includes('--check');
const extra = [];
if (opt('--model')) extra.push('--model', opt('--model'));
if (opt('--device')) extra.push('--device', opt('--device'));
const BATCH_MS = opt('--batch-ms', '5');
extra.push('--batch-ms', BATCH_MS, '--batch-max', opt('--batch-max', '8'));

const srv = spawn(bin, ['serve-http', '--listen', '127.0.0.1:0', '--per-client', String(SESSIONS * 2), '--queue', String(SESSIONS * 2), '--log-level', 'info', ...extra],
  { stdio: ['ignore', 'pipe', 'pipe'] });
let srvErr = '';
srv.stderr.on('data', (b) => { srvErr += b; });
const port = await new Promise((resolve, reject) => {
  let out = '';
  srv.stdout.on('data', (b) => {
    out += b;
    const m = /listening on 127\.0\.0\.1:(\d+)/.exec(out);
    if (m) resolve(Number(m[1]));
  });
  srv.once('exit', (c) => reject(new Error(`serve-http exited ${c}: ${srvErr}`)));
});

function post(agent, body) {
  return new Promise((resolve) => {
    const data = JSON.stringify(body);
    const r = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/v1/fim/completions', agent,
      headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) } }, (res) => {
      let b = '';
      res.on('data', (c) => { b += c; });
      res.on('end', () => resolve({ status: res.statusCode, body: b }));
    });
    r.on('error', (e) => resolve({ status: 0, body: String(e) }));
    r.end(data);
  });
}

const lat = [];
const ids = new Set();
let sent = 0, answered = 0, dup = 0, errors = 0;
const statuses = {};
const t0 = Date.now();
const end = t0 + SECONDS * 1000;
async function session(k) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  for (let n = 0; Date.now() < end; n++) {
    // Each request its own prompt (a distinct marker line) so no cache can answer twice.
    const body = { prompt: `# session ${k} request ${n}\ndef add(a, b):\n    return `, suffix: '\n', max_tokens: MAX_TOKENS };
    const ts = process.hrtime.bigint();
    sent++;
    const r = await post(agent, body);
    const ms = Number(process.hrtime.bigint() - ts) / 1e6;
    statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    let j = null;
    try { j = JSON.parse(r.body); } catch { /* counted below */ }
    if (r.status === 200 && j && typeof j.id === 'string' && j.choices?.length === 1) {
      answered++;
      if (ids.has(j.id)) dup++;
      ids.add(j.id);
      lat.push(ms);
    } else {
      errors++;
    }
  }
  agent.destroy();
}
await Promise.all(Array.from({ length: SESSIONS }, (_, k) => session(k)));
const wall = (Date.now() - t0) / 1000;
srv.kill('SIGTERM');
const code = await new Promise((r) => srv.once('exit', (c) => r(c)));
const stopped = /stopped: (\d+) answered.*; (\d+) runs for (\d+) requests/.exec(srvErr);
lat.sort((a, b) => a - b);
const q = (p) => (lat.length ? lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] : null);
const res = {
  sessions: SESSIONS, seconds: SECONDS, max_tokens: MAX_TOKENS, batch_ms: Number(BATCH_MS),
  sent, answered, errors, duplicated: dup, statuses,
  server_answered: stopped ? Number(stopped[1]) : null, server_exit: code,
  engine_runs: stopped ? Number(stopped[2]) : null,
  p50_ms: q(0.5) && Math.round(q(0.5)), p99_ms: q(0.99) && Math.round(q(0.99)),
  throughput_rps: Math.round((answered / wall) * 100) / 100, wall_s: Math.round(wall * 10) / 10,
};
console.log(JSON.stringify(res));
if (CHECK) {
  const ok = sent === answered && errors === 0 && dup === 0 && code === 0 && res.server_answered === answered;
  if (!ok) {
    console.error('FAIL: lost, duplicated or failed answers', srvErr.slice(-2000));
    process.exit(1);
  }
}
