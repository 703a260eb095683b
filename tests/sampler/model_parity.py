"""Parity of `infilld infill --json` with the reference sampler (sampler_ref.py)
on tiny peaked checkpoints, with logits from the independent float64 numpy
forward (tests/ref/reference.py). Greedy exact mode must give identical hole
tokens for every algorithm and family; LLaDA's Gumbel path, origin's Bernoulli
and Dream's temperature sampling run with the shared counter-based noise.
Also checks cached mode with a refresh every step against exact mode, and
reports how often block-refresh cached mode agrees with exact mode.

Usage: model_parity.py INFILLD WORKDIR   (exit 77 = skipped)"""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from parity_common import (GEN, PREFIX, SHAPE, SUFFIX, TOKENIZER,  # noqa: E402,F401
                           logits_fn_for, reference, script_args)
import sampler_ref as ref  # noqa: E402


def checkpoint(workdir, family, peaked=True):
    out = os.path.join(workdir, family + ("-peaked" if peaked else ""))
    if not os.path.exists(os.path.join(out, "config.json")):
        args = [sys.executable, GEN, "--family", family, "--out", out] + SHAPE
        if peaked:
            args.append("--peaked")
            if family == "open-dcoder":
                args += ["--tied", "no"]  # --peaked plants targets in an untied head
        subprocess.run(args, check=True, capture_output=True)
    return out


def info_of(model):
    fam = {"dream": "dream", "open-dcoder": "open_dcoder", "llada": "llada"}[model.family]
    def idv(x):
        return -1 if x is None else int(x)
    return dict(family=fam, bos=idv(model.bos_id), eos=idv(model.eos_id), pad=idv(model.pad_id),
                mask=int(model.mask_id), expand=-1)




FLAGS = dict(n="--n", steps="--steps", block="--block", temperature="--temperature",
             top_p="--top-p", top_k="--top-k", alg_temp="--alg-temp", eps="--eps",
             threshold="--threshold", factor="--factor", seed="--seed")


def run_infilld(exe, mdir, case, mode="exact", refresh=0):
    args = [exe, "infill", "--model", mdir, "--prefix-ids", ",".join(map(str, PREFIX)),
            "--suffix-ids", ",".join(map(str, SUFFIX)), "--alg", case["alg"], "--mode", mode,
            "--json", "--device", "cpu"]
    if refresh:
        args += ["--refresh", str(refresh)]
    for k, v in case.items():
        if k != "alg":
            args += [FLAGS[k], str(v)]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


CASES = {
    "dream": [
        dict(alg="entropy", n=8, steps=8),
        dict(alg="maskgit_plus", n=8, steps=4),
        dict(alg="topk_margin", n=6, steps=6),
        dict(alg="origin", n=8, steps=4, seed=5),
        dict(alg="entropy", n=8, steps=8, temperature=0.5, top_p=0.9, seed=7),
        dict(alg="threshold", n=12, threshold=0.5, block=4),
        dict(alg="factor", n=12, factor=1.0, block=6),
        dict(alg="entropy", n=8, steps=4, alg_temp=0.3, seed=3),
    ],
    "open-dcoder": [
        dict(alg="p2", n=8, steps=8),
        dict(alg="p2", n=6, steps=3, temperature=0.6, seed=2),
        dict(alg="threshold", n=8, threshold=0.5),
        dict(alg="entropy", n=8, steps=8),
    ],
    "llada": [
        dict(alg="low_confidence", n=8, steps=8, block=4),
        dict(alg="low_confidence", n=8, steps=4, block=4, temperature=1.0, seed=9),
        dict(alg="threshold", n=8, threshold=0.5, block=4),
        dict(alg="maskgit_plus", n=6, steps=6),
    ],
}


def main():
    exe, workdir = script_args(__doc__)
    fails = total = 0
    for family, cases in CASES.items():
        mdir = checkpoint(workdir, family)
        model = reference.load(mdir)
        info = info_of(model)
        shift = family != "llada"
        for case in cases:
            total += 1
            got = run_infilld(exe, mdir, case)
            P = dict(case)
            P["steps"] = case.get("steps", 0)
            want, _ = ref.diffuse(info, logits_fn_for(model, shift), PREFIX, SUFFIX, P)
            ok = got["tokens"] == want[0]
            print(("ok  " if ok else "FAIL"), family, case)
            if not ok:
                print("   infilld  ", got["tokens"])
                print("   reference", want[0])
                fails += 1
    # Cached mode: a refresh every step is exact mode; block refresh is reported.
    agree = n_tok = 0
    for family, case in (("dream", dict(alg="threshold", n=16, threshold=0.5, block=4)),
                         ("dream", dict(alg="entropy", n=12, steps=12, block=4)),
                         ("open-dcoder", dict(alg="p2", n=8, steps=8)),
                         ("llada", dict(alg="low_confidence", n=8, steps=8, block=4))):
        mdir = checkpoint(workdir, family)
        total += 1
        exact = run_infilld(exe, mdir, case)["tokens"]
        every = run_infilld(exe, mdir, case, mode="cached", refresh=1)["tokens"]
        ok = exact == every
        print(("ok  " if ok else "FAIL"), "cached refresh=1 == exact", family, case)
        if not ok:
            print("   exact ", exact)
            print("   cached", every)
            fails += 1
        blk = run_infilld(exe, mdir, case, mode="cached")
        same = sum(1 for a, b in zip(exact, blk["tokens"]) if a == b)
        agree += same
        n_tok += len(exact)
        print("     block-refresh cached: %d full + %d window forwards, %d/%d tokens as exact" %
              (blk["forward_full"], blk["forward_window"], same, len(exact)))
    print("block-refresh cached agrees with exact on %d/%d tokens (%.0f%%)" %
          (agree, n_tok, 100.0 * agree / max(n_tok, 1)))
    print("%d/%d checks identical" % (total - fails, total))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
