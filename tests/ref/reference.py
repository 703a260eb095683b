#!/usr/bin/python3
"""Independent float64 numpy reference for the diffusion LMs infilld runs.

Written from the published model definitions (Qwen2 / Dream `modeling_dream.py`,
LLaDA `modeling_llada.py`, as summarised in docs MODELS.md sections 1 and 7), not from
infilld's C code, and with its own safetensors reader. Everything is computed in
float64 from the stored weight values.

Library use (other tests import this file):
    import reference
    m = reference.load(model_dir)
    logits = m.forward(tokens)                    # raw rows [L, V], float64
    logits = m.forward(tokens, valid=[1,1,0,...]) # one padded sequence
    batch = m.forward_batch(tokens2d, valid2d)    # [B, L, V]
    rows = m.forward_window(old, new, start, end) # window recomputed over cached K/V
    pred = reference.shifted(logits, m.shift)     # row that predicts token i
    u = reference.noise_uniform(seed, step, position, v)   # engine/sample/noise.c

Command line (mirrors `infilld logits`):
    reference.py logits --model DIR --tokens 1,2,3 [--out FILE]
writes raw logits as little-endian f32 rows [L, V] (or prints argmaxes without --out).

Run with Debian's /usr/bin/python3 (numpy only).
"""

import argparse
import json
import os
import struct
import sys

import numpy as np

# ---- safetensors -------------------------------------------------------------------


def _decode(raw, dtype, shape):
    if dtype == "F32":
        a = np.frombuffer(raw, dtype="<f4")
    elif dtype == "F64":
        a = np.frombuffer(raw, dtype="<f8")
    elif dtype == "F16":
        a = np.frombuffer(raw, dtype="<f2").astype(np.float32)
    elif dtype == "BF16":
        bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
        a = bits.view(np.float32)
    else:
        raise ValueError("unsupported safetensors dtype %s" % dtype)
    return a.reshape(shape)


def read_safetensors(path):
    """Returns {name: float32/float64 ndarray} holding the exact stored values."""
    with open(path, "rb") as f:
        data = f.read()
    (hlen,) = struct.unpack("<Q", data[:8])
    if 8 + hlen > len(data):
        raise ValueError("%s: header length past end of file" % path)
    header = json.loads(data[8 : 8 + hlen].decode("utf-8"))
    base = 8 + hlen
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        if not (0 <= start <= end and base + end <= len(data)):
            raise ValueError("%s: tensor %s outside the file" % (path, name))
        out[name] = _decode(data[base + start : base + end], info["dtype"], info["shape"])
    return out


def read_weights(model_dir):
    index = os.path.join(model_dir, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index) as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
    else:
        files = ["model.safetensors"]
    weights = {}
    for fname in files:
        weights.update(read_safetensors(os.path.join(model_dir, fname)))
    return weights


# ---- model ------------------------------------------------------------------------------


class Model:
    """One loaded checkpoint. Attributes: family ('dream', 'open-dcoder', 'llada'),
    shift (output row i-1 predicts token i), mask_id, bos_id, eos_id, pad_id, vocab,
    hidden, layers, heads, kv_heads, head_dim, ffn, theta, eps, tied, config."""

    def forward(self, tokens, valid=None):
        """Raw logits [L, V] (float64) for one sequence; valid marks real tokens
        (padding slots are False)."""
        tokens = np.asarray(tokens, dtype=np.int64)[None, :]
        v = None if valid is None else np.asarray(valid, dtype=bool)[None, :]
        return self.forward_batch(tokens, v)[0]

    def forward_batch(self, tokens, valid=None):
        tokens = np.asarray(tokens, dtype=np.int64)
        b, n = tokens.shape
        if valid is None:
            valid = np.ones((b, n), dtype=bool)
        valid = np.asarray(valid, dtype=bool)
        if tokens.min() < 0 or tokens.max() >= self.embed.shape[0]:
            raise ValueError("token id outside the embedding")
        # HF: position_ids = cumsum(mask) - 1, padding slots get position 1.
        pos = np.cumsum(valid, axis=1) - 1
        pos = np.where(valid, pos, 1).astype(np.float64)
        h = self.embed[tokens].astype(np.float64)
        # Query i may attend to key j iff both are real tokens; bidirectional.
        allowed = valid[:, :, None] & valid[:, None, :]
        for layer in self.blocks:
            h = h + self._attention(layer, _rmsnorm(h, layer["attn_norm"], self.eps), pos, allowed)
            m = _rmsnorm(h, layer["ffn_norm"], self.eps)
            gate = m @ layer["gate"].T
            up = m @ layer["up"].T
            h = h + (_silu(gate) * up) @ layer["down"].T
        h = _rmsnorm(h, self.final_norm, self.eps)
        return h @ self.head.T.astype(np.float64)

    def forward_window(self, old_tokens, new_tokens, start, end):
        """Raw logits [end - start, V] of rows start..end-1 of new_tokens when only that
        window is recomputed: at every layer the window's queries attend to the K/V of a
        full forward over old_tokens everywhere outside the window and to their own fresh
        K/V inside it (a context K/V cache filled by an earlier full pass). With
        old_tokens == new_tokens this equals forward(new_tokens)[start:end]."""
        old = np.asarray(old_tokens, dtype=np.int64)
        new = np.asarray(new_tokens, dtype=np.int64)
        n = old.shape[0]
        if new.shape != old.shape or not 0 <= start < end <= n:
            raise ValueError("bad window")
        cache = []
        pos_all = np.arange(n, dtype=np.float64)
        h = self.embed[old].astype(np.float64)
        for layer in self.blocks:
            a = _rmsnorm(h, layer["attn_norm"], self.eps)
            k, v = self._kv(layer, a, pos_all)
            cache.append((k, v))
            h = h + self._attend(layer, a, pos_all, k, v)
            h = h + self._mlp(layer, h)
        pos_w = pos_all[start:end]
        h = self.embed[new[start:end]].astype(np.float64)
        for layer, (k_old, v_old) in zip(self.blocks, cache):
            a = _rmsnorm(h, layer["attn_norm"], self.eps)
            k_new, v_new = self._kv(layer, a, pos_w)
            k = k_old.copy()
            v = v_old.copy()
            k[:, start:end] = k_new
            v[:, start:end] = v_new
            h = h + self._attend(layer, a, pos_w, k, v)
            h = h + self._mlp(layer, h)
        h = _rmsnorm(h, self.final_norm, self.eps)
        return h @ self.head.T.astype(np.float64)

    def _kv(self, layer, a, pos):
        """Keys (after RoPE) and values [KV, N, hd] of one unpadded sequence."""
        n = a.shape[0]
        k = a @ layer["k"].T
        v = a @ layer["v"].T
        if "k_bias" in layer:
            k = k + layer["k_bias"]
            v = v + layer["v_bias"]
        k = k.reshape(n, self.kv_heads, self.head_dim).transpose(1, 0, 2)
        v = v.reshape(n, self.kv_heads, self.head_dim).transpose(1, 0, 2)
        cos, sin = _rope_tables(pos[None], self.head_dim, self.theta)
        k = k * cos + _rotate_half(k) * sin
        return k, v

    def _attend(self, layer, a, pos, k, v):
        """Attention output projection for query rows a at positions pos over all of
        the given keys and values (no padding)."""
        n = a.shape[0]
        q = a @ layer["q"].T
        if "q_bias" in layer:
            q = q + layer["q_bias"]
        q = q.reshape(n, self.heads, self.head_dim).transpose(1, 0, 2)
        cos, sin = _rope_tables(pos[None], self.head_dim, self.theta)
        q = q * cos + _rotate_half(q) * sin
        group = self.heads // self.kv_heads
        k = np.repeat(k, group, axis=0)
        v = np.repeat(v, group, axis=0)
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(self.head_dim)
        scores -= scores.max(axis=-1, keepdims=True)
        p = np.exp(scores)
        p /= p.sum(axis=-1, keepdims=True)
        out = (p @ v).transpose(1, 0, 2).reshape(n, self.heads * self.head_dim)
        return out @ layer["o"].T

    def _mlp(self, layer, h):
        m = _rmsnorm(h, layer["ffn_norm"], self.eps)
        return (_silu(m @ layer["gate"].T) * (m @ layer["up"].T)) @ layer["down"].T

    def _attention(self, layer, a, pos, allowed):
        b, n, _ = a.shape
        hd, nh, nkv = self.head_dim, self.heads, self.kv_heads
        q = a @ layer["q"].T
        k = a @ layer["k"].T
        v = a @ layer["v"].T
        if "q_bias" in layer:
            q = q + layer["q_bias"]
            k = k + layer["k_bias"]
            v = v + layer["v_bias"]
        q = q.reshape(b, n, nh, hd).transpose(0, 2, 1, 3)  # [B, H, N, hd]
        k = k.reshape(b, n, nkv, hd).transpose(0, 2, 1, 3)
        v = v.reshape(b, n, nkv, hd).transpose(0, 2, 1, 3)
        cos, sin = _rope_tables(pos, hd, self.theta)  # [B, N, hd]
        q = q * cos[:, None] + _rotate_half(q) * sin[:, None]
        k = k * cos[:, None] + _rotate_half(k) * sin[:, None]
        # GQA: query head j reads KV head j // (H / KV).
        group = nh // nkv
        k = np.repeat(k, group, axis=1)
        v = np.repeat(v, group, axis=1)
        scores = (q @ k.transpose(0, 1, 3, 2)) / np.sqrt(hd)
        mask = allowed[:, None, :, :]
        scores = np.where(mask, scores, -np.inf)
        row_ok = mask.any(axis=-1, keepdims=True)
        scores = np.where(row_ok, scores, 0.0)
        scores = scores - scores.max(axis=-1, keepdims=True)
        p = np.exp(scores) * mask
        denom = p.sum(axis=-1, keepdims=True)
        p = np.where(row_ok, p / np.where(denom > 0, denom, 1.0), 0.0)
        out = (p @ v).transpose(0, 2, 1, 3).reshape(b, n, nh * hd)
        return out @ layer["o"].T


def _rmsnorm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def _silu(x):
    return x / (1.0 + np.exp(-x))


def _rotate_half(x):
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def _rope_tables(pos, hd, theta):
    inv_freq = 1.0 / (theta ** (np.arange(0, hd, 2, dtype=np.float64) / hd))
    ang = pos[..., None] * inv_freq  # [B, N, hd/2]
    ang = np.concatenate([ang, ang], axis=-1)
    return np.cos(ang), np.sin(ang)


def _f64(a):
    return np.asarray(a, dtype=np.float64)


def _added_token_id(model_dir, contents):
    path = os.path.join(model_dir, "tokenizer.json")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        tok = json.load(f)
    for a in tok.get("added_tokens", []):
        if a["content"] in contents:
            return a["id"]
    return None


def load(model_dir):
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = json.load(f)
    arch = (cfg.get("architectures") or [None])[0]
    w = read_weights(model_dir)
    m = Model()
    m.config = cfg
    m.dir = model_dir
    if arch in ("DreamModel", "Qwen2ForCausalLM"):
        m.family = "dream" if arch == "DreamModel" else "open-dcoder"
        m.shift = True
        m.hidden = cfg["hidden_size"]
        m.layers = cfg["num_hidden_layers"]
        m.heads = cfg["num_attention_heads"]
        m.kv_heads = cfg.get("num_key_value_heads") or m.heads
        m.head_dim = cfg.get("head_dim") or m.hidden // m.heads
        m.ffn = cfg["intermediate_size"]
        m.theta = float(cfg.get("rope_theta", 10000.0))
        m.eps = float(cfg.get("rms_norm_eps", 1e-6))
        m.tied = bool(cfg.get("tie_word_embeddings", False))
        if cfg.get("rope_scaling"):
            raise ValueError("rope_scaling is not supported by the reference")
        m.embed = w["model.embed_tokens.weight"]
        m.blocks = []
        for i in range(m.layers):
            p = "model.layers.%d." % i
            m.blocks.append(
                {
                    "attn_norm": _f64(w[p + "input_layernorm.weight"]),
                    "q": _f64(w[p + "self_attn.q_proj.weight"]),
                    "k": _f64(w[p + "self_attn.k_proj.weight"]),
                    "v": _f64(w[p + "self_attn.v_proj.weight"]),
                    "q_bias": _f64(w[p + "self_attn.q_proj.bias"]),
                    "k_bias": _f64(w[p + "self_attn.k_proj.bias"]),
                    "v_bias": _f64(w[p + "self_attn.v_proj.bias"]),
                    "o": _f64(w[p + "self_attn.o_proj.weight"]),
                    "ffn_norm": _f64(w[p + "post_attention_layernorm.weight"]),
                    "gate": _f64(w[p + "mlp.gate_proj.weight"]),
                    "up": _f64(w[p + "mlp.up_proj.weight"]),
                    "down": _f64(w[p + "mlp.down_proj.weight"]),
                }
            )
        m.final_norm = _f64(w["model.norm.weight"])
        m.head = m.embed if m.tied else w["lm_head.weight"]
        if m.family == "dream":
            m.mask_id = cfg.get("mask_token_id")
        else:
            m.mask_id = cfg.get("mask_token_id") or _added_token_id(model_dir, ("<M>", "<|mask|>"))
        m.bos_id = cfg.get("bos_token_id")
        m.eos_id = cfg.get("eos_token_id")
        m.pad_id = cfg.get("pad_token_id")
        m.vocab = cfg["vocab_size"]
    elif arch == "LLaDAModelLM":
        m.family = "llada"
        m.shift = False
        m.hidden = cfg["d_model"]
        m.layers = cfg["n_layers"]
        m.heads = cfg["n_heads"]
        if cfg.get("multi_query_attention"):
            m.kv_heads = 1
        else:
            m.kv_heads = cfg.get("n_kv_heads") or m.heads
        m.head_dim = cfg.get("head_dim") or m.hidden // m.heads
        m.ffn = cfg.get("mlp_hidden_size") or cfg.get("mlp_ratio", 4) * m.hidden
        m.theta = float(cfg.get("rope_theta", 10000.0))
        m.eps = float(cfg.get("rms_norm_eps", 1e-5))
        m.tied = bool(cfg.get("weight_tying", False))
        if cfg.get("include_bias") or cfg.get("include_qkv_bias"):
            raise ValueError("LLaDA biases are not supported by the reference")
        t = "model.transformer."
        m.embed = w[t + "wte.weight"]
        m.blocks = []
        for i in range(m.layers):
            p = t + "blocks.%d." % i
            m.blocks.append(
                {
                    "attn_norm": _f64(w[p + "attn_norm.weight"]),
                    "q": _f64(w[p + "q_proj.weight"]),
                    "k": _f64(w[p + "k_proj.weight"]),
                    "v": _f64(w[p + "v_proj.weight"]),
                    "o": _f64(w[p + "attn_out.weight"]),
                    "ffn_norm": _f64(w[p + "ff_norm.weight"]),
                    "gate": _f64(w[p + "ff_proj.weight"]),
                    "up": _f64(w[p + "up_proj.weight"]),
                    "down": _f64(w[p + "ff_out.weight"]),
                }
            )
        m.final_norm = _f64(w[t + "ln_f.weight"])
        m.head = m.embed if m.tied else w[t + "ff_out.weight"]
        m.mask_id = cfg.get("mask_token_id", 126336)
        m.bos_id = cfg.get("bos_token_id")
        m.eos_id = cfg.get("eos_token_id")
        m.pad_id = cfg.get("pad_token_id")
        m.vocab = cfg.get("embedding_size") or cfg["vocab_size"]
    else:
        raise ValueError("unsupported architecture %r" % arch)
    return m


def forward(model, tokens, valid=None):
    return model.forward(tokens, valid)


def shifted(logits, shift):
    """Rows that predict each token: row i-1 for shifted families (row 0 for i = 0),
    row i otherwise."""
    if not shift:
        return logits
    return np.concatenate([logits[:1], logits[:-1]], axis=0)


# ---- counter-based noise (engine/sample/noise.c) -----------------------------------------------

_M64 = (1 << 64) - 1


def _mix(z):
    z = (z + 0x9E3779B97F4A7C15) & _M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def noise_uniform(seed, step, position, v):
    """u in (0, 1) for (seed, step, position, vocab entry), bit-identical to
    eng_noise_uniform: h = mix(seed ^ mix(((step << 32) | position) ^ mix(v))),
    u = ((h >> 11) + 0.5) / 2^53."""
    k = (((step & 0xFFFFFFFF) << 32) | (position & 0xFFFFFFFF)) & _M64
    h = _mix((seed & _M64) ^ _mix(k ^ _mix(v & 0xFFFFFFFF)))
    return ((h >> 11) + 0.5) / float(1 << 53)


def _mix_np(z):
    z = z + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def noise_uniform_row(seed, step, position, vocab):
    """noise_uniform for v = 0..vocab-1 as a float64 array (vectorised)."""
    with np.errstate(over="ignore"):
        v = np.arange(vocab, dtype=np.uint64)
        k = np.uint64((((step & 0xFFFFFFFF) << 32) | (position & 0xFFFFFFFF)) & _M64)
        h = _mix_np(np.uint64(seed & _M64) ^ _mix_np(k ^ _mix_np(v)))
    return ((h >> np.uint64(11)).astype(np.float64) + 0.5) / float(1 << 53)


# ---- command line --------------------------------------------------------------------------


def main(argv):
    p = argparse.ArgumentParser(description="float64 numpy reference for infilld models")
    sub = p.add_subparsers(dest="cmd", required=True)
    lg = sub.add_parser("logits", help="raw logits of every position (unshifted)")
    lg.add_argument("--model", required=True)
    lg.add_argument("--tokens", required=True, help="comma-separated ids")
    lg.add_argument("--out", help="write little-endian f32 rows [L, V] here")
    args = p.parse_args(argv)
    m = load(args.model)
    tokens = [int(t) for t in args.tokens.split(",") if t]
    logits = m.forward(tokens)
    if args.out:
        logits.astype("<f4").tofile(args.out)
    else:
        print(" ".join(str(int(i)) for i in logits.argmax(axis=-1)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
