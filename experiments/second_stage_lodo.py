"""Leave one registry out: does a second stage learned across registries beat ``fast``'s fusion?

A measurement record for the trained second stage (docs/models.md, "A second stage learned over
the engine's signals"), not part of the package. It reads the cached per-query signals that
``toolret bench --lodo`` extracts (``toolret.eval.signals``: BM25 and cosine per field, presence,
name match, parameter penalty, query evidence) and, for each fold of
``toolret.training.benchmarks.FOLDS``, trains on the other registries and scores the left-out
sets' 500-query samples (seed 0):

1. rerankers of ``fast``'s top 30: LightGBM's LambdaMART and a linear listwise (softmax) model,
   alone and interpolated 50/50 with the fused score (per-query z-scores);
2. ``k="auto"`` from calibrated probabilities (logistic regression over score gaps, rank and
   query evidence; threshold chosen on the training folds' multi-tool sets) against the margin cut.

``--fold-models .train/lodo`` adds the fold embedders' cosines on every field as features (the
models ``toolret train --lodo`` writes; each set gets the one trained without it).

Run from the repository root with the dev environment plus LightGBM::

    .venv/bin/pip install lightgbm
    .venv/bin/python experiments/second_stage_lodo.py --cache .bench/second-stage

The first run extracts signals (about 3 minutes on two cores); ``--train-limit 2000`` adds a
larger, differently seeded sample of the training registries (about 6 minutes more).
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from common import recall_ndcg

from toolret.eval.lodo import Setting, _zscore, default_setting, fused_scores
from toolret.eval.scale import ComposedEmbedder
from toolret.eval.signals import DatasetSignals, load_or_extract
from toolret.index.embedding import resolve_embedder
from toolret.training.benchmarks import DEV_SETS, FOLDS

TOP_N = 30
CUT_K = 5


def signals(root: Path, cache: Path, limit: int, seed: int) -> dict[str, DatasetSignals]:
    embedder = ComposedEmbedder(resolve_embedder(None), cache_path=cache / "embeddings.npz")
    out = {name: load_or_extract(root / name, cache, embedder, limit=limit, seed=seed) for name in DEV_SETS}
    embedder.save()
    return out


def candidate_features(sig: DatasetSignals, st: Setting) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """([Q, C, D] features, [Q, C] top-N mask, [Q, C] fused score) of every candidate."""
    s0, pool = fused_scores(sig, st)
    q, c = s0.shape
    order = np.argsort(-s0, axis=1, kind="stable")
    rank0 = np.empty_like(order)
    np.put_along_axis(rank0, order, np.tile(np.arange(c), (q, 1)), axis=1)
    top = pool & (rank0 < TOP_N)
    fin = np.where(top, s0, np.nan)
    best = np.nanmax(fin, axis=1, keepdims=True)
    mean, sd = np.nanmean(fin, axis=1, keepdims=True), np.nanstd(fin, axis=1, keepdims=True) + 1e-6
    pres = sig.present & top[:, :, None]
    dense, lex = sig.dense.astype(np.float64), sig.lex.astype(np.float64)
    dz, lz = _zscore(dense, pres, 0.0), _zscore(lex, pres, 0.0)
    bound = sig.bound[:, None, :].astype(np.float64)
    lex_share = np.where(bound > 0, lex / np.where(bound > 0, bound, 1), 0)
    dense_gap = np.where(pres, dense - np.where(pres, dense, -1).max(axis=1, keepdims=True), -1)
    cols = [
        np.where(top, s0 - best, 0),
        np.where(top, (s0 - mean) / sd, 0),
        np.log1p(rank0),
        np.log1p(np.minimum(sig.rank, 1000)),
        sig.named.astype(float),
        sig.penalty,
        np.full((q, c), np.log(sig.n_tools)),
    ]
    for f in range(dense.shape[2]):
        cols += [np.where(pres[:, :, f], dense[:, :, f], 0), dz[:, :, f], dense_gap[:, :, f]]
        cols += [lex_share[:, :, f], lz[:, :, f], pres[:, :, f].astype(float)]
    cols += [np.repeat(sig.qfeat[:, None, j], c, axis=1) for j in range(sig.qfeat.shape[1])]
    return np.stack(cols, axis=2).astype(np.float32), top, s0


def fit_listwise(x: np.ndarray, y: np.ndarray, groups: list[int], iters: int = 300, lr: float = 0.1) -> Any:
    """Linear scorer, softmax over each query's candidates towards its relevant ones (L2 1e-3)."""
    mu, sd = x.mean(0), x.std(0) + 1e-6
    z, w = (x - mu) / sd, np.zeros(x.shape[1])
    starts = np.cumsum([0, *groups])
    for _ in range(iters):
        s, grad = z @ w, np.zeros_like(w)
        for a, b in zip(starts[:-1], starts[1:]):
            e = np.exp(s[a:b] - s[a:b].max())
            grad += z[a:b].T @ (e / e.sum() - y[a:b] / y[a:b].sum())
        w -= lr * (grad / len(groups) + 1e-3 * w)
    return lambda v: ((v - mu) / sd) @ w


def fit_lambdamart(x: np.ndarray, y: np.ndarray, groups: list[int]) -> Any:
    import lightgbm as lgb

    model = lgb.LGBMRanker(
        n_estimators=100, learning_rate=0.05, num_leaves=7, min_child_samples=100, random_state=0, verbose=-1
    )
    model.fit(x, y, group=groups)
    return model.predict


def query_z(a: np.ndarray, mask: np.ndarray) -> np.ndarray:
    v = np.where(mask, a, np.nan)
    return (a - np.nanmean(v, 1, keepdims=True)) / (np.nanstd(v, 1, keepdims=True) + 1e-9)


def with_trained_cosines(
    feats: dict[str, Any], sigs: dict[str, DatasetSignals], root: Path, folds: Path
) -> dict[str, Any]:
    """Each set's features plus the fold model's cosine (raw and z-scored) on every field, the fold
    model being the one trained without the set (``experiments/two_embedders.py``)."""
    from two_embedders import FOLD_OF, trained_cosines

    from toolret.documents.tool_doc import INDEX_FIELDS
    from toolret.index.onnx_embedding import OnnxEmbedder

    stock = ComposedEmbedder(resolve_embedder(None))
    out = {}
    for n, (x, top, s0) in feats.items():
        model = OnnxEmbedder(model_dir=folds / FOLD_OF[n] / "onnx")
        cos = trained_cosines(sigs[n], root, stock, model, list(INDEX_FIELDS)).astype(np.float64)
        pres = sigs[n].present & top[:, :, None]
        extra = np.concatenate([np.where(pres, cos, 0), _zscore(cos, pres, 0.0)], axis=2).astype(np.float32)
        out[n] = (np.concatenate([x, extra], axis=2), top, s0)
    return out


def rerankers(test: dict[str, Any], train: dict[str, Any], st: Setting, root: Path, folds: Path | None) -> None:
    feats = {n: candidate_features(s, st) for n, s in test.items()}
    train_feats = feats if train is test else {n: candidate_features(s, st) for n, s in train.items()}
    if folds is not None:  # the trained embedder's cosines as features too (the same samples only)
        feats = train_feats = with_trained_cosines(feats, test, root, folds)
    print(f"\nRerank fast's top {TOP_N}: left-out R@5 (NDCG@10), fast -> learned")
    for kind, fit in (("lambdamart", fit_lambdamart), ("linear listwise", fit_listwise)):
        for alpha in (1.0, 0.5):
            deltas: list[float] = []
            line = []
            for left in FOLDS.values():
                xs, ys, gs = [], [], []
                for n, (x, top, _) in train_feats.items():
                    if n in left:
                        continue
                    for qi in range(x.shape[0]):
                        m = top[qi]
                        if train[n].rel[qi][m].any():
                            xs.append(x[qi][m])
                            ys.append(train[n].rel[qi][m].astype(float))
                            gs.append(int(m.sum()))
                predict = fit(np.concatenate(xs), np.concatenate(ys), gs)
                for n in left:
                    x, top, s0 = feats[n]
                    p = predict(x.reshape(-1, x.shape[2])).reshape(x.shape[:2])
                    with warnings.catch_warnings():  # a query without candidates: an all-NaN row
                        warnings.simplefilter("ignore", RuntimeWarning)
                        mixed = alpha * query_z(p, top) + (1 - alpha) * query_z(s0, top)
                    (r0, n0), (r1, n1) = recall_ndcg(s0, test[n]), recall_ndcg(np.where(top, 1000 + mixed, s0), test[n])
                    deltas.append(r1 - r0)
                    line.append(f"{n} {r0:.3f}->{r1:.3f} ({n0:.3f}->{n1:.3f})")
            label = kind if alpha == 1 else f"{kind}, 50/50 with fast"
            print(f"- {label}: mean dR@5 {np.mean(deltas):+.4f}, worst {min(deltas):+.4f}\n    " + "\n    ".join(line))


def cut_features(sig: DatasetSignals, st: Setting) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    s0, _ = fused_scores(sig, st)
    order = np.argsort(-s0, 1, kind="stable")[:, :CUT_K]
    sc = np.take_along_axis(s0, order, 1)
    fin = np.isfinite(sc)
    rel = np.take_along_axis(sig.rel, order, 1) & fin
    sc = np.where(fin, sc, sc[:, :1] - 10)
    q = sc.shape[0]
    gap_next = np.concatenate([sc[:, :-1] - sc[:, 1:], np.zeros((q, 1))], 1)
    gap_prev = np.concatenate([np.zeros((q, 1)), sc[:, :-1] - sc[:, 1:]], 1)
    rank = np.tile(np.arange(CUT_K), (q, 1))
    cols = [sc - sc[:, :1], gap_next, gap_prev, (sc - sc[:, :1]) / (sc.std(1, keepdims=True) + 1e-6)]
    cols += [np.log1p(rank), (rank == 0).astype(float), np.take_along_axis(sig.named, order, 1).astype(float)]
    cols += [np.repeat(sc[:, :1] - sc[:, 1:2], CUT_K, 1)]
    cols += [np.repeat(sig.qfeat[:, None, j], CUT_K, 1) for j in range(sig.qfeat.shape[1])]
    return np.stack(cols, 2), rel, sc, fin


def tracc(keep: np.ndarray, rel: np.ndarray, n_rel: np.ndarray) -> float:
    b, hit = keep.sum(1), (rel & keep).sum(1)
    return float(((hit / n_rel) * (1 - np.abs(b - n_rel) / np.maximum(n_rel + b - hit, 1))).mean())


def fit_logistic(x: np.ndarray, y: np.ndarray, iters: int = 500, lr: float = 0.5) -> Any:
    mu, sd = x.mean(0), x.std(0) + 1e-6
    z, w, b = (x - mu) / sd, np.zeros(x.shape[1]), 0.0
    for _ in range(iters):
        g = 1 / (1 + np.exp(-(z @ w + b))) - y
        w -= lr * (z.T @ g / len(y) + 1e-2 * w)
        b -= lr * g.mean()
    return lambda v: 1 / (1 + np.exp(-(((v - mu) / sd) @ w + b)))


def calibrated_cut(test: dict[str, DatasetSignals], st: Setting) -> None:
    data = {n: cut_features(s, st) for n, s in test.items()}
    taus = np.concatenate([np.arange(0.01, 0.1, 0.01), np.arange(0.1, 0.9, 0.05)])
    print(f"\nk='auto' TRACC: fast's margin cut ({st.auto_margin:g}) | calibrated cut | known-size cut")
    deltas = []
    for left in FOLDS.values():
        tr = [n for n in data if n not in left]
        prob = fit_logistic(
            np.concatenate([data[n][0].reshape(-1, data[n][0].shape[2]) for n in tr]),
            np.concatenate([data[n][1].reshape(-1) for n in tr]).astype(float),
        )

        def cut(n: str, tau: float, prob: Any = prob) -> float:
            x, rel, _, fin = data[n]
            keep = (prob(x.reshape(-1, x.shape[2])).reshape(x.shape[:2]) >= tau) & fin
            keep[:, 0] = True
            return tracc(keep, rel, test[n].n_rel)

        multi = [n for n in tr if test[n].n_rel.mean() > 1.2] or tr
        tau = float(taus[int(np.argmax([np.mean([cut(n, t) for n in multi]) for t in taus]))])
        for n in left:
            _, rel, sc, fin = data[n]
            margin = tracc(fin & (sc >= sc[:, :1] - st.auto_margin), rel, test[n].n_rel)
            known = fin & (np.arange(CUT_K)[None] < test[n].n_rel[:, None])
            deltas.append(cut(n, tau) - margin)
            print(
                f"- {n}: {margin:.3f} | {cut(n, tau):.3f} (threshold {tau:.2f}) | {tracc(known, rel, test[n].n_rel):.3f}"
            )
    print(f"  mean dTRACC {np.mean(deltas):+.4f}, worst {min(deltas):+.4f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=Path("../shared/benchmarks"))
    ap.add_argument("--cache", type=Path, default=Path(".bench/second-stage"))
    ap.add_argument(
        "--train-limit", type=int, default=0, help="train on a larger sample (seed 1) of the other registries"
    )
    ap.add_argument("--fold-models", type=Path, help="add each fold model's cosines as features (.train/lodo)")
    a = ap.parse_args()
    test = signals(a.root, a.cache / "eval", 500, 0)
    train = signals(a.root, a.cache / f"train{a.train_limit}", a.train_limit, 1) if a.train_limit else test
    st = default_setting("fast")
    rerankers(test, train, st, a.root, a.fold_models)
    calibrated_cut(test, st)


if __name__ == "__main__":
    main()
