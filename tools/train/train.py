#!/usr/bin/python3
"""Masked-diffusion training of the default model (issue 13 §2).

  train.py --tokenizer tokenizer.json --corpus CACHE/corpus/train.jsonl --out RUNDIR
           [--resume | --init MODELDIR] [--threads 2] [--steps N] [model and batch options]

Objective, per sequence (mixed by --p-infill):
  infill  an editor-shaped request: a cursor drawn in a file (end of a typed line, inside
          a line, a blank line in a block, the line after a comment), a middle of one line,
          several lines or a few tokens; prefix, middle and suffix tokenized separately
          (as the pipeline does, so no merge crosses the hole), the prefix cut to 3/4 and
          the suffix to 1/4 of the context left; 0..--max-pads EOS pads appended to the
          middle (MODELS.md §2.2/2.3: a hole bigger than its middle ends in EOS); layout
          [<|beginoftext|>] prefix middle+pads suffix [<|endoftext|>]. The hole's tokens
          are masked with probability t, t ~ stratified U(0,1), at least one.
  mdm     plain masked diffusion over a window of a file: every token masked with
          probability t.
  ar      (--p-ar of the steps) autoregressive: a window as mdm draws it, causal
          attention, every token a target of the row before it (--ar-keep of them
          through the head) — the warm start Dream's recipe uses (an autoregressive model
          continued as a masked-diffusion one; the logit shift keeps each row's meaning).
Loss: cross-entropy on masked tokens with Dream's logit shift (row i-1 predicts token i,
so only the rows that predict a masked token go through the LM head), weighted by
--weighting: `elbo` = 1/t averaged over each sequence's maskable length (the MDM ELBO;
its variance at small t and short holes swamps a batch of 16 — a step of loss 30 among
steps of 6), `mean` = the plain mean over each sequence's masked tokens (the default:
a lower-variance estimate whose value reads directly as nats per masked token).

Every --ckpt-min minutes, and on SIGTERM, RUNDIR/resume.pt is overwritten (weights,
EMA weights, AdamW state, step, RNG, all float tensors in BF16) and RUNDIR/log.tsv gets
one line per --log-every steps: step, tokens seen, loss, lr, seconds. --resume continues
from resume.pt. kill -STOP/-CONT pause it.
"""

import argparse
import contextlib
import json
import math
import os
import random
import signal
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bpe  # noqa: E402
from model import Config, DreamLM, count_params  # noqa: E402

LANG_WEIGHTS = {"python": 0.25, "c": 0.2, "javascript": 0.15, "typescript": 0.05, "go": 0.2,
                "lua": 0.15}


class Specials:
    def __init__(self, tok):
        ids = {a["content"]: a["id"] for a in tok["added_tokens"]}
        self.eos = ids["<|endoftext|>"]
        self.bos = ids["<|beginoftext|>"]
        self.mask = ids["<|mask|>"]


def load_corpus(path, max_mb_per_lang, seed):
    by_lang = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            by_lang.setdefault(r["lang"], []).append(r["text"])
    rng = random.Random(seed)
    out = {}
    for lang, texts in sorted(by_lang.items()):
        rng.shuffle(texts)
        keep, n = [], 0
        for t in texts:
            if n > max_mb_per_lang * 1e6:
                break
            keep.append(t)
            n += len(t)
        out[lang] = keep
    return out


# ---- examples ------------------------------------------------------------------------

def line_bounds(text, pos):
    s = text.rfind("\n", 0, pos) + 1
    e = text.find("\n", pos)
    return s, (len(text) if e < 0 else e)


def pick_span(text, rng):
    """(cursor, end) character offsets of a middle, drawn like editor requests."""
    n = len(text)
    for _ in range(20):
        pos = rng.randrange(n)
        ls, le = line_bounds(text, pos)
        line = text[ls:le]
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        kind = rng.random()
        if kind < 0.35:  # end of a typed line: the rest of the line is the middle
            c = rng.randint(ls + indent, le)
            e = le
        elif kind < 0.55:  # inside a line: a few tokens, the rest stays in the suffix
            c = rng.randint(ls + indent, le)
            e = min(le, c + rng.randint(3, 40))
        elif kind < 0.85:  # whole lines from a line start (blank line / after a comment)
            c = ls + indent if rng.random() < 0.7 else ls
            k = 1 if rng.random() < 0.5 else rng.randint(2, 8)
            e = le
            for _ in range(k - 1):
                nx = text.find("\n", e + 1)
                if nx < 0:
                    break
                e = nx
        else:  # any span
            c = rng.randrange(n)
            e = min(n, c + rng.randint(1, 200))
        if text[c:e].strip():
            return c, e
    c = rng.randrange(n)
    return c, min(n, c + 20)


class Sampler:
    def __init__(self, corpus, enc, sp, args, seed):
        self.corpus = corpus
        self.langs = [l for l in LANG_WEIGHTS if corpus.get(l)]
        self.weights = [LANG_WEIGHTS[l] for l in self.langs]
        self.enc, self.sp, self.args = enc, sp, args
        self.rng = random.Random(seed)

    def text(self):
        lang = self.rng.choices(self.langs, self.weights)[0]
        return self.rng.choice(self.corpus[lang])

    def infill(self):
        a, sp, rng = self.args, self.sp, self.rng
        text = self.text()
        c, e = pick_span(text, rng)
        mid = self.enc.encode(text[c:e])[: a.max_middle]
        if not mid:
            mid = [sp.eos]
        pads = rng.randint(0, a.max_pads) if rng.random() < 0.85 else 0
        hole = mid + [sp.eos] * pads
        room = a.seq_len - 2 - len(hole)
        kp, ks = room - room // 4, room // 4
        # Enough characters for the token budget (about 2.5 chars a token, some slack).
        pre = self.enc.encode(text[max(0, c - kp * 6):c])
        suf = self.enc.encode(text[e:e + ks * 6])
        if len(suf) < ks:
            kp += ks - len(suf)
            ks = len(suf)
        if len(pre) < kp:
            ks = min(len(suf), ks + kp - len(pre))
            kp = len(pre)
        pre = pre[len(pre) - kp:] if kp > 0 else []
        suf = suf[:ks]
        ids = [sp.bos] + pre + hole + suf + [sp.eos]
        start = 1 + len(pre)
        return ids, start, start + len(hole)

    def mdm(self):
        a, sp, rng = self.args, self.sp, self.rng
        text = self.text()
        s = rng.randrange(max(1, len(text) - 200)) if rng.random() < 0.7 else 0
        ids = self.enc.encode(text[s:s + a.seq_len * 6])[: a.seq_len - 2]
        return [sp.bos] + ids + [sp.eos], 1, 1 + len(ids)

    def ar_batch(self, n):
        """ids, valid, target rows, weights for an autoregressive step: windows as mdm()
        draws them, every token a target (predicted by the row before it, the same
        shift the masked steps use), a random --ar-keep share of them through the head."""
        exs = [self.mdm() for _ in range(n)]
        L = max(len(x[0]) for x in exs)
        ids = torch.full((n, L), self.sp.eos, dtype=torch.long)
        valid = torch.zeros((n, L), dtype=torch.bool)
        for b, (x, _, _) in enumerate(exs):
            ids[b, :len(x)] = torch.tensor(x)
            valid[b, :len(x)] = True
        target = valid.clone()
        target[:, 0] = False
        target &= torch.rand((n, L)) < self.args.ar_keep
        weight = target.float() / target.float().sum(1, keepdim=True).clamp(min=1)
        return ids, valid, target, weight

    def batch(self, n):
        """ids, valid, masked ids, mask, weights: [n, L] tensors."""
        exs = [self.infill() if self.rng.random() < self.args.p_infill else self.mdm()
               for _ in range(n)]
        L = max(len(x[0]) for x in exs)
        ids = torch.full((n, L), self.sp.eos, dtype=torch.long)
        valid = torch.zeros((n, L), dtype=torch.bool)
        mask = torch.zeros((n, L), dtype=torch.bool)
        weight = torch.zeros((n, L))
        u = self.rng.random()
        for b, (x, s, e) in enumerate(exs):
            ids[b, :len(x)] = torch.tensor(x)
            valid[b, :len(x)] = True
            t = (b + u) / n  # stratified t over the batch
            t = (1 - 1e-3) * t + 1e-3
            m = torch.rand(e - s, generator=None) < t
            if not m.any():
                m[self.rng.randrange(e - s)] = True
            mask[b, s:e] = m
            if self.args.weighting == "elbo":
                weight[b, s:e] = m.float() / (t * (e - s))
            else:  # mean cross-entropy over the masked tokens of the sequence
                weight[b, s:e] = m.float() / float(m.sum())
        perm = torch.randperm(n)
        ids, valid, mask, weight = ids[perm], valid[perm], mask[perm], weight[perm]
        noisy = ids.masked_fill(mask, self.sp.mask)
        return ids, valid, noisy, mask, weight


def draw(sampler, a):
    """One training batch: ("ar", tensors) or ("mdm", tensors), by --p-ar."""
    if a.p_ar > 0 and sampler.rng.random() < a.p_ar:
        return "ar", sampler.ar_batch(a.batch)
    return "mdm", sampler.batch(a.batch)


class Batches(torch.utils.data.IterableDataset):
    """Batches drawn in --workers processes (a GPU step outruns one Python tokenizer);
    each worker has its own sampler seeded from the run's seed, the step it starts at
    and its worker index."""

    def __init__(self, corpus, enc, sp, a, seed):
        self.args = (corpus, enc, sp, a, seed)

    def __iter__(self):
        corpus, enc, sp, a, seed = self.args
        info = torch.utils.data.get_worker_info()
        wid = info.id if info else 0
        torch.manual_seed(seed * 7919 + wid)
        sampler = Sampler(corpus, enc, sp, a, seed * 7919 + wid)
        while True:
            yield draw(sampler, a)


def loss_fn(model, ids, valid, noisy, mask, weight, causal=False):
    h = model.hidden(noisy, valid, causal)
    # Dream's shift: token i is predicted from row i - 1; position 0 is never masked.
    bi, ti = mask.nonzero(as_tuple=True)
    logits = model.lm_head(h[bi, ti - 1])
    ce = torch.nn.functional.cross_entropy(logits.float(), ids[bi, ti], reduction="none")
    return (ce * weight[bi, ti]).sum() / ids.shape[0], int(valid.sum())


# ---- checkpoints --------------------------------------------------------------------

def to_bf16(obj):
    if torch.is_tensor(obj):
        return obj.to("cpu", torch.bfloat16) if obj.is_floating_point() else obj.cpu()
    if isinstance(obj, dict):
        return {k: to_bf16(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_bf16(v) for v in obj)
    return obj


def save(path, model, ema, opt, state):
    tmp = path + ".tmp"
    torch.save({"config": model.cfg.to_dict(), "model": to_bf16(model.state_dict()),
                "ema": to_bf16(ema), "opt": to_bf16(opt.state_dict()), "state": state}, tmp)
    os.replace(tmp, path)


def cpu_name():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return "%s, %d cores" % (line.split(":", 1)[1].strip(), os.cpu_count())
    except OSError:
        pass
    return "unknown CPU"


def lr_at(step, a):
    if step < a.warmup:
        return a.lr * (step + 1) / a.warmup
    # Constant, then a cosine decay over the last --decay fraction of --steps.
    d0 = a.steps * (1 - a.decay)
    if step < d0:
        return a.lr
    p = min(1.0, (step - d0) / max(1, a.steps - d0))
    return a.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * p)))


def main(argv):
    p = argparse.ArgumentParser(description="Masked-diffusion training (Dream layout)")
    p.add_argument("--tokenizer", required=True)
    p.add_argument("--corpus", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--resume", action="store_true")
    p.add_argument("--init", metavar="MODELDIR",
                   help="start from an exported model folder (model.safetensors, config.json, "
                   "train_state.json): its weights, a new optimizer and schedule, its "
                   "training history kept as the run's prior")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--kv-heads", type=int, default=2)
    p.add_argument("--ffn", type=int, default=704)
    p.add_argument("--seq-len", type=int, default=512)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--warmup", type=int, default=200)
    p.add_argument("--steps", type=int, default=20000)
    p.add_argument("--decay", type=float, default=0.2)
    p.add_argument("--ema", type=float, default=0.998)
    p.add_argument("--p-infill", type=float, default=0.7)
    p.add_argument("--p-ar", type=float, default=0.0,
                   help="share of steps that are autoregressive (causal attention, every "
                   "token a target): the warm start Dream's recipe uses")
    p.add_argument("--ar-keep", type=float, default=0.5,
                   help="share of an autoregressive step's tokens sent through the head")
    p.add_argument("--max-middle", type=int, default=64)
    p.add_argument("--max-pads", type=int, default=40)
    p.add_argument("--weighting", choices=("mean", "elbo"), default="mean")
    p.add_argument("--max-mb-per-lang", type=float, default=12.0)
    p.add_argument("--ckpt-min", type=float, default=5.0)
    p.add_argument("--log-every", type=int, default=10)
    p.add_argument("--bench", type=int, default=0, help="time N steps, print tokens/s, exit")
    p.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N (newer PyTorch)")
    p.add_argument("--workers", type=int, default=0,
                   help="processes that draw batches (0: the training process itself)")
    p.add_argument("--minutes", type=float, default=0,
                   help="save and stop after this much wall time (0: no limit)")
    a = p.parse_args(argv)

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    os.makedirs(a.out, exist_ok=True)
    with open(a.tokenizer, encoding="utf-8") as f:
        tok = json.load(f)
    enc, sp = bpe.Encoder(tok), Specials(tok)
    vocab = len(tok["model"]["vocab"]) + len(tok["added_tokens"])
    ckpt_path = os.path.join(a.out, "resume.pt")
    ck = torch.load(ckpt_path, map_location="cpu") if a.resume else None
    init = None
    if ck:
        cfg = Config(**ck["config"])
    elif a.init:
        import export
        with open(os.path.join(a.init, "config.json"), encoding="utf-8") as f:
            hf = json.load(f)
        cfg = Config(**{k: hf[k] for k in Config.KEYS})
        with open(os.path.join(a.init, "train_state.json"), encoding="utf-8") as f:
            prior = json.load(f)
        init = (export.read_safetensors(os.path.join(a.init, "model.safetensors")), prior)
    else:
        cfg = Config(vocab_size=vocab, hidden_size=a.hidden, num_hidden_layers=a.layers,
                     num_attention_heads=a.heads, num_key_value_heads=a.kv_heads,
                     intermediate_size=a.ffn, max_position_embeddings=a.seq_len)
    dev = torch.device(a.device)
    model = DreamLM(cfg)
    state = {"step": 0, "tokens": 0, "seconds": 0.0}
    if ck:
        model.load_state_dict({k: v.float() for k, v in ck["model"].items()})
    elif init:
        model.load_state_dict({k: torch.from_numpy(v.copy()).float() for k, v in init[0].items()})
        # The folder's own history (and any it continued) stays with the weights.
        state["prior"] = {k: init[1][k] for k in ("step", "tokens", "seconds", "phases", "host",
                                                  "prior") if k in init[1]}
    model.to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, betas=(0.9, 0.98), weight_decay=0.05)
    if ck:
        osd = ck["opt"]
        for s in osd["state"].values():
            for k, v in list(s.items()):
                if torch.is_tensor(v) and v.is_floating_point():
                    s[k] = v.float()
        opt.load_state_dict(osd)
        state = ck["state"]
        ema = {k: v.float().to(dev) for k, v in ck["ema"].items()}
    else:
        ema = {k: v.detach().clone() for k, v in model.state_dict().items()}
    # The options that shape the model's training, one entry per start or resume that
    # changed them: the model card describes the run from these.
    opts = {k: getattr(a, k) for k in ("batch", "lr", "warmup", "steps", "decay", "ema",
                                       "p_infill", "p_ar", "ar_keep", "max_middle", "max_pads",
                                       "weighting", "seq_len", "threads", "device")}
    phases = state.setdefault("phases", [])
    if not phases or phases[-1]["opts"] != opts:
        phases.append({"step": state["step"], "opts": opts})
    state["host"] = cpu_name()
    print("train: %d parameters (%d without embeddings), config %s" %
          (count_params(model), count_params(model) - 2 * cfg.vocab_size * cfg.hidden_size,
           cfg.to_dict()), flush=True)
    corpus = load_corpus(a.corpus, a.max_mb_per_lang, a.seed)
    print("train: corpus %s" % {k: (len(v), sum(map(len, v))) for k, v in corpus.items()},
          flush=True)
    seed = a.seed * 1000003 + state["step"]
    if a.workers > 0:
        batches = iter(torch.utils.data.DataLoader(
            Batches(corpus, enc, sp, a, seed), batch_size=None, num_workers=a.workers,
            pin_memory=dev.type == "cuda", prefetch_factor=4, persistent_workers=True))
    else:
        sampler = Sampler(corpus, enc, sp, a, seed)
    if ck and "rng" in ck["state"]:
        torch.set_rng_state(ck["state"]["rng"])

    stop = {"flag": False}

    def on_term(signum, frame):
        stop["flag"] = True

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    log = open(os.path.join(a.out, "log.tsv"), "a", encoding="utf-8")
    last_ck = time.time()
    t0 = time.time()
    acc_loss, acc_n = 0.0, 0
    acc_kind = {}
    bench_tok, bench_t = 0, None
    while state["step"] < a.steps and not stop["flag"] and not (
            a.minutes and time.time() - t0 > a.minutes * 60):
        step = state["step"]
        for g in opt.param_groups:
            g["lr"] = lr_at(step, a)
        ts = time.time()
        kind, tensors = next(batches) if a.workers > 0 else draw(sampler, a)
        tensors = [x.to(dev, non_blocking=True) for x in tensors]
        # bf16 autocast on a GPU; the loss and the optimizer stay in f32.
        with (torch.autocast(device_type="cuda", dtype=torch.bfloat16)
              if dev.type == "cuda" else contextlib.nullcontext()):
            if kind == "ar":
                ids, valid, target, weight = tensors
                loss, ntok = loss_fn(model, ids, valid, ids, target, weight, causal=True)
            else:
                loss, ntok = loss_fn(model, *tensors)
        acc_kind[kind] = acc_kind.get(kind, (0.0, 0))
        acc_kind[kind] = (acc_kind[kind][0] + float(loss), acc_kind[kind][1] + 1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        with torch.no_grad():
            for k, v in model.state_dict().items():
                ema[k].mul_(a.ema).add_(v.float(), alpha=1 - a.ema)
        dt = time.time() - ts
        state["step"] += 1
        state["tokens"] += ntok
        state["seconds"] += dt
        acc_loss += float(loss)
        acc_n += 1
        if a.bench:
            if step == 2:
                bench_t, bench_tok = time.time(), 0
            elif step > 2:
                bench_tok += ntok
            if step >= a.bench + 2:
                el = time.time() - bench_t
                print("bench: %.0f tokens/s, %.2f s/step, batch %d, loss %.3f" %
                      (bench_tok / el, el / (step - 2), a.batch, float(loss)))
                return 0
            continue
        if state["step"] % a.log_every == 0:
            # Columns 6 and 7: the mean loss of the masked and the autoregressive steps
            # in the interval ("-" where there were none); column 3 mixes both.
            kl = ["%.4f" % (acc_kind[k][0] / acc_kind[k][1]) if k in acc_kind else "-"
                  for k in ("mdm", "ar")]
            log.write("%d\t%d\t%.4f\t%.2e\t%.0f\t%s\t%s\n" % (
                state["step"], state["tokens"], acc_loss / acc_n, lr_at(step, a),
                state["seconds"], kl[0], kl[1]))
            log.flush()
            acc_loss, acc_n = 0.0, 0
            acc_kind = {}
        if time.time() - last_ck > a.ckpt_min * 60:
            state["rng"] = torch.get_rng_state()
            save(ckpt_path, model, ema, opt, state)
            last_ck = time.time()
    state["rng"] = torch.get_rng_state()
    if not a.bench:
        save(ckpt_path, model, ema, opt, state)
    print("train: stopped at step %d after %.0f s" % (state["step"], time.time() - t0),
          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
