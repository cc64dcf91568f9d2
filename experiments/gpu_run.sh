#!/usr/bin/env bash
# The device command of issue 26's GPU run: one training process per fold, side by side on the
# one GPU, then each variant's vectors packed into one file (the transfer takes 8 files at most).
# Usage there: bash experiments/gpu_run.sh SECONDS VARIANTS
set -u
export PYTHONUNBUFFERED=1
SECONDS_BUDGET=${1:-330}
VARIANTS=${2:-recipe,hn1,hn3,hn3e3,hn7,e3,hn7e3}
export OMP_NUM_THREADS=4
PY=${PY:-python3}
VEC=${VEC:-/tmp/vec}
FOLDS=${FOLDS:-toole bfcl apibench restbench}
nvidia-smi -L || true
mkdir -p "$VEC"
for f in $FOLDS; do
  $PY experiments/gpu_train.py --bundle "${BUNDLE:-.gpucarry/bundle.json.gz}" --base "${BASE:-.gpucarry/base}" --fold $f --out "$VEC" --seconds "$SECONDS_BUDGET" --variants "$VARIANTS" ${EXTRA:-} > "$VEC/$f.log" 2>&1 &
done
wait
cat "$VEC"/*.log | grep -v "Loading weights"
$PY - "$VEC" "$OUT" <<'PY'
import json, sys
from pathlib import Path
import numpy as np
vec, out = Path(sys.argv[1]), Path(sys.argv[2])
by_variant = {}
for f in vec.glob("*.npy"):
    if f.stem.endswith("-scale"):
        continue
    variant, fold = f.stem.rsplit("-", 1)
    by_variant.setdefault(variant, {})[fold] = np.load(f)
    by_variant[variant][fold + "_scale"] = np.load(vec / f"{f.stem}-scale.npy")
for variant, arrays in by_variant.items():
    np.savez_compressed(out / f"{variant}.npz", **arrays)
logs = {f.stem: json.loads(f.read_text()) for f in vec.glob("log-*.json")}
print(json.dumps(logs))
print({v: sorted(a) for v, a in by_variant.items()})
PY
ls -la "$OUT"
