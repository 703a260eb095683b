#!/usr/bin/python3
"""The exported default model runs in the engine as it ran in PyTorch (issue 13 §2).

  test_export_logits.py INFILLD SRCDIR

Loads models/infilld-tiny-code/model.safetensors into tools/train/model.py's DreamLM
(the training framework, float32), re-exports the same weights as an F32 model
directory with tools/train/export.py, and compares `infilld logits` with the PyTorch
logits on a few sequences (BOS, code, masks, EOS; lengths 1 .. the model's context):
relative error max|engine - torch| / max|torch| <= 1e-4 for each sequence. Also checks
that the exported config names the tokenizer's special ids. Needs python3-torch.
"""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np


def need(module):
    """A missing Python module skips (77) locally and fails under CI=true."""
    try:
        __import__(module)
    except ImportError:
        ci = os.environ.get("CI") == "true"
        print("%s: python3-%s is not installed (./bootstrap.sh installs it)" %
              ("FAIL" if ci else "skipped", module))
        sys.exit(1 if ci else 77)


def main():
    infilld, src = sys.argv[1], sys.argv[2]
    need("torch")
    sys.path.insert(0, os.path.join(src, "tools", "train"))
    import torch

    import bpe
    import export
    from model import Config, DreamLM

    torch.set_num_threads(2)
    mdir = os.path.join(src, "models", "infilld-tiny-code")
    with open(os.path.join(mdir, "config.json")) as f:
        hf = json.load(f)
    with open(os.path.join(mdir, "tokenizer.json"), encoding="utf-8") as f:
        tok = json.load(f)
    cfg = Config(**{k: hf[k] for k in Config.KEYS})
    weights = export.read_safetensors(os.path.join(mdir, "model.safetensors"))
    model = DreamLM(cfg)
    model.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in weights.items()})
    model.eval()
    fails = []
    bos, eos, mask = export.special_ids(tok)
    for key, want in (("bos_token_id", bos), ("eos_token_id", eos), ("pad_token_id", eos),
                      ("mask_token_id", mask), ("vocab_size", cfg.vocab_size)):
        if hf.get(key) != want:
            fails.append("config.json %s = %s, want %s" % (key, hf.get(key), want))
    if cfg.vocab_size != len(tok["model"]["vocab"]) + len(tok["added_tokens"]):
        fails.append("vocab_size does not match the tokenizer")

    enc = bpe.Encoder(tok)
    code = enc.encode("def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1)")
    seqs = [
        [bos],
        [bos] + code[:6] + [mask] * 5 + code[6:12] + [eos],
        [bos] + code + [mask] * 8 + [eos],
        [bos] + (code * 20)[: cfg.max_position_embeddings - 2] + [eos],
    ]
    passed = 0
    with tempfile.TemporaryDirectory() as tmp:
        f32 = os.path.join(tmp, "f32")
        export.export(cfg.to_dict(), weights, os.path.join(mdir, "tokenizer.json"), f32, "f32")
        for i, s in enumerate(seqs):
            with torch.no_grad():
                ref = model(torch.tensor([s]))[0].double().numpy()
            out = os.path.join(tmp, "l%d.bin" % i)
            r = subprocess.run([infilld, "logits", "--model", f32, "--tokens",
                                ",".join(map(str, s)), "--out", out, "--threads", "2"],
                               capture_output=True)
            if r.returncode != 0:
                fails.append("seq %d: infilld logits failed: %s" % (i, r.stderr.decode()[-300:]))
                continue
            got = np.fromfile(out, dtype="<f4").astype(np.float64)
            if got.size != ref.size:
                fails.append("seq %d: %d values, want %d" % (i, got.size, ref.size))
                continue
            got = got.reshape(ref.shape)
            rel = float(np.abs(got - ref).max() / max(1e-30, np.abs(ref).max()))
            same_argmax = float((got.argmax(-1) == ref.argmax(-1)).mean())
            print("seq %d: len %d, max rel err %.2e, argmax agreement %.3f" %
                  (i, len(s), rel, same_argmax))
            if rel > 1e-4:
                fails.append("seq %d: relative error %.2e > 1e-4" % (i, rel))
            else:
                passed += 1
    for f in fails:
        print("FAIL:", f)
    print("%d passed, %d failed" % (passed, len(fails)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
