"""The rule that decides whether a trained embedder may become the default (docs/models.md).

A shipped model is trained on every train+eval registry; leaving one registry out *checks* it on
registries it never saw, it does not veto on the noise of a small set. The rule, per row of the
fold table (a dev set scored by a model that never trained on its registry, beside the stock
model on the same queries):

* requests in the user's own words (:data:`toolret.eval.folds.NATURAL_SETS`): the left-out mean of
  ΔNDCG@10 and of ΔR@5, under ``fast`` and under ``balanced``, is > 0 (the model must gain there);
* requests in the registry's own words (every other set): the same means are ≥ 0 (no fall);
* no left-out registry has a paired-bootstrap 95 % interval of ΔR@5 entirely below
  :data:`MAX_SIGNIFICANT_LOSS` (−0.02), under either preset.

A registry's interval resamples its queries (both sets of a two-set registry pooled), pairing
each query's stock and trained scores, so a 57-query set gets the wide interval it deserves.
A group with no row in the table sets no condition.

Example:
    >>> rows = [{"set": "a", "fold": "a", "stock": _scores([1, 0, 1, 1]), "trained": _scores([1, 1, 1, 1])}]
    >>> verdict = check_rule(rows)
    >>> verdict.met, round(verdict.means["fast"]["recall@5"], 2)
    (True, 0.25)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

__all__ = ["MAX_SIGNIFICANT_LOSS", "RegistryInterval", "RuleVerdict", "bootstrap_interval", "check_rule"]

#: A registry fails the rule when its whole 95 % interval of ΔR@5 lies below this.
MAX_SIGNIFICANT_LOSS = -0.02
#: Bootstrap resamples per interval (seeded, so the table is reproducible).
N_RESAMPLES = 2_000
PRESETS = ("fast", "balanced")
#: How the table names each group of requests.
GROUP_LABEL = {"natural": "requests in the user's own words", "registry": "requests in the registry's own words"}
METRICS = ("recall@5", "ndcg@10")


class RegistryInterval(BaseModel):
    """ΔR@5 of one left-out registry under one preset: the mean and its paired-bootstrap 95 % interval."""

    model_config = ConfigDict(frozen=True)

    fold: str
    preset: str
    n_queries: int
    mean: float
    low: float
    high: float

    @property
    def significant_loss(self) -> bool:
        """The whole interval lies below :data:`MAX_SIGNIFICANT_LOSS`."""
        return self.high < MAX_SIGNIFICANT_LOSS


class RuleVerdict(BaseModel):
    """The rule's inputs and outcome: means per preset and metric, intervals per registry."""

    model_config = ConfigDict(frozen=True)

    means: dict[str, dict[str, float]]
    #: "natural" / "registry" -> preset -> metric -> left-out mean Δ (groups with rows only).
    group_means: dict[str, dict[str, dict[str, float]]]
    intervals: list[RegistryInterval]
    met: bool
    reasons: list[str]

    def worst(self, preset: str = "fast") -> RegistryInterval:
        """The registry with the lowest mean ΔR@5 under ``preset``."""
        return min((i for i in self.intervals if i.preset == preset), key=lambda i: i.mean)


def bootstrap_interval(deltas: Sequence[float], *, seed: int = 0, n: int = N_RESAMPLES) -> tuple[float, float]:
    """Percentile 95 % interval of the mean of paired per-query differences."""
    values = np.asarray(deltas, dtype=np.float64)
    if values.size == 0:
        return (0.0, 0.0)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, values.size, size=(n, values.size))
    means = values[picks].mean(axis=1)
    return (float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5)))


def _per_query(scores: dict[str, Any], preset: str, metric: str) -> list[float]:
    per_query = scores[preset].get("per_query")
    if not per_query:
        raise ValueError("the fold table needs per-query scores; re-run evaluate_model (it keeps them since issue 34)")
    return list(per_query[metric])


def check_rule(rows: Sequence[dict[str, Any]]) -> RuleVerdict:
    """Apply the rule to fold-table rows ``{"set", "fold", "stock": scores, "trained": scores}``.

    ``scores`` is :func:`toolret.training.benchmarks.evaluate_model`'s per-set value (per-query
    lists included); the stock and trained lists of a set come from the same sampled queries.
    """
    from toolret.eval.folds import NATURAL_SETS

    means = _means(rows)
    groups = {
        "natural": [r for r in rows if r["set"] in NATURAL_SETS],
        "registry": [r for r in rows if r["set"] not in NATURAL_SETS],
    }
    group_means = {g: _means(members) for g, members in groups.items() if members}
    by_fold: dict[str, dict[str, list[float]]] = {}
    for row in rows:
        for preset in PRESETS:
            trained = _per_query(row["trained"], preset, "recall@5")
            stock = _per_query(row["stock"], preset, "recall@5")
            if len(trained) != len(stock):
                raise ValueError(f"{row['set']}: {len(trained)} trained and {len(stock)} stock queries; not paired")
            by_fold.setdefault(row["fold"], {}).setdefault(preset, []).extend(
                t - s for t, s in zip(trained, stock, strict=True)
            )
    intervals = []
    for fold, per_preset in by_fold.items():
        for preset, deltas in per_preset.items():
            low, high = bootstrap_interval(deltas)
            intervals.append(
                RegistryInterval(
                    fold=fold, preset=preset, n_queries=len(deltas), mean=float(np.mean(deltas)), low=low, high=high
                )
            )
    reasons = [
        f"{GROUP_LABEL[group]}: left-out mean Δ{metric} under {preset} is {value:+.4f} "
        + ("(no gain)" if group == "natural" else "(< 0)")
        for group, by_preset in group_means.items()
        for preset, by_metric in by_preset.items()
        for metric, value in by_metric.items()
        if (value <= 0 if group == "natural" else value < 0)
    ]
    reasons += [
        f"{i.fold} under {i.preset}: ΔR@5 95% interval [{i.low:+.3f}, {i.high:+.3f}] lies below {MAX_SIGNIFICANT_LOSS}"
        for i in intervals
        if i.significant_loss
    ]
    return RuleVerdict(means=means, group_means=group_means, intervals=intervals, met=not reasons, reasons=reasons)


def _means(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    return {
        p: {m: float(np.mean([r["trained"][p][m] - r["stock"][p][m] for r in rows])) if rows else 0.0 for m in METRICS}
        for p in PRESETS
    }


def _scores(recalls: list[float]) -> dict[str, Any]:
    """Doctest helper: one preset's scores from per-query R@5 (NDCG@10 set equal)."""
    mean = sum(recalls) / len(recalls)
    one = {"recall@5": mean, "ndcg@10": mean, "per_query": {"recall@5": recalls, "ndcg@10": recalls}}
    return {p: one for p in PRESETS}
