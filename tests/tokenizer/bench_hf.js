// Benchmark of the reference: Hugging Face tokenizers (npm @anush008/tokenizers)
// loading a tokenizer.json and encoding the concatenation of FILE..., for the
// comparison in docs/perf/tokenizer.md with bench_tokenizer on the same input.
//
// usage: node bench_hf.js TOKENIZER_JSON FILE...
'use strict';
const fs = require('fs');
const path = require('path');
const { Tokenizer } = require(path.join(__dirname, '..', 'node_modules', '@anush008', 'tokenizers'));

async function main() {
  const [file, ...inputs] = process.argv.slice(2);
  const text = Buffer.concat(inputs.map((f) => fs.readFileSync(f))).toString('utf8');
  const bytes = Buffer.byteLength(text);
  const json = fs.readFileSync(file, 'utf8');
  const loads = [];
  let tok;
  for (let r = 0; r < 3; r++) {
    const t0 = process.hrtime.bigint(), c0 = process.cpuUsage();
    tok = Tokenizer.fromString(json);
    const c = process.cpuUsage(c0);
    loads.push([Number(process.hrtime.bigint() - t0) / 1e6, (c.user + c.system) / 1e3]);
  }
  loads.sort((a, b) => a[1] - b[1]);
  let best = Infinity, bestCpu = Infinity, n = 0;
  for (let r = 0; r < 3; r++) {
    const t0 = process.hrtime.bigint(), c0 = process.cpuUsage();
    const e = await tok.encode(text, null, { addSpecialTokens: false });
    const c = process.cpuUsage(c0);
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e6);
    bestCpu = Math.min(bestCpu, (c.user + c.system) / 1e3);
    n = e.getIds().length;
  }
  // CPU time counts every thread of the process (the library may use several).
  console.log(`| HF load (fromString, file already read) | CPU median of 3: ${loads[1][1].toFixed(0)} ms; wall ${loads[1][0].toFixed(0)} ms |`);
  console.log(`| HF encode ${(bytes / 1e6).toFixed(2)} MB, ${n} tokens | best of 3: CPU ${bestCpu.toFixed(0)} ms, ` +
    `${(bytes / 1e3 / bestCpu).toFixed(2)} MB/s; wall ${best.toFixed(0)} ms, ${(bytes / 1e3 / best).toFixed(2)} MB/s |`);
}
main();
