"""Learning the scorer from logged or labelled (request -> tools used) bundles.

MFTR learns its field weights from pairs with a pairwise logistic loss; toolret does the same
over the features of :data:`toolret.scoring.FEATURE_NAMES` (per-field lexical and dense
scores, field presence, the parameter penalty, exact-name match, the tool-use memory and the
hand-set MFTR score itself). For each bundle, its tools are the positives and the best-ranked
other candidates the hard negatives; the loss is

    L(θ) = mean over pairs log(1 + exp(-θ · (φ(pos) - φ(neg))))  +  λ ||θ - θ0||²

with θ0 the hand-set formula (weight 1 on "heuristic", 0 elsewhere), so a fit on few pairs
stays near the defaults. While collecting features a request's own bundle is left out of the
memory, so the model cannot learn "the memory always knows the answer".

Example:
    >>> import numpy as np
    >>> diffs = np.array([[1.0, 0.0], [0.5, 0.1], [0.8, -0.2]])
    >>> coef, before, after = fit_pairwise(diffs, np.array([0.0, 1.0]), l2=1e-3)
    >>> bool(after < before and coef[0] > 0)
    True
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np

from toolret.config import LearnedWeights, RetrievalConfig
from toolret.history import HistorySnapshot
from toolret.ranking import rank_query
from toolret.scoring import FEATURE_NAMES
from toolret.snapshot import Snapshot

__all__ = ["collect_pair_diffs", "fit_pairwise", "fit_weights"]


def collect_pair_diffs(
    snap: Snapshot,
    embedder: Any,
    history: HistorySnapshot,
    bundles: Sequence[tuple[str, Sequence[str]]],
    config: RetrievalConfig,
    *,
    negatives: int = 10,
) -> tuple[np.ndarray, int]:
    """Feature differences φ(pos) - φ(neg) for every positive/hard-negative pair, and the query count."""
    cfg = config.model_copy(update={"learned": None})
    diffs: list[np.ndarray] = []
    used = 0
    for start in range(0, len(bundles), 256):
        chunk = bundles[start : start + 256]
        vectors = embedder.embed([q for q, _ in chunk])
        for (query, tools), qvec in zip(chunk, vectors):
            memory = history.tool_scores(qvec, m=cfg.history_neighbors, exclude_query=query)
            hist = {snap.index_of[t]: s for t, s in memory.items() if t in snap.index_of} or None
            ranked, _, _ = rank_query(snap, query, qvec, cfg, None, hist)
            relevant = {snap.index_of[t] for t in tools if t in snap.index_of}
            pos = [np.asarray(c.features) for c in ranked if c.index in relevant]
            neg = [np.asarray(c.features) for c in ranked if c.index not in relevant][:negatives]
            if not pos or not neg:
                continue
            used += 1
            diffs.extend(p - n for p in pos for n in neg)
    matrix = np.stack(diffs) if diffs else np.zeros((0, len(FEATURE_NAMES)))
    return matrix, used


def _loss(diffs: np.ndarray, coef: np.ndarray) -> float:
    return float(np.mean(np.logaddexp(0.0, -(diffs @ coef)))) if len(diffs) else 0.0


def fit_pairwise(
    diffs: np.ndarray, init: np.ndarray, *, l2: float = 1e-3, epochs: int = 400, lr: float = 0.5
) -> tuple[np.ndarray, float, float]:
    """Minimise the regularised pairwise logistic loss by full-batch gradient descent (Adam)."""
    coef = init.astype(np.float64).copy()
    before = _loss(diffs, coef)
    if len(diffs) == 0:
        return coef, before, before
    m = np.zeros_like(coef)
    v = np.zeros_like(coef)
    for step in range(1, epochs + 1):
        margins = diffs @ coef
        weights = -1.0 / (1.0 + np.exp(np.clip(margins, -50, 50)))  # d/dm log(1+e^-m)
        grad = diffs.T @ weights / len(diffs) + 2 * l2 * (coef - init)
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad * grad
        coef -= lr * 0.1 * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
    return coef, before, _loss(diffs, coef)


def fit_weights(
    snap: Snapshot,
    embedder: Any,
    history: HistorySnapshot,
    bundles: Sequence[tuple[str, Sequence[str]]],
    config: RetrievalConfig,
    *,
    max_queries: int = 2000,
    seed: int = 0,
) -> LearnedWeights:
    """Fit the linear scorer on (a reproducible sample of at most ``max_queries``) bundles."""
    sample = list(bundles)
    if len(sample) > max_queries:
        sample = random.Random(seed).sample(sample, max_queries)
    diffs, used = collect_pair_diffs(snap, embedder, history, sample, config)
    init = np.zeros(len(FEATURE_NAMES))
    init[FEATURE_NAMES.index("heuristic")] = 1.0
    coef, before, after = fit_pairwise(diffs, init)
    return LearnedWeights(
        features=list(FEATURE_NAMES), coef=[round(float(c), 6) for c in coef],
        n_queries=used, n_pairs=len(diffs), loss_before=round(before, 6), loss_after=round(after, 6),
    )
