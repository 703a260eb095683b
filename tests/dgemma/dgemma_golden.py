#!/usr/bin/python3
"""DiffusionGemma golden tests: the engine (through dgemma_tool) against the
independent float64 reference tests/ref/dgemma_ref.py on tiny checkpoints written by
tests/gen/mkdgemma.py.

Logit cases compare every row: error = max|engine - ref| / max|ref| <= 1e-5 for F32
weights (1e-4 for BF16: the reference reads the same rounded values, so only the
engine's f32 arithmetic differs). Sampler cases require identical committed canvases,
step counts and stop reasons over the fixed noise stream. Each sampler case drives one
stop rule: the step cap, the stable-and-confident stop, the stability check switched
off, a stop id (with pad after it), the max_new_tokens canvas limit, and the entropy
bound at both extremes.

Quantised GGUF files: the dequantised path (INFILLD_CPU_QUANT=dequant) against the
reference on the GGUF's decoded values to 1e-5; the default int8-activation path matrix
by matrix and expert by expert within test_qdot's derived per-element bound (x2), and
over a whole decoder pass within the path bound int8_pass_check derives.

Usage: dgemma_golden.py --tool BIN --work DIR (--case NAME | --list)
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
import dgemma_ref as ref  # noqa: E402
import mkdgemma  # noqa: E402

DENSE = "--layers 4 --pattern 2 --seed 1"
MOE = "--layers 4 --pattern 2 --moe --seed 2"
MOE_BF16 = "--layers 6 --pattern 3 --moe --no-k-eq-v --dtype bf16 --seed 3 --window 5"
PEAKED = "--layers 2 --pattern 2 --moe --seed 4 --head-gain 2 --layer-gain 0.3"
# an embedding with 112 rows more than the tokenizer's ids (399), as real checkpoints have
PADDED = "--layers 2 --pattern 2 --moe --seed 6 --vocab 512 --tokenizer-vocab 400"

# a prompt longer than the sliding window (8) so the rectangle matters
PROMPT = [2, 105, 300, 217, 161, 390, 240, 141, 333, 150, 199, 106, 10, 384]
CANVAS = [7, 399, 0, 1, 205, 205, 311, 128, 140, 391, 50, 106, 222, 301, 3, 180]

LOGIT_CASES = {
    "encode_dense": (DENSE, "encode", {}),
    "decode_dense": (DENSE, "decode", {}),
    "decode_sc_dense": (DENSE, "decode", {"sc": True}),
    "encode_moe": (MOE, "encode", {}),
    "decode_moe": (MOE, "decode", {}),
    "decode_sc_moe": (MOE, "decode", {"sc": True}),
    "decode_moe_chunked_prompt": (MOE, "decode", {"rows": 5}),
    "decode_sc_moe_bf16_own_v": (MOE_BF16, "decode", {"sc": True}),
    "encode_moe_bf16_own_v": (MOE_BF16, "encode", {}),
}

BASE_P = {"max_steps": 6, "t_min": 0.4, "t_max": 0.8, "entropy_bound": 0.1, "stability": 1,
          "confidence": 0.005, "max_new_tokens": 16, "seed": 7, "stop_ids": [], "self_cond": True}

SAMPLER_CASES = {
    # every step runs; two canvases (the first committed and re-encoded)
    "sampler_step_cap": (MOE, {"confidence": 0.0, "max_new_tokens": 32}),
    # stable argmax + low mean entropy ends a canvas early
    "sampler_confident_stop": (PEAKED, {"confidence": 0.05, "max_steps": 12}),
    # stability 0: the confidence test alone
    "sampler_stability_off": (PEAKED, {"confidence": 50.0, "stability": 0}),
    # a stop id: pad after it, generation ends before max_new_tokens
    "sampler_stop_id": (MOE, {"max_new_tokens": 48, "stop_from_run": True}),
    # no self-conditioning
    "sampler_no_sc": (DENSE, {"self_cond": False, "max_new_tokens": 32}),
    # entropy bound extremes: everything accepted / only the lowest-entropy row
    "sampler_bound_all": (DENSE, {"entropy_bound": 1e9}),
    "sampler_bound_zero": (DENSE, {"entropy_bound": 0.0, "seed": 99}),
    # ids without a token are never drawn, chosen or counted (reference: the same rule)
    "sampler_padded_vocab": (PADDED, {"confidence": 0.0, "max_new_tokens": 32}),
    # the suffix-pinning infill mode: six pinned ids at the first canvas's tail (one of
    # them the stop id, which must not end generation there) and one in the second
    # canvas; every canvas the decoder reads holds them, the committed canvases too
    "sampler_pinned_suffix": (MOE, {"max_new_tokens": 32, "stop_ids": [1],
                                    "pin": [-1] * 10 + [300, 217, 161, 1, 240, 141] + [-1] * 3 + [205]}),
}

INFILLD = None
# GGUF files written from the same weights (tests/gen/mkdgemma.py --gguf); the reference
# reads the GGUF's stored values (dequantised by tests/ref/gguf_read.py).
GGUF_CASES = {
    "gguf_f32_decode_sc_moe": (MOE, "f32", False, True),
    "gguf_f16_encode_dense": (DENSE, "f16", False, False),
    "gguf_q8_0_decode_moe_aliases": (MOE, "q8_0", True, False),
    "gguf_q4_0_decode_sc_moe_own_v": (MOE_BF16.replace("--dtype bf16", "--dtype f32"), "q4_0", False, True),
}

# Quantised experts (the GGUF layout of real DiffusionGemma files: Q4_K_M stores the
# merged ffn_gate_up_exps / ffn_down_exps quantised); d_model and the expert width are
# 256 so that the K types' 256-element blocks fit. The 2-D matrices stay f32, so the
# experts are the only quantised computation. The q6_k case writes the split
# ffn_gate_exps / ffn_up_exps layout.
QEXP = "--layers 2 --pattern 2 --moe --seed 8 --hidden 256 --expert-ffn 256"
QEXP_CASES = {"gguf_qexp_q8_0": ("q8_0", False), "gguf_qexp_q4_0": ("q4_0", False),
              "gguf_qexp_q4_k": ("q4_k", False), "gguf_qexp_q6_k_split": ("q6_k", True),
              "gguf_qexp_q4_k_m_mixed": ("q4_k_m", False), "gguf_qexp_q5_k": ("q5_k", False)}

# The 2-D matrices quantised too (attention, dense MLP, self-conditioning MLP, the tied
# head; the router stays F32 as llama.cpp writes it), every width a whole 256-block:
# 2-D type, expert type.
Q2D = ("--layers 2 --pattern 2 --moe --seed 9 --hidden 256 --heads 4 --head-dim 64 --global-head-dim 128 "
       "--ffn 256 --expert-ffn 256")
Q2D_CASES = {"gguf_q2d_q4_k_m": ("q4_k_m", "q4_k_m"), "gguf_q2d_q5_k": ("q5_k", "q6_k")}

OTHER = ["info", "infill_pin_cli", "lsp_pin", "eval_cli", "doctor", "memory_budget", "vision_skipped", "bad_checkpoints", "infill_cli", "gguf_gemma4_tokenizer",
         "padded_vocab_cli"]
TINY_SPM = os.path.join(HERE, "..", "tokenizer", "data", "tiny_spm", "tokenizer.json")


def model_dir(work, args):
    key = hashlib.sha256((args + open(mkdgemma.__file__, "rb").read().hex()).encode()).hexdigest()[:12]
    d = os.path.join(work, key)
    if not os.path.exists(os.path.join(d, "config.json")):
        mkdgemma.main(args.split() + ["--out", d])
    return d


def ids(v):
    return ",".join(str(int(x)) for x in v)


def run(tool, *a, env=None, check=True):
    p = subprocess.run([tool] + list(a), capture_output=True, text=True, env=env)
    if check and p.returncode != 0:
        sys.stderr.write(p.stdout + p.stderr)
        raise SystemExit("FAIL: dgemma_tool %s exited %d" % (a[0], p.returncode))
    return p


def rel_err(a, b):
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-30))


def logits_case(tool, work, name):
    args, kind, opt = LOGIT_CASES[name]
    d = model_dir(work, args)
    m = ref.load(d)
    tol = 1e-4 if "bf16" in args else 1e-5
    out = os.path.join(work, name + ".f32")
    V = m.V
    if kind == "encode":
        t1, t2 = PROMPT[:9], PROMPT[9:]
        run(tool, "encode", "--model", d, "--tokens", ids(t1), "--tokens2", ids(t2), "--out", out)
        got = np.fromfile(out, dtype="<f4").reshape(-1, V).astype(np.float64)
        c = ref.Cache(m)
        want = np.concatenate([ref.encode(m, c, t1), ref.encode(m, c, t2)])
    else:
        extra = []
        sc = None
        c = ref.Cache(m)
        ref.encode(m, c, PROMPT)
        if opt.get("sc"):
            # the previous step's temperature-scaled logits: a decoder pass at t = 0.6
            sc = ref.decode(m, c, CANVAS[::-1]) / 0.6
            scf = os.path.join(work, name + ".sc")
            sc.astype("<f4").tofile(scf)
            sc = np.fromfile(scf, dtype="<f4").reshape(-1, V).astype(np.float64)
            extra += ["--sc", scf]
        if opt.get("rows"):
            extra += ["--rows", str(opt["rows"])]
        p = run(tool, "decode", "--model", d, "--prompt", ids(PROMPT), "--canvas", ids(CANVAS),
                "--out", out, *extra)
        got = np.fromfile(out, dtype="<f4").reshape(-1, V).astype(np.float64)
        want = ref.decode(m, c, CANVAS, sc)
        if m.moe:
            import re
            mt = re.search(r"experts: calls \d+ rows \d+ read (\d+) used (\d+) all (\d+)", p.stderr)
            read, used, allb = (int(x) for x in mt.groups())
            if read != used or not used < allb:
                raise SystemExit("FAIL: expert grouping read %d bytes, used %d, all %d" % (read, used, allb))
    if got.shape != want.shape:
        raise SystemExit("FAIL: shape %s vs %s" % (got.shape, want.shape))
    errs = [rel_err(got[i], want[i]) for i in range(len(want))]
    worst = max(errs)
    # the cap must be doing something for the test to mean anything
    print("%s: %d rows, worst row error %.3g (tol %g), max |logit| %.2f" %
          (name, len(want), worst, tol, float(np.max(np.abs(want)))))
    if not worst <= tol:
        raise SystemExit("FAIL: row %d error %.3g > %g" % (int(np.argmax(errs)), worst, tol))
    return 0


def gguf_model(work, args, extra, alias=False):
    """(HF dir, GGUF path, reference model, tensors replaced): the GGUF is written once
    from the same weights (mkdgemma --gguf); the reference's weights are the GGUF's
    blocks decoded by tests/ref/gguf_read.py (the split expert layout joined)."""
    import gguf_read
    key = hashlib.sha256((args + extra + open(mkdgemma.__file__, "rb").read().hex()).encode()).hexdigest()[:12]
    d = os.path.join(work, "g" + key)
    gg = d + ".gguf"
    if not os.path.exists(gg):
        mkdgemma.main(args.split() + extra.split() + ["--out", d, "--gguf", gg])
    m = ref.load(d)
    _, tens = gguf_read.read(gg)
    n_over = 0
    for hf in list(m.w):
        g = mkdgemma.gguf_name(hf, alias)
        if g is None:
            continue
        n_over += 1
        if g.endswith("ffn_gate_up_exps.weight") and g not in tens:
            parts = [tens[g.replace("gate_up", p)] for p in ("gate", "up")]
            m.w[hf] = np.concatenate([gguf_read.dequant(t, raw, int(np.prod(sh))).reshape(sh)
                                      for t, sh, raw in parts], axis=1).astype(np.float64)
            continue
        t, shape, raw = tens[g]
        m.w[hf] = gguf_read.dequant(t, raw, int(np.prod(shape))).reshape(shape).astype(np.float64)
    return d, gg, m, n_over


DEQ = dict(os.environ, INFILLD_CPU_QUANT="dequant")


def gguf_case(tool, work, name):
    args, gt, alias, sc_on = GGUF_CASES[name]
    extra = " --gguf-type %s%s" % (gt, " --gguf-alias" if alias else "")
    d, gg, m, n_over = gguf_model(work, args, extra, alias)
    V = m.V
    out = os.path.join(work, name + ".f32")
    info = json.loads(run(tool, "info", "--model", gg).stdout)
    if info["family"] != 3 or info["stop"][:1] != [1] or info["canvas"] != m.canvas:
        raise SystemExit("FAIL: GGUF info %r" % info)
    # block-type matrices: the dequantised path is the one the reference computes, to
    # 1e-5; the int8 path is checked matrix by matrix and over the whole pass
    block = gt in ("q8_0", "q4_0")
    env = DEQ if block else None
    c = ref.Cache(m)
    sc = None
    if "encode" in name:
        run(tool, "encode", "--model", gg, "--tokens", ids(PROMPT), "--out", out, env=env)
        want = ref.encode(m, c, PROMPT)
    else:
        ref.encode(m, c, PROMPT)
        xa = []
        if sc_on:
            sc = (ref.decode(m, c, CANVAS[::-1]) / 0.6).astype("<f4")
            sc.tofile(out + ".sc")
            sc = sc.astype(np.float64)
            xa = ["--sc", out + ".sc"]
        run(tool, "decode", "--model", gg, "--prompt", ids(PROMPT), "--canvas", ids(CANVAS), "--out", out, *xa,
            env=env)
        want = ref.decode(m, c, CANVAS, sc)
    got = np.fromfile(out, dtype="<f4").reshape(-1, V).astype(np.float64)
    worst = max(rel_err(got[i], want[i]) for i in range(len(want)))
    print("%s: %d tensors from the GGUF, %d rows, worst row error %.3g%s" %
          (name, n_over, len(want), worst, " (dequantised path)" if block else ""))
    if not worst <= 1e-5:
        raise SystemExit("FAIL: error %.3g > 1e-5" % worst)
    if block:
        # every matrix alone on the int8 path; the whole int8 pass is checked on the
        # Q2D files: on these 4- and 6-layer d 64 ones with a quantised router, top-k
        # flips between near-equal router logits move most rows (the bidirectional
        # canvas attention spreads a flipped row to the others)
        matrices_check(tool, work, name, gg, m, alias)
    return 0


def path_matmuls(m, blocks, sc_on, experts_q):
    """The block-type matmuls on one canvas row's way through a decoder pass: every
    layer's attention and dense MLP matrices (not the router: its output only picks
    and weights experts), the routed experts' two stages when quantised, the
    self-conditioning MLP when it runs, and the head."""
    n = sum(1 for g in blocks if g.startswith("blk.") and not g.endswith("ffn_gate_inp.weight"))
    n += sum(1 for g in blocks if g.startswith("self_cond_")) if sc_on else 0
    n += 1 if "token_embd.weight" in blocks or "output.weight" in blocks else 0
    return n + (2 * m.n_layer if experts_q and m.moe else 0)


def q2d_case(tool, work, name):
    """A file quantised as a real one: 2-D matrices and experts of block types (q4_k_m:
    llama.cpp's Q4_K_M mix, router F32, head Q6_K). The dequantised path against the
    float64 reference (1e-5); every 2-D matrix alone on the int8 path within its
    derived bound; a whole int8 decoder pass within the path bound."""
    t2, te = Q2D_CASES[name]
    d, gg, m, n_over = gguf_model(work, Q2D, " --gguf-type %s --gguf-expert-type %s" % (t2, te))
    info = json.loads(run(tool, "info", "--model", gg).stdout)
    if info["family"] != 3 or not info["moe"]:
        raise SystemExit("FAIL: GGUF info %r" % info)
    c = ref.Cache(m)
    ref.encode(m, c, PROMPT)
    out = os.path.join(work, name + ".f32")
    sc = (ref.decode(m, c, CANVAS[::-1]) / 0.6).astype("<f4")
    sc.tofile(out + ".sc")
    sc = sc.astype(np.float64)
    want = ref.decode(m, c, CANVAS, sc)
    run(tool, "decode", "--model", gg, "--prompt", ids(PROMPT), "--canvas", ids(CANVAS), "--out", out,
        "--sc", out + ".sc", env=DEQ)
    got = np.fromfile(out, dtype="<f4").reshape(-1, m.V).astype(np.float64)
    worst = max(rel_err(got[i], want[i]) for i in range(len(want)))
    print("%s: %d tensors from the GGUF, dequantised decode worst row error %.3g" % (name, n_over, worst))
    if not worst <= 1e-5:
        raise SystemExit("FAIL: dequantised decode error %.3g > 1e-5" % worst)
    blocks = matrices_check(tool, work, name, gg, m)
    if "token_embd.weight" not in blocks:
        raise SystemExit("FAIL: the head is not quantised in %s" % gg)
    int8_pass_check(tool, work, name, gg, m, sc, want, path_matmuls(m, blocks, True, True))
    return 0


U = 2.0 ** -24
GELU_LIP = 1.13  # max |d/dx gelu_tanh(x)| (1.1289 at x ~ 2.4)


def act_round(x, W):
    """test_qdot's activation-rounding bound of W @ x with x quantised per 32: each
    element moves by at most d_a / 2 = max|x_block| / 254, so
    |dy_j| <= sum_b d_a,b / 2 sum_{i in b} |W_ji|; plus the float part, (nb + 3) u
    sum_i (|W_ji| + o) (|x_i| + d_a) with the block offset o taken as max |W| of the
    row (the integer dot products themselves are exact)."""
    nb = x.shape[0] // 32
    xb = np.abs(x).reshape(nb, 32)
    da = xb.max(axis=1) / 127.0
    aW = np.abs(W).reshape(W.shape[0], nb, 32)
    rnd = (aW.sum(axis=2) * (da / 2)[None, :]).sum(axis=1)
    flt = (nb + 3) * U * ((aW + aW.max(axis=(1, 2))[:, None, None]) * (xb + da[:, None])[None]).sum(axis=(1, 2))
    return rnd + flt


def moe_bound(m, layer, x, idx, wts):
    """Float64 routed-expert output (float activations, the GGUF's dequantised
    weights, the engine's routing) and an element-wise bound of the int8 path's error:
    stage 1 (gate/up) by act_round; through GeGLU by |dh| <= L dg (|u| + du) +
    |gelu(g)| du (+ 4 u |h| rounding); stage 2 (down) by sum_j |W2_ij| dh_j +
    act_round on |h| + dh (the engine quantises its own h); summed with |w_k|."""
    p = "model.decoder.layers.%d." % layer
    w = m.w
    b2 = ref.rms(x, w[p + "pre_feedforward_layernorm_2.weight"], m.eps)
    gu, dw = w[p + "experts.gate_up_proj"], w[p + "experts.down_proj"]
    F = m.F
    out = np.zeros_like(x)
    bnd = np.zeros_like(x)
    for t in range(x.shape[0]):
        for k in range(m.K):
            e, we = int(idx[t, k]), float(wts[t, k])
            W1, W2 = gu[e], dw[e]
            # the engine's b2 is f32: its own rounding, a few u relative
            z = W1 @ b2[t]
            dz = act_round(b2[t], W1) + 8 * U * (np.abs(W1) @ np.abs(b2[t]))
            g, u, dg, du = z[:F], z[F:], dz[:F], dz[F:]
            h = ref.gelu_tanh(g) * u
            dh = GELU_LIP * dg * (np.abs(u) + du) + np.abs(ref.gelu_tanh(g)) * du + 4 * U * np.abs(h)
            y = W2 @ h
            dy = np.abs(W2) @ dh + act_round(np.abs(h) + dh, W2)
            out[t] += we * y
            bnd[t] += abs(we) * dy + 4 * U * abs(we * y).max() * m.K
    return out, bnd


def matrices_check(tool, work, name, gg, m, alias=False):
    """Every 2-D matrix alone (`dgemma_tool mm`: attention, dense MLP, router,
    self-conditioning MLP, head) on rows with an outlier and a near-zero row: a block
    type on the default int8 path within act_round's bound (x2, as test_qdot allows),
    every matrix on the dequantised path within 1e-5 of float64. Returns {GGUF name:
    type} of the block-type matrices."""
    inv = {mkdgemma.gguf_name(hf, alias): hf for hf in m.w}
    K = max(w.shape[1] for w in m.w.values() if w.ndim == 2)
    rng = np.random.Generator(np.random.PCG64(12))
    x = rng.standard_normal((12, K))
    x[3, 7] = 40.0
    x[9] *= 1e-3
    x = x.astype("<f4")
    xf = os.path.join(work, name + ".mm.x")
    x.tofile(xf)
    x = x.astype(np.float64)
    res = {}
    for path, env in (("int8", None), ("dequant", DEQ)):
        pre = os.path.join(work, "%s.mm.%s" % (name, path))
        p = run(tool, "mm", "--model", gg, "--x", xf, "--width", str(K), "--out", pre, env=env)
        for line in p.stdout.split("\n"):
            if line:
                g, t, rows, cols = line.split()
                y = np.fromfile(pre + "." + g, dtype="<f4").reshape(x.shape[0], int(rows)).astype(np.float64)
                res.setdefault(g, {})[path] = (t, int(cols), y)
    blocks, worst_ratio, worst_deq = {}, 0.0, 0.0
    for g, r in res.items():
        W = m.w[inv[g]]
        t, cols, _ = r["int8"]
        xs = x[:, :cols]
        if W.shape[1] != cols:
            raise SystemExit("FAIL: %s has %d columns in the engine, %d in the file" % (g, cols, W.shape[1]))
        want = xs @ W.T
        worst_deq = max(worst_deq, max(rel_err(r["dequant"][2][i], want[i]) for i in range(len(want))))
        if t.startswith("Q"):
            blocks[g] = t
            err = np.abs(r["int8"][2] - want)
            bnd = np.stack([act_round(xs[i], W) for i in range(len(xs))])
            ratio = float(np.max(err / bnd))
            if not ratio <= 2.0:
                i, j = np.unravel_index(int(np.argmax(err / bnd)), err.shape)
                raise SystemExit("FAIL: %s (%s) int8 row %d col %d: error %.3g, bound %.3g" %
                                 (g, t, i, j, err[i, j], bnd[i, j]))
            worst_ratio = max(worst_ratio, ratio)
    if not blocks:
        raise SystemExit("FAIL: no block-type 2-D matrix in %s" % gg)
    print("%s: %d 2-D matrices alone (%d of block types %s): int8 worst error / bound %.3f, "
          "dequantised %.3g" % (name, len(res), len(blocks), "+".join(sorted(set(blocks.values()))),
                                worst_ratio, worst_deq))
    if not worst_deq <= 1e-5:
        raise SystemExit("FAIL: dequantised 2-D matrices error %.3g > 1e-5" % worst_deq)
    return blocks


def int8_pass_check(tool, work, name, gg, m, sc, want, n_mm):
    """A whole decoder pass on the default int8 path against the float64 reference on
    the dequantised weights (want). As tests/golden/gguf_golden.py derives it, each
    quantised matmul on a row's path adds an independent relative rms error eps_a (the
    activation quantiser's, measured there), so the row error is about sqrt(n) eps_a
    for n such matmuls; 2x that is allowed. A row whose top-k expert choice flips
    between two near-equal router logits changes discretely, so the median row is held
    to the bound (the worst is printed) and every logit must be finite. Both paths
    read only the experts they use."""
    import re
    out = os.path.join(work, name + ".int8.f32")
    xa = []
    if sc is not None:
        sc.astype("<f4").tofile(out + ".sc")
        xa = ["--sc", out + ".sc"]
    p = run(tool, "decode", "--model", gg, "--prompt", ids(PROMPT), "--canvas", ids(CANVAS), "--out", out, *xa)
    got = np.fromfile(out, dtype="<f4").reshape(-1, m.V).astype(np.float64)
    if not np.all(np.isfinite(got)):
        raise SystemExit("FAIL: int8 decode logits are not finite")
    errs = [rel_err(got[i], want[i]) for i in range(len(want))]
    sys.path.insert(0, os.path.join(HERE, "..", "golden"))
    from gguf_golden import act_quant_error
    eps_a = act_quant_error()
    bound = 2 * np.sqrt(n_mm) * eps_a
    med = float(np.median(errs))
    print("%s: int8 decode over %d quantised matmuls a row: row error median %.3g, worst %.3g "
          "(bound %.3g = 2 sqrt(%d) eps_a, eps_a %.3g)" % (name, n_mm, med, max(errs), bound, n_mm, eps_a))
    if m.moe:
        mt = re.search(r"experts: calls \d+ rows \d+ read (\d+) used (\d+) all (\d+)", p.stderr)
        read, used, allb = (int(v) for v in mt.groups())
        if read != used:
            raise SystemExit("FAIL: expert grouping read %d bytes, used %d, all %d" % (read, used, allb))
    if not med <= bound:
        raise SystemExit("FAIL: int8 decode median row error %.3g > %.3g" % (med, bound))


def qexp_case(tool, work, name):
    qt, split = QEXP_CASES[name]
    extra = " --gguf-expert-type %s%s" % (qt, " --gguf-split-experts" if split else "")
    d, gg, m, _ = gguf_model(work, QEXP, extra)
    info = json.loads(run(tool, "info", "--model", gg).stdout)
    if info["family"] != 3 or not info["moe"]:
        raise SystemExit("FAIL: GGUF info %r" % info)
    if qt == "q4_0":
        # an expert type the kernels lack (IQ4_NL has Q4_0's block size): a clear refusal
        import struct
        b = bytearray(open(gg, "rb").read())
        nm = b"blk.1.ffn_down_exps.weight"
        at = b.index(nm) + len(nm)
        struct.pack_into("<I", b, at + 4 + 8 * struct.unpack_from("<I", b, at)[0], 20)
        bad = os.path.join(work, name + ".iq4_nl.gguf")
        open(bad, "wb").write(bytes(b))
        p = run(tool, "info", "--model", bad, check=False)
        if p.returncode == 0 or "'blk.1.ffn_down_exps.weight' has type IQ4_NL" not in p.stderr:
            raise SystemExit("FAIL: an IQ4_NL expert tensor was not refused clearly: %r" % p.stderr)
    # (1) the routed experts of each layer alone, on residual rows with outliers and a
    # near-zero row: int8 path within the derived bound (x2, as test_qdot allows),
    # dequantised path within 1e-5 of the float64 reference
    rng = np.random.Generator(np.random.PCG64(11))
    x = rng.standard_normal((24, m.d))
    x[3, 7] = 40.0
    x[9] *= 1e-3
    x = x.astype("<f4")
    xf = os.path.join(work, name + ".x")
    x.tofile(xf)
    x = x.astype(np.float64)
    worst_ratio, worst_deq = 0.0, 0.0
    for layer in range(m.n_layer):
        res = {}
        for path, env in (("int8", None), ("dequant", DEQ)):
            of = os.path.join(work, "%s.%d.%s.m" % (name, layer, path))
            run(tool, "moe", "--model", gg, "--layer", str(layer), "--x", xf, "--out", of, env=env)
            got = np.fromfile(of, dtype="<f4").reshape(-1, m.d).astype(np.float64)
            rt = np.fromfile(of + ".route", dtype="<i4")
            n = x.shape[0]
            idx = rt[: n * m.K].reshape(n, m.K)
            wts = rt[n * m.K:].view("<f4").reshape(n, m.K).astype(np.float64)
            res[path] = (got, idx, wts)
        got, idx, wts = res["int8"]
        # the routing is the reference's (softmax, top-k, renormalised, x per-expert scale)
        p = "model.decoder.layers.%d." % layer
        r = ref.rms(x, None, m.eps) * m.w[p + "router.scale"] * m.d ** -0.5
        lg = r @ m.w[p + "router.proj.weight"].T
        pr = np.exp(lg - lg.max(axis=1, keepdims=True))
        pr /= pr.sum(axis=1, keepdims=True)
        for t in range(x.shape[0]):
            top = sorted(range(m.E), key=lambda e: (-pr[t, e], e))[: m.K]
            tw = pr[t, top] / pr[t, top].sum() * m.w[p + "router.per_expert_scale"][top]
            if list(idx[t]) != top or np.max(np.abs(wts[t] - tw)) > 1e-5 * np.max(np.abs(tw)):
                raise SystemExit("FAIL: layer %d row %d routing %r %r, reference %r %r" %
                                 (layer, t, list(idx[t]), list(wts[t]), top, list(tw)))
        want, bnd = moe_bound(m, layer, x, idx, wts)
        err = np.abs(got - want)
        ratio = float(np.max(err / bnd))
        if not ratio <= 2.0:
            t, j = np.unravel_index(int(np.argmax(err / bnd)), err.shape)
            raise SystemExit("FAIL: layer %d int8 experts row %d col %d: error %.3g, bound %.3g" %
                             (layer, t, j, err[t, j], bnd[t, j]))
        worst_ratio = max(worst_ratio, ratio)
        gd = res["dequant"][0]
        worst_deq = max(worst_deq, max(rel_err(gd[t], want[t]) for t in range(x.shape[0])))
    if not worst_deq <= 1e-5:
        raise SystemExit("FAIL: dequantised experts error %.3g > 1e-5" % worst_deq)
    # (2) a whole decoder pass with self-conditioning: the dequantised path matches the
    # float64 reference to 1e-5; the int8 path stays near it. Its deviation is the
    # experts' activation rounding (bounded per block above), a few 1e-3 of the logit
    # range after the layers, except on a row whose top-k choice flips between two
    # near-equal router logits in a later layer (a discrete change, not a bound
    # violation): the median row is held to 1e-2, every row must be finite. Both
    # paths read only the experts they use.
    c = ref.Cache(m)
    ref.encode(m, c, PROMPT)
    out = os.path.join(work, name + ".f32")
    sc = (ref.decode(m, c, CANVAS[::-1]) / 0.6).astype("<f4")
    sc.tofile(out + ".sc")
    want = ref.decode(m, c, CANVAS, sc.astype(np.float64))
    errs = {}
    for path, env in (("int8", None), ("dequant", DEQ)):
        p = run(tool, "decode", "--model", gg, "--prompt", ids(PROMPT), "--canvas", ids(CANVAS), "--out", out,
                "--sc", out + ".sc", env=env)
        got = np.fromfile(out, dtype="<f4").reshape(-1, m.V).astype(np.float64)
        if not np.all(np.isfinite(got)):
            raise SystemExit("FAIL: %s decode logits are not finite" % path)
        re_ = [rel_err(got[i], want[i]) for i in range(len(want))]
        errs[path] = (max(re_), float(np.median(re_)))
        import re
        mt = re.search(r"experts: calls \d+ rows \d+ read (\d+) used (\d+) all (\d+)", p.stderr)
        read, used, allb = (int(v) for v in mt.groups())
        if read != used or not used < allb:
            raise SystemExit("FAIL: expert grouping read %d bytes, used %d, all %d" % (read, used, allb))
    print("%s: experts alone: int8 worst error / bound %.3f, dequantised %.3g; decode logits "
          "(worst, median row): int8 %.3g %.3g, dequantised %.3g" %
          (name, worst_ratio, worst_deq, errs["int8"][0], errs["int8"][1], errs["dequant"][0]))
    if not errs["dequant"][0] <= 1e-5:
        raise SystemExit("FAIL: dequantised decode error %.3g > 1e-5" % errs["dequant"][0])
    if not errs["int8"][1] <= 1e-2:
        raise SystemExit("FAIL: int8 decode median row error %.3g > 1e-2" % errs["int8"][1])
    return 0


def gen_args(d, P):
    a = ["generate", "--model", d, "--seed", str(P["seed"]), "--steps", str(P["max_steps"]),
         "--t-min", repr(P["t_min"]), "--t-max", repr(P["t_max"]), "--bound", repr(P["entropy_bound"]),
         "--stability", str(P["stability"]), "--confidence", repr(P["confidence"]),
         "--max-new", str(P["max_new_tokens"]), "--stop", ids(P["stop_ids"]), "--prompt", ids(PROMPT)]
    if not P["self_cond"]:
        a.append("--no-sc")
    if P.get("pin"):
        a += ["--pin", ids(P["pin"]), "--trace-x"]
    return a


def sampler_case(tool, work, name):
    args, over = SAMPLER_CASES[name]
    d = model_dir(work, args)
    m = ref.load(d)
    P = dict(BASE_P)
    P.update({k: v for k, v in over.items() if k != "stop_from_run"})
    if over.get("stop_from_run"):
        # a token the second canvas commits becomes the stop id: generation must end
        # there, in the second canvas, with pad after it
        probe = ref.generate(m, PROMPT, dict(P, max_new_tokens=32))
        P["stop_ids"] = [probe["tokens"][16 + 5]]
        first = probe["tokens"].index(P["stop_ids"][0])
    canv = []
    want = ref.generate(m, PROMPT, P, canvases=canv)
    pr = run(tool, *gen_args(d, P))
    got = json.loads(pr.stdout)
    if P.get("pin"):
        pin = P["pin"]
        seen = [(int(f[1]), int(f[2]), [int(v) for v in f[3:]]) for f in
                (ln.split() for ln in pr.stderr.splitlines()) if f and f[0] == "canvas"]
        if seen != canv:
            raise SystemExit("FAIL: the canvases the decoder read differ from the reference's")
        n = m.canvas
        for b, st, x in seen:
            if any(pin[b * n + i] >= 0 and x[i] != pin[b * n + i] for i in range(n) if b * n + i < len(pin)):
                raise SystemExit("FAIL: canvas %d step %d changed a pinned position: %r" % (b, st, x))
        if any(p_ >= 0 and k < len(want["tokens"]) and got["tokens"][k] != p_ for k, p_ in enumerate(pin)):
            raise SystemExit("FAIL: committed tokens differ from the pins: %r" % got["tokens"])
        if len(want["tokens"]) < 32 or 1 in [want["tokens"][i] for i in range(13)]:
            raise SystemExit("FAIL: the case must run two canvases past the pinned stop id: %r" % want)
        print("%s: %d decoder canvases, pinned positions unchanged in every one" % (name, len(seen)))
    for k in ("tokens", "n_text", "steps", "hit_stop", "last_stop"):
        if got[k] != want[k]:
            raise SystemExit("FAIL: %s differs: engine %r, reference %r" % (k, got[k], want[k]))
    # each case must exercise its rule
    n_canvas = -(-P["max_new_tokens"] // m.canvas)
    if name == "sampler_step_cap" and (want["steps"] != P["max_steps"] * n_canvas or want["hit_stop"]):
        raise SystemExit("FAIL: the step cap case did not run every step of %d canvases" % n_canvas)
    if name == "sampler_confident_stop" and (want["last_stop"] != "confident" or
                                             want["steps"] >= P["max_steps"] or want["steps"] < 2):
        raise SystemExit("FAIL: no stable-and-confident stop (steps %d)" % want["steps"])
    if name == "sampler_stability_off" and want["steps"] != 1:
        raise SystemExit("FAIL: stability 0 should stop after one confident step")
    if name == "sampler_padded_vocab":
        if not m.Vt < m.V or any(t >= m.Vt for t in got["tokens"]):
            raise SystemExit("FAIL: tokens outside the tokenizer's %d ids: %r" % (m.Vt, got["tokens"]))
        # the rule matters: the unrestricted argmax of the first step picks a tokenless row
        c = ref.Cache(m)
        ref.encode(m, c, PROMPT)
        x = [ref.uniform_id(P["seed"], 0, i, m.V) for i in range(m.canvas)]
        if max(int(r.argmax()) for r in ref.decode(m, c, x, None)) < m.Vt:
            raise SystemExit("FAIL: the padded-vocabulary case never meets a tokenless row")
    if name == "sampler_stop_id":
        toks = want["tokens"]
        if not want["hit_stop"] or want["n_text"] != first or len(toks) != 32 or \
                any(t != m.pad for t in toks[first + 1:]):
            raise SystemExit("FAIL: stop id not honoured: %r" % want)
    print("%s: %d tokens, %d steps, stop %s, hit_stop %s: identical" %
          (name, len(want["tokens"]), want["steps"], want["last_stop"], want["hit_stop"]))
    return 0


def other_case(tool, work, name):
    if name == "info":
        d = model_dir(work, MOE)
        info = json.loads(run(tool, "info", "--model", d).stdout)
        exp = {"family": 3, "arch": "DiffusionGemmaForBlockDiffusion", "n_layer": 4, "moe": True,
               "n_expert": 8, "top_k": 2, "canvas": 16, "window": 8, "self_cond": True, "bos": 2,
               "eos": 1, "pad": 0, "mask": -1, "stop": [1, 106, 50], "global": [0, 1, 0, 1],
               "eb": [48, 0.4, 0.8, 0.1, 1, 0.005]}
        for k, v in exp.items():
            if info[k] != v:
                raise SystemExit("FAIL: info %s = %r, expected %r" % (k, info[k], v))
        if "entropy-bound" not in info["ctx_new"]:
            raise SystemExit("FAIL: eng_ctx_new did not refuse clearly: %r" % info["ctx_new"])
    elif name == "memory_budget":
        d = model_dir(work, MOE)
        env = dict(os.environ, INFILLD_MEM_LIMIT=str(1 << 30))
        p = run(tool, "ctx", "--model", d, "--cache", "2000000", "--rows", "256", env=env, check=False)
        if p.returncode != 2 or "needs" not in p.stdout or "available" not in p.stdout:
            raise SystemExit("FAIL: no clear refusal of a context over budget: %r" % (p.stdout + p.stderr))
        p = run(tool, "ctx", "--model", d, "--cache", "64", "--rows", "16", env=env)
        env = dict(os.environ, INFILLD_MEM_LIMIT="1000")
        p = run(tool, "ctx", "--model", d, env=env, check=False)
        if p.returncode == 0 or "GiB of memory" not in p.stderr:
            raise SystemExit("FAIL: weights over budget were not refused: %r" % p.stderr)
    elif name == "vision_skipped":
        d = model_dir(work, DENSE + " --with-vision")
        p = run(tool, "info", "--model", d)
        if "vision tower is not loaded" not in p.stderr:
            raise SystemExit("FAIL: no log line about the skipped vision tower: %r" % p.stderr)
    elif name == "infill_cli":
        # `infilld complete --model DIR` runs the Gemma-4 FIM prompt through the sampler and
        # the usual post-processing on a DiffusionGemma directory (random weights: whatever
        # the canvas holds, the run must finish and answer or reject cleanly)
        d = model_dir(work, MOE)
        src = os.path.join(work, "fim.py")
        with open(src, "w") as f:
            f.write("def add(a, b):\n    return \nprint(add(1, 2))\n")
        p = subprocess.run([INFILLD, "complete", src, "--line", "2", "--col", "11", "--model", d,
                            "--explain"], capture_output=True, text=True, timeout=120)
        out = p.stdout + p.stderr
        if p.returncode != 0 or "completion:" not in out or "prompt:" not in out:
            raise SystemExit("FAIL: infilld complete on a DiffusionGemma model: rc %d\n%s" % (p.returncode, out))
        # --explain names the family's sampler and the model's settings (mkdgemma's defaults)
        want = ("sampler: entropy-bound (step cap 48, temperature 0.80 -> 0.40, entropy bound 0.1 nats, "
                "stability 1, confidence 0.005, self-conditioning on)")
        if want not in out:
            raise SystemExit("FAIL: --explain does not show the entropy-bound sampler:\n%s" % out)
    elif name == "infill_pin_cli":
        # the suffix-pinning mode through `infilld complete --dgemma-infill pin`: the canvas is
        # [--n hole slots][the suffix's first tokens pinned, up to the canvas end]; the answer
        # is the hole slots only (then pad). The sampler case sampler_pinned_suffix checks
        # that pinned ids never change against the reference.
        d = model_dir(work, MOE)
        src = os.path.join(work, "fim_pin.py")
        with open(src, "w") as f:
            f.write("def add(a, b):\n    return \nprint(add(1, 2))\n")
        for n_hole, seed in ((6, "1"), (3, "2"), (40, "3")):
            p = subprocess.run([INFILLD, "complete", src, "--line", "2", "--col", "11", "--model", d,
                                "--dgemma-infill", "pin", "--n", str(n_hole), "--seed", seed, "--json"],
                               capture_output=True, text=True, timeout=120)
            if p.returncode != 0:
                raise SystemExit("FAIL: complete --dgemma-infill pin: rc %d\n%s" % (p.returncode, p.stdout + p.stderr))
            o = json.loads(p.stdout)
            slots = min(n_hole, 16)
            want = {"mode": "pin", "hole_slots": slots, "pinned": min(o["suffix_tokens"], 16 - slots)}
            if o["dgemma_infill"] != want or o["suffix_tokens"] < 1:
                raise SystemExit("FAIL: dgemma_infill %r, expected %r" % (o["dgemma_infill"], want))
            if len(o["tokens"]) != slots + 1 or o["tokens"][-1] != 0:
                raise SystemExit("FAIL: pin mode answered tokens %r for %d slots" % (o["tokens"], slots))
        p = subprocess.run([INFILLD, "complete", src, "--line", "2", "--col", "11", "--model", d,
                            "--dgemma-infill", "pin", "--n", "6", "--explain"], capture_output=True, text=True,
                           timeout=120)
        if "infill: suffix pinned on the canvas: 6 hole slots, then 10 suffix tokens pinned" not in p.stdout:
            raise SystemExit("FAIL: --explain does not show the pinned layout:\n%s" % p.stdout)
        p = subprocess.run([INFILLD, "complete", src, "--line", "2", "--col", "11", "--model", d,
                            "--dgemma-infill", "middle"], capture_output=True, text=True, timeout=120)
        if p.returncode != 2 or "bad value for --dgemma-infill" not in p.stderr:
            raise SystemExit("FAIL: a bad --dgemma-infill was not refused: %r" % p.stderr)
    elif name == "lsp_pin":
        # the "dgemmaInfill" setting over LSP reaches the pipeline: with "pin" an inline
        # completion runs the pinned layout (the debug log names it, with the layout
        # `complete --dgemma-infill pin` explains on the same text), without it the prompt mode
        sys.path.insert(0, os.path.join(HERE, "..", "protocol"))
        from lspclient import Client, init_params
        d = model_dir(work, MOE + " --canvas 32")
        text = "def add(a, b):\n    return \nprint(add(1, 2))\n"
        src = os.path.join(work, "lsp_pin.py")
        with open(src, "w") as f:
            f.write(text)
        p = subprocess.run([INFILLD, "complete", src, "--line", "2", "--col", "11", "--model", d, "--json",
                            "--dgemma-infill", "pin"], capture_output=True, text=True, timeout=120)
        lay = json.loads(p.stdout)["dgemma_infill"]
        if lay["pinned"] < 1:
            raise SystemExit("FAIL: the case should pin suffix tokens: %r" % lay)
        for opts, want in (({"dgemmaInfill": "pin"}, "DiffusionGemma infill: suffix pinned, %d hole slots, %d "
                            "suffix tokens" % (lay["hole_slots"], lay["pinned"])),
                           ({}, "DiffusionGemma infill: prompt-level FIM")):
            logf = os.path.join(work, "lsp_pin.log")
            with open(logf, "w") as lf:
                c = Client.spawn([INFILLD, "--device", "cpu", "--model", d, "--stdio", "--log-level", "debug"],
                                 stderr=lf)
                try:
                    c.request("initialize", init_params(options=dict(opts, candidates=1, latencyBudgetMs=0)),
                              timeout=60)
                    c.notify("initialized", {})
                    c.notify("textDocument/didOpen", {"textDocument": {"uri": "file://" + src, "languageId": "python",
                                                                       "version": 1, "text": text}})
                    c.request("textDocument/inlineCompletion",
                              {"textDocument": {"uri": "file://" + src}, "position": {"line": 1, "character": 11},
                               "context": {"triggerKind": 1}}, timeout=120)
                finally:
                    c.close()
            log = open(logf, encoding="utf-8", errors="replace").read()
            if want not in log:
                raise SystemExit("FAIL: with settings %r the daemon did not log %r:\n%s" % (opts, want, log[-3000:]))
    elif name == "eval_cli":
        # `infilld eval` names the family's sampler, entropy_bound, and its settings (the
        # model's generation_config.json: mkdgemma's are the published defaults), in the
        # JSON rows and under the markdown table, with the infill mode
        d = model_dir(work, MOE)
        fixture = os.path.join(HERE, "..", "eval", "data", "heldout-fixture.jsonl")
        base = [INFILLD, "eval", "--set", fixture, "--model", d, "--limit", "2", "--max-hole", "8",
                "--device", "cpu"]
        for mode in ("prompt", "pin"):
            p = subprocess.run(base + ["--json", "--dgemma-infill", mode], capture_output=True, text=True,
                               timeout=300)
            if p.returncode != 0:
                raise SystemExit("FAIL: infilld eval on a DiffusionGemma model: rc %d\n%s" %
                                 (p.returncode, p.stderr[-2000:]))
            row = json.loads(p.stdout)["rows"][0]
            want = {"max_steps": 48, "t_max": 0.8, "t_min": 0.4, "entropy_bound": 0.1, "stability": 1,
                    "confidence": 0.005, "self_cond": True, "infill": mode}
            if row["sampler"] != "entropy_bound" or row["sampler_settings"] != want:
                raise SystemExit("FAIL: eval sampler %r %r, expected entropy_bound %r" %
                                 (row["sampler"], row["sampler_settings"], want))
        p = subprocess.run(base, capture_output=True, text=True, timeout=300)
        line = ("entropy_bound (step cap 48, temperature 0.80 -> 0.40, entropy bound 0.1 nats, stability 1, "
                "confidence 0.005, self-conditioning on, infill prompt)")
        if p.returncode != 0 or "| entropy_bound |" not in p.stdout or line not in p.stdout:
            raise SystemExit("FAIL: the eval table does not name the sampler and its settings:\n%s" % p.stdout)
    elif name == "doctor":
        # `infilld doctor` on DiffusionGemma models: expert bytes (all, per token, one) and
        # K/V bytes per token of each layer kind, computed here from the configs and the
        # GGUF's block sizes (F32 safetensors; Q6_K split experts)
        import re
        cases = [(model_dir(work, MOE_BF16), None),
                 (gguf_model(work, QEXP, " --gguf-expert-type q6_k --gguf-split-experts")[1], "q6_k"),
                 (gguf_model(work, QEXP, " --gguf-expert-type q4_k_m")[1], "q4_k_m")]
        for path, qt in cases:
            hf = path[:-5] if path.endswith(".gguf") else path
            tc = json.load(open(os.path.join(hf, "config.json")))["text_config"]
            d, E, K, F = tc["hidden_size"], tc["num_experts"], tc["top_k_experts"], tc["moe_intermediate_size"]
            L = tc["num_hidden_layers"]
            glob = [t == "full_attention" for t in tc["layer_types"]]
            per = {None: 2 if "bfloat16" in open(os.path.join(hf, "config.json")).read() else 4, "q6_k": 210 / 256,
                   "q4_k_m": 144 / 256}[qt]
            layer_one = [int(3 * F * d * per)] * L
            if qt == "q4_k_m":  # ffn_down_exps Q6_K on the even layers
                layer_one = [int(2 * F * d * 144 / 256 + F * d * (210 if i % 2 == 0 else 144) / 256)
                             for i in range(L)]
            one = max(layer_one)
            kv_s = 2 * tc["num_key_value_heads"] * tc["head_dim"] * 4
            kv_g = 2 * tc["num_global_key_value_heads"] * tc["global_head_dim"] * 4
            ns, ng = glob.count(False), glob.count(True)
            p = subprocess.run([INFILLD, "doctor", "--model", path], capture_output=True, text=True, timeout=120)
            out = p.stdout
            if p.returncode != 0:
                raise SystemExit("FAIL: doctor rc %d: %s" % (p.returncode, p.stdout + p.stderr))
            want = ["experts: %d per layer, %d used per token, %d wide, types %s; one expert %.1f KiB, "
                    "all experts %.1f MiB" % (E, K, F, {None: "BF16" if per == 2 else "F32", "q6_k": "Q6_K",
                                                        "q4_k_m": "Q4_K, Q6_K"}[qt],
                                              one / 1024, sum(layer_one) * E / 2 ** 20),
                    "read per token %.2f MiB (top-%d of every layer)" % (sum(layer_one) * K / 2 ** 20, K),
                    "context K/V: %d bytes per token (F32): %d sliding layers x %d (%d K/V heads of %d), "
                    "%d global layers x %d (%d K/V heads of %d" %
                    (ns * kv_s + ng * kv_g, ns, kv_s, tc["num_key_value_heads"], tc["head_dim"], ng, kv_g,
                     tc["num_global_key_value_heads"], tc["global_head_dim"])]
            for w in want:
                if w not in out:
                    raise SystemExit("FAIL: doctor lacks %r:\n%s" % (w, out))
            if not re.search(r"context: [0-9.]+ MiB for %d cached positions and a %d-token canvas" %
                             (2048 + json.load(open(os.path.join(hf, "config.json")))["canvas_length"],
                              json.load(open(os.path.join(hf, "config.json")))["canvas_length"]), out):
                raise SystemExit("FAIL: doctor lacks the context line:\n%s" % out)
    elif name == "gguf_gemma4_tokenizer":
        # A GGUF with Gemma's own tokenizer kind (tokenizer.ggml.model gemma4, no mask token
        # id: the family uses uniform-noise canvases) loads, computes the reference logits
        # and serves `infilld complete`. The tokenizer is tests/tokenizer's tiny
        # SentencePiece-style one plus <eos> 269, <|turn> 270, <turn|> 271.
        args = "--layers 2 --pattern 2 --seed 5"
        key = hashlib.sha256((args + "spm" + open(mkdgemma.__file__, "rb").read().hex()).encode()).hexdigest()[:12]
        d = os.path.join(work, "s" + key)
        gg = d + ".gguf"
        if not os.path.exists(gg):
            mkdgemma.main(args.split() + ["--out", d, "--gguf", gg, "--gguf-tokenizer", TINY_SPM])
        info = json.loads(run(tool, "info", "--model", gg).stdout)
        exp = {"family": 3, "mask": -1, "bos": 2, "eos": 269, "pad": 0, "stop": [269, 271], "vocab": 400}
        for k, v in exp.items():
            if info[k] != v:
                raise SystemExit("FAIL: info %s = %r, expected %r" % (k, info[k], v))
        p = subprocess.run([INFILLD, "tokenize", "--model", gg], input=" ab a\n", capture_output=True,
                           text=True, timeout=60)
        if p.returncode != 0 or p.stdout.split() != ["264", "263", "265"]:
            raise SystemExit("FAIL: the gemma4 tokenizer from the GGUF: %r" % (p.stdout + p.stderr))
        m = ref.load(d)
        c = ref.Cache(m)
        ref.encode(m, c, PROMPT)
        out = os.path.join(work, name + ".f32")
        run(tool, "decode", "--model", gg, "--prompt", ids(PROMPT), "--canvas", ids(CANVAS), "--out", out)
        want = ref.decode(m, c, CANVAS, None)
        got = np.fromfile(out, dtype="<f4").reshape(-1, m.V).astype(np.float64)
        worst = max(rel_err(got[i], want[i]) for i in range(len(want)))
        if not worst <= 1e-5:
            raise SystemExit("FAIL: logits error %.3g > 1e-5" % worst)
        src = os.path.join(work, "fim_spm.py")
        with open(src, "w") as f:
            f.write("def add(a, b):\n    return \nprint(add(1, 2))\n")
        p = subprocess.run([INFILLD, "complete", src, "--line", "2", "--col", "11", "--model", gg,
                            "--explain"], capture_output=True, text=True, timeout=120)
        out = p.stdout + p.stderr
        if p.returncode != 0 or "completion:" not in out or "prompt:" not in out:
            raise SystemExit("FAIL: infilld complete on a gemma4-tokenizer GGUF: rc %d\n%s" % (p.returncode, out))
        # without the chat template's tokens: a clear refusal at load
        import shutil
        bad = os.path.join(work, "no_turn")
        shutil.rmtree(bad, ignore_errors=True)
        shutil.copytree(d, bad)
        tj = json.load(open(os.path.join(bad, "tokenizer.json")))
        for t in tj["added_tokens"]:
            if t["content"] == "<|turn>":
                t["content"] = "<unused_turn>"
        json.dump(tj, open(os.path.join(bad, "tokenizer.json"), "w"))
        p = subprocess.run([INFILLD, "complete", src, "--line", "2", "--col", "11", "--model", bad],
                           capture_output=True, text=True, timeout=120)
        if p.returncode == 0 or "has no <|turn> token" not in p.stderr:
            raise SystemExit("FAIL: no clear refusal of a tokenizer without <|turn>: %r" % p.stderr)
        print("%s: worst row error %.3g" % (name, worst))
    elif name == "padded_vocab_cli":
        # more embedding rows than tokenizer ids: a log line at load says how many have no
        # token, and `infilld complete` never meets them (no detokenizing error); --json
        # names the family's sampler
        d = model_dir(work, PADDED)
        p = run(tool, "info", "--model", d)
        info = json.loads(p.stdout)
        if info["vocab"] != 512 or info["token_ids"] != 399:
            raise SystemExit("FAIL: info vocab %r, token_ids %r" % (info["vocab"], info["token_ids"]))
        if "113 of the embedding's 512 rows have no token" not in p.stderr:
            raise SystemExit("FAIL: no log line about the rows without a token: %r" % p.stderr)
        src = os.path.join(work, "fim_padded.py")
        with open(src, "w") as f:
            f.write("def add(a, b):\n    return \nprint(add(1, 2))\n")
        for seed in ("1", "2", "3"):
            p = subprocess.run([INFILLD, "complete", src, "--line", "2", "--col", "11", "--model", d,
                                "--seed", seed, "--json"], capture_output=True, text=True, timeout=120)
            if p.returncode != 0:
                raise SystemExit("FAIL: infilld complete on a padded vocabulary: rc %d\n%s" %
                                 (p.returncode, p.stdout + p.stderr))
            o = json.loads(p.stdout)
            if o["alg"] != "entropy_bound" or any(t >= 399 for t in o["tokens"]):
                raise SystemExit("FAIL: --json alg %r, tokens %r" % (o["alg"], o["tokens"]))
    elif name == "bad_checkpoints":
        import shutil
        src = model_dir(work, DENSE)
        bad = os.path.join(work, "bad")
        shutil.rmtree(bad, ignore_errors=True)
        shutil.copytree(src, bad)
        cfg = json.load(open(os.path.join(bad, "config.json")))
        cfg["text_config"]["layer_types"][-1] = "sliding_attention"
        json.dump(cfg, open(os.path.join(bad, "config.json"), "w"))
        p = run(tool, "info", "--model", bad, check=False)
        if p.returncode == 0 or "last layer must be full" not in p.stderr:
            raise SystemExit("FAIL: a sliding last layer was accepted: %r" % p.stderr)
        cfg["text_config"]["layer_types"][-1] = "full_attention"
        cfg["text_config"]["head_dim"] = 8
        json.dump(cfg, open(os.path.join(bad, "config.json"), "w"))
        p = run(tool, "info", "--model", bad, check=False)
        if p.returncode == 0 or "q_proj.weight' has shape" not in p.stderr:
            raise SystemExit("FAIL: a wrong head_dim was accepted: %r" % p.stderr)
    print("%s: ok" % name)
    return 0


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool")
    ap.add_argument("--work")
    ap.add_argument("--infilld")
    ap.add_argument("--case")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args(argv)
    if a.list:
        print("\n".join(list(LOGIT_CASES) + list(SAMPLER_CASES) + list(GGUF_CASES) + list(QEXP_CASES) + list(Q2D_CASES) + OTHER))
        return 0
    os.makedirs(a.work, exist_ok=True)
    global INFILLD
    INFILLD = a.infilld
    if a.case in LOGIT_CASES:
        return logits_case(a.tool, a.work, a.case)
    if a.case in SAMPLER_CASES:
        return sampler_case(a.tool, a.work, a.case)
    if a.case in GGUF_CASES:
        return gguf_case(a.tool, a.work, a.case)
    if a.case in QEXP_CASES:
        return qexp_case(a.tool, a.work, a.case)
    if a.case in Q2D_CASES:
        return q2d_case(a.tool, a.work, a.case)
    if a.case in OTHER:
        return other_case(a.tool, a.work, a.case)
    raise SystemExit("unknown case %s" % a.case)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
