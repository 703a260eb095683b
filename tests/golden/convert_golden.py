#!/usr/bin/python3
"""`infilld convert` against the project's generator and the safetensors model.

For each case the generator (tests/gen/mkcheckpoint.py) writes one F32 safetensors
directory and, from the same float32 weights, GGUF files in the listed types. Then
`infilld convert DIR OUT.gguf --type T` converts the safetensors directory, and:

  1. every tensor of OUT.gguf has the generator file's name, shape, ggml type and
     bytes (the C quantisers are bit-exact to the generator's, whose blocks
     tests/golden/gguf_golden.py checks with the independent reader
     tests/ref/gguf_read.py), and OUT.gguf reads back with that reader;
  2. the metadata infilld and llama.cpp need is there with the generator's values
     (architecture, {arch}.* dimensions, token list, types and merges, special ids;
     LLaDA: shift_logits false, its Q/K rows permuted as llama.cpp's converter does);
  3. logits: the F32 file gives the safetensors model's logits within 1e-5 (they are
     bit-identical), a Q8_0 file gives the generator's Q8_0 file's logits exactly
     (same bytes), and within 2 * sqrt(7 * layers + 1) * sqrt(eps^2 + eps_a^2) of
     the safetensors model (gguf_golden.py's bound: eps the weights' relative
     error, eps_a the int8 activations').
Also: a bad --type, a missing directory and an output that cannot be written are
clear errors (exit 1 or 2, a message naming the problem).

The Dream case converts the checkpoint of gguf_golden.py's "dream" case (same shape,
every type), which it generates into --gguf-work unless that test's stamp shows it is
there: one generation for both tests.

Usage: convert_golden.py --infilld BIN --work DIR --gguf-work DIR
"""

import argparse
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "ref"))
sys.path.insert(0, os.path.join(HERE, "..", "gen"))
sys.path.insert(0, HERE)
import gguf_golden  # noqa: E402
import gguf_read  # noqa: E402
import mkcheckpoint  # noqa: E402

SHAPE = "--layers 2 --hidden 256 --heads 4 --kv-heads 2 --ffn 512 --dtype f32"
# "dream": None = the files of gguf_golden.py's "dream" case (the same shape and types
# this test converts, every type), generated once for both tests in --gguf-work.
CASES = {
    "dream": (None, gguf_golden.ALL_TYPES,
              [151665, 750, 282, 2075, 1648, 151666, 151666, 33274, 90, 151643]),
    "llada": ("--family llada %s --seed 32" % SHAPE, "f32,q8_0,q4_k",
              [750, 151665, 151665, 4140, 25, 198, 262, 151643]),
}
# keys whose values must equal the generator's (general.name and the context length
# may differ: the converter writes the usable context infilld computed)
SAME_KEYS = ("general.architecture", "general.file_type", "tokenizer.ggml.model",
             "tokenizer.ggml.pre", "tokenizer.ggml.tokens", "tokenizer.ggml.token_type",
             "tokenizer.ggml.merges", "tokenizer.ggml.mask_token_id",
             "tokenizer.ggml.eos_token_id", "tokenizer.ggml.padding_token_id",
             "tokenizer.ggml.bos_token_id", "diffusion.shift_logits")
ARCH_KEYS = ("block_count", "embedding_length", "feed_forward_length", "attention.head_count",
             "attention.head_count_kv", "rope.freq_base", "attention.layer_norm_rms_epsilon",
             "attention.causal")


def run(cmd, want_rc=0):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    if p.returncode != want_rc:
        sys.stderr.write(p.stderr.decode(errors="replace"))
        raise SystemExit("FAIL: %s exited with %d, not %d" % (" ".join(cmd), p.returncode,
                                                              want_rc))
    return p


def check_case(args, name):
    gen, types, tokens = CASES[name]
    if gen is None:
        out, pattern = gguf_golden.generate(args.gguf_work, name)
        args.dream_dir = out
    else:
        out = os.path.join(args.work, name)
        pattern = os.path.join(out, "gen-{type}.gguf")
        argv = gen.split() + ["--out", out, "--gguf", pattern, "--gguf-type", types]
        if mkcheckpoint.main(argv):
            raise SystemExit("generator failed")
    arch = "llada" if name == "llada" else "dream"
    import json
    with open(os.path.join(out, "config.json")) as f:
        cfg = json.load(f)
    layers = cfg.get("num_hidden_layers", cfg.get("n_layers"))
    ok = True
    st_logits = gguf_golden.logits(args.infilld, out, tokens, os.path.join(args.work, "st.f32"))
    orig_w = None
    for t in types.split(","):
        label = "%s/%s" % (name, t)
        conv = os.path.join(args.work, "%s-%s.gguf" % (name, t))
        p = run([args.infilld, "convert", out, conv, "--type", t])
        print("%s: %s" % (label, p.stdout.decode().strip()))
        gm, gt = gguf_read.read(pattern.replace("{type}", t))
        cm, ct = gguf_read.read(conv)
        if sorted(gt) != sorted(ct):
            print("FAIL %s: tensor names differ: %s" % (label, sorted(set(gt) ^ set(ct))))
            ok = False
            continue
        bad = [k for k in gt if gt[k][0] != ct[k][0] or list(gt[k][1]) != list(ct[k][1])
               or bytes(gt[k][2]) != bytes(ct[k][2])]
        if bad:
            k = bad[0]
            print("FAIL %s: %d tensors differ from the generator's, first %s (type %s vs %s, "
                  "shape %s vs %s)" % (label, len(bad), k, gt[k][0], ct[k][0], gt[k][1],
                                       ct[k][1]))
            ok = False
        keys = list(SAME_KEYS) + ["%s.%s" % (arch, k) for k in ARCH_KEYS]
        for k in keys:
            if (k in gm) != (k in cm) or (k in gm and gm[k] != cm[k]):
                print("FAIL %s: metadata %s: generator %r, convert %r" % (
                    label, k, str(gm.get(k))[:60], str(cm.get(k))[:60]))
                ok = False
        if t == "f32":
            got = gguf_golden.logits(args.infilld, conv, tokens, os.path.join(args.work, "c.f32"))
            e = gguf_golden.row_error(got, st_logits)
            print("%s: logits vs the safetensors model %.3g (tol 1e-5)%s" % (
                label, e, ", bit-identical" if np.array_equal(got, st_logits) else ""))
            if e > 1e-5:
                print("FAIL %s: F32 GGUF logits differ from the safetensors model's" % label)
                ok = False
        if t == "q8_0":
            got = gguf_golden.logits(args.infilld, conv, tokens, os.path.join(args.work, "c.f32"))
            gen_l = gguf_golden.logits(args.infilld, pattern.replace("{type}", t), tokens,
                                       os.path.join(args.work, "g.f32"))
            if orig_w is None:
                import reference
                orig_w = reference.read_weights(out)
            _, w, _ = gguf_golden.gguf_weights(
                [conv], arch, cfg.get("num_attention_heads", cfg.get("n_heads")),
                cfg.get("num_key_value_heads", cfg.get("n_kv_heads")))
            eps = max(float(np.linalg.norm(w[k].astype(np.float64) - orig_w[k]) /
                            np.linalg.norm(orig_w[k].astype(np.float64)))
                      for k in w if w[k].ndim == 2)
            bound = 2 * np.sqrt(7 * layers + 1) * np.sqrt(eps ** 2 +
                                                          gguf_golden.act_quant_error() ** 2)
            e = gguf_golden.row_error(got, st_logits)
            print("%s: logits vs the generator's Q8_0 file %s; vs the safetensors model %.3g "
                  "(bound %.3g, eps %.3g)" % (label, "identical" if np.array_equal(got, gen_l)
                                              else "DIFFERENT", e, bound, eps))
            if not np.array_equal(got, gen_l) or e > bound:
                print("FAIL %s: Q8_0 logits" % label)
                ok = False
        os.remove(conv)
    return ok


def check_errors(args):
    ok = True
    d = args.dream_dir
    for cmd, rc, words in (
            ([args.infilld, "convert", d, os.path.join(args.work, "x.gguf"), "--type", "q3_k"],
             2, "unknown --type"),
            ([args.infilld, "convert", os.path.join(args.work, "nope"),
              os.path.join(args.work, "x.gguf"), "--type", "q8_0"], 1, "nope"),
            ([args.infilld, "convert", d, os.path.join(args.work, "no-dir", "x.gguf"), "--type",
              "q8_0"], 1, "no-dir")):
        p = run(cmd, rc)
        msg = p.stderr.decode(errors="replace")
        print("error case: %s -> %d: %s" % (" ".join(cmd[2:]), rc, msg.strip().splitlines()[0]))
        if words not in msg:
            print("FAIL: the message does not name '%s'" % words)
            ok = False
    return ok


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--infilld", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--gguf-work", required=True,
                   help="gguf_golden.py's --work: its dream checkpoint is reused")
    a = p.parse_args(argv)
    os.makedirs(a.work, exist_ok=True)
    ok = all([check_case(a, n) for n in CASES]) and check_errors(a)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
