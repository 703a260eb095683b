#!/usr/bin/python3
"""Writes the tiny tokenizer fixtures used by test_tokenizer (data/tiny_*).

A 256-byte GPT-2 byte-level alphabet (bytes_to_unicode written here from the
published definition) plus three merges, so expected ids can be worked out by
hand:  "Ġ t" → "Ġt" (256), "h e" → "he" (257), "Ġt he" → "Ġthe" (258).
Added tokens: <|endoftext|> 259 (special), <|mask|> 260 (special),
<tool> 261 (not special).

  data/tiny_json/tokenizer.json      merges in string form ("a b")
  data/tiny_pairs/tokenizer.json     merges in pair form (["a", "b"])
  data/tiny_vocab/vocab.json, merges.txt, added_tokens.json, tokenizer_config.json
"""
import json
import os

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


B2U = bytes_to_unicode()
VOCAB = {B2U[b]: b for b in range(256)}
VOCAB["Ġt"] = 256
VOCAB["he"] = 257
VOCAB["Ġthe"] = 258
MERGES = [("Ġ", "t"), ("h", "e"), ("Ġt", "he")]
ADDED = [("<|endoftext|>", 259, True), ("<|mask|>", 260, True), ("<tool>", 261, False)]
PATTERN = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
           "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")


def tokenizer_json(pairs):
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": s} for c, i, s in ADDED],
        "normalizer": {"type": "NFC"},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": PATTERN}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}]},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": VOCAB,
                  "merges": [list(m) for m in MERGES] if pairs else [" ".join(m) for m in MERGES]},
    }


def write(rel, obj):
    path = os.path.join(HERE, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        if isinstance(obj, str):
            f.write(obj)
        else:
            json.dump(obj, f, ensure_ascii=False, indent=1)
            f.write("\n")


write("tiny_json/tokenizer.json", tokenizer_json(False))
write("tiny_pairs/tokenizer.json", tokenizer_json(True))
write("tiny_vocab/vocab.json", VOCAB)
write("tiny_vocab/merges.txt", "#version: 0.2\n" + "".join("%s %s\n" % m for m in MERGES))
write("tiny_vocab/added_tokens.json", {c: i for c, i, _ in ADDED})
write("tiny_vocab/tokenizer_config.json", {
    "added_tokens_decoder": {str(i): {"content": c, "lstrip": False, "normalized": False, "rstrip": False,
                                      "single_word": False, "special": s} for c, i, s in ADDED},
    "eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>", "mask_token": "<|mask|>",
    "tokenizer_class": "DreamTokenizer"})
