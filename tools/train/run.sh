#!/bin/sh
# The background training run of the shipped default model, as it was started:
#   tools/train/run.sh            start (CACHE/run must not hold a resume.pt)
#   tools/train/run.sh --resume   continue from CACHE/run/resume.pt
# CACHE is $INFILLD_TRAIN_CACHE or /work/cache/train and must hold corpus/train.jsonl
# (fetch.py --locked, then corpus.py) and tok/tokenizer.json (bpe.py train, below).
# The options are the 2026-12-03 run's: one thread (on these 2-core machines PyTorch's
# second thread made a step of this small model slower: 5,490 against 3,860 tokens/s),
# batch 32, 30 % autoregressive steps (Dream's warm start, mixed in from the start), half
# of the masked steps editor-shaped infills with 0-16 EOS pads, the whole corpus (it
# started with --steps 4000 and was resumed at step 1,742 with 3300, to finish its decay
# within the session's time). Every
# start or resume that changes an option is recorded in resume.pt's state ("phases"),
# and export.py / card.py carry it into the model card. Earlier runs (steps 0-1,624 on
# 2026-12-01: 40 then 16 pads, 1/t then mean weighting, autoregressive steps only from
# step 865) are in docs/QUALITY.md.
# run.sh --init models/infilld-tiny-code continues the shipped weights (a new optimizer
# and schedule; the model card keeps the earlier run as its prior).
# TRAIN_NICE (default 10) sets its priority.
# The PID goes to CACHE/train.pid; kill -TERM saves and exits, kill -STOP/-CONT pause.
set -e
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${INFILLD_TRAIN_CACHE:-/work/cache/train}
# The run starts inside CACHE: make an --init folder given relative to the caller absolute.
n=$#
prev=
for a in "$@"; do
  [ "$prev" = "--init" ] && [ -d "$a" ] && a=$(cd "$a" && pwd)
  set -- "$@" "$a"
  prev=$a
done
shift "$n"
cd "$CACHE"
if [ ! -f tok/tokenizer.json ]; then
  mkdir -p tok
  /usr/bin/python3 "$HERE/bpe.py" train --corpus corpus/train.jsonl --vocab 8192 \
    --max-mb 24 --seed 0 --out tok/tokenizer.json
fi
if [ -f train.pid ] && kill -0 "$(cat train.pid)" 2>/dev/null; then
  echo "train: pid $(cat train.pid) is still running (kill -TERM it and wait for it to exit)" >&2
  exit 1
fi
mkdir -p run
nohup nice -n "${TRAIN_NICE:-10}" /usr/bin/python3 "$HERE/train.py" \
  --tokenizer tok/tokenizer.json --corpus corpus/train.jsonl --out run \
  --hidden 192 --layers 4 --heads 3 --kv-heads 1 --ffn 512 --seq-len 256 \
  --batch 32 --lr 2e-3 --warmup 100 --steps 3300 --decay 0.3 --ema 0.995 \
  --max-pads 16 --weighting mean --p-infill 0.5 --p-ar 0.3 --max-mb-per-lang 100 \
  --ckpt-min 10 --log-every 20 --threads 1 --minutes 115 "$@" >> run/stdout.log 2>&1 &
echo $! > train.pid
echo "train: pid $(cat train.pid), log $CACHE/run/log.tsv"
