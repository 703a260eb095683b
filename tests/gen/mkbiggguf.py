#!/usr/bin/python3
"""Writes a large Dream-shaped GGUF with random weights, tensor by tensor, for speed and
memory figures only (docs/PERFORMANCE.md): a 7B-shaped file does not fit in memory as
float32, so unlike mkcheckpoint.py nothing is quantised here: every block is random bytes
in the published layout (ggml-common.h) with fixed, small f16 scales, written as it is
made. The logits mean nothing; the shapes, types, sizes and the tokenizer metadata are
those of a real file.

  mkbiggguf.py OUT.gguf --type q8_0|q4_k_m [--layers 28 --hidden 3584 --heads 28
                                           --kv-heads 4 --ffn 18944 --vocab 152064]

Defaults: Dream-v0-7B (Qwen2.5-7B). q4_k_m is llama.cpp's mix: Q6_K for output,
attn_v and ffn_down, Q4_K elsewhere. Deterministic (numpy PCG64, seed 0)."""

import argparse
import json
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gguf_writer as gw  # noqa: E402
import mkcheckpoint as mk  # noqa: E402

ROWS_PER_CHUNK = 512


def block_bytes(t):
    return {"q8_0": 34, "q4_k": 144, "q6_k": 210, "f32": 4}[t]


def qk(t):
    return {"q8_0": 32, "q4_k": 256, "q6_k": 256, "f32": 1}[t]


def random_rows(rng, t, rows, cols, scale):
    """rows x cols values of type t as raw blocks: random quants, f16 scale `scale`."""
    nb = rows * (cols // qk(t))
    if t == "f32":
        return (rng.standard_normal(rows * cols, dtype=np.float32) * scale).astype("<f4").tobytes()
    b = rng.integers(0, 256, size=(nb, block_bytes(t)), dtype=np.uint8)
    d = np.frombuffer(np.float16(scale).tobytes(), dtype=np.uint8)
    if t == "q8_0":
        b[:, 0:2] = d
    elif t == "q4_k":
        b[:, 0:2] = d
        b[:, 2:4] = d  # dmin
    else:
        b[:, 208:210] = d
    return b.tobytes()


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out")
    p.add_argument("--type", choices=("q8_0", "q4_k_m"), required=True)
    p.add_argument("--layers", type=int, default=28)
    p.add_argument("--hidden", type=int, default=3584)
    p.add_argument("--heads", type=int, default=28)
    p.add_argument("--kv-heads", type=int, default=4)
    p.add_argument("--ffn", type=int, default=18944)
    p.add_argument("--vocab", type=int, default=152064)
    p.add_argument("--tokenizer", default=mk.DEFAULT_TOKENIZER)
    a = p.parse_args(argv)
    H, hd = a.hidden, a.hidden // a.heads
    kvd = a.kv_heads * hd
    ftype = a.type

    def ttype(name, ncols):
        if name.endswith((".bias", "_norm.weight")):
            return "f32"
        t = "q8_0" if ftype == "q8_0" else (
            "q6_k" if name.endswith(("output.weight", "attn_v.weight", "ffn_down.weight"))
            else "q4_k")
        return t if ncols % qk(t) == 0 else "q8_0"

    tensors = [("token_embd.weight", (a.vocab, H))]
    for i in range(a.layers):
        pre = "blk.%d." % i
        tensors += [
            (pre + "attn_norm.weight", (H,)), (pre + "attn_q.weight", (H, H)),
            (pre + "attn_q.bias", (H,)), (pre + "attn_k.weight", (kvd, H)),
            (pre + "attn_k.bias", (kvd,)), (pre + "attn_v.weight", (kvd, H)),
            (pre + "attn_v.bias", (kvd,)), (pre + "attn_output.weight", (H, H)),
            (pre + "ffn_norm.weight", (H,)), (pre + "ffn_gate.weight", (a.ffn, H)),
            (pre + "ffn_up.weight", (a.ffn, H)), (pre + "ffn_down.weight", (H, a.ffn)),
        ]
    tensors += [("output_norm.weight", (H,)), ("output.weight", (a.vocab, H))]

    with open(a.tokenizer, encoding="utf-8") as f:
        tok = mk.make_tokenizer(json.load(f), "dream")
    kvs = [
        ("general.architecture", gw.STR, "dream"),
        ("general.name", gw.STR, "random-dream-%s" % ftype),
        ("general.file_type", gw.U32, gw.FTYPE[ftype]),
        ("dream.block_count", gw.U32, a.layers),
        ("dream.context_length", gw.U32, 32768),
        ("dream.embedding_length", gw.U32, H),
        ("dream.feed_forward_length", gw.U32, a.ffn),
        ("dream.attention.head_count", gw.U32, a.heads),
        ("dream.attention.head_count_kv", gw.U32, a.kv_heads),
        ("dream.rope.freq_base", gw.F32, 1000000.0),
        ("dream.attention.layer_norm_rms_epsilon", gw.F32, 1e-6),
        ("dream.attention.causal", gw.BOOL, False),
    ]
    kvs += gw.tokenizer_kvs(tok, a.vocab, [("mask_token_id", 151666), ("eos_token_id", 151643),
                                           ("padding_token_id", 151643), ("bos_token_id", 151665)])
    align = 32
    head = [b"GGUF", struct.pack("<IQQ", 3, len(tensors), len(kvs))]
    for key, vtype, v in kvs:
        head.append(gw._str(key) + struct.pack("<I", vtype) + gw._value(vtype, v))
    off, plan = 0, []
    for name, shape in tensors:
        t = ttype(name, shape[-1])
        n = int(np.prod(shape))
        size = n // qk(t) * block_bytes(t)
        ne = list(reversed(shape))
        head.append(gw._str(name) + struct.pack("<I", len(ne)) + struct.pack("<%dQ" % len(ne), *ne)
                    + struct.pack("<IQ", gw.GGML[t], off))
        plan.append((name, shape, t, size))
        off += (size + align - 1) // align * align
    h = b"".join(head)
    h += b"\0" * ((align - len(h) % align) % align)
    rng = np.random.Generator(np.random.PCG64(0))
    with open(a.out, "wb") as f:
        f.write(h)
        for name, shape, t, size in plan:
            # Small scales keep activations finite through every layer: output
            # projections tiny so the residual stays the embedding's size.
            small = name.endswith(("attn_output.weight", "ffn_down.weight"))
            scale = 1.0 if name.endswith("_norm.weight") else (
                0.0 if name.endswith(".bias") else (2e-6 if small else 2e-4))
            rows = shape[0] if len(shape) == 2 else 1
            cols = shape[-1]
            if t == "f32" and scale in (0.0, 1.0):
                f.write(np.full(rows * cols, scale, dtype="<f4").tobytes())
            else:
                for r0 in range(0, rows, ROWS_PER_CHUNK):
                    f.write(random_rows(rng, t, min(ROWS_PER_CHUNK, rows - r0), cols, scale))
            f.write(b"\0" * ((align - size % align) % align))
    print("%s: %d tensors, %.1f MiB" % (a.out, len(plan), (len(h) + off) / 1048576.0))


if __name__ == "__main__":
    main(sys.argv[1:])
