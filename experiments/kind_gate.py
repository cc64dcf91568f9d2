"""Issue 43 research: a per-request gate between a words-leaning and a meaning-leaning fusion (cached signals).

S(q, t) = (1 - g(q)) * S_meaning(q, t) + g(q) * S_words(q, t),  g(q) = sigmoid(a + b * x(q)),
x a feature of the request against its pool. Searched over (a, b) and scored leaving one registry out.
"""

from __future__ import annotations

import itertools
import os
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from kind_fusion import eefafaa, load  # noqa: E402

from toolret.eval.lodo import baseline_metrics, default_setting, fused_scores, score_metrics  # noqa: E402


def feats(sig):
    pool = sig.valid & (sig.rank < 50)
    d = pool[:, :, None] & sig.present
    lex = np.where(d[:, :, :1], sig.lex[:, :, :1], 0.0)[:, :, 0].astype(np.float64)
    cos = np.where(d[:, :, :1], sig.dense[:, :, :1], -1.0)[:, :, 0].astype(np.float64)
    bound = np.maximum(sig.bound[:, 0].astype(np.float64), 1e-9)
    ls = -np.sort(-lex, axis=1)
    cs = -np.sort(-cos, axis=1)
    qi = np.arange(sig.n_queries)
    tl, tc = lex.argmax(1), cos.argmax(1)
    return {
        "lexm": (ls[:, 0] - ls[:, 1]) / bound,
        "cov": ls[:, 0] / bound,
        "cosm": cs[:, 0] - cs[:, 1],
        "agree": cos[qi, tl] - cos[qi, tc],
        "oov": sig.qfeat[:, 1].astype(np.float64),
        "lexz": (ls[:, 0] - lex.mean(1)) / np.maximum(lex.std(1), 1e-9),
        "cosz": (cs[:, 0] - np.where(cos > -1, cos, 0).mean(1)) / np.maximum(np.where(cos > -1, cos, 0).std(1), 1e-9),
    }


def main():
    sigs = load(Path(os.environ.get("CACHE", ".bench/lodo")))
    t = default_setting("fast")
    meaning_k = float(sys.argv[1]) if len(sys.argv) > 1 else 2.5
    words = replace(eefafaa(), lexical_sd_floor=float(sys.argv[2]) if len(sys.argv) > 2 else 0.02)
    meaning = replace(t, cosine_weight=meaning_k)
    data = []
    for s in sigs:
        sm, _ = fused_scores(s, meaning)
        sw, _ = fused_scores(s, words)
        st, _ = fused_scores(s, t)
        se, _ = fused_scores(s, eefafaa())
        b, c = baseline_metrics(s, "bm25"), baseline_metrics(s, "cosine")
        mt, me = score_metrics(s, st), score_metrics(s, se)
        floor1 = max(b["recall@1"], c["recall@1"])
        floor5 = max(b["recall@5"], c["recall@5"], max(mt["recall@5"], me["recall@5"]) - 0.01)
        data.append((s, sm, sw, feats(s), floor1, floor5))
    names = list(data[0][3])
    for fname in names:
        allx = np.concatenate([d[3][fname] for d in data])
        mu, sd = allx.mean(), allx.std() + 1e-9
        grid = list(itertools.product([-3, -2, -1, -0.5, 0, 0.5, 1, 2, 3], [-4, -2, -1, 0, 1, 2, 4]))
        table = np.zeros((len(grid), len(data), 3))
        for gi, (a, bb) in enumerate(grid):
            for si, (s, sm, sw, f, f1, f5) in enumerate(data):
                g = 1 / (1 + np.exp(-(a + bb * (f[fname] - mu) / sd)))
                sc = np.where(np.isfinite(sm), (1 - g[:, None]) * sm + g[:, None] * sw, -np.inf)
                m = score_metrics(s, sc)
                table[gi, si] = (m["recall@1"] - f1, m["recall@5"] - f5, 0.5 * (m["recall@5"] + m["ndcg@10"]))
        # LODO: choose on the others by worst margin then mean objective
        worst_left, mean_left = [], []
        for si in range(len(data)):
            tr = [j for j in range(len(data)) if j != si]
            worst = table[:, tr, :2].min(axis=(1, 2))
            obj = table[:, tr, 2].mean(axis=1)
            key = np.where(worst >= 0, 10 + obj, worst)
            gi = int(np.argmax(key))
            worst_left.append(table[gi, si, :2].min())
            mean_left.append(table[gi, si, 2])
        gi_all = int(
            np.argmax(
                np.where(
                    table[:, :, :2].min(axis=(1, 2)) >= 0, 10 + table[:, :, 2].mean(1), table[:, :, :2].min(axis=(1, 2))
                )
            )
        )
        a, bb = grid[gi_all]
        w = table[gi_all, :, :2].min(axis=1)
        print(
            f"{fname:6} all-sets a={a} b={bb} worst={w.min():+.3f} ({data[int(w.argmin())][0].name}) obj={table[gi_all, :, 2].mean():.4f} | "
            f"LODO worst {min(worst_left):+.3f} ({data[int(np.argmin(worst_left))][0].name}) mean obj {np.mean(mean_left):.4f}"
        )


if __name__ == "__main__":
    main()
