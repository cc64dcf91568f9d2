"""Evaluation of tool retrieval: datasets, metrics, the runner and plots.

One sub-package, one concern per module: :mod:`~toolret.eval.datasets` reads the benchmark
format, :mod:`~toolret.eval.metrics` defines the numbers (docs/method.md §6),
:mod:`~toolret.eval.runner` searches and averages, :mod:`~toolret.eval.plots` draws curves
(matplotlib, optional extra ``plot``), :mod:`~toolret.eval.baseline` is the BM25 baseline,
:mod:`~toolret.eval.bench` compares methods over every dev set, and
:mod:`~toolret.eval.scale_bench` measures recall, latency and memory against registry size.
None of it is on the runtime path of a search.

Example:
    >>> from toolret.eval.baseline import BM25Baseline
    >>> from toolret.eval import evaluate, load_dataset
    >>> ds = load_dataset("../shared/benchmarks/toole_multi")          # doctest: +SKIP
    >>> evaluate(BM25Baseline(ds.tools), ds).metrics["recall@5"]       # doctest: +SKIP
    0.306...
"""

from __future__ import annotations

from toolret._exports import lazy_exports

_EXPORTS = {
    "BM25Baseline": "baseline",
    "Dataset": "datasets",
    "EvalQuery": "datasets",
    "EvalReport": "runner",
    "QueryRun": "runner",
    "QueryScore": "runner",
    "Retriever": "runner",
    "completeness_at_k": "metrics",
    "evaluate": "runner",
    "load_dataset": "datasets",
    "ndcg_at_k": "metrics",
    "percentile": "metrics",
    "plot_recall_curves": "plots",
    "recall_at_k": "metrics",
    "recall_curve": "metrics",
    "run_queries": "runner",
    "sample_queries": "datasets",
    "score_runs": "runner",
    "split_queries": "datasets",
    "tracc": "metrics",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
