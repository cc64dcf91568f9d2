"""The learned fusion (:mod:`toolret.scoring.learned_fusion`) on a dev set's cached signals.

The engine scores one request at a time; the fold tables and ``toolret bench --lodo`` score a whole
set's cached signals (:mod:`toolret.eval.signals`) at once. Both call
:func:`~toolret.scoring.learned_fusion.fusion_features`, so a fold table measures the scorer that ships.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from toolret.eval.signals import QUERY_FEATURES, DatasetSignals
from toolret.scoring.learned_fusion import FusionModel, fusion_features

__all__ = ["POOL_DEPTH", "FusionArrays", "fusion_arrays", "score_arrays"]

#: The engine's candidate pool: the top this many of each field's BM25 and cosine (candidates_per_field).
POOL_DEPTH = 50


@dataclass(frozen=True)
class FusionArrays:
    """One set's requests as the learned fusion sees them."""

    name: str
    x: np.ndarray  # [Q, C, len(CANDIDATE_FEATURES)]
    request: np.ndarray  # [Q, len(REQUEST_FEATURES)]
    pool: np.ndarray  # [Q, C]
    relevant: np.ndarray  # [Q, C] relevant and in the pool
    #: [Q, C] the hand-set fusion's scores (fusion-ec3e34e) of the same requests: the unit the learned
    #: scores are scaled to (toolret.training.fusion_fit.spread_ratio); None when not computed.
    heuristic: np.ndarray | None = None


def fusion_arrays(
    sig: DatasetSignals, candidates_per_field: int = POOL_DEPTH, *, hand_set: np.ndarray | None = None
) -> FusionArrays:
    """:func:`~toolret.scoring.learned_fusion.fusion_features` of a set's cached signals, with ``hand_set``
    ([Q, C], the hand-set fusion's scores of the same requests) when a fit needs them for its scale
    (:func:`toolret.training.fusion_fit.training_arrays`)."""
    pool = sig.valid & (sig.rank < candidates_per_field)
    cols = {name: i for i, name in enumerate(QUERY_FEATURES)}
    query = sig.qfeat[:, [cols["idf_mass"], cols["oov_share"], cols["n_ident"], cols["n_tokens"]]]
    x, r = fusion_features(
        sig.lex, sig.dense, sig.present, sig.bound, pool, sig.named, sig.penalty, sig.hub[:, :, 0], query, sig.n_tools
    )
    heuristic = None if hand_set is None else np.where(pool, hand_set, 0.0)
    return FusionArrays(sig.name, x, r, pool, sig.rel & pool, heuristic)


def score_arrays(model: FusionModel, arrays: FusionArrays) -> np.ndarray:
    """[Q, C] the model's scores, -inf outside each request's pool (what lodo.score_metrics reads)."""
    return np.where(arrays.pool, model.scores(arrays.x, arrays.request), -np.inf)
