#!/bin/sh
# Training the default model on a lent GPU (one H200 for a few minutes of device time).
#
#   tools/train/gpu.sh pack          here: writes build/train-carry/ (the corpus as the CPU
#                                    run sees it, gzipped, and the tokenizer) from CACHE
#   tools/train/gpu.sh run MINUTES   there (the device tool's `run`, with carry
#                                    ["build/train-carry"]): trains from scratch for
#                                    MINUTES of wall time and writes the exported model
#                                    and the log under $OUT
#
# The same train.py as on the CPU, with --device cuda (bf16 autocast, f32 optimizer), a
# batch 16 times larger and 14 processes drawing batches (the pure-Python tokenizer is
# what limits a GPU step of a model this small). What comes back: $OUT/model.safetensors
# (BF16), config.json, train_state.json, log.tsv and train.log; ship them with export.py
# (a folder holding model.safetensors re-exports with the tokenizer files), card.py --log
# and the tests README.md names.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CARRY=$ROOT/build/train-carry
case "${1:-}" in
pack)
  CACHE=${INFILLD_TRAIN_CACHE:-/work/cache/train}
  mkdir -p "$CARRY"
  HERE=$HERE /usr/bin/python3 -c '
import gzip, json, os, sys
sys.path.insert(0, os.environ["HERE"])
import train
corpus = train.load_corpus(sys.argv[1], 12.0, 0)
with gzip.open(sys.argv[2], "wt", encoding="utf-8", compresslevel=9) as f:
    for lang in sorted(corpus):
        for text in corpus[lang]:
            f.write(json.dumps({"lang": lang, "text": text}) + "\n")
print("pack: %s" % {k: len(v) for k, v in corpus.items()})
' "$CACHE/corpus/train.jsonl" "$CARRY/train.jsonl.gz"
  cp "$CACHE/tok/tokenizer.json" "$CARRY/tokenizer.json"
  du -sh "$CARRY"
  ;;
run)
  MIN=${2:?minutes}
  OUT=${OUT:?the device tool sets OUT}
  [ -f "$CARRY/train.jsonl.gz" ] || { echo "gpu.sh: $CARRY is missing (gpu.sh pack, and carry it)" >&2; exit 2; }
  W=/tmp/train
  mkdir -p "$W"
  gunzip -c "$CARRY/train.jsonl.gz" > "$W/train.jsonl"
  if [ "${TRAIN_DEVICE:-cuda}" != cpu ]; then
    python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.get_device_name())'
  fi
  set +e
  # TRAIN_DEVICE/TRAIN_BATCH/TRAIN_WORKERS: a dry run of this script on a CPU.
  PYTHONUNBUFFERED=1 python3 "$HERE/train.py" --device "${TRAIN_DEVICE:-cuda}" \
    --workers "${TRAIN_WORKERS:-14}" --threads 2 \
    --tokenizer "$CARRY/tokenizer.json" --corpus "$W/train.jsonl" --out "$W/run" \
    --hidden 192 --layers 4 --heads 3 --kv-heads 1 --ffn 512 --seq-len 256 \
    --batch "${TRAIN_BATCH:-256}" --lr 3e-3 --warmup 100 --steps 200000 --decay 0.0 --ema 0.999 \
    --max-pads 16 --weighting mean --p-infill 0.5 --p-ar 0.3 --minutes "$MIN" \
    --max-mb-per-lang 100 \
    --ckpt-min 1000 --log-every 20 2>&1 | tee "$OUT/train.log"
  rc=$?
  set -e
  cp "$W/run/log.tsv" "$OUT/log.tsv" 2>/dev/null || true
  [ $rc -eq 0 ] || exit $rc
  python3 "$HERE/export.py" "$W/run/resume.pt" "$W/model" --tokenizer "$CARRY/tokenizer.json"
  # At most 8 files come back: the weights, their config and state; the tokenizer files
  # are the carried ones (export.py MODELDIR OUT re-exports them here).
  cp "$W/model/model.safetensors" "$W/model/config.json" "$W/model/train_state.json" "$OUT/"
  ls -la "$OUT"
  ;;
*)
  echo "usage: gpu.sh pack | gpu.sh run MINUTES" >&2
  exit 2
  ;;
esac
