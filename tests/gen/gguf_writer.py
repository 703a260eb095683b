"""GGUF v3 writer and ggml block quantisers for the checkpoint generator (numpy only).

Written from the GGUF specification (ggml docs/gguf.md) and ggml's published block
layouts (ggml-common.h), independently of infilld's C loader. The quantisers are
simple (scale from the block's range, round to nearest), not llama.cpp's searches:
any choice of scales is a valid file, and the tests compare against a dequantisation
of the very blocks written here (tests/ref/gguf_read.py), so only the layout must be
exact.

Conventions of llama.cpp's converter reproduced here (MODELS.md section 5):
  * tensor names token_embd / blk.N.attn_q / ... / output_norm / output;
  * LLaDA's Q and K rows permuted for NORM RoPE (undo_permute);
  * Dream files carry no diffusion.shift_logits, LLaDA files write false;
  * the token list padded to the embedding's rows with "[PAD{i}]" entries of
    type UNUSED; added tokens as raw text, CONTROL when special or <|...|>.
"""

import struct

import numpy as np

GGML = {"f32": 0, "f16": 1, "q4_0": 2, "q8_0": 8, "q4_k": 12, "q5_k": 13, "q6_k": 14, "bf16": 30}
BLOCK = {"f32": 1, "f16": 1, "bf16": 1, "q8_0": 32, "q4_0": 32, "q4_k": 256, "q5_k": 256,
         "q6_k": 256}
# general.file_type values (llama_ftype) of the whole-file types.
FTYPE = {"f32": 0, "f16": 1, "q4_0": 2, "q8_0": 7, "q4_k": 15, "q4_k_m": 15, "q5_k": 17,
         "q6_k": 18, "bf16": 32}

TT_NORMAL, TT_CONTROL, TT_USER_DEFINED, TT_UNUSED = 1, 3, 4, 5

# value types
U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = range(13)


def _f16(x):
    return np.asarray(x, dtype=np.float32).astype(np.float16)


def _bf16_bits(a):
    """Round to nearest even. In uint32 (the carry out of the low half added to the
    high half; what overflows past 16 bits is dropped, as the uint64 version's cast
    dropped it): half the memory traffic of widening to uint64."""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    carry = u & 0xFFFF
    carry += 0x7FFF + ((u >> 16) & 1)
    carry >>= 16
    carry += u >> 16
    return carry.astype("<u2")


def _nearest(x):
    """Round half away from zero (C roundf), as ggml's reference quantisers do. In
    place on one temporary; copysign gives -0.0 where sign() gave 0.0, the same
    integer once the callers clip and cast."""
    r = np.abs(x)
    r += 0.5
    np.floor(r, out=r)
    return np.copysign(r, x, out=r)


def _safe_inv(d):
    d = np.asarray(d, dtype=np.float32)
    out = np.zeros_like(d)
    nz = d != 0
    out[nz] = np.float32(1.0) / d[nz]
    return out


# ---- quantisers (rows of a 2-D float32 array, cols a multiple of the block) ----------


def q8_0(x):
    b = x.reshape(-1, 32)
    d = (np.abs(b).max(axis=1) / 127.0).astype(np.float32)
    q = np.clip(_nearest(b * _safe_inv(d)[:, None]), -127, 127).astype(np.int8)
    out = np.zeros((b.shape[0], 34), np.uint8)
    out[:, 0:2] = _f16(d).view(np.uint8).reshape(-1, 2)
    out[:, 2:] = q.view(np.uint8)
    return out.tobytes()


def q4_0(x):
    b = x.reshape(-1, 32)
    idx = np.abs(b).argmax(axis=1)
    mx = b[np.arange(b.shape[0]), idx]
    d = (mx / -8.0).astype(np.float32)
    q = np.clip(np.floor(b * _safe_inv(d)[:, None] + 8.5), 0, 15).astype(np.uint8)
    out = np.zeros((b.shape[0], 18), np.uint8)
    out[:, 0:2] = _f16(d).view(np.uint8).reshape(-1, 2)
    out[:, 2:] = q[:, :16] | (q[:, 16:] << 4)
    return out.tobytes()


def _pack_scales_k4(sc, mn):
    """sc, mn: (n, 8) 6-bit values -> (n, 12) bytes (inverse of get_scale_min_k4)."""
    s = np.zeros((sc.shape[0], 12), np.uint8)
    for j in range(4):
        s[:, j] = (sc[:, j] & 63) | ((sc[:, j + 4] >> 4) << 6)
        s[:, j + 4] = (mn[:, j] & 63) | ((mn[:, j + 4] >> 4) << 6)
        s[:, j + 8] = (sc[:, j + 4] & 0xF) | ((mn[:, j + 4] & 0xF) << 4)
    return s


def _k_affine(x, levels):
    """Q4_K / Q5_K: 8 sub-blocks of 32 with x ~ d*sc*q - dmin*m. Returns
    (d f16, dmin f16, sc (n, 8), mn (n, 8), q (n, 256) in 0..levels)."""
    b = x.reshape(-1, 8, 32)
    lo = np.minimum(b.min(axis=2), 0.0)
    hi = b.max(axis=2)
    scale = ((hi - lo) / levels).astype(np.float32)
    d = _f16(scale.max(axis=1) / 63.0)
    dmin = _f16((-lo).max(axis=1) / 63.0)
    df, mf = d.astype(np.float32), dmin.astype(np.float32)
    sc = np.clip(_nearest(scale * _safe_inv(df)[:, None]), 0, 63).astype(np.uint8)
    mn = np.clip(_nearest(-lo * _safe_inv(mf)[:, None]), 0, 63).astype(np.uint8)
    step = (df[:, None] * sc).astype(np.float32)
    off = (mf[:, None] * mn).astype(np.float32)
    q = np.clip(_nearest((b + off[:, :, None]) * _safe_inv(step)[:, :, None]), 0, levels)
    return d, dmin, sc, mn, q.astype(np.uint8).reshape(-1, 256)


def q4_k(x):
    d, dmin, sc, mn, q = _k_affine(x, 15)
    n = q.shape[0]
    out = np.zeros((n, 144), np.uint8)
    out[:, 0:2] = d.view(np.uint8).reshape(-1, 2)
    out[:, 2:4] = dmin.view(np.uint8).reshape(-1, 2)
    out[:, 4:16] = _pack_scales_k4(sc, mn)
    for c in range(4):
        out[:, 16 + 32 * c : 16 + 32 * (c + 1)] = q[:, 64 * c : 64 * c + 32] | (
            q[:, 64 * c + 32 : 64 * c + 64] << 4)
    return out.tobytes()


def q5_k(x):
    d, dmin, sc, mn, q = _k_affine(x, 31)
    n = q.shape[0]
    out = np.zeros((n, 176), np.uint8)
    out[:, 0:2] = d.view(np.uint8).reshape(-1, 2)
    out[:, 2:4] = dmin.view(np.uint8).reshape(-1, 2)
    out[:, 4:16] = _pack_scales_k4(sc, mn)
    qh = np.zeros((n, 32), np.uint8)
    for c in range(4):
        a, b = q[:, 64 * c : 64 * c + 32], q[:, 64 * c + 32 : 64 * c + 64]
        out[:, 48 + 32 * c : 48 + 32 * (c + 1)] = (a & 0xF) | ((b & 0xF) << 4)
        qh |= ((a >> 4) << (2 * c)).astype(np.uint8)
        qh |= ((b >> 4) << (2 * c + 1)).astype(np.uint8)
    out[:, 16:48] = qh
    return out.tobytes()


def q6_k(x):
    b = x.reshape(-1, 16, 16)
    amax = np.abs(b).max(axis=2)
    scale = (amax / 31.0).astype(np.float32)
    d = _f16(scale.max(axis=1) / 127.0)
    df = d.astype(np.float32)
    sc = np.clip(_nearest(scale * _safe_inv(df)[:, None]), -128, 127).astype(np.int8)
    step = (df[:, None] * sc).astype(np.float32)
    q = (np.clip(_nearest(b * _safe_inv(step)[:, :, None]), -32, 31) + 32).astype(np.uint8)
    q = q.reshape(-1, 256)
    n = q.shape[0]
    out = np.zeros((n, 210), np.uint8)
    for h in range(2):
        e = q[:, 128 * h : 128 * (h + 1)]
        ql = out[:, 64 * h : 64 * (h + 1)]
        ql[:, :32] = (e[:, 0:32] & 0xF) | ((e[:, 64:96] & 0xF) << 4)
        ql[:, 32:] = (e[:, 32:64] & 0xF) | ((e[:, 96:128] & 0xF) << 4)
        out[:, 128 + 32 * h : 128 + 32 * (h + 1)] = (
            (e[:, 0:32] >> 4) | ((e[:, 32:64] >> 4) << 2) | ((e[:, 64:96] >> 4) << 4)
            | ((e[:, 96:128] >> 4) << 6))
    out[:, 192:208] = sc.view(np.uint8)
    out[:, 208:210] = d.view(np.uint8).reshape(-1, 2)
    return out.tobytes()


def encode(a, t):
    a = np.ascontiguousarray(a, dtype=np.float32)
    if t == "f32":
        return a.astype("<f4").tobytes()
    if t == "f16":
        return a.astype("<f2").tobytes()
    if t == "bf16":
        return _bf16_bits(a).tobytes()
    return {"q8_0": q8_0, "q4_0": q4_0, "q4_k": q4_k, "q5_k": q5_k, "q6_k": q6_k}[t](a)


# ---- names, permutation, types per tensor ---------------------------------------------


def gguf_name(hf):
    """llama.cpp's tensor name for a Dream (Qwen2) or LLaDA (OLMo) tensor."""
    top = {
        "model.embed_tokens.weight": "token_embd.weight", "model.norm.weight": "output_norm.weight",
        "lm_head.weight": "output.weight", "model.transformer.wte.weight": "token_embd.weight",
        "model.transformer.ln_f.weight": "output_norm.weight",
        "model.transformer.ff_out.weight": "output.weight",
    }
    if hf in top:
        return top[hf]
    sub = {
        "input_layernorm.weight": "attn_norm.weight", "post_attention_layernorm.weight":
        "ffn_norm.weight", "self_attn.q_proj.weight": "attn_q.weight", "self_attn.k_proj.weight":
        "attn_k.weight", "self_attn.v_proj.weight": "attn_v.weight", "self_attn.q_proj.bias":
        "attn_q.bias", "self_attn.k_proj.bias": "attn_k.bias", "self_attn.v_proj.bias":
        "attn_v.bias", "self_attn.o_proj.weight": "attn_output.weight", "mlp.gate_proj.weight":
        "ffn_gate.weight", "mlp.up_proj.weight": "ffn_up.weight", "mlp.down_proj.weight":
        "ffn_down.weight", "attn_norm.weight": "attn_norm.weight", "ff_norm.weight":
        "ffn_norm.weight", "q_proj.weight": "attn_q.weight", "k_proj.weight": "attn_k.weight",
        "v_proj.weight": "attn_v.weight", "attn_out.weight": "attn_output.weight",
        "ff_proj.weight": "ffn_gate.weight", "up_proj.weight": "ffn_up.weight", "ff_out.weight":
        "ffn_down.weight",
    }
    for pre in ("model.layers.", "model.transformer.blocks."):
        if hf.startswith(pre):
            layer, rest = hf[len(pre):].split(".", 1)
            return "blk.%s.%s" % (layer, sub[rest])
    raise ValueError(hf)


def permute_rows(w, n_head):
    """llama.cpp LlamaModel.permute: HF rotate-half rows -> interleaved pairs per head."""
    return (w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2)
            .reshape(w.shape))


def tensor_type(name, a, ftype):
    """Storage type of one tensor: 1-D tensors stay F32 (as llama.cpp keeps norms and
    biases); q4_k_m is llama.cpp's mix (Q6_K for the output, attn_v and ffn_down,
    Q4_K elsewhere); a block type that does not divide the row falls back to Q8_0,
    then F16 (as llama.cpp falls back for such shapes)."""
    if a.ndim == 1:
        return "f32"
    t = ftype
    if ftype == "q4_k_m":
        t = "q6_k" if name.endswith(("output.weight", "attn_v.weight", "ffn_down.weight")) else "q4_k"
    if a.shape[1] % BLOCK[t]:
        t = "q8_0" if a.shape[1] % 32 == 0 else "f16"
    return t


# ---- file ---------------------------------------------------------------------------


def _str(s):
    b = s.encode("utf-8") if isinstance(s, str) else s
    return struct.pack("<Q", len(b)) + b


def _value(vtype, v):
    if vtype == STR:
        return _str(v)
    if vtype == ARR:
        etype, items = v
        out = struct.pack("<IQ", etype, len(items))
        if etype == STR:
            return out + b"".join(_str(x) for x in items)
        fmt = {U8: "B", I8: "b", U16: "H", I16: "h", U32: "I", I32: "i", F32: "f", BOOL: "?",
               U64: "Q", I64: "q", F64: "d"}[etype]
        return out + np.array(items, dtype="<" + fmt).tobytes()
    fmt = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f",
           BOOL: "<?", U64: "<Q", I64: "<q", F64: "<d"}[vtype]
    return struct.pack(fmt, v)


def write_file(path, kvs, tensors, alignment=32):
    """kvs: list of (key, vtype, value); tensors: list of (name, shape (row-major),
    ggml type id, raw bytes). Writes GGUF v3."""
    head = [b"GGUF", struct.pack("<IQQ", 3, len(tensors), len(kvs))]
    for key, vtype, v in kvs:
        head.append(_str(key) + struct.pack("<I", vtype) + _value(vtype, v))
    off = 0
    offsets = []
    for name, shape, gtype, raw in tensors:
        offsets.append(off)
        ne = list(reversed([int(s) for s in shape]))
        head.append(_str(name) + struct.pack("<I", len(ne)) + struct.pack("<%dQ" % len(ne), *ne)
                    + struct.pack("<IQ", gtype, off))
        off += (len(raw) + alignment - 1) // alignment * alignment
    h = b"".join(head)
    h += b"\0" * ((alignment - len(h) % alignment) % alignment)
    with open(path, "wb") as f:
        f.write(h)
        for (_, _, _, raw), o in zip(tensors, offsets):
            f.write(raw)
            f.write(b"\0" * ((alignment - len(raw) % alignment) % alignment))


def looks_special(content):
    return content.startswith("<|") and content.endswith("|>")


def tokenizer_kvs(tok, vocab_size, special_ids):
    """tokenizer.ggml.* from a tokenizer.json dict: byte-level vocabulary, added tokens
    as raw text, padding up to vocab_size."""
    tokens = ["[PAD%d]" % i for i in range(vocab_size)]
    types = [TT_UNUSED] * vocab_size
    for s, i in tok["model"]["vocab"].items():
        if i < vocab_size:
            tokens[i], types[i] = s, TT_NORMAL
    for a in tok["added_tokens"]:
        if a["id"] < vocab_size:
            tokens[a["id"]] = a["content"]
            types[a["id"]] = TT_CONTROL if a.get("special") or looks_special(a["content"]) \
                else TT_USER_DEFINED
    merges = [m if isinstance(m, str) else " ".join(m) for m in tok["model"]["merges"]]
    kvs = [
        ("tokenizer.ggml.model", STR, "gpt2"),
        ("tokenizer.ggml.pre", STR, "qwen2"),
        ("tokenizer.ggml.tokens", ARR, (STR, tokens)),
        ("tokenizer.ggml.token_type", ARR, (I32, types)),
        ("tokenizer.ggml.merges", ARR, (STR, merges)),
    ]
    for key, tid in special_ids:
        if tid is not None:
            kvs.append(("tokenizer.ggml.%s" % key, U32, tid))
    return kvs


def spm_tokenizer_kvs(tok, model="gemma4"):
    """tokenizer.ggml.* for a SentencePiece-style tokenizer.json (Gemma's layout, as
    llama.cpp's converters write it): pieces, scores, token types and, for "gemma4",
    merges; add_space_prefix false. The score of a piece is minus the rank of the first
    merge that produces it; pieces no merge produces score below every merge result.
    Token types: special added tokens CONTROL, other added tokens USER_DEFINED, <0xNN>
    BYTE, the unk token UNKNOWN, the rest NORMAL."""
    import re
    tt_unknown, tt_byte = 2, 6
    m = tok["model"]
    vocab = m["vocab"]
    n = max(max(vocab.values()), max(a["id"] for a in tok["added_tokens"])) + 1
    tokens = [None] * n
    types = [TT_NORMAL] * n
    for s, i in vocab.items():
        tokens[i] = s
        if re.fullmatch(r"<0x[0-9A-F]{2}>", s):
            types[i] = tt_byte
    for a in tok["added_tokens"]:
        tokens[a["id"]] = a["content"]
        types[a["id"]] = TT_CONTROL if a["special"] else TT_USER_DEFINED
    if m.get("unk_token") in vocab:
        types[vocab[m["unk_token"]]] = tt_unknown
    missing = [i for i, t in enumerate(tokens) if t is None]
    if missing:
        raise ValueError("spm_tokenizer_kvs: ids without a token: %s" % missing[:5])
    merges = [x if isinstance(x, str) else " ".join(x) for x in m["merges"]]
    first = {}
    for r, x in enumerate(merges):
        a, b = x.split(" ")
        first.setdefault(a + b, r)
    floor = -float(len(merges) + 1)
    scores = [-float(first[t]) if t in first else floor for t in tokens]
    kvs = [
        ("tokenizer.ggml.model", STR, model),
        ("tokenizer.ggml.tokens", ARR, (STR, tokens)),
        ("tokenizer.ggml.scores", ARR, (F32, scores)),
        ("tokenizer.ggml.token_type", ARR, (I32, types)),
        ("tokenizer.ggml.add_space_prefix", BOOL, False),
    ]
    if model == "gemma4":
        kvs.append(("tokenizer.ggml.merges", ARR, (STR, merges)))
    return kvs
