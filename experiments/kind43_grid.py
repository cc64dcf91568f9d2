"""Issue 43: fixed fusion settings on the second embedder's cached signals, worst two-sided margin (kind43.floors)."""

import itertools
import os
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from kind43 import floors  # noqa: E402
from kind_fusion import load  # noqa: E402

from toolret.eval.lodo import default_setting, score_setting  # noqa: E402

sigs = load(Path(os.environ.get("CACHE", ".bench/lodo43")))
fl = floors(sigs)
t = default_setting("fast")
W = {"today": t.field_weights, "desc": (1, 0, 0, 0, 0, 0, 0), "desc-heavy": (1, 0.1, 0.05, 0.1, 0.05, 0.1, 0.02)}
res = []
for wn, beta, slope, sd, k, hub in itertools.product(
    W, (0.0, 0.1, 0.2, 0.29, 0.4), (0, 0.5), (0.02, 0.08), (0, 2.5, 5), (0, -0.2)
):
    st = replace(
        t,
        field_weights=W[wn],
        lexical_weight=beta,
        evidence_slope=slope,
        lexical_sd_floor=sd,
        cosine_weight=k,
        hubness_weight=hub,
    )
    marg, r5 = [], []
    for s in sigs:
        m = score_setting(s, st)
        marg.append(min(m["recall@1"] - fl[s.name][0], m["recall@5"] - fl[s.name][1]))
        r5.append(m["recall@5"])
    wi = int(np.argmin(marg))
    res.append((min(marg), float(np.mean(r5)), wn, beta, slope, sd, k, hub, sigs[wi].name))
    print(res[-1], flush=True)
res.sort(reverse=True)
print("BEST")
for r in res[:15]:
    print(r)
