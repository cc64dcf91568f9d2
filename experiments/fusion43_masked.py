"""Issue 43 item 2: the fold table on signals whose intent fields read the request without its argument values
(CACHE, default .bench/lodo43q: INTENT=1 experiments/extract_signals.py), under the floors of the unmasked
signals (BASE, default .bench/lodo43u).

Usage: python experiments/fusion43_masked.py
"""

import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from kind43 import floors  # noqa: E402
from kind_fusion import load  # noqa: E402

from toolret.eval.folds import EVAL_ONLY_SETS  # noqa: E402
from toolret.eval.signals import DatasetSignals  # noqa: E402
from toolret.training.fusion_fit import fold_table, training_arrays  # noqa: E402

cache = Path(os.environ.get("CACHE", ".bench/lodo43q"))
base = {s.name: s for s in load(Path(os.environ.get("BASE", ".bench/lodo43u"))) if s is not None}
fl = floors(list(base.values()))
test, train_sig = {}, {}
for p in sorted(cache.glob("*.npz")):
    if p.name.startswith("embeddings"):
        continue
    stem = p.name.rsplit("-", 1)[0].replace(".intent", "")
    (train_sig if stem.endswith(".train") else test)[stem] = DatasetSignals.load(p)
train = {}
for name, s in test.items():
    if name not in EVAL_ONLY_SETS:
        key = f"{name}.train"
        train[key if key in train_sig else name] = training_arrays(train_sig.get(key, s))
rows = fold_table(test, train)
worst_l, worst_h = (9, ""), (9, "")
for r in rows:
    f1, f5 = fl[r["set"]]
    dl = min(r["learned"]["recall@1"] - f1, r["learned"]["recall@5"] - f5)
    dh = min(r["heuristic"]["recall@1"] - f1, r["heuristic"]["recall@5"] - f5)
    worst_l, worst_h = min(worst_l, (dl, r["set"])), min(worst_h, (dh, r["set"]))
    print(
        f"{r['set']:<18} heuristic {r['heuristic']['recall@1']:.3f}/{r['heuristic']['recall@5']:.3f} {dh:+.3f}   "
        f"learned {r['learned']['recall@1']:.3f}/{r['learned']['recall@5']:.3f} {dl:+.3f}"
    )
print("worst heuristic", worst_h, "learned", worst_l)
print(
    "mean R@5 heuristic",
    np.mean([r["heuristic"]["recall@5"] for r in rows]),
    "learned",
    np.mean([r["learned"]["recall@5"] for r in rows]),
)
