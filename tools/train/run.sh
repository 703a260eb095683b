#!/bin/sh
# The background training run of the shipped default model, as it was started:
#   tools/train/run.sh            start (CACHE/run must not hold a resume.pt)
#   tools/train/run.sh --resume   continue from CACHE/run/resume.pt
# CACHE is $INFILLD_TRAIN_CACHE or /work/cache/train and must hold corpus/train.jsonl
# (fetch.py --locked, then corpus.py) and tok/tokenizer.json (bpe.py train, below).
# History of the shipped run: steps 0-231 had --batch 8 --steps 1500 --decay 0.3 and
# --max-pads 40 (the default); 231-329 --batch 16 --steps 5000 --decay 0.25; from 329 on
# also --max-pads 16 (the step-321 export answered EOS everywhere); from 528 on
# --weighting mean (the 1/t-weighted loss swung between 5 and 33 from batch to batch);
# 580-706 --p-infill 0.9; from 706 on --p-infill 0.3: an infill sequence supervises only
# its ~24 hole tokens, a whole-window one ~128, and after 706 steps (~300k supervised
# tokens) the model was still context-free (top-1 p ≈ 0.02, the unigram); from 865 on
# --p-ar 1.0, the autoregressive warm start (Dream's recipe: an autoregressive model,
# whose every token is a target, continued as a masked-diffusion one).
# TRAIN_NICE (default 10) sets its priority.
# The PID goes to CACHE/train.pid; kill -TERM saves and exits, kill -STOP/-CONT pause.
set -e
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${INFILLD_TRAIN_CACHE:-/work/cache/train}
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
  --batch 16 --lr 2e-3 --warmup 50 --steps 5000 --decay 0.25 --ema 0.99 \
  --max-pads 16 --weighting mean --p-infill 0.3 --ckpt-min 4 --log-every 5 --threads 2 "$@" >> run/stdout.log 2>&1 &
echo $! > train.pid
echo "train: pid $(cat train.pid), log $CACHE/run/log.tsv"
