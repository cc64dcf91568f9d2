"""Issue 43: a per-request gate between meaning (the description's cosine) and words (the eefafaa fusion), LODO.

S = (1 - g) * S_meaning + g * S_words, g = sigmoid(a + b * z(x)); x a request feature (kind_gate.feats).
"""

import itertools
import os
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from kind43 import floors  # noqa: E402
from kind_fusion import eefafaa, load, meaning  # noqa: E402
from kind_gate import feats  # noqa: E402

from toolret.eval.lodo import fused_scores, score_metrics  # noqa: E402

sigs = load(Path(os.environ.get("CACHE", ".bench/lodo43")))
fl = floors(sigs)
by_meaning = meaning()
words = replace(eefafaa(), lexical_sd_floor=float(os.environ.get("SD", "0.02")))
data = []
for s in sigs:
    sm = fused_scores(s, by_meaning)[0]
    sw = fused_scores(s, words)[0]
    f = feats(s)
    data.append((s, sm, sw, f))
grid = list(itertools.product([-4, -3, -2, -1.5, -1, -0.5, 0, 0.5, 1], [-3, -2, -1, -0.5, 0, 0.5, 1, 2, 3]))
for fname in list(data[0][3]):
    allx = np.concatenate([d[3][fname] for d in data])
    mu, sd = np.nanmean(allx), np.nanstd(allx) + 1e-9
    table = np.zeros((len(grid), len(data), 3))
    for gi, (a, b) in enumerate(grid):
        for si, (s, sm, sw, f) in enumerate(data):
            x = np.nan_to_num((f[fname] - mu) / sd)
            g = 1 / (1 + np.exp(-(a + b * x)))
            sc = np.where(
                np.isfinite(sm) & np.isfinite(sw),
                (1 - g[:, None]) * np.nan_to_num(sm, neginf=0) + g[:, None] * np.nan_to_num(sw, neginf=0),
                -np.inf,
            )
            m = score_metrics(s, sc)
            table[gi, si] = (m["recall@1"] - fl[s.name][0], m["recall@5"] - fl[s.name][1], m["recall@5"])
    worst_left, r5_left = [], []
    for si in range(len(data)):
        tr = [j for j in range(len(data)) if j != si]
        worst = table[:, tr, :2].min(axis=(1, 2))
        key = np.where(worst >= 0, 10 + table[:, tr, 2].mean(1), worst)
        gi = int(np.argmax(key))
        worst_left.append(table[gi, si, :2].min())
        r5_left.append(table[gi, si, 2])
    w = table[:, :, :2].min(axis=(1, 2))
    gi_all = int(np.argmax(np.where(w >= 0, 10 + table[:, :, 2].mean(1), w)))
    print(
        f"{fname:6} all a,b={grid[gi_all]} worst={w[gi_all]:+.3f} ({data[int(table[gi_all, :, :2].min(1).argmin())][0].name}) "
        f"R@5 {table[gi_all, :, 2].mean():.4f} | LODO worst {min(worst_left):+.3f} ({data[int(np.argmin(worst_left))][0].name}) R@5 {np.mean(r5_left):.4f}",
        flush=True,
    )
