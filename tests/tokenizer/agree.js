// Tokenizer agreement test: infilld's tokenizer against Hugging Face
// tokenizers (npm @anush008/tokenizers) on the real Qwen tokenizer.json.
//
// usage: node agree.js DRIVER TOKENIZER_DIR SNIPPETS_TSV
//   DRIVER is a program that behaves like `infilld tokenize` (tok_driver).
//
// Checks, each over every input:
//   1. snippets.tsv: every snippet is read from the repository (tests/corpus)
//      or a pinned npm package and its sha256 checked; a changed or missing
//      file fails the test (inputs never come from the machine);
//   2. ids identical to the reference for snippets, adversarial Unicode and
//      strings that spell added tokens (special ones must stay plain text);
//   3. decode(encode(x)) == NFC(x).
// All inputs go through the driver in one --jsonl call (and one --decode
// call), so the whole test takes a few seconds.
'use strict';
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const os = require('os');
const { execFileSync } = require('child_process');

const REPO = path.resolve(__dirname, '..', '..');

function loadReference(tokenizerJson) {
  let Tokenizer;
  try {
    ({ Tokenizer } = require(path.join(REPO, 'tests', 'node_modules', '@anush008', 'tokenizers')));
  } catch (e) {
    // A missing input fails: a skip would hide a broken checkout.
    console.log('FAIL: @anush008/tokenizers is not installed (run ./bootstrap.sh): ' + e.message);
    process.exit(1);
  }
  // Special added tokens get contents no input contains, so the reference
  // never matches them (= encode_special_tokens); ids do not move.
  const j = JSON.parse(fs.readFileSync(tokenizerJson, 'utf8'));
  const special = [];
  for (const t of j.added_tokens) {
    if (t.special) {
      special.push({ id: t.id, content: t.content });
      t.content = '\uffff\ufffe' + t.id + '\ufffe\uffff';
    }
  }
  return { tok: Tokenizer.fromString(JSON.stringify(j)), special, added: j.added_tokens };
}

function snippets(tsv) {
  const out = [];
  let missing = 0;
  const changed = [];
  const byLang = {};
  const cache = new Map();
  for (const line of fs.readFileSync(tsv, 'utf8').split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const [lang, p, off, len, sha] = line.split('\t');
    // Paths are relative to the repository; an absolute one would read a
    // file of this machine, whose version differs between machines.
    if (path.isAbsolute(p)) {
      changed.push(`${p}: absolute path (inputs must come from the repository)`);
      continue;
    }
    const full = path.join(REPO, p);
    if (!cache.has(full)) cache.set(full, fs.existsSync(full) ? fs.readFileSync(full) : null);
    const data = cache.get(full);
    if (!data) {
      missing++;
      if (missing <= 5) changed.push(`${p}: missing (run ./bootstrap.sh for npm packages)`);
      continue;
    }
    const bytes = data.subarray(Number(off), Number(off) + Number(len));
    const h = crypto.createHash('sha256').update(bytes).digest('hex');
    if (h !== sha || bytes.length !== Number(len)) {
      changed.push(`${p}@${off}+${len}`);
      continue;
    }
    out.push({ kind: 'snippet:' + lang, text: new TextDecoder('utf-8', { fatal: true }).decode(bytes) });
    byLang[lang] = (byLang[lang] || 0) + 1;
  }
  return { out, missing, changed, byLang };
}

// Hand-written hard cases: scripts, emoji, normalisation, whitespace, the
// regex's contraction and digit rules, code-like text.
function adversarial() {
  const a = [
    'hello world',
    'Ünïcödé çàfé naïve résumé',
    'e\u0301 a\u0300 o\u0308 n\u0303 (combining marks, NFC composes them)',
    'A\u030a\u0301 \u1e9b\u0323 q\u0307\u0323 \u0915\u093c \u00c5\u212b',
    '\ud55c\uad6d\uc5b4 \u1100\u1161\u11a8 (Hangul syllables and conjoining jamo)',
    '中文测试：你好，世界！函数名_变量 = 1;',
    '日本語のテキスト、カタカナとひらがな。',
    '👍 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 🧑🏿‍💻 ❤️‍🔥 🇫🇷🇯🇵 #️⃣ 1️⃣',
    'emoji in code: const s = "😀😃😄"; // 🚀',
    'line1\r\nline2\r\n\r\nline3\rline4\n',
    '\tindented\n\t\tmore\n    spaces\n        eight\n',
    ' '.repeat(1000) + 'x',
    '\n'.repeat(300),
    ' \t \n \r\n  \u00a0\u2003\u3000 mixed whitespace \u2028\u2029\u0085',
    'x' + ' '.repeat(37) + '\n' + '\t'.repeat(20) + '}',
    'שלום עולם — مرحبا بالعالم — \u202bRTL embed\u202c \u200f\u200e',
    'ZWJ\u200dZWNJ\u200cBOM\ufeffSHY\u00ad',
    "I'm you're he's we've they'll I'd it'S IT'S DON'T can’t",
    '12345678901234567890 3.14159 0x1F2E 1e-10 ١٢٣ ۴۵۶ ７８９ ²³ ½ Ⅻ',
    'for (int i = 0; i < n; ++i) { a[i] += b[i] * c; }',
    'def f(x):\n    return x ** 2  # square\n',
    '<<<>>> !== === ?? ?. => ... ::  ->* &&= ||= <=>',
    'https://example.com/path?q=1&r=2#frag',
    'ǅ ǈ ǋ ǲ ß ẞ ﬁ ﬂ İ ı ſ K Å',
    'Ꭰꭰ 𐐀𐐨 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝟘𝟙𝟚',
    '\u0000nul\u0001\u001f\u007f del',
    'a'.repeat(3000),
    'ab'.repeat(800),
    '_'.repeat(200) + '-'.repeat(200) + '='.repeat(200),
    'ℌ𝔢𝔩𝔩𝔬 ⁰¹²³ ₀₁₂ ①②③',
    '\u0e01\u0e34\u0e19\u0e02\u0e49\u0e32\u0e27 ภาษาไทย ລາວ ខ្មែរ',
    'देवनागरी हिन्दी — বাংলা — தமிழ் — ગુજરાતી',
    'Ελληνικά Кириллица Արմենerен ქართული',
    '\ud83d\ude00'.repeat(50),
    'tab\tsep\tvalues\t\t\n',
    'trailing spaces   \n   \n',
    // NFC is applied span by span: marks after ASCII, after non-ASCII, at the
    // start, reordered, expanding (U+0344, U+0958), Hangul L+V+T.
    '\u0301start e\u0301x\u0308 \u00e9\u0301 a\u0323\u0301 a\u0301\u0323 1\u20e3 _\u0331',
    '\u0344 \u0958 \u2126 \u212b \u1100\u1161\u11a8x\u1100\u1161 \u0f73 \u0f75',
    'x<|endoftext|>\u0301y <tool_call>\u0308z',
    '\u05d0\u05b8\u05bc \u0627\u064e\u0651 \u0915\u094d\u0937 \u0e01\u0e49\u0e33',
  ];
  // Every Unicode White_Space character (and look-alikes that are not) around
  // letters and digits: PCRE2's \s and Oniguruma's must agree. Then letters
  // added in recent Unicode versions (\p{L} tables of both libraries).
  const ws = [0x9, 0xa, 0xb, 0xc, 0xd, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003,
    0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f,
    0x3000, 0x180e, 0x200b, 0xfeff, 0x1c];
  for (const c of ws) {
    const ch = String.fromCodePoint(c);
    a.push('a' + ch + 'b' + ch + ch + 'c ' + ch + '\n' + ch + '1');
  }
  for (const c of [0x1e290, 0x1e4d0, 0x11f04, 0x10570, 0x1df00, 0x16ff0, 0x1e030, 0x31350,
    0x2b739, 0x1b132, 0x11f50, 0x10d40]) {
    const ch = String.fromCodePoint(c);
    a.push('x' + ch + 'y ' + ch + ch + ' 1' + ch);
  }
  return a.map((text) => ({ kind: 'adversarial', text }));
}

// Binary-ish text: what a buffer holding a binary file, a minified bundle or
// a terminal capture looks like once decoded, from a fixed-seed generator:
// bytes read as Latin-1, control characters and NULs, runs of one byte,
// random code points from every plane (no surrogates), invalid-looking
// escape sequences.
function binaryish() {
  let x = 0x9e3779b9;
  const rnd = () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 4294967296;
  };
  const out = [];
  for (let i = 0; i < 60; i++) {
    const n = 20 + Math.floor(rnd() * 1500);
    let t = '';
    const style = i % 4;
    while (t.length < n) {
      const r = rnd();
      if (style === 0) t += String.fromCharCode(Math.floor(rnd() * 256)); // Latin-1 bytes
      else if (style === 1) t += r < 0.3 ? String.fromCharCode(Math.floor(rnd() * 32)) : r < 0.35 ? '\u001b[' + Math.floor(rnd() * 99) + 'm' : String.fromCharCode(32 + Math.floor(rnd() * 95));
      else if (style === 2) {
        let cp = Math.floor(rnd() * 0x110000);
        if (cp >= 0xd800 && cp <= 0xdfff) cp -= 0x800;
        t += String.fromCodePoint(cp);
      } else t += String.fromCharCode(Math.floor(rnd() * 256)).repeat(1 + Math.floor(rnd() * 40));
    }
    out.push({ kind: 'binary-ish', text: t });
  }
  return out;
}

// Every added token, alone and inside code: special ones must come out as
// plain text (the reference cannot match them either), non-special ones as
// the reference does.
function addedTokenStrings(added) {
  const out = [];
  for (const t of added) {
    const c = t.special ? t.originalContent : t.content;
    out.push(c, `x = "${c}";`, `${c}${c}`, ` ${c}\n`, `// ${c} and <|mask|> <|endoftext|>`);
  }
  out.push('<|mask|>', '<|beginoftext|>', '<|expand|>', '<|endoftext|><|endoftext|>', '<|im_start|>user\n');
  return out.map((text) => ({ kind: 'added-token', text }));
}

function main() {
  const [driver, tokDir, tsv] = process.argv.slice(2);
  const tokenizerJson = path.join(tokDir, 'tokenizer.json');
  if (!fs.existsSync(tokenizerJson)) {
    console.log(`FAIL: ${tokenizerJson} is missing (run ./bootstrap.sh)`);
    process.exit(1);
  }
  const ref = loadReference(tokenizerJson);
  const originals = JSON.parse(fs.readFileSync(tokenizerJson, 'utf8')).added_tokens;
  for (let i = 0; i < ref.added.length; i++) ref.added[i].originalContent = originals[i].content;
  const specialIds = new Set(ref.special.map((s) => s.id));

  const sn = snippets(tsv);
  const cases = [...sn.out, ...adversarial(), ...binaryish(), ...addedTokenStrings(ref.added)];

  const input = cases.map((c) => JSON.stringify(c.text)).join('\n') + '\n';
  const ours = execFileSync(driver, ['--tokenizer', tokDir, '--jsonl'], {
    input,
    maxBuffer: 1 << 28,
  })
    .toString()
    .split('\n');

  let failures = 0;
  const fail = (msg) => {
    failures++;
    if (failures <= 20) console.log('FAIL ' + msg);
  };
  return { cases, ours, fail, sn, specialIds, getFailures: () => failures, ref, driver, tokDir, input };
}

async function run() {
  const ctx = main();
  const { cases, ours, fail, sn, specialIds, ref, driver, tokDir, input } = ctx;
  const counts = {};
  for (let i = 0; i < cases.length; i++) {
    const c = cases[i];
    const e = await ref.tok.encode(c.text, null, { addSpecialTokens: false });
    const want = e.getIds().join(' ');
    const got = ours[i] === undefined ? '(missing)' : ours[i];
    counts[c.kind.split(':')[0]] = (counts[c.kind.split(':')[0]] || 0) + 1;
    if (got !== want) {
      const g = got.split(' '), w = want.split(' ');
      let k = 0;
      while (k < g.length && g[k] === w[k]) k++;
      fail(`${c.kind} #${i}: ids differ at token ${k}: ours ${g.slice(k, k + 6).join(' ')} vs ` +
        `reference ${w.slice(k, k + 6).join(' ')}; text ${JSON.stringify(c.text.slice(0, 120))}`);
    }
    if (c.kind === 'added-token') {
      for (const id of got.split(' ').filter((x) => x.length).map(Number)) {
        if (specialIds.has(id)) fail(`added-token #${i}: user text produced special id ${id}: ${JSON.stringify(c.text)}`);
      }
    }
  }

  // Round trip through our own decoder.
  const decoded = execFileSync(driver, ['--tokenizer', tokDir, '--decode', '--jsonl'], {
    input: ours.slice(0, cases.length).map((l) => (l.length ? l : '[]')).join('\n') + '\n',
    maxBuffer: 1 << 28,
  })
    .toString()
    .split('\n');
  for (let i = 0; i < cases.length; i++) {
    const want = cases[i].text.normalize('NFC');
    let got;
    try {
      got = JSON.parse(decoded[i]);
    } catch (e) {
      got = '(unparsable: ' + decoded[i] + ')';
    }
    if (got !== want) fail(`${cases[i].kind} #${i}: decode(encode(x)) != NFC(x): ${JSON.stringify(got.slice(0, 80))}`);
  }

  // The vocab.json + merges.txt (+ added_tokens.json, tokenizer_config.json)
  // form of the same tokenizer, as DreamTokenizer ships it, must give the
  // same ids.
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'infilld-tok-'));
  try {
    const j = JSON.parse(fs.readFileSync(path.join(tokDir, 'tokenizer.json'), 'utf8'));
    fs.writeFileSync(path.join(tmp, 'vocab.json'), JSON.stringify(j.model.vocab));
    const merges = j.model.merges.map((m) => (Array.isArray(m) ? m.join(' ') : m));
    fs.writeFileSync(path.join(tmp, 'merges.txt'), '#version: 0.2\n' + merges.join('\n') + '\n');
    const addedJson = {}, decoder = {};
    for (const t of j.added_tokens) {
      addedJson[t.content] = t.id;
      decoder[String(t.id)] = { content: t.content, special: t.special, lstrip: t.lstrip, rstrip: t.rstrip,
        normalized: t.normalized, single_word: t.single_word };
    }
    fs.writeFileSync(path.join(tmp, 'added_tokens.json'), JSON.stringify(addedJson));
    fs.writeFileSync(path.join(tmp, 'tokenizer_config.json'), JSON.stringify({ added_tokens_decoder: decoder }));
    const viaVocab = execFileSync(driver, ['--tokenizer', tmp, '--jsonl'], { input, maxBuffer: 1 << 28 })
      .toString()
      .split('\n');
    let diff = 0;
    for (let i = 0; i < cases.length; i++) if (viaVocab[i] !== ours[i]) diff++;
    if (diff) fail(`vocab.json + merges.txt form differs from tokenizer.json on ${diff} strings`);
    else console.log('vocab.json + merges.txt form: identical ids');
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }

  // Other pre-tokenizer shapes on the same vocabulary, against the reference
  // loaded with the same change: an o200k-style Split (letter-case classes,
  // marks, 1-3 digit groups) with ignore_merges, and a GPT-2-style Digits +
  // ByteLevel(use_regex) without a normalizer.
  const variants = [
    ['o200k-style split (case classes, \\p{M}, \\p{N}{1,3}), ignore_merges', (j) => {
      const c = "(?i:'s|'t|'re|'ve|'m|'ll|'d)?";
      j.pre_tokenizer.pretokenizers[0].pattern.Regex =
        '[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+' + c +
        '|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*' + c +
        '|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+';
      j.model.ignore_merges = true;
    }],
    ['digits + ByteLevel(use_regex), no normalizer', (j) => {
      j.normalizer = null;
      j.pre_tokenizer = { type: 'Sequence', pretokenizers: [
        { type: 'Digits', individual_digits: true },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: true }] };
    }],
  ];
  for (const [label, mutate] of variants) {
    const vdir = fs.mkdtempSync(path.join(os.tmpdir(), 'infilld-tok-'));
    try {
      const j = JSON.parse(fs.readFileSync(path.join(tokDir, 'tokenizer.json'), 'utf8'));
      mutate(j);
      fs.writeFileSync(path.join(vdir, 'tokenizer.json'), JSON.stringify(j));
      const vref = loadReference(path.join(vdir, 'tokenizer.json')).tok;
      const got = execFileSync(driver, ['--tokenizer', vdir, '--jsonl'], { input, maxBuffer: 1 << 28 })
        .toString()
        .split('\n');
      let diff = 0;
      for (let i = 0; i < cases.length; i++) {
        const want = (await vref.encode(cases[i].text, null, { addSpecialTokens: false })).getIds().join(' ');
        if (got[i] !== want && ++diff <= 3) {
          fail(`variant "${label}": ${cases[i].kind} #${i} differs: ours ${got[i].slice(0, 60)} vs ${want.slice(0, 60)}`);
        }
      }
      let changed = 0;
      for (let i = 0; i < cases.length; i++) changed += got[i] !== ours[i];
      if (!changed) fail(`variant "${label}" gives the same ids as the original: not exercised`);
      if (diff) fail(`variant "${label}": ${diff} strings differ`);
      else console.log(`variant "${label}": identical ids (${changed} strings tokenized differently from the original)`);
    } finally {
      fs.rmSync(vdir, { recursive: true, force: true });
    }
  }

  const langs = Object.keys(sn.byLang);
  console.log(`snippets: ${sn.out.length} in ${langs.length} languages (${langs.map((l) => l + ' ' + sn.byLang[l]).join(', ')})`);
  console.log(`adversarial: ${counts.adversarial || 0}, binary-ish: ${counts['binary-ish'] || 0}, ` +
    `added-token strings: ${counts['added-token'] || 0}`);
  if (sn.missing) fail(`${sn.missing} snippets have no source file`);
  for (const c of sn.changed.slice(0, 20)) fail(`snippet source changed, missing or not in the repository: ${c}`);
  if (sn.changed.length) fail(`${sn.changed.length} snippet sources changed; regenerate with make_manifest.py`);
  if (sn.out.length < 2000) fail(`only ${sn.out.length} snippets available (need >= 2000)`);
  if (langs.length < 8) fail(`only ${langs.length} languages available (need >= 8)`);
  const failures = ctx.getFailures();
  console.log(failures ? `FAILED: ${failures} failures` : `OK: ${cases.length} strings, ids identical, round trips exact`);
  process.exit(failures ? 1 : 0);
}

// agree_gemma.js reuses the inputs and the reference loader.
module.exports = { loadReference, snippets, adversarial, binaryish };

if (require.main === module) {
  run().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
