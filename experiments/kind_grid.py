"""Issue 43: the best fixed fusion setting against the two-sided floor on every cached set (docs/decisions/2026-11-27-two-kinds-of-request.md)."""

import itertools
import os
import sys

sys.path.insert(0, "experiments")
from dataclasses import replace
from pathlib import Path

from kind_fusion import eefafaa, load

from toolret.eval.lodo import baseline_metrics, default_setting, score_setting

sigs = load(Path(os.environ.get("CACHE", ".bench/lodo")))
t = default_setting("fast")
e = eefafaa()
pre = []
for s in sigs:
    b, c = baseline_metrics(s, "bm25"), baseline_metrics(s, "cosine")
    mt, me = score_setting(s, t), score_setting(s, e)
    pre.append(
        (
            max(b["recall@1"], c["recall@1"]),
            max(b["recall@5"], c["recall@5"]),
            max(mt["recall@5"], me["recall@5"]) - 0.01,
        )
    )
res = []
for sd, k, beta, hub, par in itertools.product(
    (0.02, 0.04, 0.08), (0, 1, 2.5, 4), (0.29, 0.35, 0.45), (-0.4, -0.2), (0.1, 0.25)
):
    st = replace(
        t,
        lexical_sd_floor=sd,
        cosine_weight=k,
        lexical_weight=beta,
        hubness_weight=hub,
        field_weights=(0.5, par, 0.1, 0.15, 0.1, 0.15, 0.05),
    )
    ms = [score_setting(s, st) for s in sigs]
    marg = [min(m["recall@1"] - p[0], m["recall@5"] - p[1], m["recall@5"] - p[2]) for m, p in zip(ms, pre)]
    wi = min(range(len(marg)), key=lambda i: marg[i])
    res.append((min(marg), sum(m["recall@5"] for m in ms) / len(ms), sd, k, beta, hub, par, sigs[wi].name))
res.sort(reverse=True)
for r in res[:12]:
    print(r)
