"""Parity of the C samplers (sampler_toy) with sampler_ref.py on the toy hash
model: identical hole tokens for every algorithm, greedy and with fixed noise.
Usage: toy_parity.py PATH/TO/sampler_toy"""

import json
import subprocess
import sys

import sampler_ref as ref

MASK64 = (1 << 64) - 1
INFO = dict(family="dream", bos=46, eos=45, pad=45, mask=47, expand=-1)


def toy_logits(seq, pos):
    ctx = 0
    for i, t in enumerate(seq):
        if t != 47:
            ctx = (ctx + (t + 1) * (i + 1)) & MASK64
    out = []
    for v in range(48):
        h = ref._mix(ref._mix(ctx) ^ ref._mix(((pos << 20) | v) & MASK64))
        out.append((h % 4001) / 500.0 - 4.0)
    return out


CASES = [
    dict(alg="origin", n=8, steps=8),
    dict(alg="origin", n=12, steps=5, temperature=0.7, seed=3),
    dict(alg="maskgit_plus", n=8),
    dict(alg="topk_margin", n=10, steps=5),
    dict(alg="entropy", n=16, steps=16),
    dict(alg="entropy", n=16, steps=8, block=4),
    dict(alg="entropy", n=9, steps=9, temperature=0.4, top_p=0.95, seed=11),
    dict(alg="entropy", n=9, steps=5, temperature=0.5, top_k=5, seed=5),
    dict(alg="maskgit_plus", n=10, steps=10, alg_temp=0.5, seed=9),
    dict(alg="low_confidence", n=8, steps=8, block=4),
    dict(alg="low_confidence", n=12, steps=6, block=4, temperature=1.0, seed=7),
    dict(alg="p2", n=8, steps=8),
    dict(alg="p2", n=10, steps=5, temperature=0.6, seed=2),
    dict(alg="threshold", n=16, threshold=0.2),
    dict(alg="threshold", n=16, threshold=0.15, block=4),
    dict(alg="factor", n=16, factor=6.0, block=8),
    dict(alg="entropy", n=8, steps=8, candidates=3, temperature=0.5, seed=4),
    dict(alg="entropy", n=12, steps=12, max_steps=4),
    dict(alg="entropy", n=12, steps=12, eos_penalty=3.0),
]

FLAGS = dict(n="--n", steps="--steps", block="--block", temperature="--temperature",
             top_p="--top-p", top_k="--top-k", alg_temp="--alg-temp", eps="--eps",
             threshold="--threshold", factor="--factor", candidates="--candidates",
             seed="--seed", max_steps="--max-steps", eos_penalty="--eos-penalty")


def main():
    exe = sys.argv[1]
    fails = 0
    for c in CASES:
        args = [exe, "--alg", c["alg"]]
        for k, v in c.items():
            if k != "alg":
                args += [FLAGS[k], str(v)]
        got = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
        want, steps = ref.diffuse(INFO, toy_logits, [1, 2, 3, 4, 5], [10, 11, 12], c)
        ok = got["cands"] == want
        print(("ok  " if ok else "FAIL"), c, "steps", got["steps_run"], steps)
        if not ok:
            print("  infilld  ", got["cands"])
            print("  reference", want)
            fails += 1
    print(f"{len(CASES) - fails}/{len(CASES)} cases identical")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
