#!/usr/bin/python3
"""Exports a training checkpoint as a Dream-family model directory.

  export.py CKPT OUTDIR [--tokenizer TOKENIZER_JSON] [--weights ema|raw] [--dtype bf16|f32]

The tokenizer defaults to the one the run trained on, CACHE/tok/tokenizer.json.

Writes OUTDIR/config.json (DreamModel, Qwen2 shape, mask/bos/eos/pad ids of our
tokenizer), generation_config.json, model.safetensors (Qwen2 tensor names, untied LM
head), tokenizer.json, tokenizer_config.json and special_tokens_map.json: the files the
engine reads for any Dream checkpoint, so it runs this one with no special case.
Needs only numpy (the checkpoint is read with torch when it is a .pt; a directory with
model.safetensors can be re-exported without torch).
"""

import argparse
import json
import os
import shutil
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def f32_to_bf16_bits(a):
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def write_safetensors(path, tensors, dtype):
    header = {"__metadata__": {"format": "pt"}}
    blobs, off = [], 0
    for name, a in tensors:
        a = np.asarray(a, dtype=np.float32)
        if dtype == "bf16":
            raw, st = f32_to_bf16_bits(a).astype("<u2").tobytes(), "BF16"
        else:
            raw, st = a.astype("<f4").tobytes(), "F32"
        header[name] = {"dtype": st, "shape": list(a.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def read_safetensors(path):
    """{name: float32 ndarray} of an F32/BF16/F16 safetensors file."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, m in header.items():
        if name == "__metadata__":
            continue
        a, b = m["data_offsets"]
        raw = data[a:b]
        if m["dtype"] == "F32":
            arr = np.frombuffer(raw, dtype="<f4")
        elif m["dtype"] == "BF16":
            arr = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        elif m["dtype"] == "F16":
            arr = np.frombuffer(raw, dtype="<f2").astype(np.float32)
        else:
            raise SystemExit("export: unsupported dtype %s" % m["dtype"])
        out[name] = arr.reshape(m["shape"]).astype(np.float32)
    return out


def tensor_order(layers):
    names = ["model.embed_tokens.weight"]
    for i in range(layers):
        p = "model.layers.%d." % i
        names += [p + "input_layernorm.weight", p + "self_attn.q_proj.weight",
                  p + "self_attn.q_proj.bias", p + "self_attn.k_proj.weight",
                  p + "self_attn.k_proj.bias", p + "self_attn.v_proj.weight",
                  p + "self_attn.v_proj.bias", p + "self_attn.o_proj.weight",
                  p + "post_attention_layernorm.weight", p + "mlp.gate_proj.weight",
                  p + "mlp.up_proj.weight", p + "mlp.down_proj.weight"]
    return names + ["model.norm.weight", "lm_head.weight"]


def special_ids(tok):
    ids = {a["content"]: a["id"] for a in tok["added_tokens"]}
    return ids["<|beginoftext|>"], ids["<|endoftext|>"], ids["<|mask|>"]


def dream_config(c, tok, dtype):
    bos, eos, mask = special_ids(tok)
    return {
        "architectures": ["DreamModel"],
        "attention_dropout": 0.0,
        "auto_map": {"AutoConfig": "configuration_dream.DreamConfig",
                     "AutoModel": "modeling_dream.DreamModel"},
        "bos_token_id": bos,
        "eos_token_id": eos,
        "hidden_act": "silu",
        "hidden_size": c["hidden_size"],
        "initializer_range": 0.02,
        "intermediate_size": c["intermediate_size"],
        "mask_token_id": mask,
        "max_position_embeddings": c["max_position_embeddings"],
        "max_window_layers": c["num_hidden_layers"],
        "model_type": "Dream",
        "num_attention_heads": c["num_attention_heads"],
        "num_hidden_layers": c["num_hidden_layers"],
        "num_key_value_heads": c["num_key_value_heads"],
        "pad_token_id": eos,
        "rms_norm_eps": c["rms_norm_eps"],
        "rope_scaling": None,
        "rope_theta": c["rope_theta"],
        "sliding_window": None,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16" if dtype == "bf16" else "float32",
        "transformers_version": "4.46.2",
        "use_cache": False,
        "use_sliding_window": False,
        "vocab_size": c["vocab_size"],
    }


def write_json(path, obj):
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(obj, indent=2, ensure_ascii=False) + "\n")


def export(cfg, weights, tok_path, out, dtype, eos_penalty=None, candidates=None):
    with open(tok_path, encoding="utf-8") as f:
        tok = json.load(f)
    bos, eos, mask = special_ids(tok)
    os.makedirs(out, exist_ok=True)
    names = tensor_order(cfg["num_hidden_layers"])
    missing = [n for n in names if n not in weights]
    if missing:
        raise SystemExit("export: checkpoint lacks %s" % missing[:3])
    write_safetensors(os.path.join(out, "model.safetensors"), [(n, weights[n]) for n in names],
                      dtype)
    write_json(os.path.join(out, "config.json"), dream_config(cfg, tok, dtype))
    gen = {"alg": "entropy", "alg_temp": 0.0, "bos_token_id": bos, "eos_token_id": eos,
           "eps": 0.001, "mask_token_id": mask, "max_new_tokens": 64, "pad_token_id": eos,
           "steps": 64, "temperature": 0.0, "top_k": None, "top_p": None,
           "transformers_version": "4.46.2"}
    if eos_penalty is not None:
        # The engine's default annealed EOS/pad penalty for this model (docs/SAMPLERS.md §4).
        gen["eos_penalty"] = eos_penalty
    if candidates is not None:
        # How many candidates an automatic request samples by default (docs/PROTOCOL.md).
        gen["candidates"] = candidates
    write_json(os.path.join(out, "generation_config.json"), gen)
    if os.path.abspath(tok_path) != os.path.abspath(os.path.join(out, "tokenizer.json")):
        shutil.copyfile(tok_path, os.path.join(out, "tokenizer.json"))
    decoder = {}
    for a in tok["added_tokens"]:
        e = dict(a)
        del e["id"]
        decoder[str(a["id"])] = e
    write_json(os.path.join(out, "tokenizer_config.json"), {
        "add_bos_token": False, "add_prefix_space": False, "added_tokens_decoder": decoder,
        "bos_token": "<|beginoftext|>", "clean_up_tokenization_spaces": False,
        "eos_token": "<|endoftext|>", "errors": "replace", "mask_token": "<|mask|>",
        "model_max_length": cfg["max_position_embeddings"], "pad_token": "<|endoftext|>",
        "split_special_tokens": False, "tokenizer_class": "Qwen2Tokenizer",
        "unk_token": None})
    write_json(os.path.join(out, "special_tokens_map.json"), {
        "bos_token": "<|beginoftext|>", "eos_token": "<|endoftext|>",
        "mask_token": "<|mask|>", "pad_token": "<|endoftext|>"})


def load_ckpt(path, which):
    if os.path.isdir(path):
        # A model folder (what tools/train/gpu.sh brings back): its weights as they are.
        with open(os.path.join(path, "config.json"), encoding="utf-8") as f:
            c = json.load(f)
        cfg = {k: c[k] for k in ("vocab_size", "hidden_size", "num_hidden_layers",
                                 "num_attention_heads", "num_key_value_heads",
                                 "intermediate_size", "rope_theta", "rms_norm_eps",
                                 "max_position_embeddings")}
        with open(os.path.join(path, "train_state.json"), encoding="utf-8") as f:
            state = json.load(f)
        return cfg, read_safetensors(os.path.join(path, "model.safetensors")), state
    import torch
    ck = torch.load(path, map_location="cpu")
    sd = ck["ema"] if which == "ema" else ck["model"]
    return ck["config"], {k: v.float().numpy() for k, v in sd.items()}, ck["state"]


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("ckpt")
    p.add_argument("out")
    p.add_argument("--tokenizer", default=os.path.join(
        os.environ.get("INFILLD_TRAIN_CACHE", "/work/cache/train"), "tok", "tokenizer.json"))
    p.add_argument("--weights", choices=("ema", "raw"), default="ema")
    p.add_argument("--dtype", choices=("bf16", "f32"), default="bf16")
    p.add_argument("--eos-penalty", type=float, default=None,
                   help="write eos_penalty L into generation_config.json (the engine's default "
                   "annealed EOS/pad penalty for this model)")
    p.add_argument("--candidates", type=int, default=None, choices=range(1, 17),
                   metavar="N", help="write candidates N (1-16) into generation_config.json: "
                   "the candidates an automatic request samples by default")
    a = p.parse_args(argv)
    cfg, weights, state = load_ckpt(a.ckpt, a.weights)
    export(cfg, weights, a.tokenizer, a.out, a.dtype, a.eos_penalty, a.candidates)
    info = {"step": state["step"], "tokens": state["tokens"], "seconds": state["seconds"],
            "weights": state.get("weights", a.weights)}
    for k in ("device", "phases", "host", "prior"):
        if k in state:
            info[k] = state[k]
    write_json(os.path.join(a.out, "train_state.json"), info)
    print("export: %s at step %d (%d tokens) -> %s" % (a.weights, state["step"], state["tokens"],
                                                        a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
