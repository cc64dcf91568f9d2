"""Issue 43: the learned fusion's fold table on cached signals, with the two-sided floor of kind43.floors.

Usage: CACHE=.bench/lodo43 python experiments/fusion43.py   (STEPS, L2 override the fit)
"""

import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from kind43 import floors  # noqa: E402

from toolret.eval.folds import EVAL_ONLY_SETS  # noqa: E402
from toolret.eval.signals import DatasetSignals  # noqa: E402
from toolret.training.fusion_fit import FitConfig, fold_table, format_fold_table, training_arrays  # noqa: E402

cache = Path(os.environ.get("CACHE", ".bench/lodo43"))
test, train_sig = {}, {}
for p in sorted(cache.glob("*.npz")):
    if p.name.startswith("embeddings"):
        continue
    s = DatasetSignals.load(p)
    stem = p.name.rsplit("-", 1)[0]
    if stem.endswith(".train"):
        train_sig[stem] = s
    else:
        test[stem] = s
train = {}
for name, s in test.items():
    if name in EVAL_ONLY_SETS:
        continue
    key = f"{name}.train"
    train[key if key in train_sig else name] = training_arrays(train_sig.get(key, s))
cfg = FitConfig(steps=int(os.environ.get("STEPS", "300")), l2=float(os.environ.get("L2", "0.01")))
rows = fold_table(test, train, cfg)
print(format_fold_table(rows))
fl = floors(list(test.values()))
worst = min(
    (min(r["learned"]["recall@1"] - fl[r["set"]][0], r["learned"]["recall@5"] - fl[r["set"]][1]), r["set"])
    for r in rows
)
print(
    "two-sided worst",
    worst,
    "mean R@5",
    np.mean([r["learned"]["recall@5"] for r in rows]),
    "heuristic mean R@5",
    np.mean([r["heuristic"]["recall@5"] for r in rows]),
)
for r in rows:
    print(
        f"  {r['set']:<18} {r['learned']['recall@1'] - fl[r['set']][0]:+.3f} / {r['learned']['recall@5'] - fl[r['set']][1]:+.3f}"
    )
