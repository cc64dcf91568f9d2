#!/usr/bin/env bash
# The device command of issue 34: the recipe trained on every training registry ("all", the model
# to ship, saved as float16 shards under 15 MB for the transfer back) beside the four fold models
# of the leave-one-registry-out check (their vectors of the left-out texts, as gpu_run.sh).
# Usage there: bash experiments/gpu_ship.sh SECONDS
set -u
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=4
PY=${PY:-python3}
mkdir -p /tmp/model
$PY experiments/gpu_train.py --bundle .gpucarry/bundle.json.gz --base .gpucarry/base --fold all --out /tmp/vec-all \
  --seconds "${1:-300}" --variants recipe --no-stock --save-model /tmp/model > /tmp/all.log 2>&1 &
ALL=$!
VARIANTS=recipe bash experiments/gpu_run.sh "${1:-300}" recipe
wait $ALL
cat /tmp/all.log | grep -v "Loading weights"
mkdir -p "$OUT/model"
cp /tmp/model/recipe/* "$OUT/model/"
ls -la "$OUT" "$OUT/model"
