#!/usr/bin/python3
"""Writes tiny random-weight DiffusionGemma checkpoints in the Hugging Face layout.

The layout is that of google/diffusiongemma-26B-A4B-it (shared/design/DIFFUSIONGEMMA.md
§2.1 and §5.1). The root config.json has architectures
[DiffusionGemmaForBlockDiffusion], model_type diffusion_gemma, canvas_length, a small
vision_config and text_config (diffusion_gemma_text). The backbone is stored once under
model.decoder.*, and only the layer scalars under model.encoder.language_model.layers.N.
Fused experts are stored as gate_up_proj [E, 2F, d] and down_proj [E, d, F]. The
self-conditioning MLP sits under model.decoder.self_conditioning.*. The head is tied.

The tokenizer is a small byte-level BPE tokenizer.json with Gemma's special ids:
<pad> 0, <eos> 1, <bos> 2, <unk> 3, <mask> 4, <|tool_response> 50, <|turn> 105,
<turn|> 106. The other ids below 128 are <unusedN> added tokens, the 256 byte tokens
sit at 128..383, and a few merges follow. The real Gemma tokenizer is another module's
work. The family does not depend on the tokenizer kind.

Weights are random, scaled so that activations stay O(1). --head-gain multiplies the
final norm so that the logits reach the softcap; with a small --layer-gain the tied head
maps each canvas token to itself, so the sampler meets confident, stable rows.
Every file is a deterministic function of the arguments (numpy PCG64, --seed).

Usage: mkdgemma.py --out DIR [--moe] [--layers 4 --pattern 2 ...]
"""

import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gguf_writer as gw  # noqa: E402
import mkcheckpoint  # noqa: E402  (safetensors writer, BF16 rounding)

SPECIAL = {0: "<pad>", 1: "<eos>", 2: "<bos>", 3: "<unk>", 4: "<mask>", 50: "<|tool_response>",
           105: "<|turn>", 106: "<turn|>"}
BYTE0 = 128
MERGES = [("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("i", "n"), ("r", "e"), ("o", "n"), ("Ġ", "="),
          ("e", "r"), ("Ġ", "a"), ("Ġ", "s"), ("Ġ", "r"), ("r", "et"), ("e", "t"), ("Ġ", "("),
          ("Ġ", "f"), ("Ġ", "x")]
PATTERN = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
           "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")


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


def make_tokenizer(vocab_size):
    b2u = bytes_to_unicode()
    vocab = {}
    added = []
    for i in range(BYTE0):
        content = SPECIAL.get(i, "<unused%d>" % i)
        vocab[content] = i
        added.append({"id": i, "content": content, "single_word": False, "lstrip": False,
                      "rstrip": False, "normalized": False, "special": True})
    for b in range(256):
        vocab[b2u[b]] = BYTE0 + b
    merges = []
    nid = BYTE0 + 256
    for a, b in MERGES:
        if nid >= vocab_size:
            break
        if a + b in vocab or a not in vocab or b not in vocab:
            continue
        vocab[a + b] = nid
        merges.append([a, b])
        nid += 1
    if vocab_size < BYTE0 + 256:
        raise SystemExit("mkdgemma: --vocab must be at least %d" % (BYTE0 + 256))
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": {"type": "NFC"},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": PATTERN}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}]},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                    "use_regex": False},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": False, "vocab": vocab, "merges": merges},
    }


def layer_types(layers, pattern):
    return ["full_attention" if (i + 1) % pattern == 0 else "sliding_attention" for i in range(layers)]


def make_config(a):
    text = {
        "model_type": "diffusion_gemma_text",
        "hidden_size": a.hidden, "num_hidden_layers": a.layers, "num_attention_heads": a.heads,
        "num_key_value_heads": a.kv_heads, "num_global_key_value_heads": a.global_kv_heads,
        "head_dim": a.head_dim, "global_head_dim": a.global_head_dim,
        "intermediate_size": a.ffn, "vocab_size": a.vocab, "sliding_window": a.window,
        "layer_types": layer_types(a.layers, a.pattern),
        "rope_parameters": {
            "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
            "full_attention": {"rope_type": "proportional", "partial_rotary_factor": a.partial,
                               "rope_theta": 1000000.0},
        },
        "rms_norm_eps": 1e-6, "final_logit_softcapping": 30.0, "hidden_activation": "gelu_pytorch_tanh",
        "attention_k_eq_v": not a.no_k_eq_v, "enable_moe_block": bool(a.moe),
        "tie_word_embeddings": True, "max_position_embeddings": 262144,
        "use_bidirectional_attention": "vision", "pad_token_id": 0, "eos_token_id": 1, "bos_token_id": 2,
    }
    if a.moe:
        text.update({"num_experts": a.experts, "top_k_experts": a.top_k,
                     "moe_intermediate_size": a.expert_ffn})
    return {
        "architectures": ["DiffusionGemmaForBlockDiffusion"], "model_type": "diffusion_gemma",
        "canvas_length": a.canvas, "text_config": text,
        "vision_config": {"model_type": "gemma4_vision", "hidden_size": 32, "num_hidden_layers": 1},
        "image_token_id": a.vocab - 1, "torch_dtype": {"f32": "float32", "bf16": "bfloat16"}[a.dtype],
        "tie_word_embeddings": True,
    }


def make_generation_config(a):
    return {"max_denoising_steps": 48, "t_min": 0.4, "t_max": 0.8,
            "sampler_config": {"entropy_bound": 0.1}, "stability_threshold": 1,
            "confidence_threshold": 0.005, "eos_token_id": [1, 106], "pad_token_id": 0,
            "bos_token_id": 2}


def build_tensors(a):
    rng = np.random.Generator(np.random.PCG64(a.seed))
    d, V, ff = a.hidden, a.vocab, a.ffn
    t = []

    def mat(rows, cols, gain=1.0):
        return (rng.standard_normal((rows, cols)) * gain / np.sqrt(cols)).astype(np.float32)

    def normw(n, gain=1.0):
        return (gain * (1.0 + 0.2 * rng.standard_normal(n))).astype(np.float32)

    p = "model.decoder"
    t.append((p + ".embed_tokens.weight", (rng.standard_normal((V, d)) / np.sqrt(d)).astype(np.float32)))
    t.append((p + ".norm.weight", normw(d, a.head_gain)))
    t.append((p + ".self_conditioning.pre_norm.weight", normw(d)))
    t.append((p + ".self_conditioning.gate_proj.weight", mat(ff, d)))
    t.append((p + ".self_conditioning.up_proj.weight", mat(ff, d)))
    # a small self-conditioning gain keeps the step-to-step feedback contractive, so
    # f32 and f64 runs of the sampler stay together over many steps
    t.append((p + ".self_conditioning.down_proj.weight", mat(d, ff, a.sc_gain)))
    kinds = layer_types(a.layers, a.pattern)
    for i in range(a.layers):
        g = kinds[i] == "full_attention"
        hd = a.global_head_dim if g else a.head_dim
        kv = a.global_kv_heads if g else a.kv_heads
        lp = "%s.layers.%d." % (p, i)
        t.append((lp + "input_layernorm.weight", normw(d)))
        t.append((lp + "self_attn.q_proj.weight", mat(a.heads * hd, d)))
        t.append((lp + "self_attn.k_proj.weight", mat(kv * hd, d)))
        if not (g and not a.no_k_eq_v):
            t.append((lp + "self_attn.v_proj.weight", mat(kv * hd, d)))
        t.append((lp + "self_attn.o_proj.weight", mat(d, a.heads * hd)))
        # q/k norm gains below 1 keep the scale-1.0 attention from being one-hot
        t.append((lp + "self_attn.q_norm.weight", normw(hd, a.qk_gain)))
        t.append((lp + "self_attn.k_norm.weight", normw(hd, a.qk_gain)))
        # the post-norms set the size of each block's update of the residual stream
        t.append((lp + "post_attention_layernorm.weight", normw(d, a.layer_gain)))
        t.append((lp + "pre_feedforward_layernorm.weight", normw(d)))
        t.append((lp + "mlp.gate_proj.weight", mat(ff, d)))
        t.append((lp + "mlp.up_proj.weight", mat(ff, d)))
        t.append((lp + "mlp.down_proj.weight", mat(d, ff)))
        t.append((lp + "post_feedforward_layernorm.weight", normw(d, a.layer_gain)))
        if a.moe:
            E, F = a.experts, a.expert_ffn
            t.append((lp + "post_feedforward_layernorm_1.weight", normw(d)))
            t.append((lp + "pre_feedforward_layernorm_2.weight", normw(d)))
            t.append((lp + "post_feedforward_layernorm_2.weight", normw(d)))
            # a router gain that makes the top-k choice vary from row to row
            t.append((lp + "router.proj.weight", mat(E, d, 2.0)))
            t.append((lp + "router.scale", normw(d)))
            t.append((lp + "router.per_expert_scale", (1.0 + 0.3 * rng.standard_normal(E)).astype(np.float32)))
            gu = np.stack([mat(2 * F, d) for _ in range(E)])
            dn = np.stack([mat(d, F) for _ in range(E)])
            t.append((lp + "experts.gate_up_proj", gu))
            t.append((lp + "experts.down_proj", dn))
        t.append((lp + "layer_scalar", rng.uniform(0.5, 1.5, size=1).astype(np.float32)))
    for i in range(a.layers):
        t.append(("model.encoder.language_model.layers.%d.layer_scalar" % i,
                  rng.uniform(0.5, 1.5, size=1).astype(np.float32)))
    if a.with_vision:
        t.append(("model.encoder.vision_tower.encoder.layers.0.mlp.fc1.weight", mat(8, 8)))
        t.append(("model.encoder.embed_vision.embedding_projection.weight", mat(d, 8)))
    return t


# ---- GGUF (llama.cpp PR #24423's diffusion-gemma layout, DIFFUSIONGEMMA.md §5.2) ----------

GG_TOP = {"model.decoder.embed_tokens.weight": "token_embd.weight",
          "model.decoder.norm.weight": "output_norm.weight",
          "model.decoder.self_conditioning.pre_norm.weight": "self_cond_pre_norm.weight",
          "model.decoder.self_conditioning.gate_proj.weight": "self_cond_gate.weight",
          "model.decoder.self_conditioning.up_proj.weight": "self_cond_up.weight",
          "model.decoder.self_conditioning.down_proj.weight": "self_cond_down.weight"}
GG_LAYER = {"input_layernorm.weight": "attn_norm.weight", "self_attn.q_proj.weight": "attn_q.weight",
            "self_attn.k_proj.weight": "attn_k.weight", "self_attn.v_proj.weight": "attn_v.weight",
            "self_attn.o_proj.weight": "attn_output.weight", "self_attn.q_norm.weight": "attn_q_norm.weight",
            "self_attn.k_norm.weight": "attn_k_norm.weight",
            "post_attention_layernorm.weight": "post_attention_norm.weight",
            "pre_feedforward_layernorm.weight": "ffn_norm.weight", "mlp.gate_proj.weight": "ffn_gate.weight",
            "mlp.up_proj.weight": "ffn_up.weight", "mlp.down_proj.weight": "ffn_down.weight",
            "post_feedforward_layernorm_1.weight": "post_ffw_norm_1.weight",
            "router.proj.weight": "ffn_gate_inp.weight", "router.scale": "ffn_gate_inp.scale",
            "router.per_expert_scale": "ffn_down_exps.scale",
            "pre_feedforward_layernorm_2.weight": "pre_ffw_norm_2.weight",
            "experts.gate_up_proj": "ffn_gate_up_exps.weight", "experts.down_proj": "ffn_down_exps.weight",
            "post_feedforward_layernorm_2.weight": "post_ffw_norm_2.weight",
            "post_feedforward_layernorm.weight": "post_ffw_norm.weight",
            "layer_scalar": "layer_output_scale.weight"}


def gguf_name(hf, alias=False):
    """The GGUF name of a Hugging Face name (None: not written, e.g. the vision tower).
    alias: PR #24427's self_cond_norm and the older enc_layer_out_scale spellings."""
    if hf in GG_TOP:
        g = GG_TOP[hf]
        return "self_cond_norm.weight" if alias and g == "self_cond_pre_norm.weight" else g
    for pre, enc in (("model.decoder.layers.", False), ("model.encoder.language_model.layers.", True)):
        if hf.startswith(pre):
            n, rest = hf[len(pre):].split(".", 1)
            g = GG_LAYER[rest]
            if enc:
                g = ("enc_layer_out_scale" if alias else "enc_" + g)
            return "blk.%s.%s" % (n, g)
    return None


def write_gguf(a, path, tensors, tok):
    arch = "diffusion-gemma"
    kinds = layer_types(a.layers, a.pattern)
    kvh = [a.global_kv_heads if k == "full_attention" else a.kv_heads for k in kinds]
    kvs = [("general.architecture", gw.STR, arch), ("general.name", gw.STR, "tiny-diffusion-gemma"),
           ("%s.block_count" % arch, gw.U32, a.layers), ("%s.context_length" % arch, gw.U32, 262144),
           ("%s.embedding_length" % arch, gw.U32, a.hidden),
           ("%s.feed_forward_length" % arch, gw.U32, a.ffn),
           ("%s.attention.head_count" % arch, gw.U32, a.heads),
           ("%s.attention.head_count_kv" % arch, gw.ARR, (gw.I32, kvh)),
           ("%s.attention.key_length" % arch, gw.U32, a.global_head_dim),
           ("%s.attention.value_length" % arch, gw.U32, a.global_head_dim),
           ("%s.attention.key_length_swa" % arch, gw.U32, a.head_dim),
           ("%s.attention.value_length_swa" % arch, gw.U32, a.head_dim),
           ("%s.rope.dimension_count" % arch, gw.U32, a.global_head_dim),
           ("%s.rope.dimension_count_swa" % arch, gw.U32, a.head_dim),
           ("%s.rope.freq_base" % arch, gw.F32, 1000000.0), ("%s.rope.freq_base_swa" % arch, gw.F32, 10000.0),
           ("%s.attention.sliding_window" % arch, gw.U32, a.window),
           ("%s.attention.sliding_window_pattern" % arch, gw.ARR,
            (gw.BOOL, [k == "sliding_attention" for k in kinds])),
           ("%s.attention.layer_norm_rms_epsilon" % arch, gw.F32, 1e-6),
           ("%s.final_logit_softcapping" % arch, gw.F32, 30.0),
           ("%s.attention.causal" % arch, gw.BOOL, False),
           ("diffusion.canvas_length", gw.U32, a.canvas), ("diffusion.eb_max_steps", gw.U32, 48),
           ("diffusion.eb_t_min", gw.F32, 0.4), ("diffusion.eb_t_max", gw.F32, 0.8),
           ("diffusion.eb_entropy_bound", gw.F32, 0.1), ("diffusion.eb_stability_threshold", gw.U32, 1),
           ("diffusion.eb_confidence_threshold", gw.F32, 0.005)]
    if a.moe:
        kvs += [("%s.expert_count" % arch, gw.U32, a.experts), ("%s.expert_used_count" % arch, gw.U32, a.top_k),
                ("%s.expert_feed_forward_length" % arch, gw.U32, a.expert_ffn)]
    if a.gguf_tokenizer:
        # a SentencePiece-style tokenizer.json written as Gemma's own "gemma4" metadata
        with open(a.gguf_tokenizer, encoding="utf-8") as f:
            spm = json.load(f)
        # Gemma's chat specials, appended where the tokenizer lacks them; no mask token id
        # is written (Gemma has none: the family's canvases are uniform noise)
        have = {t["content"]: t["id"] for t in spm["added_tokens"]}
        nxt = max(list(spm["model"]["vocab"].values()) + list(have.values())) + 1
        for c in ("<eos>", "<|turn>", "<turn|>"):
            if c not in have:
                spm["added_tokens"].append({"id": nxt, "content": c, "special": True})
                have[c] = nxt
                nxt += 1
        if nxt > a.vocab:
            raise SystemExit("mkdgemma: the tokenizer has %d ids, --vocab is %d" % (nxt, a.vocab))
        # <unusedN> up to the embedding's rows, as in Gemma's own vocabulary: the uniform
        # noise draws every id
        for i in range(nxt, a.vocab):
            spm["added_tokens"].append({"id": i, "content": "<unused%d>" % (i - nxt), "special": False})
        kvs += gw.spm_tokenizer_kvs(spm, "gemma4")
        kvs += [("tokenizer.ggml.bos_token_id", gw.U32, have.get("<bos>", 2)),
                ("tokenizer.ggml.eos_token_id", gw.U32, have["<eos>"]),
                ("tokenizer.ggml.padding_token_id", gw.U32, have.get("<pad>", 0))]
    else:
        kvs += gw.tokenizer_kvs(tok, a.vocab, [("bos_token_id", 2), ("eos_token_id", 1),
                                               ("padding_token_id", 0)])
    rot = int(a.partial * a.global_head_dim / 2)
    freqs = np.array([1.0] * rot + [1e30] * (a.global_head_dim // 2 - rot), dtype=np.float32)
    out = [("rope_freqs.weight", freqs.shape, gw.GGML["f32"], gw.encode(freqs, "f32"))]
    for name, arr in tensors:
        g = gguf_name(name, a.gguf_alias)
        if g is None:
            continue
        t = "f32" if arr.ndim == 1 else a.gguf_type
        if arr.ndim == 2 and t in ("q4_k", "q5_k", "q6_k", "q4_k_m"):
            # llama.cpp never quantises the router (ffn_gate_inp); q4_k_m as its Q4_K_M:
            # Q6_K for the tied token_embd (it is the head), attn_v and ffn_down Q6_K on
            # the even layers, Q4_K elsewhere
            if g.endswith("ffn_gate_inp.weight"):
                t = "f32"
            elif t == "q4_k_m":
                even = g.startswith("blk.") and int(g.split(".")[1]) % 2 == 0
                t = "q6_k" if g == "token_embd.weight" or (even and (g.endswith("attn_v.weight") or
                                                                     g.endswith("ffn_down.weight"))) else "q4_k"
            if arr.shape[-1] % gw.BLOCK[t]:
                raise SystemExit("mkdgemma: %s rows of %d are not whole %s blocks" % (g, arr.shape[-1], t))
        if arr.ndim == 3:
            # experts: --gguf-expert-type, else the 2-D type when it is a float type; q4_k_m
            # mixes types by layer as llama.cpp's Q4_K_M does (Q4_K gate/up; ffn_down Q6_K on
            # the even layers, Q4_K on the odd ones)
            t = a.gguf_expert_type or (t if gw.BLOCK.get(t) == 1 else "f16")
            if t == "q4_k_m":
                t = "q6_k" if g.endswith("ffn_down_exps.weight") and int(g.split(".")[1]) % 2 == 0 else "q4_k"
            if arr.shape[-1] % gw.BLOCK[t]:
                raise SystemExit("mkdgemma: %s rows of %d are not whole %s blocks" % (g, arr.shape[-1], t))
            if a.gguf_split_experts and g.endswith("ffn_gate_up_exps.weight"):
                # llama.cpp's split layout: ffn_gate_exps [E, F, d] and ffn_up_exps [E, F, d]
                F = arr.shape[1] // 2
                for part, sl in (("ffn_gate_exps.weight", arr[:, :F]), ("ffn_up_exps.weight", arr[:, F:])):
                    pn = g.replace("ffn_gate_up_exps.weight", part)
                    out.append((pn, sl.shape, gw.GGML[t], gw.encode(np.ascontiguousarray(sl), t)))
                continue
        out.append((g, arr.shape, gw.GGML[t], gw.encode(arr, t)))
    gw.write_file(path, kvs, out)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--pattern", type=int, default=2, help="every N-th layer is global (N=6: 5:1)")
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--kv-heads", type=int, default=2)
    p.add_argument("--global-kv-heads", type=int, default=1)
    p.add_argument("--head-dim", type=int, default=16)
    p.add_argument("--global-head-dim", type=int, default=32)
    p.add_argument("--partial", type=float, default=0.25)
    p.add_argument("--ffn", type=int, default=96)
    p.add_argument("--moe", action="store_true")
    p.add_argument("--experts", type=int, default=8)
    p.add_argument("--top-k", type=int, default=2)
    p.add_argument("--expert-ffn", type=int, default=32)
    p.add_argument("--vocab", type=int, default=400)
    p.add_argument("--tokenizer-vocab", type=int, help="ids of tokenizer.json (default --vocab); "
                   "fewer than --vocab leaves embedding rows without a token, as real checkpoints do")
    p.add_argument("--window", type=int, default=8)
    p.add_argument("--canvas", type=int, default=16)
    p.add_argument("--head-gain", type=float, default=1.0)
    p.add_argument("--layer-gain", type=float, default=1.0,
                   help="scale of the post-attention and post-FFN norms; small values leave "
                        "the tied head's identity map dominant (confident, stable predictions)")
    p.add_argument("--qk-gain", type=float, default=0.6, help="q_norm / k_norm weight scale")
    p.add_argument("--sc-gain", type=float, default=0.25, help="scale of the self-conditioning output")
    p.add_argument("--no-k-eq-v", action="store_true", help="global layers get their own v_proj")
    p.add_argument("--with-vision", action="store_true", help="add a few vision-tower tensors")
    p.add_argument("--dtype", choices=["f32", "bf16"], default="f32")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--gguf", help="also write the weights as this GGUF file")
    p.add_argument("--gguf-type", choices=["f32", "f16", "q8_0", "q4_0", "q4_k", "q5_k", "q6_k", "q4_k_m"],
                   default="f32", help="type of the 2-D matrices in the GGUF file (the K types keep the "
                   "router f32 and need every matrix's columns in whole 256-blocks)")
    p.add_argument("--gguf-expert-type", choices=["f32", "f16", "q8_0", "q4_0", "q4_k", "q5_k", "q6_k", "q4_k_m"],
                   help="type of the 3-D expert tensors (default: the 2-D type if a float type, else f16); "
                        "the block types need d_model and the expert width in whole blocks (256 for K types)")
    p.add_argument("--gguf-split-experts", action="store_true",
                   help="write ffn_gate_exps and ffn_up_exps instead of the merged ffn_gate_up_exps")
    p.add_argument("--gguf-tokenizer", help="a SentencePiece-style tokenizer.json for the GGUF, written as "
                   "tokenizer.ggml.model gemma4 (default: the byte-level BPE one as gpt2)")
    p.add_argument("--gguf-alias", action="store_true", help="PR #24427 / older tensor spellings")
    return p.parse_args(argv)


def write_json(path, obj):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2, ensure_ascii=False)
        f.write("\n")


def main(argv):
    a = parse_args(argv)
    if a.layers % a.pattern != 0:
        raise SystemExit("mkdgemma: the last layer must be global (layers %% pattern == 0)")
    os.makedirs(a.out, exist_ok=True)
    tensors = build_tensors(a)
    mkcheckpoint.write_safetensors(os.path.join(a.out, "model.safetensors"), tensors, a.dtype)
    write_json(os.path.join(a.out, "config.json"), make_config(a))
    write_json(os.path.join(a.out, "generation_config.json"), make_generation_config(a))
    tok = make_tokenizer(a.tokenizer_vocab or a.vocab)
    write_json(os.path.join(a.out, "tokenizer.json"), tok)
    if a.gguf:
        write_gguf(a, a.gguf, tensors, tok)
    write_json(os.path.join(a.out, "tokenizer_config.json"), {
        "tokenizer_class": "GemmaTokenizer", "bos_token": "<bos>", "eos_token": "<eos>",
        "pad_token": "<pad>", "unk_token": "<unk>", "mask_token": "<mask>", "add_bos_token": True})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
