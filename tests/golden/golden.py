#!/usr/bin/python3
"""Golden numerics: infilld's raw logits against the independent numpy reference.

Each case generates a tiny checkpoint (tests/gen/mkcheckpoint.py) into the work
directory (reused while the generator and the case's arguments are unchanged), runs
`infilld logits --model DIR --tokens ... --out FILE` and compares every row:
    error(row) = max|engine - reference| / max|reference|
must be <= 1e-4 for F32 (and F16) weights and <= 2e-2 for BF16 weights.
Known-answer cases check raw row i peaks at the token the hand-built weights dictate
(tests the tensor orientation and that `infilld logits` rows are unshifted).

Cases of kind padded/shift/step/noise drive the engine library through the
golden_engine helper (padded batches, the family's logit shift in eng_step,
eng_noise_uniform).

Usage: golden.py --infilld BIN --golden-engine BIN --work DIR (--case NAME | --list)
Exit status: 0 pass, 1 fail.
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
import mkcheckpoint  # noqa: E402
import reference  # noqa: E402

TOL = {"f32": 1e-4, "f16": 1e-4, "bf16": 2e-2}

# Odd-length token sequences with ids spread over the whole vocabulary, including the
# family's special tokens (bos/mask/eos) and ids above the base vocabulary.
TOKENS_13 = [151665, 750, 282, 2075, 1648, 151666, 151666, 151666, 33274, 90, 1784, 130000, 151643]
TOKENS_11 = [151665, 9, 151666, 151666, 151666, 151666, 70000, 220, 151000, 5, 151643]
TOKENS_15 = [750, 1161, 4140, 25, 151665, 151665, 151665, 151665, 151665, 198, 262, 470, 865, 4, 1]
TOKENS_7 = [151665, 151665, 42, 151665, 100000, 13, 151643]
TOKENS_9 = [0, 151665, 151665, 151665, 151665, 1000, 2000, 151935, 151643]


def long_tokens(n, seed, mask):
    """n ids drawn over the whole vocabulary with a run of mask tokens in the middle,
    long enough to cross the row blocking of the engine's matrix kernels."""
    rng = np.random.Generator(np.random.PCG64(seed))
    ids = [int(x) for x in rng.integers(0, 151643, size=n)]
    for i in range(n // 3, n // 3 + n // 4):
        ids[i] = mask
    return ids


# name: (mkcheckpoint arguments, tokens, kind)
CASES = {
    # Dream: GQA 2:1, head_dim 32, untied, F32, one file.
    "dream_f32_gqa2": (
        "--family dream --layers 2 --hidden 128 --heads 4 --kv-heads 2 --ffn 256 "
        "--dtype f32 --seed 11",
        TOKENS_13,
        "golden",
    ),
    # Dream: the published 28 query / 4 KV heads (GQA 7:1 over several KV heads),
    # head_dim 8, BF16, three shards.
    "dream_bf16_gqa7_sharded": (
        "--family dream --layers 2 --hidden 224 --heads 28 --kv-heads 4 --ffn 192 "
        "--dtype bf16 --shards 3 --seed 12",
        TOKENS_11,
        "golden",
    ),
    # Dream: MHA 1:1, head_dim 64, F16 weights.
    "dream_f16_mha_hd64": (
        "--family dream --layers 2 --hidden 128 --heads 2 --kv-heads 2 --ffn 160 "
        "--dtype f16 --seed 13",
        TOKENS_9,
        "golden",
    ),
    # DreamOn tokenizer variant, BF16.
    "dreamon_bf16": (
        "--family dreamon --layers 1 --hidden 64 --heads 4 --kv-heads 2 --ffn 96 "
        "--dtype bf16 --seed 14",
        TOKENS_11,
        "golden",
    ),
    # Open-dCoder: tied head, GQA 2:1, head_dim 64, F32, two shards.
    "open_dcoder_f32_hd64_sharded": (
        "--family open-dcoder --layers 2 --hidden 128 --heads 2 --kv-heads 1 --ffn 224 "
        "--dtype f32 --shards 2 --seed 21",
        TOKENS_15,
        "golden",
    ),
    # Open-dCoder: tied head, GQA 2:1, head_dim 128, BF16.
    "open_dcoder_bf16_hd128": (
        "--family open-dcoder --layers 2 --hidden 256 --heads 2 --kv-heads 1 --ffn 320 "
        "--dtype bf16 --seed 22",
        TOKENS_13,
        "golden",
    ),
    # LLaDA: GQA 2:1 (OLMo n_kv_heads), head_dim 32, F32.
    "llada_f32_gqa2": (
        "--family llada --layers 2 --hidden 128 --heads 4 --kv-heads 2 --ffn 192 "
        "--dtype f32 --seed 31",
        TOKENS_7,
        "golden",
    ),
    # LLaDA: MHA 1:1 as published, head_dim 128, BF16, two shards.
    "llada_bf16_mha_hd128_sharded": (
        "--family llada --layers 2 --hidden 256 --heads 2 --kv-heads 2 --ffn 384 "
        "--dtype bf16 --shards 2 --seed 32",
        TOKENS_9,
        "golden",
    ),
    # Longer odd canvases (97 and 133 positions) for the kernels' blocking and tails.
    "dream_f32_long97": (
        "--family dream --layers 2 --hidden 128 --heads 4 --kv-heads 2 --ffn 352 "
        "--dtype f32 --seed 33",
        long_tokens(97, 1, 151666),
        "golden",
    ),
    "llada_bf16_long133": (
        "--family llada --layers 1 --hidden 128 --heads 1 --kv-heads 1 --ffn 200 "
        "--dtype bf16 --seed 34",
        long_tokens(133, 2, 151665),
        "golden",
    ),
    # Known answers: one-hot embeddings and a planted head; raw row i peaks at
    # 1000 + 37 * (x_i mod hidden) whatever the family's shift.
    "known_dream_map": (
        "--family dream --layers 2 --hidden 64 --heads 4 --kv-heads 1 --ffn 96 "
        "--dtype f32 --known-answer map --seed 41",
        TOKENS_13,
        "known",
    ),
    "known_llada_map": (
        "--family llada --layers 2 --hidden 64 --heads 2 --kv-heads 2 --ffn 96 "
        "--dtype bf16 --known-answer map --seed 42",
        TOKENS_7,
        "known",
    ),
    # Tied head equal to equal-norm embeddings: raw row i peaks at x_i.
    "known_open_dcoder_identity": (
        "--family open-dcoder --layers 1 --hidden 64 --heads 2 --kv-heads 1 --ffn 96 "
        "--dtype bf16 --known-answer identity --seed 43",
        TOKENS_15,
        "known",
    ),
    # Engine API (golden_engine): a right- and left-padded batch against the reference
    # of each unpadded sequence.
    "padded_batch_dream": (
        "--family dream --layers 2 --hidden 64 --heads 4 --kv-heads 2 --ffn 96 "
        "--dtype f32 --seed 51",
        TOKENS_11,
        "padded",
    ),
    "padded_batch_llada": (
        "--family llada --layers 2 --hidden 64 --heads 2 --kv-heads 2 --ffn 96 "
        "--dtype bf16 --seed 52",
        TOKENS_9,
        "padded",
    ),
    # eng_step at temperature 0 on known-answer models: the Dream family predicts
    # position i from raw row i-1 (row 0 for i = 0), LLaDA from row i.
    "shift_known_dream": (
        "--family dream --layers 1 --hidden 64 --heads 2 --kv-heads 1 --ffn 96 "
        "--dtype bf16 --known-answer map --seed 53",
        TOKENS_13,
        "shift",
    ),
    "shift_known_llada": (
        "--family llada --layers 1 --hidden 64 --heads 2 --kv-heads 2 --ffn 96 "
        "--dtype f32 --known-answer map --seed 54",
        TOKENS_11,
        "shift",
    ),
    "shift_known_open_dcoder": (
        "--family open-dcoder --layers 1 --hidden 64 --heads 2 --kv-heads 1 --ffn 96 "
        "--dtype bf16 --known-answer identity --seed 59",
        TOKENS_15,
        "shift",
    ),
    # eng_step on a random tied model: token = argmax of the shifted reference rows,
    # prob = its softmax probability.
    "step_open_dcoder": (
        "--family open-dcoder --layers 2 --hidden 64 --heads 4 --kv-heads 1 --ffn 96 "
        "--dtype f32 --seed 55",
        TOKENS_15,
        "step",
    ),
    # eng_step in WINDOW mode: a full step fills the context K/V cache, then only the
    # hole (plus the row before it for shifted families) is recomputed on a canvas
    # with some hole tokens committed; compared with reference.forward_window.
    "window_dream": (
        "--family dream --layers 2 --hidden 64 --heads 4 --kv-heads 2 --ffn 96 "
        "--dtype f32 --seed 56",
        TOKENS_13,
        "window",
    ),
    "window_llada": (
        "--family llada --layers 2 --hidden 64 --heads 4 --kv-heads 1 --ffn 96 "
        "--dtype f32 --seed 57",
        TOKENS_13,
        "window",
    ),
    # An ordinary autoregressive Qwen2.5 directory (no mask token) is refused with a
    # message that says so.
    "reject_autoregressive_qwen2": (
        "--family qwen2-ar --layers 1 --hidden 32 --heads 2 --kv-heads 1 --ffn 48 "
        "--dtype bf16 --seed 58",
        [1, 2, 3],
        "reject",
    ),
    # eng_noise_uniform against reference.noise_uniform (no checkpoint).
    "noise": (None, None, "noise"),
}


def generator_digest():
    h = hashlib.sha256()
    with open(mkcheckpoint.__file__, "rb") as f:
        h.update(f.read())
    return h.hexdigest()


def ensure_checkpoint(work, name, gen_args):
    """Generates the case's checkpoint unless an identical one is already there."""
    out = os.path.join(work, name)
    stamp = os.path.join(out, ".golden-stamp")
    want = json.dumps({"args": gen_args, "generator": generator_digest()})
    if os.path.exists(stamp):
        with open(stamp) as f:
            if f.read() == want:
                return out
    argv = gen_args.split() + ["--out", out]
    rc = mkcheckpoint.main(argv)
    if rc:
        raise SystemExit("generator failed for %s" % name)
    with open(stamp, "w") as f:
        f.write(want)
    return out


def run_engine(infilld, model, tokens, out_file, scalar=False):
    cmd = [infilld, "logits", "--model", model, "--tokens", ",".join(map(str, tokens)),
           "--out", out_file]
    if scalar:
        cmd.append("--reference")
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    if p.returncode != 0:
        sys.stderr.write(p.stdout.decode(errors="replace"))
        sys.stderr.write(p.stderr.decode(errors="replace"))
        raise SystemExit("FAIL: %s exited with %d" % (" ".join(cmd), p.returncode))
    return np.fromfile(out_file, dtype="<f4")


def row_errors(got, ref):
    return np.abs(got - ref).max(axis=1) / np.abs(ref).max(axis=1)


def check_case(args, name):
    gen_args, tokens, kind = CASES[name]
    if kind == "noise":
        return check_noise(args.golden_engine)
    model = ensure_checkpoint(args.work, name, gen_args)
    if kind == "padded":
        return check_padded(args.golden_engine, args.work, name, model, tokens)
    if kind == "reject":
        return check_reject(args.infilld, args.work, name, model, tokens)
    if kind == "window":
        return check_window(args.golden_engine, name, model, tokens)
    if kind in ("shift", "step"):
        return check_step(args.golden_engine, name, model, tokens, kind)
    return check_model(args.infilld, args.work, name, model, tokens, kind)


def run_tool(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    if p.returncode != 0:
        sys.stderr.write(p.stdout.decode(errors="replace"))
        sys.stderr.write(p.stderr.decode(errors="replace"))
        raise SystemExit("FAIL: %s exited with %d" % (" ".join(cmd), p.returncode))
    return p.stdout.decode()


def check_padded(tool, work, name, model, tokens):
    """Three sequences in one batch: the full one, a shorter one right-padded and a
    shorter one left-padded. Real rows must match the reference of each unpadded
    sequence (positions = cumsum(valid) - 1 makes left padding invisible)."""
    m = reference.load(model)
    n = len(tokens)
    short_r = tokens[: n - 3]
    short_l = tokens[2:]
    pad = m.pad_id if m.pad_id is not None else 0
    seqs = [tokens, short_r + [pad] * 3, [pad] * 2 + short_l]
    valid = [[1] * n, [1] * (n - 3) + [0] * 3, [0] * 2 + [1] * (n - 2)]
    out = os.path.join(work, name + ".logits.f32")
    run_tool([tool, "forward", "--model", model,
              "--seqs", ";".join(",".join(map(str, s)) for s in seqs),
              "--valid", ";".join(",".join(map(str, v)) for v in valid), "--out", out])
    vocab = m.head.shape[0]
    got = np.fromfile(out, dtype="<f4").astype(np.float64)
    if got.size != 3 * n * vocab:
        print("FAIL %s: engine wrote %d floats, expected %d" % (name, got.size, 3 * n * vocab))
        return False
    got = got.reshape(3, n, vocab)
    tol = TOL["f32"] if m.config.get("torch_dtype") == "float32" else TOL["bf16"]
    ok = True
    checks = [
        ("full", got[0], m.forward(tokens)),
        ("right-padded", got[1, : n - 3], m.forward(short_r)),
        ("left-padded", got[2, 2:], m.forward(short_l)),
    ]
    for label, g, ref in checks:
        if not np.all(np.isfinite(g)):
            print("FAIL %s: %s rows not finite" % (name, label))
            ok = False
            continue
        err = row_errors(g, ref).max()
        print("%s: %s max row error %.3g (tolerance %g)" % (name, label, err, tol))
        if err > tol:
            print("FAIL %s: %s sequence differs from the reference" % (name, label))
            ok = False
    if not np.all(np.isfinite(got)):
        print("FAIL %s: padding rows produced non-finite logits" % name)
        ok = False
    if ok:
        os.remove(out)
    return ok


def check_step(tool, name, model, tokens, kind):
    m = reference.load(model)
    outp = run_tool([tool, "step", "--model", model, "--tokens", ",".join(map(str, tokens))])
    lines = [ln.split() for ln in outp.strip().splitlines()]
    got = {int(p): (int(t), float(pr)) for p, t, pr in lines}
    if sorted(got) != list(range(len(tokens))):
        print("FAIL %s: step answered positions %s" % (name, sorted(got)))
        return False
    have = [got[i][0] for i in range(len(tokens))]
    if kind == "shift":
        with open(os.path.join(model, "known_answer.json")) as f:
            ka = json.load(f)
        src = [max(i - 1, 0) for i in range(len(tokens))] if m.shift else list(range(len(tokens)))
        want = [mkcheckpoint.ka_expected(ka["kind"], tokens[j], ka["hidden"]) for j in src]
        print("%s: family %s, shift %s" % (name, m.family, m.shift))
        print("%s: expected prediction per position %s" % (name, want))
        print("%s: engine step prediction           %s" % (name, have))
        if have != want:
            print("FAIL %s: predictions do not come from the family's output rows" % name)
            return False
        return True
    rows = reference.shifted(m.forward(tokens), m.shift)
    p = np.exp(rows - rows.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    want = [int(i) for i in rows.argmax(axis=1)]
    print("%s: reference argmax %s" % (name, want))
    print("%s: engine step      %s" % (name, have))
    # An argmax may differ only where the reference's top logits are within rounding.
    ok = True
    for i in range(len(tokens)):
        if have[i] != want[i] and rows[i, want[i]] - rows[i, have[i]] > 1e-4 * np.abs(rows[i]).max():
            ok = False
    perr = max(abs(got[i][1] - p[i, have[i]]) / p[i, have[i]] for i in range(len(tokens)))
    print("%s: max relative probability error %.3g" % (name, perr))
    if perr > 1e-3:
        ok = False
    if not ok:
        print("FAIL %s: step disagrees with the reference" % name)
    return ok


def check_reject(infilld, work, name, model, tokens):
    out = os.path.join(work, name + ".logits.f32")
    cmd = [infilld, "logits", "--model", model, "--tokens", ",".join(map(str, tokens)),
           "--out", out]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    msg = p.stderr.decode(errors="replace")
    print("%s: exit %d: %s" % (name, p.returncode, msg.strip()))
    if p.returncode == 0 or "autoregressive" not in msg:
        print("FAIL %s: expected a refusal naming an autoregressive model" % name)
        return False
    return True


def compare_steps(name, label, lines, rows, positions, row_of):
    """lines: golden_engine step output; rows: reference logits; row_of(p) gives the
    index into rows that predicts position p."""
    got = {int(p): (int(t), float(pr)) for p, t, pr in (ln.split() for ln in lines)}
    if sorted(got) != sorted(positions):
        print("FAIL %s: %s answered positions %s" % (name, label, sorted(got)))
        return False
    ok = True
    worst = 0.0
    for pos in positions:
        r = rows[row_of(pos)]
        p = np.exp(r - r.max())
        p /= p.sum()
        tok, prob = got[pos]
        if tok != int(r.argmax()) and r.max() - r[tok] > 1e-4 * np.abs(r).max():
            print("FAIL %s: %s position %d: engine %d, reference %d" % (
                name, label, pos, tok, int(r.argmax())))
            ok = False
        worst = max(worst, abs(prob - p[tok]) / p[tok])
    print("%s: %s: %d positions, max relative probability error %.3g" % (
        name, label, len(positions), worst))
    return ok and worst <= 1e-3


def check_window(tool, name, model, tokens):
    m = reference.load(model)
    mask = m.mask_id
    hole = list(range(3, 8))
    old = list(tokens)
    for p in hole:
        old[p] = mask
    new = list(old)
    new[4] = 1784  # committed hole tokens
    new[6] = 262
    start = hole[0] - 1 if m.shift else hole[0]
    end = hole[-1] + 1
    pos_s = ",".join(map(str, hole))

    def row_of(p):
        return (p - 1 if m.shift else p) - start

    ok = True
    for label, canvas in (("same canvas", old), ("committed tokens", new)):
        out = run_tool([tool, "step", "--model", model, "--tokens", ",".join(map(str, old)),
                        "--positions", pos_s, "--then", ",".join(map(str, canvas)),
                        "--window", "%d,%d" % (start, end)])
        rows = m.forward_window(old, canvas, start, end)
        ok = compare_steps(name, label, out.strip().splitlines(), rows, hole, row_of) and ok
    return ok


def check_noise(tool):
    cases = [(0, 0, 0, 0), (1, 2, 3, 4), (2**64 - 1, 2**32 - 1, 2**32 - 1, 2**32 - 1),
             (123456789, 7, 151666, 151643), (0xDEADBEEFCAFEF00D, 1, 0, 9)]
    rng = np.random.Generator(np.random.PCG64(5))
    for _ in range(20):
        cases.append((int(rng.integers(0, 2**63)), int(rng.integers(0, 1000)),
                      int(rng.integers(0, 4096)), int(rng.integers(0, 152064))))
    ok = True
    for c in cases:
        got = float(run_tool([tool, "noise"] + [str(x) for x in c]).strip())
        want = reference.noise_uniform(*c)
        if got != want or not 0.0 < want < 1.0:
            print("FAIL noise%s: engine %.17g reference %.17g" % (c, got, want))
            ok = False
    row = reference.noise_uniform_row(1, 2, 3, 1000)
    if any(row[v] != reference.noise_uniform(1, 2, 3, v) for v in range(0, 1000, 37)):
        print("FAIL noise: vectorised reference differs from the scalar one")
        ok = False
    print("noise: %d values compared" % len(cases))
    return ok


def check_model(infilld, work, name, model, tokens, kind):
    """Checks the engine's optimised path and its plain scalar path (--reference)."""
    m = reference.load(model)
    ref = m.forward(tokens)
    ok = True
    for scalar in (False, True):
        label = name + (" [scalar]" if scalar else "")
        ok = check_engine_rows(infilld, work, label, m, model, tokens, kind, ref, scalar) and ok
    return ok


def check_engine_rows(infilld, work, name, m, model, tokens, kind, ref, scalar):
    vocab = m.head.shape[0]
    out = os.path.join(work, name.split()[0] + (".scalar" if scalar else "") + ".logits.f32")
    raw = run_engine(infilld, model, tokens, out, scalar)
    if raw.size != len(tokens) * vocab:
        print("FAIL %s: engine wrote %d floats, expected %d rows x %d" % (
            name, raw.size, len(tokens), vocab))
        return False
    got = raw.reshape(len(tokens), vocab).astype(np.float64)
    if not np.all(np.isfinite(got)):
        print("FAIL %s: non-finite logits" % name)
        return False
    ok = True
    if kind == "known":
        with open(os.path.join(model, "known_answer.json")) as f:
            ka = json.load(f)
        want = [mkcheckpoint.ka_expected(ka["kind"], t, ka["hidden"]) for t in tokens]
        have = [int(i) for i in got.argmax(axis=1)]
        print("%s: expected argmax per raw row %s" % (name, want))
        print("%s: engine argmax per raw row   %s" % (name, have))
        if have != want:
            print("FAIL %s: raw rows do not peak at the known tokens" % name)
            ok = False
    if kind == "known" and not [int(i) for i in ref.argmax(axis=1)] == want:
        print("FAIL %s: the reference disagrees with the known answer" % name)
        ok = False
    dtype = m.config.get("torch_dtype")
    tol = {"float32": TOL["f32"], "float16": TOL["f16"], "bfloat16": TOL["bf16"]}[dtype]
    err = row_errors(got, ref)
    print("%s: family %s, %d rows, vocab %d, dtype %s: max row error %.3g (tolerance %g)" % (
        name, m.family, len(tokens), vocab, dtype, err.max(), tol))
    if err.max() > tol:
        bad = [int(i) for i in np.nonzero(err > tol)[0]]
        print("FAIL %s: rows over tolerance: %s (errors %s)" % (
            name, bad, ["%.3g" % err[i] for i in bad]))
        ok = False
    if ok:
        os.remove(out)  # keep the engine's rows only when they failed
    return ok


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--infilld")
    p.add_argument("--golden-engine")
    p.add_argument("--work")
    p.add_argument("--case")
    p.add_argument("--model", help="compare an existing model directory instead of a case")
    p.add_argument("--list", action="store_true")
    args = p.parse_args(argv)
    if args.list:
        print("\n".join(CASES))
        return 0
    os.makedirs(args.work, exist_ok=True)
    if args.model:
        ok = check_model(args.infilld, args.work, args.case or "model", args.model, TOKENS_13,
                         "golden")
    else:
        ok = check_case(args, args.case)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
