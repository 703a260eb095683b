// Reference encoder: Hugging Face tokenizers (npm @anush008/tokenizers) with
// split_special_tokens semantics. The library has no encode_special_tokens
// switch, so the content of each special added token is replaced by a string
// that no test input contains (noncharacters U+FFFF U+FFFE around the id):
// the Rust AddedVocabulary then never matches them, which is what
// encode_special_tokens=True does, while every id stays where it was
// (dropping the entries instead would renumber the later added tokens).
// Non-special added tokens are still matched, as in Hugging Face.
//
// usage: node hf_encode.js TOKENIZER_JSON < in.jsonl > out.txt
//   each input line is a JSON string; each output line its ids separated by
//   spaces. With --decode, input lines are id lists and output lines JSON strings.
'use strict';
const fs = require('fs');
const path = require('path');
const { Tokenizer } = require(path.join(__dirname, '..', 'node_modules', '@anush008', 'tokenizers'));

function loadPlainText(file) {
  const j = JSON.parse(fs.readFileSync(file, 'utf8'));
  for (const t of j.added_tokens) {
    if (t.special) t.content = '\uffff\ufffe' + t.id + '\ufffe\uffff';
  }
  return Tokenizer.fromString(JSON.stringify(j));
}

async function main() {
  const args = process.argv.slice(2);
  const decode = args.includes('--decode');
  const file = args.find((a) => !a.startsWith('--'));
  const tok = loadPlainText(file);
  const lines = fs.readFileSync(0, 'utf8').split('\n').filter((l) => l.length > 0);
  const out = [];
  for (const l of lines) {
    if (decode) {
      const ids = l.trim().split(/\s+/).filter((x) => x.length).map(Number);
      out.push(JSON.stringify(await tok.decode(ids, false)));
    } else {
      const e = await tok.encode(JSON.parse(l), null, { addSpecialTokens: false });
      out.push(e.getIds().join(' '));
    }
  }
  fs.writeFileSync(1, out.join('\n') + (out.length ? '\n' : ''));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
