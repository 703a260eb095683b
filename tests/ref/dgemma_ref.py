#!/usr/bin/python3
"""Independent float64 numpy reference for DiffusionGemma.

Written from shared/design/DIFFUSIONGEMMA.md (§2 architecture, §2.3 attention regimes,
§2.4 RoPE, §2.5 embeddings, self-conditioning and head, §3 the entropy-bound sampler),
not from the engine. It reads the Hugging Face layout that tests/gen/mkdgemma.py writes.
Only the safetensors reader and the counter-based noise are shared with
tests/ref/reference.py; both are formats, not the model.

API:
  m = load(dir)
  c = Cache(m)                              the per-layer K/V after RoPE
  encode(m, c, ids) -> logits [n, V]        causal; appends to c
  decode(m, c, canvas, sc=None) -> logits   bidirectional; c is only read
  generate(m, prompt, params) -> dict       the EB sampler over a fixed noise stream
"""

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference  # noqa: E402  (read_weights, noise_uniform)


class Model:
    pass


def load(model_dir):
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = json.load(f)
    tc = cfg.get("text_config", cfg)
    w = {k: np.asarray(v, dtype=np.float64) for k, v in reference.read_weights(model_dir).items()}
    m = Model()
    m.cfg, m.tc, m.w = cfg, tc, w
    m.d = tc["hidden_size"]
    m.n_layer = tc["num_hidden_layers"]
    m.H = tc["num_attention_heads"]
    m.kv = [tc["num_key_value_heads"], tc.get("num_global_key_value_heads") or tc["num_key_value_heads"]]
    m.hd = [tc["head_dim"], tc.get("global_head_dim") or tc["head_dim"]]
    m.window = tc["sliding_window"]
    m.eps = tc["rms_norm_eps"]
    m.cap = tc.get("final_logit_softcapping") or 0.0
    m.moe = bool(tc.get("enable_moe_block"))
    m.k_eq_v = bool(tc.get("attention_k_eq_v"))
    m.E = tc.get("num_experts")
    m.K = tc.get("top_k_experts")
    m.F = tc.get("moe_intermediate_size")
    m.V = tc["vocab_size"]
    # ids with a token (max id + 1, as the engine's tokenizer counts): the sampler
    # never draws the embedding rows above them
    m.Vt = m.V
    tp = os.path.join(model_dir, "tokenizer.json")
    if os.path.exists(tp):
        with open(tp, encoding="utf-8") as f:
            tj = json.load(f)
        voc = tj["model"].get("vocab") or {}
        ids = list(voc.values()) if isinstance(voc, dict) else list(range(len(voc)))
        ids += [a["id"] for a in tj.get("added_tokens", [])]
        if ids:
            m.Vt = min(max(ids) + 1, m.V)
    m.canvas = cfg.get("canvas_length", 256)
    m.glob = [t == "full_attention" for t in tc["layer_types"]]
    rp = tc["rope_parameters"]
    m.inv = [inv_freq(m.hd[0], rp["sliding_attention"]["rope_theta"], 1.0),
             inv_freq(m.hd[1], rp["full_attention"]["rope_theta"],
                      rp["full_attention"].get("partial_rotary_factor", 1.0))]
    m.pad, m.eos = 0, 1
    return m


def inv_freq(hd, theta, partial):
    """Rotate-half pairs (i, i + hd/2); proportional RoPE rotates only the first
    int(partial * hd / 2) pairs, with the exponent over the full head dim."""
    rot = int(partial * hd / 2)
    i = np.arange(hd // 2, dtype=np.float64)
    return np.where(i < rot, float(theta) ** (-2.0 * i / hd), 0.0)


def rope(x, pos, inv):
    """x [n, heads, hd], pos [n]."""
    half = x.shape[-1] // 2
    ang = np.asarray(pos, dtype=np.float64)[:, None] * inv[None, :]
    c, s = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * c - b * s, b * c + a * s], axis=-1)


def rms(x, w=None, eps=1e-6):
    y = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    return y * w if w is not None else y


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))


def geglu(x, wg, wu, wd):
    return (gelu_tanh(x @ wg.T) * (x @ wu.T)) @ wd.T


class Cache:
    def __init__(self, m):
        self.k = [np.zeros((0, m.kv[g], m.hd[g])) for g in (int(x) for x in m.glob)]
        self.v = [np.zeros((0, m.kv[g], m.hd[g])) for g in (int(x) for x in m.glob)]

    def __len__(self):
        return self.k[0].shape[0]


def key_mask(m, glob, decoder, L, n):
    """[n, L + n] boolean: which keys (cache rows 0..L-1, then the pass's rows)
    each query of a pass starting at position L may see (§2.3)."""
    q = np.arange(n)[:, None]
    j = np.arange(L + n)[None, :]
    if decoder:
        cached = j < L
        ok = np.where(cached, True if glob else (j >= L - (m.window - 1)), True)
        return np.broadcast_to(ok, (n, L + n)).copy()
    P = L + q                      # query position; key j sits at position j
    ok = j <= P
    if not glob:
        ok &= (P - j) < m.window
    return ok


def layer(m, c, i, x, L, decoder):
    w = m.w
    p = "model.decoder.layers.%d." % i
    g = int(m.glob[i])
    H, kv, hd = m.H, m.kv[g], m.hd[g]
    n = x.shape[0]
    pos = L + np.arange(n)
    a = rms(x, w[p + "input_layernorm.weight"], m.eps)
    q = (a @ w[p + "self_attn.q_proj.weight"].T).reshape(n, H, hd)
    kr = (a @ w[p + "self_attn.k_proj.weight"].T).reshape(n, kv, hd)
    if g and m.k_eq_v:
        vr = kr.copy()              # global layers: V is the raw K projection
    else:
        vr = (a @ w[p + "self_attn.v_proj.weight"].T).reshape(n, kv, hd)
    q = rope(rms(q, w[p + "self_attn.q_norm.weight"], m.eps), pos, m.inv[g])
    k = rope(rms(kr, w[p + "self_attn.k_norm.weight"], m.eps), pos, m.inv[g])
    v = rms(vr, None, m.eps)
    K = np.concatenate([c.k[i], k], axis=0)
    Vv = np.concatenate([c.v[i], v], axis=0)
    if not decoder:
        c.k[i], c.v[i] = K, Vv
    mask = key_mask(m, g, decoder, L, n)
    grp = H // kv
    o = np.zeros((n, H, hd))
    for h in range(H):
        s = q[:, h, :] @ K[:, h // grp, :].T          # scale 1.0
        s = np.where(mask, s, -np.inf)
        s = np.exp(s - s.max(axis=1, keepdims=True))
        s /= s.sum(axis=1, keepdims=True)
        o[:, h, :] = s @ Vv[:, h // grp, :]
    o = o.reshape(n, H * hd) @ w[p + "self_attn.o_proj.weight"].T
    x = x + rms(o, w[p + "post_attention_layernorm.weight"], m.eps)
    dn = geglu(rms(x, w[p + "pre_feedforward_layernorm.weight"], m.eps), w[p + "mlp.gate_proj.weight"],
               w[p + "mlp.up_proj.weight"], w[p + "mlp.down_proj.weight"])
    if m.moe:
        dn = rms(dn, w[p + "post_feedforward_layernorm_1.weight"], m.eps)
        r = rms(x, None, m.eps) * w[p + "router.scale"] * m.d ** -0.5
        logits = r @ w[p + "router.proj.weight"].T
        pr = np.exp(logits - logits.max(axis=1, keepdims=True))
        pr /= pr.sum(axis=1, keepdims=True)
        b2 = rms(x, w[p + "pre_feedforward_layernorm_2.weight"], m.eps)
        gu, dw = w[p + "experts.gate_up_proj"], w[p + "experts.down_proj"]
        pes = w[p + "router.per_expert_scale"]
        mo = np.zeros_like(x)
        for t in range(n):
            top = sorted(range(m.E), key=lambda e: (-pr[t, e], e))[: m.K]
            tw = pr[t, top] / pr[t, top].sum()
            for e, we in zip(top, tw):
                hgu = gu[e] @ b2[t]
                h2 = gelu_tanh(hgu[: m.F]) * hgu[m.F:]
                mo[t] += we * pes[e] * (dw[e] @ h2)
        dn = dn + rms(mo, w[p + "post_feedforward_layernorm_2.weight"], m.eps)
    x = x + rms(dn, w[p + "post_feedforward_layernorm.weight"], m.eps)
    if decoder:
        s = w[p + "layer_scalar"][0]
    else:
        s = w["model.encoder.language_model.layers.%d.layer_scalar" % i][0]
    return x * s


def head(m, x):
    h = rms(x, m.w["model.decoder.norm.weight"], m.eps)
    z = h @ m.w["model.decoder.embed_tokens.weight"].T  # tied
    return m.cap * np.tanh(z / m.cap) if m.cap else z


def embed(m, ids):
    return m.w["model.decoder.embed_tokens.weight"][np.asarray(ids)] * np.sqrt(m.d)


def encode(m, c, ids):
    L = len(c)
    x = embed(m, ids)
    for i in range(m.n_layer):
        x = layer(m, c, i, x, L, False)
    return head(m, x)


def decode(m, c, canvas, sc=None):
    L = len(c)
    e = embed(m, canvas)
    if sc is not None:
        w = m.w
        p = "model.decoder.self_conditioning."
        z = np.asarray(sc, dtype=np.float64)
        pr = np.exp(z - z.max(axis=1, keepdims=True))
        pr /= pr.sum(axis=1, keepdims=True)
        soft = pr @ w["model.decoder.embed_tokens.weight"] * np.sqrt(m.d)
        nrm = rms(soft, w[p + "pre_norm.weight"], m.eps)
        e = e + geglu(nrm, w[p + "gate_proj.weight"], w[p + "up_proj.weight"], w[p + "down_proj.weight"])
    x = rms(e, None, m.eps)
    for i in range(m.n_layer):
        x = layer(m, c, i, x, L, True)
    return head(m, x)


# ---- the entropy-bound sampler (§3), noise counters as in engine/dgemma.h ----------------------


def uniform_id(seed, step, pos, V):
    """A uniform vocabulary id: the id stream has bit 31 of the step counter set."""
    return min(int(reference.noise_uniform(seed, step | 0x80000000, pos, 0) * V), V - 1)


def gumbel_draw(z, seed, step, pos):
    """A draw from softmax(z): argmax_v z_v - log(-log u_v), u_v = noise(step, pos, v)."""
    u = reference.noise_uniform_row(seed, step, pos, len(z))
    return int(np.argmax(z - np.log(-np.log(u))))


def generate(m, prompt, P, trace=None, canvases=None):
    """P: dict max_steps, t_min, t_max, entropy_bound, stability, confidence,
    max_new_tokens, seed, stop_ids, self_cond, optionally pin (one id per output
    position, -1 free: the suffix-pinning infill mode, §4.1 (b)). A pinned position
    holds its id in every canvas the decoder reads and in the committed canvas; it
    spends no entropy budget and is left out of the stability check, the mean entropy
    and the stop-id search. Returns dict tokens, n_text, steps, hit_stop, last_stop
    ('steps' | 'confident'); trace gets (canvas, step, argmax) and, in canvases,
    (canvas, step, x) for every decoder pass."""
    N, n, V = P["max_steps"], m.canvas, m.Vt
    c = Cache(m)
    if prompt:
        encode(m, c, prompt)
    out, steps, hit, last = [], 0, False, "steps"
    n_canvas = -(-P["max_new_tokens"] // n)
    n_text = None
    for b in range(n_canvas):
        g0 = b * (N + 1)
        allpin = P.get("pin") or []
        pin = [allpin[b * n + i] if b * n + i < len(allpin) else -1 for i in range(n)]
        free = [i for i in range(n) if pin[i] < 0]
        x = [pin[i] if pin[i] >= 0 else uniform_id(P["seed"], g0, i, V) for i in range(n)]
        hist = [-1] * n
        stable, sc, last = 0, None, "steps"
        for s in range(N, 0, -1):
            g = g0 + (N - s + 1)
            t = P["t_min"] + (P["t_max"] - P["t_min"]) * s / N
            if canvases is not None:
                canvases.append((b, N - s + 1, list(x)))
            z = decode(m, c, x, sc) / t
            steps += 1
            amax, H, samp = [], [], []
            for i in range(n):
                zi = z[i][:V]
                amax.append(int(np.argmax(zi)))
                p = np.exp(zi - zi.max())
                p /= p.sum()
                nz = p[p > 0]
                H.append(float(-(nz * np.log(nz)).sum()))
                samp.append(gumbel_draw(zi, P["seed"], g, i))
            amax = [pin[i] if pin[i] >= 0 else amax[i] for i in range(n)]
            order = sorted(free, key=lambda i: (H[i], i))
            cum = 0.0
            for i in order:
                acc = cum <= P["entropy_bound"]
                cum += H[i]
                x[i] = samp[i] if acc else uniform_id(P["seed"], g, i, V)
            stable = stable + 1 if amax == hist else 0
            hist = amax
            sc = z if P["self_cond"] else None
            if trace is not None:
                trace.append((b, N - s + 1, list(amax)))
            meanH = sum(H[i] for i in free) / len(free) if free else 0.0
            if (P["stability"] == 0 or stable >= P["stability"]) and meanH < P["confidence"]:
                last = "confident"
                break
        canvas = list(hist)
        first = next((i for i, tok in enumerate(canvas) if tok in P["stop_ids"] and pin[i] < 0), None)
        if first is not None:
            canvas = [tok if i <= first or pin[i] >= 0 else m.pad for i, tok in enumerate(canvas)]
            out += canvas
            hit = True
            n_text = b * n + first
            break
        out += canvas
        if b + 1 < n_canvas:
            encode(m, c, canvas)
    if n_text is None:
        n_text = len(out)
    return {"tokens": out, "n_text": n_text, "steps": steps, "hit_stop": hit, "last_stop": last}
