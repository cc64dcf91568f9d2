"""Run a retriever over labelled queries and report the metrics of docs/method.md §6.

Anything with ``search(query: str, k: int) -> SearchResult`` can be evaluated: a
:class:`~toolret.ToolKnowledgeBase`, the :class:`~toolret.eval.baseline.BM25Baseline`, or a test
double. Evaluation is two steps so a ranking can be scored more than one way without
searching again (BFCL is scored both by exact id and by function name):

* :func:`run_queries` calls the retriever once per query, timed with ``time.perf_counter``;
* :func:`score_runs` turns those rankings into an :class:`EvalReport`.

What is measured (one rule, used by the CLI and the held-out scoring):

* Each query is searched once with ``k = max(ks)``. That call is the one timed, and the one
  every reported number comes from: Recall@K, NDCG@K and Completeness@K use its first K
  ids, and TRACC uses the whole set it returned (a retriever that chooses a precise set
  returns fewer than ``k`` and is rewarded for it; a fixed top-k is not). One untimed
  warm-up search (the first query) runs before timing starts, so lazy model loading is not
  charged to the first query's latency.
* The recall curve (R@1..``curve_k``, for plots only) reuses that ranking when
  ``curve_k <= max(ks)``; otherwise a second, untimed search with ``k = curve_k`` is made,
  so the curve never changes the reported metrics or latencies.
* Name level (``name_level=True``, for BFCL's doc variants of one function): every id is
  reduced to its function name (``id.split('#')[0]``) and the ranking becomes the list of
  distinct names in first-seen order — the evaluator of the benchmark README. So that K
  distinct names can fill the top K, the search asks for ``max(ks) * name_level_depth``
  tools (4 by default); latency is that call's. TRACC then uses the first ``max(ks)``
  distinct names returned.
* ``auto_k=True`` (``toolret eval --auto-k``): one more, untimed search per query with
  ``k="auto"`` (the retriever's precise-set mode); TRACC is then measured on that set, and
  every other number still comes from the timed ``k = max(ks)`` search.

Example:
    >>> from toolret.eval.baseline import BM25Baseline
    >>> ds = load_dataset("../shared/benchmarks/restbench_tmdb")      # doctest: +SKIP
    >>> report = evaluate(BM25Baseline(ds.tools), ds, ks=(1, 5, 10))  # doctest: +SKIP
    >>> report.to_json_dict()["metrics"]["recall@5"]                 # doctest: +SKIP
    0.429...
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from toolret.errors import ConfigError, DatasetError
from toolret.eval.datasets import Dataset, EvalQuery, sample_queries
from toolret.eval.metrics import (
    completeness_at_k,
    ndcg_at_k,
    percentile,
    recall_at_k,
    recall_curve,
    tracc,
)
from toolret.results import SearchResult

__all__ = [
    "DEFAULT_CURVE_K",
    "NAME_LEVEL_DEPTH",
    "EvalReport",
    "QueryRun",
    "QueryScore",
    "Retriever",
    "evaluate",
    "normalize_ks",
    "run_queries",
    "score_runs",
    "tool_name_of",
]

logger = logging.getLogger("toolret")

#: Length of the recall-vs-k curve kept for plots.
DEFAULT_CURVE_K = 20
#: At name level, how many tools per cut-off to fetch so that distinct names fill the top K.
NAME_LEVEL_DEPTH = 4


@runtime_checkable
class Retriever(Protocol):
    """What the harness needs: ``search(query, k)`` returning a :class:`SearchResult`."""

    def search(self, query: str, k: int = ...) -> SearchResult: ...


class QueryRun(BaseModel):
    """The raw outcome of searching one query: ranked ids and the time the search took."""

    model_config = ConfigDict(frozen=True)

    id: str
    ids: list[str]
    ms: float
    curve_ids: list[str] | None = None
    chosen_ids: list[str] | None = None


class QueryScore(BaseModel):
    """Per-query metrics, kept so a bad mean can be traced back to the queries behind it."""

    model_config = ConfigDict(frozen=True)

    id: str
    metrics: dict[str, float]
    ms: float


class EvalReport(BaseModel):
    """Means over the queries of one dataset for one method, plus latency percentiles.

    ``preset`` names the method evaluated (a preset such as ``"fast"``, or ``"bm25"``).
    :meth:`to_json_dict` gives the stable, documented JSON shape; the other fields
    (curve, per-query scores, index time) are for plots and debugging.
    """

    dataset: str
    preset: str
    n_queries: int
    metrics: dict[str, float]
    latency_ms: dict[str, float]
    recall_curve: list[float] = Field(default_factory=list)
    ks: list[int] = Field(default_factory=list)
    name_level: bool = False
    index_seconds: float | None = None
    per_query: list[QueryScore] = Field(default_factory=list, repr=False)

    def to_json_dict(self) -> dict[str, Any]:
        """Exactly ``{"dataset", "preset", "n_queries", "metrics", "latency_ms"}``.

        ``metrics`` holds ``recall@K``, ``ndcg@K``, ``completeness@K`` for each K and
        ``tracc``; ``latency_ms`` holds ``p50`` and ``p95``.
        """
        return {
            "dataset": self.dataset,
            "preset": self.preset,
            "n_queries": self.n_queries,
            "metrics": dict(self.metrics),
            "latency_ms": {"p50": self.latency_ms["p50"], "p95": self.latency_ms["p95"]},
        }


def normalize_ks(ks: Iterable[int]) -> list[int]:
    """Sorted distinct cut-offs, each a positive integer; raises ConfigError otherwise."""
    values = list(ks)
    if not values:
        raise ConfigError("at least one cut-off k is needed (e.g. 1,5,10)")
    for k in values:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ConfigError(f"every cut-off k must be a positive integer, got {k!r}")
    return sorted(set(values))


def tool_name_of(tool_id: str) -> str:
    """The function name of a tool id: ``"get_weather#v3"`` -> ``"get_weather"`` (BFCL variants)."""
    return tool_id.split("#", 1)[0]


def _distinct_names(ids: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(tool_name_of(i) for i in ids))


def _progress(items: Sequence[EvalQuery], enabled: bool, desc: str) -> Iterable[EvalQuery]:
    if not (enabled and sys.stderr.isatty()):
        return items
    from tqdm.auto import tqdm

    return tqdm(items, desc=desc, unit="q", leave=False, file=sys.stderr)


def run_queries(
    retriever: Retriever,
    queries: Sequence[EvalQuery],
    *,
    k: int,
    curve_k: int = 0,
    progress: bool = False,
    desc: str = "eval",
    warmup: int = 1,
    auto_k: bool = False,
) -> list[QueryRun]:
    """Search every query once with ``k`` (timed); add an untimed ``curve_k`` search if longer.

    ``warmup`` untimed searches of the first query run first. The progress bar (tqdm)
    shows only when ``progress`` is set and stderr is a terminal.
    """
    for _ in range(warmup if queries else 0):
        retriever.search(queries[0].query, k=k)
    runs: list[QueryRun] = []
    for query in _progress(queries, progress, desc):
        start = time.perf_counter()
        result = retriever.search(query.query, k=k)
        ms = (time.perf_counter() - start) * 1000.0
        ids = [tool.id for tool in result.tools]
        curve_ids = None
        if curve_k > k:
            curve_ids = [tool.id for tool in retriever.search(query.query, k=curve_k).tools]
        chosen_ids = None
        if auto_k:
            chosen_ids = [tool.id for tool in retriever.search(query.query, k="auto").tools]  # type: ignore[arg-type]
        runs.append(QueryRun(id=query.id, ids=ids, ms=ms, curve_ids=curve_ids, chosen_ids=chosen_ids))
    return runs


def _score_one(
    relevant: list[str], ranked: list[str], ks: list[int], chosen: list[str] | None = None
) -> dict[str, float]:
    scores: dict[str, float] = {}
    for k in ks:
        scores[f"recall@{k}"] = recall_at_k(relevant, ranked, k)
    for k in ks:
        scores[f"ndcg@{k}"] = ndcg_at_k(relevant, ranked, k)
    for k in ks:
        scores[f"completeness@{k}"] = completeness_at_k(relevant, ranked, k)
    scores["tracc"] = tracc(relevant, ranked[: ks[-1]] if chosen is None else chosen)
    return scores


def score_runs(
    runs: Sequence[QueryRun],
    queries: Sequence[EvalQuery],
    *,
    ks: Iterable[int] = (1, 5, 10),
    name_level: bool = False,
    dataset: str = "queries",
    preset: str = "retriever",
    curve_k: int = DEFAULT_CURVE_K,
) -> EvalReport:
    """Turn rankings into means over queries (see the module docstring for the rules).

    With ``name_level`` every id, relevant or retrieved, is compared by
    :func:`tool_name_of`, so a sibling variant of the right function counts as a hit, and
    the ranking is the list of distinct names (a name retrieved twice keeps its first
    place). Rankings should then come from a deeper search (see :func:`evaluate`).
    """
    cutoffs = normalize_ks(ks)
    by_id = {q.id: q for q in queries}
    if not runs:
        raise DatasetError(f"dataset {dataset!r}: no queries to evaluate")
    per_query: list[QueryScore] = []
    curves: list[list[float]] = []
    for run in runs:
        query = by_id.get(run.id)
        if query is None:
            raise DatasetError(f"dataset {dataset!r}: a run names query {run.id!r}, which is not in the queries")
        relevant, ranked = list(query.relevant), list(run.ids)
        curve_source = list(run.curve_ids if run.curve_ids is not None else run.ids)
        chosen = None if run.chosen_ids is None else list(run.chosen_ids)
        if name_level:
            relevant = _distinct_names(relevant)
            ranked = _distinct_names(ranked)
            curve_source = _distinct_names(curve_source)
            chosen = None if chosen is None else _distinct_names(chosen)
        per_query.append(QueryScore(id=run.id, metrics=_score_one(relevant, ranked, cutoffs, chosen), ms=run.ms))
        if curve_k > 0:
            curves.append(recall_curve(relevant, curve_source, curve_k))

    n = len(per_query)
    names = list(per_query[0].metrics)
    means = {name: sum(s.metrics[name] for s in per_query) / n for name in names}
    latencies = [s.ms for s in per_query]
    curve = [sum(c[i] for c in curves) / n for i in range(curve_k)] if curves else []
    return EvalReport(
        dataset=dataset,
        preset=preset,
        n_queries=n,
        metrics=means,
        latency_ms={"p50": percentile(latencies, 50), "p95": percentile(latencies, 95)},
        recall_curve=curve,
        ks=cutoffs,
        name_level=name_level,
        per_query=per_query,
    )


def _method_label(retriever: Any) -> str:
    label = getattr(retriever, "name", None)
    if isinstance(label, str) and label:
        return label
    config_name = getattr(getattr(retriever, "config", None), "name", None)
    if isinstance(config_name, str) and config_name:
        return config_name
    return type(retriever).__name__


def evaluate(
    retriever: Retriever,
    dataset_or_queries: Dataset | Sequence[EvalQuery],
    *,
    ks: Iterable[int] = (1, 5, 10),
    limit: int | None = None,
    name_level: bool = False,
    progress: bool = False,
    method: str | None = None,
    curve_k: int = DEFAULT_CURVE_K,
    seed: int = 0,
    name_level_depth: int = NAME_LEVEL_DEPTH,
    warmup: int = 1,
    auto_k: bool = False,
) -> EvalReport:
    """Search every query (or a reproducible sample of ``limit``) and report the means.

    ``method`` labels the report (``preset`` in its JSON); by default the retriever's
    ``name`` attribute, its config's name, or its class name. Set ``curve_k=0`` to skip
    the recall curve (and the extra search it may cost). Each query is searched with
    ``k = max(ks)``, or ``max(ks) * name_level_depth`` at name level (module docstring).

    Example:
        >>> report = evaluate(kb, load_dataset("bench/bfcl"), limit=200, name_level=True)  # doctest: +SKIP
        >>> report.metrics["recall@5"], report.latency_ms["p95"]                           # doctest: +SKIP
    """
    cutoffs = normalize_ks(ks)
    if isinstance(dataset_or_queries, Dataset):
        name, queries = dataset_or_queries.name, dataset_or_queries.queries
    else:
        name, queries = "queries", list(dataset_or_queries)
    queries = sample_queries(queries, limit, seed=seed)
    label = method or _method_label(retriever)
    search_k = cutoffs[-1] * (max(1, name_level_depth) if name_level else 1)
    runs = run_queries(
        retriever,
        queries,
        k=search_k,
        curve_k=curve_k,
        progress=progress,
        desc=f"{name}/{label}",
        warmup=warmup,
        auto_k=auto_k,
    )
    report = score_runs(runs, queries, ks=cutoffs, name_level=name_level, dataset=name, preset=label, curve_k=curve_k)
    logger.info(
        "evaluated %s on %s: %d queries, %s",
        label,
        name,
        report.n_queries,
        ", ".join(f"{k}={v:.3f}" for k, v in report.metrics.items()),
    )
    return report
