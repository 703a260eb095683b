"""Parity of `infilld infill --alg dreamon --json` with the reference DreamOn
sampler (sampler_ref.dreamon, written from MODELS.md §2.3) on a tiny peaked
DreamOn checkpoint, with logits from the independent float64 numpy forward
(tests/ref/reference.py). Greedy exact mode must give identical hole tokens and
text.

A peaked checkpoint never predicts EOS or <|expand|>, so the fixture plants
them: the LM-head row of <|expand|> copies (slightly louder) the row of the
target of bucket B_EXPAND, and EOS that of bucket B_EOS (see mkcheckpoint.py
--peaked). Rows whose nearest visible token falls in those buckets then predict
expand or EOS, and the reference's trace must show at least one expand and one
delete, so the test cannot pass vacuously.

Usage: dreamon_parity.py INFILLD WORKDIR   (exit 77 = skipped)"""

import json
import os
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from parity_common import (GEN, PREFIX, SHAPE, SUFFIX, TOKENIZER,  # noqa: E402,F401
                           logits_fn_for, reference, script_args)
import sampler_ref as ref  # noqa: E402

B_EXPAND = 6  # bucket of the tokens next to the hole (470, 198)
B_EOS = 2     # bucket of target[6] and of its own target: filled text ends in EOS


def checkpoint(workdir):
    base = os.path.join(workdir, "dreamon-peaked")
    if not os.path.exists(os.path.join(base, "config.json")):
        subprocess.run([sys.executable, GEN, "--family", "dreamon", "--out", base, "--peaked"] +
                       SHAPE, check=True, capture_output=True)
    out = os.path.join(workdir, "dreamon-expand-eos")
    if os.path.exists(os.path.join(out, "config.json")):
        return out
    tmp = out + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(base, tmp)
    with open(os.path.join(base, "peaked.json")) as f:
        targets = json.load(f)["targets"]
    with open(os.path.join(base, "config.json")) as f:
        cfg = json.load(f)
    eos, expand = cfg["eos_token_id"], 151667
    st = os.path.join(tmp, "model.safetensors")
    with open(st, "r+b") as f:
        hlen = int.from_bytes(f.read(8), "little")
        hdr = json.loads(f.read(hlen))
        meta = hdr["lm_head.weight"]
        assert meta["dtype"] == "F32", meta
        rows, cols = meta["shape"]
        start = 8 + hlen + meta["data_offsets"][0]

        def row(i):
            f.seek(start + i * cols * 4)
            return np.frombuffer(f.read(cols * 4), dtype="<f4").copy()

        def put(i, v):
            f.seek(start + i * cols * 4)
            f.write(np.asarray(v, dtype="<f4").tobytes())
        put(expand, row(targets[B_EXPAND]) * np.float32(1.05))
        put(eos, row(targets[B_EOS]) * np.float32(1.05))
    os.rename(tmp, out)
    return out


def byte_decoder():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


def decoder(mdir):
    """ids -> text: byte-level BPE, every added token (EOS, mask, expand, BOS,
    ...) dropped, as docs/SAMPLERS.md §4 says for the completion text."""
    with open(os.path.join(mdir, "tokenizer.json"), encoding="utf-8") as f:
        tok = json.load(f)
    inv = {i: s for s, i in tok["model"]["vocab"].items()}
    added = {a["id"] for a in tok.get("added_tokens", [])}
    bd = byte_decoder()

    def decode(ids):
        out = bytearray()
        for t in ids:
            if t in added or t not in inv:
                continue
            out += bytes(bd[ch] for ch in inv[t])
        return out.decode("utf-8", errors="replace")
    return decode




FLAGS = dict(n="--n", steps="--steps", max_hole="--max-hole", seed="--seed")

# Greedy (T = 0, entropy confidence), exact mode; (prefix, suffix, params).
# Small max holes keep it fast and make the window fill up, so expand is also
# suppressed on the way. Noted: what each case exercises in the reference.
P2, S1 = PREFIX[:4], SUFFIX[3:]
CASES = [
    (PREFIX, SUFFIX, dict(n=4, max_hole=8)),      # expands until W = max_tokens, deletes
    (P2, SUFFIX[5:], dict(n=3, max_hole=10)),     # 10 expands: the budget runs out
    (P2, SUFFIX[4:], dict(n=3, max_hole=10)),     # expands and deletes, 7 tokens left
    (PREFIX[:5], S1, dict(n=6, max_hole=12)),     # pad_eos_to_right changes the result
    (PREFIX, SUFFIX, dict(n=4, max_hole=8, steps=5)),  # the final commit-all step
]


def run_infilld(exe, mdir, prefix, suffix, case):
    args = [exe, "infill", "--model", mdir, "--prefix-ids", ",".join(map(str, prefix)),
            "--suffix-ids", ",".join(map(str, suffix)), "--alg", "dreamon", "--mode", "exact",
            "--json", "--device", "cpu"]
    for k, v in case.items():
        args += [FLAGS[k], str(v)]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    exe, workdir = script_args(__doc__)
    mdir = checkpoint(workdir)
    model = reference.load(mdir)
    info = dict(family="dream", bos=int(model.bos_id), eos=int(model.eos_id),
                pad=-1 if model.pad_id is None else int(model.pad_id), mask=int(model.mask_id),
                expand=151667)
    decode = decoder(mdir)
    fails = 0
    n_expand = n_delete = 0
    for prefix, suffix, case in CASES:
        trace = []
        want, steps = ref.dreamon(info, logits_fn_for(model, True), prefix, suffix, dict(case), trace)
        e = sum(1 for k, _ in trace if k == "expand")
        d = sum(1 for k, _ in trace if k == "delete")
        n_expand += e
        n_delete += d
        got = run_infilld(exe, mdir, prefix, suffix, case)
        ok = got["tokens"] == want and got["text"] == decode(want)
        print(("ok  " if ok else "FAIL"), len(prefix), len(suffix), case, "%d steps, %d expands, %d deletes, %d tokens" %
              (steps, e, d, len(want)))
        if not ok:
            print("   infilld  ", got["tokens"], repr(got["text"]))
            print("   reference", want, repr(decode(want)))
            fails += 1
    if n_expand == 0 or n_delete == 0:
        print("FAIL: the cases exercise %d expands and %d deletes (need both)" %
              (n_expand, n_delete))
        fails += 1
    print("%d/%d dreamon cases identical (%d expands, %d deletes in all)" %
          (len(CASES) - min(fails, len(CASES)), len(CASES), n_expand, n_delete))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
