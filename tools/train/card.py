#!/usr/bin/python3
"""Writes the model card and loss curve of an exported model.

  card.py MODELDIR [--log CACHE/run/log.tsv] [--eval EVAL.json ...]

MODELDIR/loss.png (matplotlib, Debian's python3-matplotlib) from the training log
(step, tokens, loss, lr, seconds), and MODELDIR/README.md from config.json,
train_state.json, tools/train/data.lock and the log. --eval adds the rows of
`infilld eval --json` outputs as the card's evaluation table (docs/QUALITY.md keeps
the full record).
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fetch  # noqa: E402


def read_log(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            c = line.split("\t")
            if len(c) >= 5:
                rows.append((int(c[0]), int(c[1]), float(c[2]), float(c[3]), float(c[4])))
    return rows


def plot(rows, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    xs = [r[1] / 1e6 for r in rows]
    ys = [r[2] for r in rows]
    k = 20  # running mean over k log lines: a batch's loss is noisy
    sm = [sum(ys[max(0, i - k + 1):i + 1]) / len(ys[max(0, i - k + 1):i + 1])
          for i in range(len(ys))]
    fig, ax = plt.subplots(figsize=(7, 4), dpi=80)
    ax.plot(xs, ys, color="#bbbbbb", linewidth=0.6, label="loss (per log line)")
    ax.plot(xs, sm, color="#1f77b4", linewidth=1.5, label="running mean")
    ax.set_xlabel("training tokens seen (millions)")
    ax.set_ylabel("loss (nats per target token)")
    ax.set_ylim(0, min(12, max(ys) + 0.5))
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out)


def recipe(phases, st):
    """The objective and optimiser lines, from the options train.py recorded per phase."""
    o = phases[-1]["opts"]
    w = []
    mdm = 1 - o["p_ar"]
    w.append("- Objective, per step: autoregressive (%d %% of the steps: causal attention, every "
             "token a target of the row before it, %d %% of them through the head — the warm "
             "start of Dream's recipe, whose logit shift keeps each row's meaning) or masked "
             "diffusion (%d %%), whose sequences are an editor-shaped infill (%d %%: rest of a "
             "line, a few tokens, one or several lines, a random span, with 0-%d EOS pads "
             "appended to the middle; prefix and suffix tokenized separately as the pipeline "
             "does, laid out `[<|beginoftext|>] prefix middle+pads suffix [<|endoftext|>]`, "
             "the hole masked with probability t) or a whole window (%d %%) masked with "
             "probability t; t stratified over U(0,1); loss %s, Dream's logit shift. See "
             "`tools/train/train.py`.\n" %
             (round(100 * o["p_ar"]), round(100 * o["ar_keep"]), round(100 * mdm),
              round(100 * o["p_infill"]), o["max_pads"], round(100 * (1 - o["p_infill"])),
              "the mean cross-entropy over each sequence's targets" if o["weighting"] == "mean"
              else "1/t-weighted (the ELBO)"))
    w.append("- Optimiser: AdamW (0.9, 0.98), weight decay 0.05, lr %g after %d warm-up steps, "
             "constant, then a cosine decay to a tenth over the last %d %% of %d steps; "
             "gradient clip 1.0; sequence length %d; batch %d; exported weights are the EMA "
             "(%g) of the weights.\n" %
             (o["lr"], o["warmup"], round(100 * o["decay"]), o["steps"], o["seq_len"],
              o["batch"], o["ema"]))
    if len(phases) > 1:
        w.append("- Option changes: %s.\n" % "; ".join(
            "from step %d %s" % (ph["step"], ", ".join(
                "%s %s" % (k, v) for k, v in ph["opts"].items()
                if k in prev["opts"] and prev["opts"][k] != v))
            for prev, ph in zip(phases, phases[1:])))
    w.append("- Steps: %d; tokens seen (sequence positions, prompt included): %.2f M; "
             "%.0f s of training on %s, %d thread%s (%s, PyTorch %s).\n" %
             (st["step"], st["tokens"] / 1e6, st["seconds"], st.get("host", "a CPU"),
              o["threads"], "" if o["threads"] == 1 else "s", o["device"], torch_version()))
    return w


def torch_version():
    try:
        import torch
        return torch.__version__.split("a")[0].split("+")[0]
    except ImportError:
        return "?"


def all_tokens(st):
    """Tokens of this run and of every earlier run whose export it continued (--init)."""
    n = 0
    while st:
        n += st["tokens"]
        st = st.get("prior")
    return n


def pct(v):
    return "-" if v is None else "%.1f %%" % (100 * v)


def eval_table(paths, model_dir):
    """Markdown rows of `infilld eval --json` outputs (this model's rows and baselines)."""
    w = []
    runs = [json.load(open(p, encoding="utf-8")) for p in paths]
    dates = sorted(r.get("date", "?") for r in runs)
    when = dates[0] if dates[0] == dates[-1] else "%s to %s" % (dates[0], dates[-1])
    machines = "; ".join(sorted({r.get("machine", "?") for r in runs}))
    w.append("`infilld eval` on the held-out sets (%s, %s; validation on, default pipeline "
             "settings unless the row says otherwise):\n\n" % (when, machines))
    w.append("| set | model | EOS penalty | n | answered | exact | edit sim | first line | "
             "valid | EOS-ended | ms/task |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
    me = os.path.basename(os.path.normpath(model_dir))
    for run in runs:
        for r in run["rows"]:
            name = r["model"]
            if r["kind"] == "model" and os.path.basename(os.path.normpath(name)) == me:
                name = "this model"
            pen = r.get("eos_penalty")
            w.append("| %s | %s | %s | %d | %s | %s | %.3f | %s | %s | %s | %.0f |\n" % (
                r["set"], name, "-" if r["kind"] != "model" else
                ("model default" if pen is None else "%g" % pen), r["n"], pct(r["answered"]),
                pct(r["exact"]), r["edit_sim"], pct(r["first_line"]), pct(r["valid"]),
                pct(r["eos_ended"]), r["ms_per_task"]))
    return w


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model")
    p.add_argument("--log", default=os.path.join(fetch.default_cache(), "run", "log.tsv"))
    p.add_argument("--eval", action="append", default=[],
                   help="an `infilld eval --json` output to tabulate (repeatable)")
    a = p.parse_args(argv)
    cfg = json.load(open(os.path.join(a.model, "config.json")))
    st = json.load(open(os.path.join(a.model, "train_state.json")))
    rows = [r for r in read_log(a.log) if r[0] <= st["step"]]
    have_png = False
    try:
        plot(rows, os.path.join(a.model, "loss.png"))
        have_png = True
    except ImportError:
        pass
    lock = fetch.read_lock()
    train = sorted((e for e in lock.values() if e["role"] == "train"), key=lambda e: e["name"])
    held = sorted((e for e in lock.values() if e["role"] == "heldout"), key=lambda e: e["name"])
    lic = {}
    for e in train:
        lic[e["licence"]] = lic.get(e["licence"], 0) + 1
    n_params = (2 * cfg["vocab_size"] * cfg["hidden_size"] + cfg["num_hidden_layers"] * (
        2 * cfg["hidden_size"] * cfg["hidden_size"]
        + 2 * cfg["hidden_size"] * cfg["hidden_size"] // cfg["num_attention_heads"]
        * cfg["num_key_value_heads"]
        + 3 * cfg["hidden_size"] * cfg["intermediate_size"]))
    last = rows[-20:]
    mean_last = sum(r[2] for r in last) / max(1, len(last))
    w = []
    w.append("# infilld-tiny-code: the trained default model\n\n")
    w.append("A %.1f M-parameter masked-diffusion code model in the Dream layout "
             "(`DreamModel`, Qwen2 tensor names, shifted logits), trained %sby "
             "`tools/train/` on permissively licensed source code from Debian and npm "
             "packages. It is what `infilld` loads when no model is given: small enough to "
             "answer in milliseconds on any CPU, trained on %.0f M tokens on a CPU, far less "
             "than a useful code model needs (the evaluation below says what it does); it "
             "is the baseline a real model is measured against. Measure it (and any real model) "
             "with `infilld eval`; the numbers go to docs/QUALITY.md.\n" %
             (n_params / 1e6, "" if st.get("prior") else "from scratch ", all_tokens(st) / 1e6))
    w.append("\n## Shape\n\n")
    w.append("| field | value |\n|---|---|\n")
    for k in ("hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
              "intermediate_size", "vocab_size", "max_position_embeddings", "rope_theta"):
        w.append("| %s | %s |\n" % (k, cfg[k]))
    w.append("| special ids | bos `<|beginoftext|>` %d, eos = pad `<|endoftext|>` %d, "
             "mask `<|mask|>` %d |\n" % (cfg["bos_token_id"], cfg["eos_token_id"],
                                         cfg["mask_token_id"]))
    w.append("| weights | BF16, %d parameters (%d in the embedding and LM head) |\n\n" %
             (n_params, 2 * cfg["vocab_size"] * cfg["hidden_size"]))
    w.append("The context is %d tokens (prompt + hole): the engine caps a Dream model's "
             "context at its `max_position_embeddings` when that is below 2048.\n\n" %
             cfg["max_position_embeddings"])
    gp = os.path.join(a.model, "generation_config.json")
    gen = json.load(open(gp)) if os.path.exists(gp) else {}
    if gen.get("eos_penalty") is not None:
        w.append("`generation_config.json` sets `eos_penalty` %g: infilld decodes this model "
                 "with that annealed EOS/pad penalty unless a request sets `eosPenalty` "
                 "(docs/SAMPLERS.md §4).\n\n" % gen["eos_penalty"])
    if gen.get("candidates") is not None:
        w.append("`generation_config.json` sets `candidates` %d: an automatic request samples "
                 "that many candidates at temperature 0.6 (fewer when the latency budget "
                 "needs it) and answers the best one that passes the syntax check, unless "
                 "the `automaticCandidates` setting says otherwise.\n\n" % gen["candidates"])
    w.append("## Tokenizer\n\nByte-level BPE (Qwen2 pre-tokenizer regex, GPT-2 byte alphabet, "
             "NFC, no byte fallback), %d ids: 256 bytes, %d merges' tokens, then "
             "`<|endoftext|>`, `<|beginoftext|>`, `<|mask|>`. Trained by `tools/train/bpe.py` "
             "on 24 MB of the training corpus (an equal share per language), seed 0.\n\n" %
             (cfg["vocab_size"], cfg["vocab_size"] - 259))
    w.append("## Training\n\n")
    phases = st.get("phases")
    if phases:
        w.extend(recipe(phases, st))
    else:  # an export from before the run recorded its options
        w.append("- Steps: %d; tokens seen (sequence positions, prompt included): %.2f M; "
                 "%.0f s of training.\n" % (st["step"], st["tokens"] / 1e6, st["seconds"]))
    prior = st.get("prior")
    lead = "Started from an earlier export"
    while prior:
        w.append("- %s (%d steps, %.2f M tokens, %.0f s), whose weights it continued with a "
                 "new optimizer and schedule.\n" %
                 (lead, prior["step"], prior["tokens"] / 1e6, prior["seconds"]))
        lead = "That export had started from one"
        prior = prior.get("prior")
    tokens = all_tokens(st)
    w.append("- Compute: about %.1f TFLOP in all (6 x parameters x tokens, an upper bound).\n" %
             (6 * n_params * tokens / 1e12))
    w.append("- Loss (mean of the last %d log lines): %.2f nats per target token.\n" %
             (len(last), mean_last))
    w.append("- Command line: `tools/train/run.sh` (resume: `tools/train/run.sh --resume`; "
             "continue a shipped model: `--init models/infilld-tiny-code`).\n\n")
    if have_png:
        w.append("![loss curve](loss.png)\n\n")
    w.append("## Data and licences\n\n%d training packages (%s), listed with versions and "
             "sha256 in `tools/train/data.lock`; only Python, C, JavaScript, TypeScript, Go "
             "and Lua files; files naming a copyleft licence dropped; exact and "
             "whitespace-normalised duplicates removed; at most 3 MB of text per package. "
             "%d packages are held out for evaluation (`tests/data/quality/heldout`), never "
             "trained on: %s. HumanEval was never used for training.\n\n" %
             (len(train), ", ".join("%s: %d" % kv for kv in sorted(lic.items())), len(held),
              ", ".join(e["name"] for e in held)))
    w.append("## Evaluation\n\n")
    if a.eval:
        w.extend(eval_table(a.eval, a.model))
        w.append("\nThe full record, with the sampler settings of each row, is in "
                 "docs/QUALITY.md.\n")
    else:
        w.append("To be filled by the quality harness (`infilld eval --model "
                 "models/infilld-tiny-code --set heldout-LANG --json`, then `card.py --eval`); "
                 "see docs/QUALITY.md.\n")
    with open(os.path.join(a.model, "README.md"), "w", encoding="utf-8") as f:
        f.write("".join(w))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
