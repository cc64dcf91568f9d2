"""Issue 43 (second embedder): margins of candidate fusions against the two-sided floor on cached signals.

floor R@1 = max(bm25, cosine); floor R@5 = max(bm25, cosine, max(ec3e34e, eefafaa) - .01).
Usage: CACHE=.bench/lodo43 python experiments/kind43.py
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from kind_fusion import eefafaa, load  # noqa: E402

from toolret.eval.lodo import baseline_metrics, default_setting, fused_scores, score_metrics  # noqa: E402

NATURAL = {"slack_web", "mcp_catalog", "banking77", "hwu64", "conala_pyfunc", "snips", "taubench"}


def floors(sigs):
    t, e = replace(default_setting("fast"), fusion_method="heuristic"), eefafaa()
    out = {}
    for s in sigs:
        b, c = baseline_metrics(s, "bm25"), baseline_metrics(s, "cosine")
        mt, me = score_metrics(s, fused_scores(s, t)[0]), score_metrics(s, fused_scores(s, e)[0])
        out[s.name] = (
            max(b["recall@1"], c["recall@1"]),
            max(b["recall@5"], c["recall@5"], max(mt["recall@5"], me["recall@5"]) - 0.01),
        )
    return out


def report(sigs, fl, scores_by_set, label, verbose=True):
    worst = (9.0, "")
    rows = []
    for s in sigs:
        m = score_metrics(s, scores_by_set[s.name])
        m1, m5 = m["recall@1"] - fl[s.name][0], m["recall@5"] - fl[s.name][1]
        rows.append((s.name, m["recall@1"], m["recall@5"], m1, m5))
        if min(m1, m5) < worst[0]:
            worst = (min(m1, m5), s.name)
    mean5 = np.mean([r[2] for r in rows])
    if verbose:
        for r in rows:
            print(f"  {r[0]:<18} {r[1]:.3f}/{r[2]:.3f}  {r[3]:+.3f}/{r[4]:+.3f}")
    print(f"{label}: worst {worst[0]:+.3f} ({worst[1]}) mean R@5 {mean5:.4f}")
    return worst


if __name__ == "__main__":
    sigs = load(Path(os.environ.get("CACHE", ".bench/lodo43")))
    fl = floors(sigs)
    t = default_setting("fast")
    desc_only = replace(
        t,
        lexical_weight=0.0,
        evidence_slope=0.0,
        field_weights=(1, 0, 0, 0, 0, 0, 0),
        cosine_weight=0.0,
        hubness_weight=0.0,
        name_match_boost=0.0,
        penalty_scale=0.0,
    )
    for label, st in [
        ("today", t),
        ("eefafaa", eefafaa()),
        ("desc dense only", desc_only),
        ("today beta0", replace(t, lexical_weight=0.0, evidence_slope=0.0)),
    ]:
        report(sigs, fl, {s.name: fused_scores(s, st)[0] for s in sigs}, label)
