#!/usr/bin/python3
"""Self-test of the checkpoint generator and the reference's file reading.

Checks: BF16 rounding is round-to-nearest-even; the same arguments give byte-identical
files; a sharded checkpoint holds exactly the single-file tensors; the index and the
safetensors headers are well formed; the tokenizer carries the family's added tokens
in place of Qwen3's; config.json uses each family's real keys.

Usage: gen_selftest.py --work DIR        Exit status: 0 pass, 1 fail.
"""

import argparse
import hashlib
import json
import os
import shutil
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "ref"))
sys.path.insert(0, os.path.join(HERE, "..", "gen"))
import mkcheckpoint  # noqa: E402
import reference  # noqa: E402

FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)


def digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read())
    return h.hexdigest()


def test_bf16_rounding():
    cases = {
        # value bits -> expected bf16 bits
        0x3F800000: 0x3F80,  # 1.0 exact
        0x3F808000: 0x3F80,  # tie, even stays
        0x3F818000: 0x3F82,  # tie, odd rounds up
        0x3F808001: 0x3F81,  # above the tie
        0x3F807FFF: 0x3F80,  # below the tie
        0xBF818000: 0xBF82,  # negative tie to even
        0x7F7FFFFF: 0x7F80,  # overflow to +inf
    }
    vals = np.array(list(cases), dtype=np.uint32).view(np.float32)
    got = mkcheckpoint.f32_to_bf16_bits(vals)
    for (src, want), g in zip(cases.items(), got):
        check(int(g) == want, "bf16(%#x) = %#x, expected %#x" % (src, int(g), want))


def gen(out, *args):
    rc = mkcheckpoint.main(list(args) + ["--out", out])
    check(rc == 0, "generator exit status for %s" % " ".join(args))


def header(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        h = json.loads(f.read(n))
        size = os.path.getsize(path)
    check(n % 8 == 0, "%s: header length %d is a multiple of 8" % (path, n))
    check(h.get("__metadata__") == {"format": "pt"}, "%s: __metadata__ format pt" % path)
    end = 0
    for name, info in sorted(
        ((k, v) for k, v in h.items() if k != "__metadata__"), key=lambda kv: kv[1]["data_offsets"]
    ):
        a, b = info["data_offsets"]
        check(a == end, "%s: %s starts where the previous tensor ends" % (path, name))
        width = {"F32": 4, "BF16": 2, "F16": 2}[info["dtype"]]
        check(b - a == width * int(np.prod(info["shape"])), "%s: %s byte length" % (path, name))
        end = b
    check(8 + n + end == size, "%s: data region fills the file" % path)
    return h


def test_determinism_and_shards(work):
    a, b, c = (os.path.join(work, x) for x in ("det_a", "det_b", "det_sharded"))
    common = ["--family", "dream", "--layers", "2", "--hidden", "64", "--heads", "4",
              "--kv-heads", "2", "--ffn", "96", "--dtype", "bf16", "--seed", "7"]
    gen(a, *common)
    gen(b, *common)
    for f in sorted(os.listdir(a)):
        check(digest(os.path.join(a, f)) == digest(os.path.join(b, f)), "%s identical" % f)
    gen(c, *(common + ["--shards", "3"]))
    with open(os.path.join(c, "model.safetensors.index.json")) as f:
        index = json.load(f)
    files = sorted(set(index["weight_map"].values()))
    check(files == ["model-%05d-of-00003.safetensors" % i for i in (1, 2, 3)], "shard names")
    check(not os.path.exists(os.path.join(c, "model.safetensors")), "no single file when sharded")
    single = reference.read_safetensors(os.path.join(a, "model.safetensors"))
    sharded = reference.read_weights(c)
    check(sorted(single) == sorted(sharded), "sharded holds the same tensor names")
    check(all(np.array_equal(single[k], sharded[k]) for k in single), "sharded tensors equal")
    total = 0
    for fname in files:
        h = header(os.path.join(c, fname))
        for name, info in h.items():
            if name != "__metadata__":
                check(index["weight_map"][name] == fname, "index maps %s to %s" % (name, fname))
                total += info["data_offsets"][1] - info["data_offsets"][0]
    check(index["metadata"]["total_size"] == total, "index total_size")
    h = header(os.path.join(a, "model.safetensors"))
    check(h["model.layers.0.self_attn.q_proj.weight"]["shape"] == [64, 64], "q_proj [out, in]")
    check(h["model.layers.0.self_attn.k_proj.weight"]["shape"] == [32, 64], "k_proj [out, in]")
    check(h["model.layers.0.mlp.down_proj.weight"]["shape"] == [64, 96], "down_proj [out, in]")
    check(h["lm_head.weight"]["shape"] == [152064, 64], "lm_head [vocab, hidden]")
    shutil.rmtree(b)


def added(dirname):
    with open(os.path.join(dirname, "tokenizer.json"), encoding="utf-8") as f:
        tok = json.load(f)
    return {a["id"]: a["content"] for a in tok["added_tokens"]}, tok


def test_families(work):
    want_tokens = {
        "dream": {151665: "<|beginoftext|>", 151666: "<|mask|>"},
        "dreamon": {151665: "<|beginoftext|>", 151666: "<|mask|>", 151667: "<|expand|>"},
        "open-dcoder": {151665: "<M>"},
        "llada": {151665: "<|mdm_mask|>"},
    }
    arch = {"dream": "DreamModel", "dreamon": "DreamModel", "open-dcoder": "Qwen2ForCausalLM",
            "llada": "LLaDAModelLM"}
    for fam, toks in want_tokens.items():
        d = os.path.join(work, "fam_" + fam)
        gen(d, "--family", fam, "--layers", "1", "--hidden", "32", "--heads", "2",
            "--kv-heads", "1", "--ffn", "48", "--dtype", "f32")
        ids, tok = added(d)
        for tid in (151665, 151666, 151667, 151668):
            check(ids.get(tid) == toks.get(tid), "%s: added token %d is %r" % (fam, tid,
                                                                              ids.get(tid)))
        check(ids[151643] == "<|endoftext|>", "%s: <|endoftext|> kept" % fam)
        check("<think>" not in tok["model"]["vocab"], "%s: no Qwen3 token in the vocab" % fam)
        with open(os.path.join(d, "config.json")) as f:
            cfg = json.load(f)
        check(cfg["architectures"] == [arch[fam]], "%s: architectures" % fam)
        with open(os.path.join(d, "tokenizer_config.json")) as f:
            tcfg = json.load(f)
        check(sorted(tcfg["added_tokens_decoder"]) == sorted(str(i) for i in ids),
              "%s: added_tokens_decoder lists the added tokens" % fam)
        m = reference.load(d)
        check(m.mask_id == mkcheckpoint.family_mask_id(fam), "%s: mask id %r" % (fam, m.mask_id))
        if fam == "llada":
            for key in ("d_model", "n_layers", "n_heads", "n_kv_heads", "mlp_hidden_size",
                        "embedding_size", "rope_theta", "rms_norm_eps", "mask_token_id",
                        "include_bias", "weight_tying"):
                check(key in cfg, "llada: config key %s" % key)
            check(cfg["weight_tying"] is False and cfg["include_bias"] is False, "llada flags")
        else:
            check(cfg["tie_word_embeddings"] is (fam == "open-dcoder"), "%s: tying" % fam)
            check(("mask_token_id" in cfg) == fam.startswith("dream"),
                  "%s: mask_token_id in config only for Dream" % fam)


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--work", required=True)
    args = p.parse_args(argv)
    os.makedirs(args.work, exist_ok=True)
    test_bf16_rounding()
    test_determinism_and_shards(args.work)
    test_families(args.work)
    print("FAIL (%d)" % len(FAILS) if FAILS else "PASS")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
