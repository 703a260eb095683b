"""Reference diffusion samplers, written from docs/SAMPLERS.md (MODELS.md §3)
independently of the C code. Decisions only: the caller supplies raw logit
rows, the pick (Dream or Gumbel) and the commit rules run here in float64 with
the confidences rounded to float32 where the C API carries float32.

Used by toy_parity.py (logits from the toy hash model) and, where a real
checkpoint and tests/ref/reference.py exist, by model_parity.py. dreamon()
(DreamOn's expand/delete sampler, from MODELS.md §2.3) is checked by
dreamon_parity.py."""

import math
import struct

import numpy as np

MASK64 = (1 << 64) - 1
V_ORIGIN = 0xFFFFFFFF
V_ALGTEMP = 0xFFFFFFFE


def f32(x):
    return float(np.float32(x))


def _mix(z):
    z = (z + 0x9E3779B97F4A7C15) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def noise_uniform(seed, step, position, v):
    """engine/sample/noise.c: u in (0, 1) for (seed, step, position, v)."""
    k = ((step << 32) | position) & MASK64
    h = _mix((seed & MASK64) ^ _mix(k ^ _mix(v)))
    return ((h >> 11) + 0.5) * 2.0 ** -53


def timestep(j, steps, eps):
    """torch.linspace(1, eps, steps + 1, dtype=float32)[j]."""
    n = steps + 1
    if n <= 1:
        return np.float32(1.0)
    step = np.float32(np.float32(eps) - np.float32(1.0)) / np.float32(n - 1)
    step = np.float32(step)
    if j < n // 2:
        return np.float32(np.float32(1.0) + np.float32(step * np.float32(j)))
    return np.float32(np.float32(eps) - np.float32(step * np.float32(n - j - 1)))


def transfer_count(n, j, steps, eps):
    if j >= steps - 1:
        return n
    t = timestep(j, steps, eps)
    s = timestep(j + 1, steps, eps)
    frac = np.float32(np.float32(1.0) - np.float32(s / t))
    return int(np.float32(np.float32(n) * frac))


def _softmax(z):
    z = np.asarray(z, dtype=np.float64)
    mx = np.max(z)
    e = np.where(np.isneginf(z), 0.0, np.exp(z - mx))
    return e / e.sum()


def _stats(P, x0):
    top2 = np.partition(P, -2)[-2:]
    ne = float(np.sum(P * np.log(P + 1e-10)))
    return (int(x0), f32(P[x0]), f32(float(top2[1]) - float(top2[0])), f32(ne))


def noise_row(seed, step, position, V):
    """noise_uniform for v = 0..V-1, vectorised (uint64 arithmetic wraps)."""
    def mix(z):
        z = z + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))
    with np.errstate(over="ignore"):
        v = np.arange(V, dtype=np.uint64)
        k = np.uint64(((step << 32) | position) & MASK64)
        h = mix(np.uint64(seed & MASK64) ^ mix(k ^ mix(v)))
    return ((h >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0 ** -53


def pick(logits, sp, flat_pos):
    """Per-row proposal (token, prob, margin, neg_entropy), per docs/SAMPLERS.md.

    sp: dict(pick='dream'|'gumbel', temperature, top_p, top_k, seed, step, bias={id: b})."""
    l = np.array(logits, dtype=np.float64)
    for vid, b in sp.get("bias", {}).items():
        l[vid] += b
    T = sp["temperature"]
    V = l.shape[0]
    if sp["pick"] == "gumbel":
        P = _softmax(l)
        if T > 0:
            u = noise_row(sp["seed"], sp["step"], flat_pos, V)
            return _stats(P, int(np.argmax(l + T * -np.log(-np.log(u)))))
        return _stats(P, int(np.argmax(l)))
    z = l / T if T > 0 else l.copy()
    top_p = sp.get("top_p", 1.0)
    if 0 < top_p < 1:
        order = np.lexsort((np.arange(V), -z))  # z descending, lower id first on ties
        Pz = _softmax(z)[order]
        before = np.cumsum(Pz) - Pz
        drop = np.zeros(V, dtype=bool)
        drop[order] = before > top_p
        z[drop] = -np.inf
    top_k = sp.get("top_k", 0)
    if 0 < top_k < V:
        kth = np.sort(z)[::-1][top_k - 1]
        z[z < kth] = -np.inf
    P = _softmax(z)
    if T > 0:
        u = noise_uniform(sp["seed"], sp["step"], flat_pos, 0)
        cum = np.cumsum(P)
        idx = np.nonzero((cum > u) & (P > 0))[0]
        best = int(idx[0]) if len(idx) else int(np.nonzero(P > 0)[0][-1])
        return _stats(P, best)
    return _stats(P, int(np.argmax(P)))


def layout(info, prefix, suffix, n):
    fam = info["family"]
    lead = tail = None
    if fam == "dream":
        lead = info["bos"] if info["bos"] >= 0 else info["eos"]
        tail = info["eos"]
    elif fam == "open_dcoder":
        if not prefix:
            lead = info["bos"] if info["bos"] >= 0 else info["eos"]
    else:  # llada
        lead = info["bos"] if info["bos"] >= 0 else None
    seq = ([lead] if lead is not None else []) + list(prefix)
    hs = len(seq)
    seq += [info["mask"]] * n + list(suffix) + ([tail] if tail is not None else [])
    return seq, hs


DREAM_SCHED = ("origin", "maskgit_plus", "topk_margin", "entropy")


def conf_of(alg, row):
    if alg == "topk_margin":
        return row[2]
    if alg in ("entropy", "dreamon"):
        return row[3]
    return row[1]


def sort_desc(items):
    """items: (key float32, position). Key descending, lower position first."""
    return sorted(items, key=lambda kp: (-kp[0], kp[1]))


def diffuse(info, logits_fn, prefix, suffix, P):
    """Fixed-canvas samplers. logits_fn(seq, pos) -> raw logit row predicting pos
    (shift already applied). P: dict of the params of eng_diff_params. Returns
    the hole of every batch row."""
    alg = P["alg"]
    N = P["n"]
    C = P.get("candidates", 1)
    mask = info["mask"]
    base, hs = layout(info, prefix, suffix, N)
    L = len(base)
    S = P.get("steps", 0) or N
    B = P.get("block", 0)
    if B <= 0:
        B = 32 if alg in ("threshold", "factor") else N
    if B > N or alg == "p2":
        B = N
    nb = (N + B - 1) // B
    eps = P.get("eps", 1e-3)
    max_steps = P.get("max_steps", 0)
    seqs = [list(base) for _ in range(C)]
    st = [dict(blk=0, j=0, m0=min(B, N), done=False) for _ in range(C)]
    bias = {mask: -math.inf}
    if info.get("expand", -1) >= 0:
        bias[info["expand"]] = -math.inf
    sp = dict(pick="gumbel" if (alg == "low_confidence" or info["family"] == "llada") else "dream",
              temperature=P.get("temperature", 0.0), top_p=P.get("top_p", 1.0) or 1.0,
              top_k=P.get("top_k", 0), seed=P.get("seed", 0), bias=bias)
    if P.get("eos_penalty", 0) > 0:
        pass  # applied per step below

    def block_steps(blk):
        sb = S // nb + (1 if blk < S % nb else 0)
        return max(sb, 1)

    def masks(b, lo, hi):
        return sum(1 for i in range(lo, hi) if seqs[b][i] == mask)

    step = 0
    while True:
        for b in range(C):
            if not st[b]["done"] and masks(b, hs, hs + N) == 0:
                st[b]["done"] = True
        if all(s["done"] for s in st):
            break
        final = max_steps > 0 and step >= max_steps - 1
        sp["step"] = step
        sp["bias"] = dict(bias)
        lam = P.get("eos_penalty", 0.0)
        if lam > 0:
            frac = max(f32(1.0 - f32(step) / f32(S)), 0.0)
            bb = f32(-lam * frac)
            if bb != 0:
                sp["bias"][info["eos"]] = sp["bias"].get(info["eos"], 0.0) + bb
                if info["pad"] >= 0 and info["pad"] != info["eos"]:
                    sp["bias"][info["pad"]] = sp["bias"].get(info["pad"], 0.0) + bb
        # Plan every row from the canvas as it is before this step.
        plans = []
        for b in range(C):
            s = st[b]
            if s["done"]:
                plans.append(None)
                continue
            bs = hs + s["blk"] * B
            be = min(bs + B, hs + N)
            if final or alg == "p2":
                bs, be = hs, hs + N
            sb, j = block_steps(s["blk"]), s["j"]
            if alg == "p2":
                plans.append((list(range(bs, be)), -1))
            elif alg == "origin" and not final:
                p = np.float32(1.0)
                if j < sb - 1:
                    t = timestep(j, sb, eps)
                    sn = timestep(j + 1, sb, eps)
                    p = np.float32(np.float32(1.0) - np.float32(sn / t))
                pos = [i for i in range(bs, be) if seqs[b][i] == mask and
                       noise_uniform(sp["seed"], step, b * L + i, V_ORIGIN) < float(p)]
                plans.append((pos, -1))
            else:
                pos = [i for i in range(bs, be) if seqs[b][i] == mask]
                m = len(pos)
                if final:
                    k = -1
                elif alg in DREAM_SCHED:
                    k = transfer_count(m, j, sb, eps)
                elif alg == "low_confidence":
                    k = s["m0"] // sb + (1 if j < s["m0"] % sb else 0)
                else:
                    k = 1
                if k == 0:
                    pos = []
                plans.append((pos, k))
        rows = {}
        for b in range(C):
            if plans[b] is None:
                continue
            for i in plans[b][0]:
                rows[(b, i)] = pick(logits_fn(seqs[b], i), sp, b * L + i)
        for b in range(C):
            if plans[b] is None or not plans[b][0]:
                continue
            pos, k = plans[b]
            if alg == "p2" and not final:
                i_ = min(step, S - 1)
                n_remask = ((S - i_ - 1) * N) // S
                order = sorted(pos, key=lambda i: (rows[(b, i)][1], i))
                for q, i in enumerate(order):
                    if q < n_remask:
                        seqs[b][i] = mask
                    elif seqs[b][i] == mask:
                        seqs[b][i] = rows[(b, i)][0]
                continue
            if k < 0:
                for i in pos:
                    seqs[b][i] = rows[(b, i)][0]
                continue
            keys = []
            for i in pos:
                c = conf_of(alg, rows[(b, i)])
                if P.get("alg_temp", 0) > 0 and alg in DREAM_SCHED:
                    u = noise_uniform(sp["seed"], step, b * L + i, V_ALGTEMP)
                    c = f32(float(np.float32(c)) / float(np.float32(P["alg_temp"]))
                            - math.log(-math.log(u)))
                keys.append((c, i))
            order = sort_desc(keys)
            if alg == "threshold":
                tau = f32(P.get("threshold", 0.9))
                chosen = [order[0][1]] + [i for (_, i) in order[1:] if rows[(b, i)][1] >= tau]
            else:
                if alg == "factor":
                    f = np.float32(P.get("factor", 1.0))
                    k = 1
                    while k < len(order) and order[k][0] >= f32(np.float32(1.0) - f / np.float32(k + 2)):
                        k += 1
                chosen = [i for (_, i) in order[:k]]
            for i in chosen:
                seqs[b][i] = rows[(b, i)][0]
        step += 1
        for b in range(C):
            s = st[b]
            if s["done"]:
                continue
            s["j"] += 1
            if masks(b, hs, hs + N) == 0:
                s["done"] = True
                continue
            if alg == "p2":
                continue
            sched = alg in DREAM_SCHED or alg == "low_confidence"
            bs = hs + s["blk"] * B
            be = min(bs + B, hs + N)
            while s["blk"] < nb and (masks(b, bs, be) == 0 or (sched and s["j"] >= block_steps(s["blk"]))):
                s["blk"] += 1
                s["j"] = 0
                bs = hs + s["blk"] * B
                be = min(bs + B, hs + N)
                s["m0"] = masks(b, bs, be) if s["blk"] < nb else 0
            if s["blk"] >= nb:
                s["blk"] = nb - 1
                s["j"] = block_steps(s["blk"]) - 1
        if final:
            break
    return [seq[hs:hs + N] for seq in seqs], step


def dreamon(info, logits_fn, prefix, suffix, P, trace=None):
    """DreamOn's variable-length expand/delete sampler, batch of one, written
    from MODELS.md §2.3 (DreamLM/DreamOn eval/generator.py as released: deletion
    via EOS, exactly one commit per step). logits_fn(seq, pos) -> raw logit row
    predicting pos for the sequence `seq` (the window [0, W) only: slots past W
    are outside attention, so the caller sees just the real sequence).

    P: n (min_gen_len), max_hole (max_gen_len; 0 = max(64, n)), budget (0 = the
    max hole), steps (0 = 4 * max hole), temperature, top_p, top_k, alg_temp,
    seed. Returns (hole tokens, steps run). `trace`, a list, receives one
    (kind, position) per expand and delete.

    Where infilld documents a deliberate difference (docs/SAMPLERS.md §5) the
    documented behaviour is followed, marked "infilld:" below."""
    mask, eos, expand = info["mask"], info["eos"], info["expand"]
    n_min = P["n"]
    # The released code assumes min_gen_len <= max_gen_len; a smaller max hole
    # is taken as the initial hole here.
    H = P.get("max_hole", 0)
    n_max = max(H, n_min) if H > 0 else max(64, n_min)
    x, hs = layout(info, prefix, suffix, n_min)  # [bos] prefix [mask]*min suffix [eos]
    len_input = len(x)
    # infilld: max_tokens = len + H - N (SAMPLERS §5), without the released
    # min(2048, ...) cap.
    max_tokens = len_input + n_max - n_min
    x = x + [mask] * (max_tokens - len_input)
    n_gen = n_min
    budget = P.get("budget", 0) or n_max
    # infilld: a step limit (default 4 * max hole) whose last step commits every
    # remaining mask with expand suppressed; the released loop has no limit.
    steps = P.get("steps", 0) or 4 * n_max
    sp = dict(pick="dream", temperature=P.get("temperature", 0.0),
              top_p=P.get("top_p", 1.0) or 1.0, top_k=P.get("top_k", 0), seed=P.get("seed", 0))
    step = 0
    while True:
        W = len_input - n_min + n_gen
        # Candidates: the masks inside the window. infilld proposes the hole
        # [hs, hs + n_gen), which holds every mask inside W (prefix and suffix
        # never do).
        cand = [i for i in range(W) if x[i] == mask]
        if not cand:
            break
        final = step >= steps - 1
        bias = {mask: -math.inf}  # infilld never emits the mask id
        if W == max_tokens or budget == 0 or final:
            bias[expand] = -1e9
        sp["step"] = step
        sp["bias"] = bias
        window = x[:W]
        rows = {i: pick(logits_fn(window, i), sp, i) for i in cand}
        was_mask = [t == mask for t in x]
        if final:
            for i in cand:
                x[i] = rows[i][0]
        else:
            # Exactly one commit: top confidence (entropy alg: neg_entropy),
            # lowest position on ties; alg_temp > 0 samples Gumbel-top-1 (that
            # path is not exercised by dreamon_parity.py, which is greedy).
            keys = []
            for i in cand:
                c = rows[i][3]
                if P.get("alg_temp", 0) > 0:
                    u = noise_uniform(sp["seed"], step, i, V_ALGTEMP)
                    c = f32(float(np.float32(c)) / float(np.float32(P["alg_temp"]))
                            - math.log(-math.log(u)))
                keys.append((c, i))
            best = sort_desc(keys)[0][1]
            x[best] = rows[best][0]
        # pad_eos_to_right: the first EOS turns every position at or after it
        # that was masked at the start of the step into EOS. infilld: the search
        # is limited to the hole (released: the whole x, whose trailing EOS and
        # padding masks it would rewrite and then delete again, with no effect).
        he = hs + n_gen
        first = next((i for i in range(hs, he) if x[i] == eos), None)
        if first is not None:
            for i in range(first, he):
                if was_mask[i]:
                    x[i] = eos
        # Expand, right to left: each expand token becomes two masks.
        for i in range(he - 1, hs - 1, -1):
            if x[i] == expand:
                x[i:i + 1] = [mask, mask]
                was_mask[i:i + 1] = [True, False]
                n_gen += 1
                budget -= 1
                he += 1
                if trace is not None:
                    trace.append(("expand", i))
        del x[max_tokens:]
        del was_mask[max_tokens:]
        # Delete: each EOS written this step leaves x; a mask goes on the end.
        for i in range(he - 1, hs - 1, -1):
            if x[i] == eos and was_mask[i]:
                del x[i]
                del was_mask[i]
                x.append(mask)
                was_mask.append(False)
                n_gen -= 1
                if trace is not None:
                    trace.append(("delete", i))
        step += 1
        if final:
            break
    return x[hs:hs + n_gen], step
