"""Learning the scorer from logged or labelled (request -> tools used) bundles.

MFTR learns its field weights from pairs with a pairwise logistic loss; toolret does the same
over the features of :data:`toolret.scoring.mftr.FEATURE_NAMES` (per-field lexical and dense
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

import hashlib
import random
from collections.abc import Sequence
from typing import Any

import numpy as np

from toolret.config import LearnedWeights, RetrievalConfig
from toolret.index.snapshot import Snapshot
from toolret.memory.past_use import HistorySnapshot
from toolret.scoring.candidates import rank_tools, ranking_inputs
from toolret.scoring.mftr import FEATURE_NAMES

__all__ = ["choose_l2", "collect_query_features", "fit_pairwise", "fit_weights", "pair_diffs", "recall_at"]

#: Regularisation strengths tried (toward the hand-set formula), strongest first on ties.
L2_GRID = (1e-3, 1e-2, 1e-1, 1.0)
#: Fewer held-out queries than this: no validation, the middle strength is used.
MIN_VALIDATION_QUERIES = 5
FALLBACK_L2 = 1e-1


def collect_query_features(
    snap: Snapshot,
    embedder: Any,
    history: HistorySnapshot,
    bundles: Sequence[tuple[str, Sequence[str]]],
    config: RetrievalConfig,
) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Per bundle with a positive and a negative among its candidates: (query, the candidates'
    feature matrix in rank order, which rows are the bundle's tools)."""
    cfg = config  # scored with the hand-set formula: the features a fit starts from
    out: list[tuple[str, np.ndarray, np.ndarray]] = []
    for start in range(0, len(bundles), 256):
        chunk = bundles[start : start + 256]
        inputs = ranking_inputs(embedder, cfg, [q for q, _ in chunk])
        for (query, tools), (qvec, fields) in zip(chunk, inputs):
            memory = history.tool_scores(qvec, m=cfg.memory.history_neighbors, exclude_query=query)
            hist = {snap.index_of[t]: s for t, s in memory.items() if t in snap.index_of} or None
            ranked = rank_tools(snap, query, qvec, cfg, fields, hist).candidates
            relevant = {snap.index_of[t] for t in tools if t in snap.index_of}
            mask = np.array([c.index in relevant for c in ranked], dtype=bool)
            if not mask.any() or mask.all():
                continue
            out.append((query, np.stack([np.asarray(c.features, dtype=np.float64) for c in ranked]), mask))
    return out


def pair_diffs(queries: Sequence[tuple[str, np.ndarray, np.ndarray]], *, negatives: int = 10) -> np.ndarray:
    """φ(pos) - φ(neg) for every positive and each of the ``negatives`` best-ranked negatives."""
    diffs = [p - n for _, feats, mask in queries for p in feats[mask] for n in feats[~mask][:negatives]]
    return np.stack(diffs) if diffs else np.zeros((0, len(FEATURE_NAMES)))


def recall_at(queries: Sequence[tuple[str, np.ndarray, np.ndarray]], coef: np.ndarray, k: int = 5) -> float:
    """Mean recall@k of the bundles' tools among their candidates re-ordered by ``coef``."""
    if not queries:
        return 0.0
    total = 0.0
    for _, feats, mask in queries:
        top = np.argsort(-(feats @ coef), kind="stable")[:k]
        total += mask[top].sum() / min(k, mask.sum())
    return total / len(queries)


def _held_out(query: str) -> bool:
    """Stable 1-in-5 validation split of the fit queries (by the query text's hash)."""
    return int(hashlib.sha1(query.encode("utf-8", "surrogatepass")).hexdigest(), 16) % 5 == 0


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


def choose_l2(
    queries: Sequence[tuple[str, np.ndarray, np.ndarray]], init: np.ndarray
) -> tuple[float | None, float, float, int]:
    """Pick the regularisation by recall@5 on a held-out fifth of the fit queries.

    Returns (l2, validation recall of the fitted scorer, of the hand-set one, validation size);
    l2 is None when no strength beats the hand-set scorer there: a fit on a few dozen queries
    otherwise learns their quirks (measured: RestBench-Spotify, 45 queries, R@5 0.70 -> 0.35
    with the weakest regularisation). Ties go to the stronger regularisation.
    """
    val = [q for q in queries if _held_out(q[0])]
    train = [q for q in queries if not _held_out(q[0])]
    if len(val) < MIN_VALIDATION_QUERIES or not train:
        return FALLBACK_L2, 0.0, 0.0, len(val)
    diffs = pair_diffs(train)
    base = recall_at(val, init)
    best_l2, best = None, base
    for l2 in sorted(L2_GRID, reverse=True):  # strongest first: ties keep the stronger one
        coef, _, _ = fit_pairwise(diffs, init, l2=l2)
        score = recall_at(val, coef)
        if score > best + 1e-9:
            best_l2, best = l2, score
    return best_l2, best, base, len(val)


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
    """Fit the linear scorer on (a reproducible sample of at most ``max_queries``) bundles.

    The regularisation strength is chosen on a held-out fifth of the queries (:func:`choose_l2`),
    then the scorer is refitted on all of them; when no strength beats the hand-set formula on
    the held-out part, the hand-set formula is kept (``coef`` = ``heuristic`` only).
    """
    sample = list(bundles)
    if len(sample) > max_queries:
        sample = random.Random(seed).sample(sample, max_queries)
    queries = collect_query_features(snap, embedder, history, sample, config)
    diffs = pair_diffs(queries)
    init = np.zeros(len(FEATURE_NAMES))
    init[FEATURE_NAMES.index("heuristic")] = 1.0
    l2, val_fit, val_base, n_val = choose_l2(queries, init)
    if l2 is None:
        coef, before = init.copy(), _loss(diffs, init)
        after = before
    else:
        coef, before, after = fit_pairwise(diffs, init, l2=l2)
    return LearnedWeights(
        features=list(FEATURE_NAMES),
        coef=[round(float(c), 6) for c in coef],
        n_queries=len(queries),
        n_pairs=len(diffs),
        loss_before=round(before, 6),
        loss_after=round(after, 6),
        l2=l2,
        n_validation=n_val,
        validation_recall=round(val_fit, 4),
        validation_recall_default=round(val_base, 4),
    )
