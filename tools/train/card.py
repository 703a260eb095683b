#!/usr/bin/python3
"""Writes the model card and loss curve of an exported model.

  card.py MODELDIR [--log CACHE/run/log.tsv]

MODELDIR/loss.png (matplotlib, Debian's python3-matplotlib) from the training log
(step, tokens, loss, lr, seconds), and MODELDIR/README.md from config.json,
train_state.json, tools/train/data.lock and the log. Eval numbers are left for the
quality harness (`infilld eval`) to fill in docs/QUALITY.md.
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
    k = 20  # running mean over k log lines: the 1/t-weighted loss is noisy
    sm = [sum(ys[max(0, i - k + 1):i + 1]) / len(ys[max(0, i - k + 1):i + 1])
          for i in range(len(ys))]
    fig, ax = plt.subplots(figsize=(7, 4), dpi=80)
    ax.plot(xs, ys, color="#bbbbbb", linewidth=0.6, label="loss (per log line)")
    ax.plot(xs, sm, color="#1f77b4", linewidth=1.5, label="running mean")
    ax.set_xlabel("training tokens seen (millions)")
    ax.set_ylabel("masked-diffusion loss (1/t weighted, nats)")
    ax.set_ylim(0, min(12, max(ys) + 0.5))
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model")
    p.add_argument("--log", default=os.path.join(fetch.default_cache(), "run", "log.tsv"))
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
             "(`DreamModel`, Qwen2 tensor names, shifted logits), trained from scratch by "
             "`tools/train/` on permissively licensed source code from Debian and npm "
             "packages. It is what `infilld` loads when no model is given. It is small and "
             "was trained on two shared CPU cores for about an hour: it completes short, "
             "common code patterns and often answers with an empty hole (EOS); it is the "
             "baseline, not a useful assistant. Measure it (and any real model) with "
             "`infilld eval`; the numbers go to docs/QUALITY.md.\n" % (n_params / 1e6))
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
    w.append("## Tokenizer\n\nByte-level BPE (Qwen2 pre-tokenizer regex, GPT-2 byte alphabet, "
             "NFC, no byte fallback), %d ids: 256 bytes, %d merges' tokens, then "
             "`<|endoftext|>`, `<|beginoftext|>`, `<|mask|>`. Trained by `tools/train/bpe.py` "
             "on 24 MB of the training corpus (an equal share per language), seed 0.\n\n" %
             (cfg["vocab_size"], cfg["vocab_size"] - 259))
    w.append("## Training\n\n")
    w.append("- Objective: masked diffusion (t stratified over U(0,1), 1/t weight on masked "
             "tokens, Dream's logit shift) on whole windows (30 %) mixed with an infill "
             "objective (70 %): an editor-shaped middle (rest of a line, a few tokens, one or "
             "several lines, a random span) with 0-40 EOS pads appended (0-16 from step 329 on), prefix and suffix "
             "tokenized separately as the pipeline does, laid out `[<|beginoftext|>] prefix "
             "middle+pads suffix [<|endoftext|>]`, the hole masked with probability t. See "
             "`tools/train/train.py`.\n")
    w.append("- Optimiser: AdamW (0.9, 0.98), weight decay 0.05, lr 2e-3 after 50 warm-up "
             "steps, gradient clip 1.0; sequence length %d; batch 8 for the first 231 "
             "steps, 16 after; exported weights are the EMA (0.99) of the weights.\n" %
             cfg["max_position_embeddings"])
    w.append("- Steps: %d; tokens seen (sequence positions, prompt included): %.2f M; "
             "compute: %.0f s of training on 2 shared CPU cores (PyTorch %s, Debian 12), "
             "about %.1f TFLOP (6 x parameters x tokens, an upper bound).\n" %
             (st["step"], st["tokens"] / 1e6, st["seconds"], "1.13",
              6 * n_params * st["tokens"] / 1e12))
    w.append("- Loss (mean of the last %d log lines): %.2f nats per masked token "
             "(1/t weighted).\n" % (len(last), mean_last))
    w.append("- Command line: `tools/train/run.sh` (resume: `tools/train/run.sh --resume`).\n\n")
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
    w.append("## Evaluation\n\nTo be filled by the quality harness (`infilld eval --model "
             "models/infilld-tiny-code --set heldout`); see docs/QUALITY.md.\n")
    with open(os.path.join(a.model, "README.md"), "w", encoding="utf-8") as f:
        f.write("".join(w))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
