"""Issue 43 research: which kind of request is it, and how should the fusion follow it? (cached signals)

Reads every dev set's cached signals (``toolret bench --lodo`` or ``.train/extract_all.py``), scores
today's fusion and the eefafaa fusion (before issues 34-35), and per-query mixtures of the two driven
by features of the request, chosen leaving one registry out.

Usage: .venv/bin/python experiments/kind_fusion.py [--cache .bench/lodo]
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

import numpy as np

from toolret.eval.lodo import baseline_metrics, default_setting, fused_scores, score_metrics
from toolret.eval.signals import DatasetSignals


def eefafaa():
    t = default_setting("fast")
    return replace(
        t,
        lexical_weight=0.35,
        lexical_sd_floor=0.02,
        hubness_weight=-0.4,
        field_weights=(0.5, 0.25, 0.1, 0.15, 0.1, 0.15, 0.05),
        cosine_weight=0.0,
        evidence_slope=0.5,
        fusion_method="heuristic",
    )


def meaning():
    """The description's cosine alone: no lexical share, no other field, no anchor, no hubness."""
    return replace(
        default_setting("fast"),
        lexical_weight=0.0,
        evidence_slope=0.0,
        field_weights=(1, 0, 0, 0, 0, 0, 0),
        cosine_weight=0.0,
        hubness_weight=0.0,
    )


def load(cache: Path) -> list[DatasetSignals]:
    out = []
    for p in sorted(cache.glob("*.npz")):
        if p.name.startswith("embeddings") or ".train" in p.name:  # training splits are not scored
            continue
        s = DatasetSignals.load(p)
        if s is not None:
            out.append(s)
    return out


def features(sig: DatasetSignals) -> dict[str, np.ndarray]:
    pool = sig.valid & (sig.rank < 50)
    lex = np.where(pool[:, :, None] & sig.present, sig.lex, 0.0)
    dense = np.where(pool[:, :, None] & sig.present, sig.dense, -1.0)
    bound = np.maximum(sig.bound[:, 0], 1e-9)
    cov = lex[:, :, 0].max(axis=1) / bound
    top_lex = lex[:, :, 0].argmax(axis=1)
    top_cos = dense[:, :, 0].argmax(axis=1)
    qi = np.arange(sig.n_queries)
    agree = dense[qi, top_lex, 0] - dense[qi, top_cos, 0]  # 0 when BM25's best is cosine's best
    return {
        "cov": cov,
        "oov": sig.qfeat[:, 1].astype(np.float64),
        "agree": agree,
        "maxcos": dense[:, :, 0].max(axis=1),
    }


def metrics(sig, score):
    return score_metrics(sig, score)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", type=Path, default=Path(".bench/lodo"))
    a = ap.parse_args()
    sigs = load(a.cache)
    today, old = default_setting("fast"), eefafaa()
    print(f"{'set':<18} {'bm25':>11} {'cosine':>11} {'today':>11} {'eefafaa':>11}  cov    oov   agree")
    cache = {}
    for sig in sigs:
        st, _ = fused_scores(sig, today)
        se, _ = fused_scores(sig, old)
        cache[sig.name] = (st, se, features(sig))
        b, c = baseline_metrics(sig, "bm25"), baseline_metrics(sig, "cosine")
        mt, me = metrics(sig, st), metrics(sig, se)
        f = cache[sig.name][2]
        print(
            f"{sig.name:<18} {b['recall@1']:.3f}/{b['recall@5']:.3f} {c['recall@1']:.3f}/{c['recall@5']:.3f} "
            f"{mt['recall@1']:.3f}/{mt['recall@5']:.3f} {me['recall@1']:.3f}/{me['recall@5']:.3f}  "
            f"{f['cov'].mean():.3f} {f['oov'].mean():.3f} {f['agree'].mean():.3f}"
        )


if __name__ == "__main__":
    main()


def per_query_hits(sig, score, k):
    order = np.argsort(-score, axis=1, kind="stable")[:, :k]
    hits = np.take_along_axis(sig.rel, order, axis=1) & np.isfinite(np.take_along_axis(score, order, axis=1))
    return hits.sum(axis=1) / sig.n_rel


def analyse(cache: Path) -> None:
    sigs = load(cache)
    today, old = default_setting("fast"), eefafaa()
    rows = []
    for sig in sigs:
        st, _ = fused_scores(sig, today)
        se, _ = fused_scores(sig, old)
        f = features(sig)
        dt = per_query_hits(sig, st, 5) + per_query_hits(sig, st, 1)
        de = per_query_hits(sig, se, 5) + per_query_hits(sig, se, 1)
        better_e, better_t = de > dt, dt > de
        line = f"{sig.name:<18} n_e>{better_e.sum():4d} n_t>{better_t.sum():4d} "
        for k, v in f.items():
            line += f" {k}: {v[better_e].mean() if better_e.any() else float('nan'):.3f}/{v[better_t].mean() if better_t.any() else float('nan'):.3f}"
        print(line)
        rows.append((sig.name, f, better_e, better_t))
