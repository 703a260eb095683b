#!/usr/bin/python3
"""Byte-level BPE tokenizer: trainer, reference encoder, HF tokenizer.json writer.

  bpe.py train --corpus CORPUS.jsonl --vocab 8192 --out tokenizer.json [--max-mb 24] [--seed 0]

The format is the Qwen2 one that engine/tokenizer.c reads: NFC normaliser, the Qwen2
pre-tokenizer regex (Split, Isolated) followed by ByteLevel(use_regex=false), a BPE model
with no byte fallback over the GPT-2 byte<->unicode alphabet, ByteLevel decoder. Ids
0..255 are the 256 bytes in GPT-2 alphabet order, then one id per merge, then the
special tokens (<|endoftext|>, <|beginoftext|>, <|mask|>) as the last ids, so the whole
vocabulary is exactly --vocab rows.

Training is deterministic given the corpus and the seed: the seed picks which files of
the corpus the word counts are taken from (when it holds more than --max-mb), pairs are
ranked by (count, then the smaller pair of ids), and the output is written with sorted
keys where order is free. Debian has no trainer for this format (python3-tokenizers
is not packaged), so this is ours; the encoder here is the reference the tests compare
engine/tokenizer.c with.
"""

import argparse
import heapq
import json
import random
import sys
import unicodedata
from collections import Counter, defaultdict

import regex

# Qwen2's pre-tokenizer pattern (engine/tokenizer.c TOK_QWEN2_PATTERN).
QWEN2_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"
                 r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
SPECIALS = ("<|endoftext|>", "<|beginoftext|>", "<|mask|>")
_RE = regex.compile(QWEN2_PATTERN)


def bytes_to_unicode():
    """GPT-2's map from the 256 byte values to printable unicode characters."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1)) + \
        list(range(ord("\xae"), ord("\xff") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, [chr(c) for c in cs]))


B2U = bytes_to_unicode()
# Byte order of the first 256 ids: the GPT-2 alphabet order (bs above).
BYTE_ORDER = list(B2U.keys())
BYTE_ID = {b: i for i, b in enumerate(BYTE_ORDER)}


def pretokenize(text):
    return _RE.findall(unicodedata.normalize("NFC", text))


def count_words(texts):
    c = Counter()
    for t in texts:
        c.update(pretokenize(t))
    return c


def train(word_counts, n_tokens):
    """Merges until the vocabulary holds n_tokens byte strings. Returns the merges as
    [(left id, right id)] and the bytes of every id. A merge whose bytes already exist
    (reached by another split) reuses that id, as Hugging Face's trainer does."""
    tb = [bytes([b]) for b in BYTE_ORDER]
    tid = {t: i for i, t in enumerate(tb)}
    words, freqs = [], []
    for w, f in sorted(word_counts.items()):
        ids = [BYTE_ID[b] for b in w.encode("utf-8")]
        if len(ids) > 1:
            words.append(ids)
            freqs.append(f)
    pair_count = defaultdict(int)
    where = defaultdict(set)
    for wi, ids in enumerate(words):
        f = freqs[wi]
        for a, b in zip(ids, ids[1:]):
            pair_count[(a, b)] += f
            where[(a, b)].add(wi)
    heap = [(-c, p) for p, c in pair_count.items()]
    heapq.heapify(heap)
    merges = []
    while len(tb) < n_tokens and heap:
        negc, pair = heapq.heappop(heap)
        cur = pair_count.get(pair, 0)
        if cur != -negc:
            if cur > 0:
                heapq.heappush(heap, (-cur, pair))
            continue
        if cur < 2:
            break
        a, b = pair
        joined = tb[a] + tb[b]
        new_id = tid.get(joined)
        if new_id is None:
            new_id = len(tb)
            tb.append(joined)
            tid[joined] = new_id
        merges.append(pair)
        changed = set()
        for wi in sorted(where.pop(pair, ())):
            ids = words[wi]
            f = freqs[wi]
            out = []
            i = 0
            n = len(ids)
            while i < n:
                if i + 1 < n and ids[i] == a and ids[i + 1] == b:
                    out.append(new_id)
                    i += 2
                else:
                    out.append(ids[i])
                    i += 1
            if len(out) == n:
                continue
            for p in zip(ids, ids[1:]):
                pair_count[p] -= f
                changed.add(p)
            for p in zip(out, out[1:]):
                pair_count[p] += f
                where[p].add(wi)
                changed.add(p)
            words[wi] = out
        pair_count.pop(pair, None)
        for p in sorted(changed):
            c = pair_count.get(p, 0)
            if c <= 0:
                pair_count.pop(p, None)
            elif p != pair:
                heapq.heappush(heap, (-c, p))
    return merges, tb


def to_unicode(bs):
    return "".join(B2U[b] for b in bs)


def tokenizer_json(merges, tb, vocab_size):
    vocab = {to_unicode(t): i for i, t in enumerate(tb)}
    if len(vocab) != len(tb):
        raise SystemExit("bpe: duplicate token strings")
    base = len(tb)
    added = []
    for k, s in enumerate(SPECIALS):
        added.append({"id": base + k, "content": s, "single_word": False, "lstrip": False,
                      "rstrip": False, "normalized": False, "special": True})
    assert base + len(SPECIALS) == vocab_size
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": {"type": "NFC"},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": QWEN2_PATTERN}, "behavior": "Isolated",
             "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
             "use_regex": False}]},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                           "use_regex": False},
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                    "use_regex": False},
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": "", "end_of_word_suffix": "",
                  "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab,
                  "merges": [[to_unicode(tb[a]), to_unicode(tb[b])] for a, b in merges]},
    }


def dump(tok):
    return json.dumps(tok, ensure_ascii=False, indent=None, separators=(",", ":")) + "\n"


class Encoder:
    """Reference encoder over a tokenizer.json this module wrote (or any Qwen2-style one
    without non-special added tokens): NFC, regex split, byte-level BPE by merge rank."""

    def __init__(self, tok):
        m = tok["model"]
        u2b = {u: b for b, u in B2U.items()}
        self.vocab = {bytes(u2b[c] for c in s): i for s, i in m["vocab"].items()}
        self.rank = {}
        for r, (l, rr) in enumerate(m["merges"]):
            lb = bytes(u2b[c] for c in l)
            rb = bytes(u2b[c] for c in rr)
            self.rank[(lb, rb)] = r
        self.special = {a["content"]: a["id"] for a in tok["added_tokens"]}
        self.id_bytes = {i: b for b, i in self.vocab.items()}
        self.cache = {}

    def bpe(self, piece):
        parts = [bytes([b]) for b in piece]
        while len(parts) > 1:
            best, bi = None, -1
            for i in range(len(parts) - 1):
                r = self.rank.get((parts[i], parts[i + 1]))
                if r is not None and (best is None or r < best):
                    best, bi = r, i
            if best is None:
                break
            parts[bi:bi + 2] = [parts[bi] + parts[bi + 1]]
        return [self.vocab[p] for p in parts]

    def encode(self, text):
        ids = []
        for piece in pretokenize(text):
            got = self.cache.get(piece)
            if got is None:
                got = self.bpe(piece.encode("utf-8"))
                self.cache[piece] = got
            ids.extend(got)
        return ids

    def decode(self, ids):
        return b"".join(self.id_bytes.get(i, b"") for i in ids).decode("utf-8", "replace")


def load_texts(corpus, max_mb, seed):
    """Up to max_mb of text, the same share from every language (files in a seeded
    shuffle), so the big Python and JavaScript parts do not crowd out Lua and C."""
    by_lang = {}
    with open(corpus, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            by_lang.setdefault(r.get("lang", ""), []).append(r["text"])
    rng = random.Random(seed)
    share = max_mb * 1e6 / max(1, len(by_lang))
    out = []
    for lang in sorted(by_lang):
        recs = by_lang[lang]
        rng.shuffle(recs)
        n = 0
        for t in recs:
            if n >= share:
                break
            out.append(t)
            n += len(t)
    return out


def main(argv):
    p = argparse.ArgumentParser(description="Train a byte-level BPE tokenizer.json")
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train")
    t.add_argument("--corpus", required=True)
    t.add_argument("--vocab", type=int, default=8192)
    t.add_argument("--max-mb", type=float, default=24.0)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--out", required=True)
    e = sub.add_parser("encode")
    e.add_argument("--tokenizer", required=True)
    e.add_argument("file")
    args = p.parse_args(argv)
    if args.cmd == "train":
        n_tokens = args.vocab - len(SPECIALS)
        texts = load_texts(args.corpus, args.max_mb, args.seed)
        counts = count_words(texts)
        merges, tb = train(counts, n_tokens)
        if len(tb) < n_tokens:
            raise SystemExit("bpe: the corpus gives only %d tokens (need %d)" %
                             (len(tb), n_tokens))
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(dump(tokenizer_json(merges, tb, args.vocab)))
        return 0
    with open(args.tokenizer, encoding="utf-8") as f:
        enc = Encoder(json.load(f))
    with open(args.file, encoding="utf-8") as f:
        print(" ".join(map(str, enc.encode(f.read()))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
