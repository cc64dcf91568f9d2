"""Issue 43 item 5: k='auto' (fast's cut: ratio and margin on the evidence, the score without its anchor term) on the
learned fusion's scores against the hand-set fusion's, TRACC per set on cached signals; ratio and margin chosen
leaving one set out (the largest mean TRACC on the others with no other set more than .01 below the hand-set cut).

Usage: CACHE=.bench/lodo43 VERSION=7 python experiments/auto_k43.py
"""

import itertools
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from kind_fusion import load  # noqa: E402

import toolret.eval.signals as signals_module  # noqa: E402
from toolret.eval.fusion_signals import fusion_arrays  # noqa: E402
from toolret.eval.lodo import _cosine_anchor, fused_scores, setting_of  # noqa: E402
from toolret.eval.reference_fusions import reference_config  # noqa: E402
from toolret.scoring.learned_fusion import ANCHOR, shipped_fusion  # noqa: E402

signals_module.SIGNALS_VERSION = int(os.environ.get("VERSION", signals_module.SIGNALS_VERSION))
sigs = load(Path(os.environ.get("CACHE", ".bench/lodo43")))


def tracc(rel, n_rel, score, evidence, ratio, margin, max_k=5):
    order = np.argsort(-score, axis=1, kind="stable")[:, :max_k]
    top = np.take_along_axis(score, order, axis=1)
    ev = np.take_along_axis(evidence, order, axis=1)
    finite = np.isfinite(top)
    ev = np.where(finite, ev, -np.inf)
    best = ev.max(axis=1, keepdims=True)
    floor = np.maximum(best - margin, np.where(best > 0, best * (1 - ratio), best))
    keep = finite & ((ev >= floor) | (np.arange(order.shape[1]) == 0))
    b = keep.sum(axis=1)
    hit = (np.take_along_axis(rel, order, axis=1) & keep).sum(axis=1)
    union = n_rel + b - hit
    return float(((hit / n_rel) * (1 - np.abs(b - n_rel) / np.maximum(union, 1))).mean())


heur = setting_of(reference_config("fusion-ec3e34e"))
model = shipped_fusion()
data = []
for s in sigs:
    hs, pool = fused_scores(s, heur)
    h_ev = hs - heur.cosine_weight * _cosine_anchor(s, pool)
    a = fusion_arrays(s)
    coef = model.coefficients(a.request)
    ls = np.where(a.pool, model.scores(a.x, a.request), -np.inf)
    l_ev = ls - coef[:, None, ANCHOR] * a.x[:, :, ANCHOR]
    base = tracc(s.rel, s.n_rel, hs, h_ev, 0.26, 1.0)
    data.append((s.name, s.rel, s.n_rel, ls, l_ev, base))
grid = list(itertools.product((0.15, 0.2, 0.26, 0.3, 0.35, 0.4, 0.5), (0.5, 1.0, 1.5, 2.0, 3.0)))
table = np.array([[tracc(rel, n, ls, lev, r, m) - base for (_, rel, n, ls, lev, base) in data] for r, m in grid])
raw = np.array([[tracc(rel, n, ls, lev, r, m) for (_, rel, n, ls, lev, base) in data] for r, m in grid])
cur = grid.index((0.26, 1.0))
print("hand-set cut on hand-set scores vs the same cut on learned scores:")
for i, d in enumerate(data):
    print(f"  {d[0]:<18} {d[5]:.3f} -> {raw[cur, i]:.3f} ({table[cur, i]:+.3f})")
for si, d in enumerate(data):
    others = [j for j in range(len(data)) if j != si]
    worst = table[:, others].min(axis=1)
    key = np.where(worst >= -0.01, 10 + raw[:, others].mean(axis=1), worst)
    g = int(np.argmax(key))
    print(
        f"left out {d[0]:<18} chose ratio={grid[g][0]} margin={grid[g][1]}: {d[5]:.3f} -> {raw[g, si]:.3f} ({table[g, si]:+.3f})"
    )
worst = table.min(axis=1)
key = np.where(worst >= -0.01, 10 + raw.mean(axis=1), worst)
g = int(np.argmax(key))
print(
    "all sets:",
    grid[g],
    "worst",
    round(float(worst[g]), 3),
    data[int(table[g].argmin())][0],
    "mean",
    round(float(raw[g].mean()), 4),
    "hand-set mean",
    round(float(np.mean([d[5] for d in data])), 4),
)
