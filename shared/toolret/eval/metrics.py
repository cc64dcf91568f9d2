"""Retrieval metrics, one definition everywhere (docs/method.md §6).

For a query with relevant set ``A`` and ranked list ``L`` (best first):

* Recall@k = |A ∩ L[:k]| / |A|
* NDCG@k with binary gains: DCG = Σ_{i ≤ k, L[i] ∈ A} 1 / log2(i + 1) over 1-based ranks,
  divided by the ideal DCG of min(|A|, k) hits at the top
* Completeness@k = 1 if A ⊆ L[:k] else 0
* TRACC for a chosen set ``B`` of any size:
  (|A ∩ B| / |A|) · (1 − ||B| − |A|| / |A ∪ B|) — recall times a penalty for handing
  the agent too many or too few tools, so a fixed top-10 scores low when one tool is needed.

Pure functions on plain sequences of ids; no numpy. A tool id listed twice in ``L`` counts
once (its first position), so a retriever cannot gain by repeating a hit.

Example:
    >>> recall_at_k(["a", "b"], ["x", "a", "y", "b"], 2)
    0.5
    >>> round(tracc(["a"], ["a", "b"]), 3)
    0.5
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

__all__ = [
    "completeness_at_k",
    "ndcg_at_k",
    "percentile",
    "recall_at_k",
    "recall_curve",
    "tracc",
]


def _relevant_set(relevant: Iterable[str]) -> set[str]:
    gold = set(relevant)
    if not gold:
        raise ValueError("the relevant set is empty; every evaluated query needs at least one relevant tool")
    return gold


def _check_k(k: int) -> None:
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")


def recall_at_k(relevant: Iterable[str], ranked: Sequence[str], k: int) -> float:
    """Share of the relevant tools found in the first ``k`` results.

    >>> recall_at_k({"a", "b"}, ["a", "c", "b"], 2)
    0.5
    """
    _check_k(k)
    gold = _relevant_set(relevant)
    return len(gold.intersection(ranked[:k])) / len(gold)


def ndcg_at_k(relevant: Iterable[str], ranked: Sequence[str], k: int) -> float:
    """Normalized discounted cumulative gain at ``k`` with binary gains.

    Gains sit at 1-based ranks discounted by ``log2(rank + 1)``; the ideal list puts
    ``min(|A|, k)`` relevant tools at ranks 1.. so a perfect top-k scores 1.0 even when
    ``|A| > k``.

    >>> round(ndcg_at_k({"a", "b"}, ["x", "a", "y", "b"], 4), 4)   # (1/log2 3 + 1/log2 5) / (1 + 1/log2 3)
    0.6509
    """
    _check_k(k)
    gold = _relevant_set(relevant)
    dcg = 0.0
    seen: set[str] = set()
    for rank, tool_id in enumerate(ranked[:k], start=1):
        if tool_id in gold and tool_id not in seen:
            dcg += 1.0 / math.log2(rank + 1)
        seen.add(tool_id)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(gold), k) + 1))
    return dcg / ideal


def completeness_at_k(relevant: Iterable[str], ranked: Sequence[str], k: int) -> float:
    """1.0 when every relevant tool is in the first ``k`` results, else 0.0.

    The metric for multi-step requests: an agent missing one tool of a chain fails the task.

    >>> completeness_at_k({"a", "b"}, ["a", "b", "c"], 2)
    1.0
    """
    _check_k(k)
    gold = _relevant_set(relevant)
    return 1.0 if gold.issubset(ranked[:k]) else 0.0


def tracc(relevant: Iterable[str], chosen: Iterable[str]) -> float:
    """Tool-retrieval accuracy of a chosen set of any size (duplicates ignored).

    ``(|A ∩ B| / |A|) · (1 − ||B| − |A|| / |A ∪ B|)``: exact sets score 1.0; each extra or
    missing tool costs a share of the union.

    >>> tracc(["a", "b"], ["a", "b"])
    1.0
    >>> tracc(["a"], [])        # nothing chosen: no recall
    0.0
    """
    gold = _relevant_set(relevant)
    picked = set(chosen)
    hit_share = len(gold & picked) / len(gold)
    size_gap = abs(len(picked) - len(gold)) / len(gold | picked)
    return hit_share * (1.0 - size_gap)


def recall_curve(relevant: Iterable[str], ranked: Sequence[str], max_k: int = 20) -> list[float]:
    """Recall@1 .. Recall@max_k in one pass, for recall-vs-k plots.

    >>> recall_curve(["a", "b"], ["a", "x", "b"], 4)
    [0.5, 0.5, 1.0, 1.0]
    """
    _check_k(max_k)
    gold = _relevant_set(relevant)
    found: set[str] = set()
    curve: list[float] = []
    for k in range(1, max_k + 1):
        if k <= len(ranked) and ranked[k - 1] in gold:
            found.add(ranked[k - 1])
        curve.append(len(found) / len(gold))
    return curve


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0–100) with linear interpolation between order statistics.

    Same rule as ``numpy.percentile``'s default: position ``(n − 1) · q / 100`` in the
    sorted values, interpolated between its two neighbours. Used for latency p50/p95.

    >>> percentile([10.0, 20.0, 30.0, 40.0], 50)
    25.0
    >>> percentile([1.0, 2.0, 3.0, 4.0, 5.0], 95)
    4.8
    """
    if not values:
        raise ValueError("percentile of an empty list is undefined")
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"percentile must be within [0, 100], got {q}")
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100.0
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    fraction = position - low
    return ordered[low] + (ordered[high] - ordered[low]) * fraction
