"""Evaluation of tool retrieval: datasets, metrics, the runner and plots.

One sub-package, one concern per module: :mod:`~toolret.eval.datasets` reads the benchmark
format, :mod:`~toolret.eval.metrics` defines the numbers (DESIGN.md §6),
:mod:`~toolret.eval.runner` searches and averages, :mod:`~toolret.eval.plots` draws curves
(matplotlib, optional extra ``plot``).

Example:
    >>> from toolret.baseline import BM25Baseline
    >>> from toolret.eval import evaluate, load_dataset
    >>> ds = load_dataset("../shared/benchmarks/toole_multi")          # doctest: +SKIP
    >>> evaluate(BM25Baseline(ds.tools), ds).metrics["recall@5"]       # doctest: +SKIP
    0.306...
"""

from __future__ import annotations

from toolret.eval.datasets import Dataset, EvalQuery, load_dataset, sample_queries
from toolret.eval.metrics import (
    completeness_at_k,
    ndcg_at_k,
    percentile,
    recall_at_k,
    recall_curve,
    tracc,
)
from toolret.eval.plots import plot_recall_curves
from toolret.eval.runner import (
    EvalReport,
    QueryRun,
    QueryScore,
    Retriever,
    evaluate,
    run_queries,
    score_runs,
)

__all__ = [
    "Dataset",
    "EvalQuery",
    "EvalReport",
    "QueryRun",
    "QueryScore",
    "Retriever",
    "completeness_at_k",
    "evaluate",
    "load_dataset",
    "ndcg_at_k",
    "percentile",
    "plot_recall_curves",
    "recall_at_k",
    "recall_curve",
    "run_queries",
    "sample_queries",
    "score_runs",
    "split_queries",
    "tracc",
]
