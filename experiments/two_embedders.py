"""Keep the stock model and add a trained one: does the mix gain leave one registry out?

A measurement record (docs/models.md, the variants table), not part of the package. Each dev set's
cached signals (``toolret.eval.signals``, stock model) get a second cosine per field from the fold
model that never saw the set (``toolret train --lodo --out .train/lodo`` writes them to
``.train/lodo/<fold>/onnx``). The dense score of a field becomes ``(1 - λ) z(stock) + λ z(trained)``
(per-query z-scores, as ``fast`` standardises), and λ with the lexical share is chosen on the
other registries, then scored on the left-out one (R@5 against ``fast``)::

    .venv/bin/python experiments/two_embedders.py --folds .train/lodo --cache .bench/second-stage/eval
    .venv/bin/python experiments/two_embedders.py --fields description,parameters,response,examples,profile,questions,topics
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
from common import recall_ndcg, snapshot_docs

from toolret.documents.tool_doc import INDEX_FIELDS
from toolret.eval.datasets import load_dataset
from toolret.eval.lodo import _HUB_MASK, Setting, _zscore_shared, default_setting, evidence_of, fused_scores
from toolret.eval.scale import ComposedEmbedder
from toolret.eval.signals import DatasetSignals, load_or_extract
from toolret.index.embedding import resolve_embedder
from toolret.index.expansion import expand_offline
from toolret.index.onnx_embedding import OnnxEmbedder
from toolret.training.benchmarks import DEV_SETS, FOLDS

FOLD_OF = {s: f for f, sets in FOLDS.items() for s in sets}
LAMBDAS = (0.0, 0.25, 0.5, 0.75, 1.0)
BETAS = (0.25, 0.35, 0.45)


def trained_cosines(
    sig: DatasetSignals, root: Path, stock: ComposedEmbedder, model: OnnxEmbedder, fields: list[str]
) -> np.ndarray:
    """[Q, C, len(fields)]: the fold model's cosine of each cached candidate, per field."""
    ds = load_dataset(root / sig.name)
    docs = snapshot_docs(root, sig.name, stock)
    queries = np.asarray(model.embed([q.query for q in ds.sample(500, seed=0).queries]))
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    out = np.zeros((*sig.dense.shape[:2], len(fields)), np.float32)
    for j, field in enumerate(fields):
        tools = np.asarray(model.embed([expand_offline(d).field_text(field) or " " for d in docs]))  # type: ignore[arg-type]
        tools /= np.linalg.norm(tools, axis=1, keepdims=True) + 1e-9
        out[:, :, j] = np.take_along_axis(queries @ tools.T, np.where(sig.cand >= 0, sig.cand, 0), 1)
    return out


def mixed_scores(
    sig: DatasetSignals, trained: np.ndarray, fields: list[str], s: Setting, lam: float, beta: float
) -> np.ndarray:
    """``fast``'s fused score (zscore normalisation) with each listed field's cosine mixed."""
    pool = sig.valid & (sig.rank < s.candidates_per_field)
    pres = sig.present & pool[:, :, None]
    dense = sig.dense.astype(np.float64) - s.hubness_weight * np.where(_HUB_MASK, sig.hub, 0.0)
    lex = _zscore_shared(
        sig.lex.astype(np.float64),
        pres,
        s.lexical_sd_floor * sig.bound[:, None, :].astype(np.float64),
        s.min_field_pool,
    )
    dn = _zscore_shared(dense, pres, s.dense_sd_floor, s.min_field_pool)
    for j, field in enumerate(fields):
        f = INDEX_FIELDS.index(field)
        t = _zscore_shared(
            trained[:, :, j : j + 1].astype(np.float64), pres[:, :, f : f + 1], s.dense_sd_floor, s.min_field_pool
        )
        dn[:, :, f] = (1 - lam) * dn[:, :, f] + lam * t[:, :, 0]
    b = 1.0 / (1.0 + np.exp(-(math.log(beta / (1 - beta)) + s.evidence_slope * evidence_of(sig.qfeat))))
    w = np.asarray(s.field_weights)
    per_field = np.where(pres, b[:, None, None] * lex + (1 - b[:, None, None]) * dn, 0.0)
    score = (per_field * w).sum(2) / np.maximum((pres * w).sum(2), 1e-12)
    score = score + s.name_match_boost * sig.named - s.penalty_scale * sig.penalty
    return np.where(pool, score, -np.inf)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=Path("../shared/benchmarks"))
    ap.add_argument("--cache", type=Path, default=Path(".bench/second-stage/eval"))
    ap.add_argument("--folds", type=Path, default=Path(".train/lodo"))
    ap.add_argument("--fields", default="description")
    a = ap.parse_args()
    fields = a.fields.split(",")
    st = default_setting("fast")
    stock = ComposedEmbedder(resolve_embedder(None), cache_path=a.cache / "embeddings.npz")
    sigs = {n: load_or_extract(a.root / n, a.cache, stock) for n in DEV_SETS}
    trained = {
        n: trained_cosines(sig, a.root, stock, OnnxEmbedder(model_dir=a.folds / FOLD_OF[n] / "onnx"), fields)
        for n, sig in sigs.items()
    }
    grid = [(lam, beta) for lam in LAMBDAS for beta in BETAS]
    table = {
        n: [recall_ndcg(mixed_scores(sigs[n], trained[n], fields, st, lam, b), sigs[n]) for lam, b in grid]
        for n in sigs
    }
    deltas = []
    for n, sig in sigs.items():
        base = recall_ndcg(fused_scores(sig, st)[0], sig)
        others = [m for m in sigs if FOLD_OF[m] != FOLD_OF[n]]
        g = int(np.argmax([np.mean([sum(table[m][i]) / 2 for m in others]) for i in range(len(grid))]))
        r5, nd = table[n][g]
        deltas.append(r5 - base[0])
        print(
            f"{n}: λ {grid[g][0]:g}, lexical share {grid[g][1]:g}: R@5 {base[0]:.3f} -> {r5:.3f} ({r5 - base[0]:+.3f}), NDCG@10 {base[1]:.3f} -> {nd:.3f}"
        )
    print(f"left-out mean ΔR@5 {np.mean(deltas):+.4f}, worst {min(deltas):+.4f}")


if __name__ == "__main__":
    main()
