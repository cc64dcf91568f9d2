"""Fitting the learned fusion (:mod:`toolret.scoring.learned_fusion`) and its leave-one-registry-out table.

Data: each train+eval dev set's cached signals (:mod:`toolret.eval.signals`, 500-request samples,
seed 0), the training split where a set has one (banking77, hwu64, snips), never an eval-only set.
Loss: listwise, each request's softmax over its candidate pool, the log-probability of its
relevant tools averaged; every set counts the same whatever its size; an L2 penalty keeps the
request interactions small. Adam, full batch, a fixed number of steps, from the heuristic
fusion's own balance (a deterministic start: no seed to choose).

The check (:func:`fold_table`): for every trainable fold the coefficients are refitted without
it and scored on its sets' test requests; the eval-only sets are scored by the coefficients fitted
on every trainable registry, which is what ships.

Needs torch (the ``train`` extra), imported when a fit runs.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from toolret.eval.folds import EVAL_ONLY_SETS, FOLDS, TRAINABLE_FOLDS
from toolret.eval.fusion_signals import FusionArrays, fusion_arrays, score_arrays
from toolret.eval.signals import DatasetSignals
from toolret.scoring.learned_fusion import INTERACTING, REQUEST_FEATURES, FusionModel

__all__ = [
    "FitConfig",
    "FusionArrays",
    "fit_fusion",
    "fold_table",
    "format_fold_table",
    "fusion_arrays",
    "score_arrays",
]

logger = logging.getLogger("toolret")


@dataclass(frozen=True)
class FitConfig:
    steps: int = 300
    learning_rate: float = 0.03
    l2: float = 0.01


def training_arrays(sig: DatasetSignals) -> FusionArrays:
    """A set's arrays for a fit: :func:`fusion_arrays` with the hand-set fusion's scores (``fusion-ec3e34e``),
    the unit :func:`spread_ratio` scales the fitted scores to."""
    from toolret.eval.lodo import fused_scores, setting_of
    from toolret.eval.reference_fusions import reference_config

    hand_set, _ = fused_scores(sig, setting_of(reference_config("fusion-ec3e34e")))
    return fusion_arrays(sig, hand_set=hand_set)


def fit_fusion(
    train: Sequence[FusionArrays], config: FitConfig = FitConfig(), card: Mapping[str, Any] | None = None
) -> FusionModel:
    """Coefficients fitted on ``train`` (each set weighted the same); see the module docstring."""
    import torch

    if not train:
        raise ValueError("fit_fusion needs at least one set")
    requests = np.concatenate([a.request for a in train])
    mean = requests.mean(axis=0)
    sd = requests.std(axis=0)
    sd = np.where(sd > 1e-9, sd, 1.0)
    start = [1.0, 0.3, 0.1, 0.1, 2.5, 0.2, 1.0, 0.0, 0.0, 0.0]  # the heuristic fusion's balance, roughly
    w = torch.tensor(start, dtype=torch.float64, requires_grad=True)
    u = torch.zeros((len(INTERACTING), len(REQUEST_FEATURES)), dtype=torch.float64, requires_grad=True)
    idx = torch.tensor(INTERACTING)
    batches = []
    for a in train:
        keep = a.relevant.any(axis=1)
        if not keep.any():
            continue
        batches.append(
            (
                torch.tensor(a.x[keep]),
                torch.tensor((a.request[keep] - mean) / sd),
                torch.tensor(a.pool[keep]),
                torch.tensor(a.relevant[keep]),
            )
        )
    opt = torch.optim.Adam([w, u], lr=config.learning_rate)
    for _ in range(config.steps):
        opt.zero_grad()
        loss = torch.zeros((), dtype=torch.float64)
        for x, r, pool, rel in batches:
            coef = w[None, :].expand(len(r), -1).clone()
            coef[:, idx] = coef[:, idx] + r @ u.T
            score = (x * coef[:, None, :]).sum(-1).masked_fill(~pool, -1e9)
            logp = torch.log_softmax(score, dim=1)
            per = (logp * rel).sum(1) / rel.sum(1)
            loss = loss - per.mean() / len(batches)
        loss = loss + config.l2 * (u**2).sum()
        loss.backward()
        opt.step()
    fitted = FusionModel(
        weights=tuple(round(float(v), 6) for v in w.detach().numpy()),
        interactions=tuple(tuple(round(float(v), 6) for v in row) for row in u.detach().numpy()),
        request_mean=tuple(round(float(v), 6) for v in mean),
        request_sd=tuple(round(float(v), 6) for v in sd),
        card=dict(card or {}),
    )
    return fitted.model_copy(update={"scale": round(spread_ratio(fitted, train), 6)})


def spread_ratio(model: FusionModel, arrays: Sequence[FusionArrays]) -> float:
    """The median over requests of the model's score spread over the pool (standard deviation) divided by
    the hand-set fusion's on the same request (:attr:`FusionArrays.heuristic`, :func:`training_arrays`); 1 without those."""
    ratios: list[float] = []
    for a in arrays:
        if a.heuristic is None:
            continue
        sd_learned = _pool_sd(model.scores(a.x, a.request), a.pool)
        sd_hand = _pool_sd(a.heuristic, a.pool)
        ok = (sd_hand > 1e-9) & (a.pool.sum(axis=1) > 1)
        ratios.extend((sd_learned[ok] / sd_hand[ok]).tolist())
    return float(np.median(ratios)) if ratios else 1.0


def _pool_sd(scores: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """[Q] each request's score standard deviation over its pool."""
    n = np.maximum(pool.sum(axis=1, keepdims=True), 1)
    x = np.where(pool, scores, 0.0)
    mean = x.sum(axis=1, keepdims=True) / n
    return np.sqrt(np.where(pool, (x - mean) ** 2, 0.0).sum(axis=1) / n[:, 0])


def _recalls(sig: DatasetSignals, score: np.ndarray) -> dict[str, float]:
    from toolret.eval.lodo import score_metrics

    m = score_metrics(sig, score)
    return {"recall@1": m["recall@1"], "recall@5": m["recall@5"], "ndcg@10": m["ndcg@10"]}


def fold_table(
    test: Mapping[str, DatasetSignals],
    train: Mapping[str, FusionArrays],
    config: FitConfig = FitConfig(),
    full: FusionModel | None = None,
) -> list[dict[str, Any]]:
    """One row per test set: the learned fusion fitted without its registry (eval-only sets: ``full``),
    beside BM25, cosine and the heuristic fusion (``fusion-ec3e34e``, :mod:`toolret.eval.reference_fusions`)."""
    from toolret.eval.lodo import baseline_metrics, fused_scores, setting_of
    from toolret.eval.reference_fusions import reference_config

    heuristic = setting_of(reference_config("fusion-ec3e34e"))
    full = full or fit_fusion(list(train.values()), config)
    rows = []
    fold_of = {s: f for f, sets in FOLDS.items() for s in sets}
    models: dict[str, FusionModel] = {}
    for name, sig in test.items():
        fold = fold_of.get(name, name)
        if name in EVAL_ONLY_SETS or fold not in TRAINABLE_FOLDS:
            model, how = full, "all train+eval registries"
        else:
            if fold not in models:
                rest = [a for n, a in train.items() if fold_of.get(n.removesuffix(".train"), n) != fold]
                models[fold] = fit_fusion(rest, config)
            model, how = models[fold], f"without {fold}"
        arrays = fusion_arrays(sig)
        row = {
            "set": name,
            "fitted": how,
            "learned": _recalls(sig, score_arrays(model, arrays)),
            "heuristic": _recalls(sig, fused_scores(sig, heuristic)[0]),
        }
        for method in ("bm25", "cosine"):
            b = baseline_metrics(sig, method)
            row[method] = {k: b[k] for k in ("recall@1", "recall@5", "ndcg@10")}
        rows.append(row)
        logger.info("fusion fold %s: %s", name, row["learned"])
    return rows


def format_fold_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """Markdown: R@1 / R@5 of each method, and the learned fusion's margin over the better single signal."""
    lines = [
        "| set | fitted | BM25 | cosine | heuristic fast | learned | learned − best single (R@1 / R@5) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        cell = {
            k: f"{r[k]['recall@1']:.3f} / {r[k]['recall@5']:.3f}" for k in ("bm25", "cosine", "heuristic", "learned")
        }
        d1 = r["learned"]["recall@1"] - max(r["bm25"]["recall@1"], r["cosine"]["recall@1"])
        d5 = r["learned"]["recall@5"] - max(r["bm25"]["recall@5"], r["cosine"]["recall@5"])
        lines.append(
            f"| {r['set']} | {r['fitted']} | {cell['bm25']} | {cell['cosine']} | {cell['heuristic']} | {cell['learned']} "
            f"| {d1:+.3f} / {d5:+.3f} |"
        )
    return "\n".join(lines)
