#!/usr/bin/python3
"""GGUF checkpoints against the safetensors model they were written from.

For each case the generator (tests/gen/mkcheckpoint.py) writes one F32 safetensors
directory and, from the same float32 weights, GGUF files in the listed types (with
llama.cpp's conventions: LLaDA's permuted Q/K, padded [PAD i] vocabulary, no
shift_logits for Dream). Then for every type:

  1. tokenizer: `infilld tokenize` gives the same ids from the GGUF metadata as from
     tokenizer.json (a text of code, accents, digits, CJK, emoji, newlines; the
     pre-tokenizer name -> regex table must match the tokenizer.json regex);
  2. dequantised reference: the GGUF blocks are decoded by tests/ref/gguf_read.py
     (independent of the C loader and of the generator's quantisers), LLaDA's rows
     un-permuted, and the float64 numpy reference (tests/ref/reference.py) runs on
     those weights. infilld's logits on the GGUF file must match it within 1e-4
     (row error = max|diff| / max|ref|, as tests/golden/golden.py; the engine
     dequantises to exactly these float32 values and accumulates in float32);
  3. the original model: infilld's GGUF logits against the reference on the original
     float32 weights, within the type's bound derived below; for F32 the logits must
     equal the safetensors model's within 1e-5 (they are in fact bit-identical).

Bound for a quantised file (step 3). Let eps = max over weight matrices of
||W_q - W||_F / ||W||_F, measured on the written blocks. For the random-normal
weights of the generator, a matmul's output error relative to its output is eps to
first order (the rounding error is uncorrelated with the input). RMSNorm removes
scale, and the rounding errors of different matrices are independent, so along the
path of the 7 matmuls per layer plus the LM head their variances add:
rms row error ~ sqrt(7 * layers + 1) * eps. The test allows twice that (second-order
terms, and a row's max-norm ratio is not exactly its rms ratio); measured errors sit
at 0.7-1.0x the estimate for every type (the figures are printed).

Activation quantisation (block types). The CPU engine multiplies block-type weights
with int8 activations (engine/cpu/qdot.c: every matmul input row quantised in blocks of
32 to d * q, d = max|x| / 127). So for a file holding block types, step 2 runs twice:
with INFILLD_CPU_QUANT=dequant (float activations on the dequantised weights) within
1e-4 as above, and on the default int8 path within 2 * sqrt(7 * layers + 1) * eps_a,
where eps_a is the relative rms rounding error of that quantiser measured here on
normal activations (about 0.005; its rounding error is independent of the weights'
and adds the same way along the 7 matmuls per layer plus the head). Step 3 on the int8
path allows 2 * sqrt(7 * layers + 1) * sqrt(eps^2 + eps_a^2).

Usage: gguf_golden.py --infilld BIN --work DIR (--case NAME | --list)
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "ref"))
sys.path.insert(0, os.path.join(HERE, "..", "gen"))
import gguf_read  # noqa: E402
import mkcheckpoint  # noqa: E402
import reference  # noqa: E402

ALL_TYPES = "f32,f16,bf16,q8_0,q4_0,q4_k,q5_k,q6_k,q4_k_m"
SHAPE = "--layers 2 --hidden 256 --heads 4 --kv-heads 2 --ffn 512 --dtype f32"

# name: (generator arguments, GGUF types, split parts, tokens)
CASES = {
    # Dream: vocabulary 152064 rows for 151667 tokens (padded with [PAD i]), untied.
    "dream": ("--family dream %s --seed 21" % SHAPE, ALL_TYPES, 1,
              [151665, 750, 282, 2075, 1648, 151666, 151666, 151666, 33274, 90, 130000, 151643]),
    # LLaDA: permuted Q/K rows, shift_logits false, three split parts.
    # The block types' kernels are the same for both families: LLaDA checks the
    # permutation and the split on a float, a 32-block and a 256-block type.
    "llada_split": ("--family llada %s --seed 22" % SHAPE, "f32,q8_0,q4_k", 3,
                    [750, 151665, 151665, 151665, 4140, 25, 198, 262, 151000, 151643]),
    # A vocabulary padded far past the tokenizer (every id above 151667 is [PAD i]),
    # tied LM head, and ids in the padding.
    "padded_vocab": ("--family dream %s --vocab 152320 --tied yes --seed 23" % SHAPE,
                     "f32,q6_k", 1,
                     [151665, 151666, 151666, 152000, 152319, 5, 151643]),
}

TEXT = ("def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n\n"
        "# héllo wörld — 12345 ﻿ 日本語のテキスト 🙂🙂\n\tx = {'a': [1, 2.5e-3]}\r\n  \n")


def run(cmd, stdin=None):
    p = subprocess.run(cmd, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=300)
    if p.returncode != 0:
        sys.stderr.write(p.stderr.decode(errors="replace"))
        raise SystemExit("FAIL: %s exited with %d" % (" ".join(cmd), p.returncode))
    return p.stdout


def logits(infilld, model, tokens, out, env=None):
    cmd = [infilld, "logits", "--model", model, "--tokens", ",".join(map(str, tokens)),
           "--out", out]
    if env:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300,
                           env=dict(os.environ, **env))
        if p.returncode != 0:
            sys.stderr.write(p.stderr.decode(errors="replace"))
            raise SystemExit("FAIL: %s exited with %d" % (" ".join(cmd), p.returncode))
    else:
        run(cmd)
    raw = np.fromfile(out, dtype="<f4")
    os.remove(out)
    return raw.reshape(len(tokens), -1).astype(np.float64)


def act_quant_error():
    """Relative rms error of the engine's activation quantiser (blocks of 32,
    d = max|x| / 127 in float32, round to nearest) on normal activations."""
    x = np.random.default_rng(5).standard_normal((4096, 32)).astype(np.float32)
    d = (np.abs(x).max(axis=1) / np.float32(127)).astype(np.float32)
    q = np.rint(x * (np.float32(1) / d)[:, None])
    return float(np.linalg.norm(x - d[:, None] * q) / np.linalg.norm(x))


def row_error(got, ref):
    return float((np.abs(got - ref).max(axis=1) / np.abs(ref).max(axis=1)).max())


def gguf_weights(paths, family, heads, kv_heads):
    """{HF name: float32 array} decoded from the GGUF parts, LLaDA Q/K un-permuted."""
    import gguf_writer  # only for the name table; values never come from it

    meta, tensors = {}, {}
    for p in paths:
        m, t = gguf_read.read(p)
        meta.update(m)
        tensors.update(t)
    hf_of = {}
    for hf, _ in mkcheckpoint.tensor_names(family, 64, False):
        hf_of[gguf_writer.gguf_name(hf)] = hf
    for hf, _ in mkcheckpoint.tensor_names(family, 64, True):
        hf_of[gguf_writer.gguf_name(hf)] = hf
    out, types = {}, {}
    for name, (t, shape, raw) in tensors.items():
        a = gguf_read.dequant(t, raw, int(np.prod(shape))).reshape(shape)
        if family == "llada" and name.endswith("attn_q.weight"):
            a = gguf_read.unpermute_rows(a, heads)
        elif family == "llada" and name.endswith("attn_k.weight"):
            a = gguf_read.unpermute_rows(a, kv_heads)
        out[hf_of[name]] = a
        types[name] = gguf_read.TYPES[t][0]
    return meta, out, types


def reference_on(model_dir, weights):
    saved = reference.read_weights
    reference.read_weights = lambda d: weights
    try:
        return reference.load(model_dir)
    finally:
        reference.read_weights = saved


def generate(work, name):
    """Writes case `name`'s checkpoint and GGUF files under work/name unless a stamp
    says they are there from the same arguments and generator; returns the directory
    and the GGUF pattern. convert_golden.py reuses the "dream" case's files."""
    gen, types, parts, _ = CASES[name]
    out = os.path.join(work, name)
    pattern = os.path.join(out, "model-{type}.gguf")
    argv = gen.split() + ["--out", out, "--gguf", pattern, "--gguf-type", types,
                          "--gguf-split", str(parts)]
    stamp = os.path.join(out, ".gguf-stamp")
    h = hashlib.sha256()
    for f in (mkcheckpoint.__file__, os.path.join(HERE, "..", "gen", "gguf_writer.py")):
        with open(f, "rb") as fh:
            h.update(fh.read())
    want = json.dumps({"argv": argv, "generator": h.hexdigest()})
    if not (os.path.exists(stamp) and open(stamp).read() == want):
        if mkcheckpoint.main(argv):
            raise SystemExit("generator failed")
        with open(stamp, "w") as f:
            f.write(want)
    return out, pattern


def check(args, name):
    gen, types, parts, tokens = CASES[name]
    out, pattern = generate(args.work, name)
    family = "llada" if "llada" in gen else "dream"
    with open(os.path.join(out, "config.json")) as f:
        cfg = json.load(f)
    layers = cfg.get("num_hidden_layers", cfg.get("n_layers"))
    heads = cfg.get("num_attention_heads", cfg.get("n_heads"))
    kv_heads = cfg.get("num_key_value_heads", cfg.get("n_kv_heads"))

    orig_w = reference.read_weights(out)
    orig = reference_on(out, orig_w)
    ref_orig = orig.forward(tokens)
    ids_hf = run([args.infilld, "tokenize", "--model", out], TEXT.encode())
    ok = True
    for t in types.split(","):
        base = pattern.replace("{type}", t)
        files = [base] if parts == 1 else [
            base[: -len(".gguf")] + "-%05d-of-%05d.gguf" % (i + 1, parts) for i in range(parts)]
        label = "%s/%s" % (name, t)
        ids = run([args.infilld, "tokenize", "--model", files[0]], TEXT.encode())
        if ids != ids_hf:
            print("FAIL %s: tokenizer from GGUF metadata differs:\n  %s\n  %s" % (
                label, ids_hf.decode().strip(), ids.decode().strip()))
            ok = False
        meta, w, ttypes = gguf_weights(files, family, heads, kv_heads)
        if family == "dream" and "diffusion.shift_logits" in meta:
            print("FAIL %s: a Dream file must not carry diffusion.shift_logits" % label)
            ok = False
        got = logits(args.infilld, files[0], tokens, os.path.join(args.work, name + ".f32"))
        deq = reference_on(out, w)
        ref_deq = deq.forward(tokens)
        blocks = any(x.startswith("Q") for x in ttypes.values())
        eps_a = act_quant_error() if blocks else 0.0
        if blocks:
            got_f = logits(args.infilld, files[0], tokens, os.path.join(args.work, name + ".f32"),
                           {"INFILLD_CPU_QUANT": "dequant"})
            e_deq = row_error(got_f, ref_deq)
            e_q = row_error(got, ref_deq)
            bound_q = 2 * np.sqrt(7 * layers + 1) * eps_a
        else:
            e_deq = row_error(got, ref_deq)
        e_orig = row_error(got, ref_orig)
        mats = [k for k in w if w[k].ndim == 2]
        eps = max(np.linalg.norm(w[k].astype(np.float64) - orig_w[k]) /
                  np.linalg.norm(orig_w[k].astype(np.float64)) for k in mats)
        if t == "f32":
            bound = 1e-4  # float32 engine against the float64 reference, as golden.py
            if eps != 0.0:
                print("FAIL %s: F32 weights differ from the safetensors ones" % label)
                ok = False
        else:
            bound = 2 * np.sqrt(7 * layers + 1) * np.sqrt(eps ** 2 + eps_a ** 2)
        mix = sorted(set(ttypes.values()))
        print("%s: types %s, weight error eps %.3g; vs dequantised reference %.3g (tol 1e-4); "
              "vs original weights %.3g (bound %.3g)" % (label, "+".join(mix), eps, e_deq,
                                                         e_orig, bound))
        if e_deq > 1e-4:
            print("FAIL %s: logits differ from the dequantise-then-matmul reference" % label)
            ok = False
        if blocks:
            print("%s: int8 activations (eps_a %.3g): vs dequantised reference %.3g (bound %.3g)"
                  % (label, eps_a, e_q, bound_q))
            if e_q > bound_q:
                print("FAIL %s: int8-activation logits outside their bound" % label)
                ok = False
        if e_orig > bound:
            print("FAIL %s: logits outside the type's bound" % label)
            ok = False
        if t == "f32":
            st = logits(args.infilld, out, tokens, os.path.join(args.work, name + ".st.f32"))
            e_st = row_error(got, st)
            print("%s: against the safetensors model's logits %.3g (tol 1e-5)%s" % (
                label, e_st, ", bit-identical" if np.array_equal(st, got) else ""))
            if e_st > 1e-5:
                print("FAIL %s: F32 GGUF logits differ from the safetensors model's" % label)
                ok = False
    return ok


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--infilld")
    p.add_argument("--work")
    p.add_argument("--case")
    p.add_argument("--list", action="store_true")
    a = p.parse_args(argv)
    if a.list:
        print("\n".join(CASES))
        return 0
    os.makedirs(a.work, exist_ok=True)
    ok = check(a, a.case)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
