"""The retrievers ``toolret eval`` and ``bench`` compare, built over a dataset's tools.

``bm25`` is the plain BM25 baseline (:mod:`toolret.eval.baseline`); ``mftr`` is a knowledge base
searched with a preset. ``fit_split`` and ``fit`` give the documented 80/20 protocol for the
tool-use memory.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from toolret.errors import ConfigError

__all__ = [
    "BASELINES",
    "DEFAULT_BENCH_LIMIT",
    "DEFAULT_PRESET",
    "METHODS",
    "PresetView",
    "build_retriever",
    "dedupe",
    "fields_config",
    "fit",
    "fit_split",
    "method_label",
    "release",
]

#: Queries per dataset ``toolret bench`` samples by default (seed 0).
DEFAULT_BENCH_LIMIT = 500

METHODS = ("mftr", "bm25", "cosine")
#: Single-signal baselines (toolret.eval.baseline): their label is the method name, not a preset.
BASELINES = ("bm25", "cosine")
DEFAULT_PRESET = "fast"


def method_label(method: str, preset: str) -> str:
    return method if method in BASELINES else preset


def build_retriever(
    method: str, dataset: Any, preset: str, config: Any = None, embedder: Any = None, *, model: Any = None
) -> tuple[Any, float]:
    """The retriever for ``method`` over the dataset's tools, and how long building it took.

    ``embedder`` (``toolret bench``'s :class:`~toolret.eval.bench.CachedIndexing`) reads tool
    texts from a cache while indexing; searches still embed every query with the model.
    ``model`` names the embedding model instead (``toolret eval --embedder``; None: the default).
    """
    cached = embedder
    if embedder is None and model is not None:
        from toolret.index.embedding import resolve_embedder

        embedder = resolve_embedder(model)
    start = time.perf_counter()
    if cached is not None:
        cached.indexing = True
    if method == "bm25":
        from toolret.eval.baseline import BM25Baseline

        retriever: Any = BM25Baseline(dataset.tools)
    elif method == "cosine":
        from toolret.eval.baseline import CosineBaseline

        retriever = CosineBaseline(dataset.tools, embedder=embedder)
    elif method == "mftr":
        from toolret import ToolKnowledgeBase

        retriever = ToolKnowledgeBase(None, config=config or preset, embedder=embedder)
        retriever.add(dataset.tool_docs(), progress=True)
    else:
        raise ConfigError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    if cached is not None:
        cached.indexing = False
        cached.cache.save()
    seconds = time.perf_counter() - start
    print(f"{dataset.name}: {method_label(method, preset)} indexed {len(dataset.tools)} tools in {seconds:.1f} s")
    return retriever, seconds


def fit_split(dataset: Any) -> tuple[Any, list[Any]]:
    """The test part of the documented 80/20 split as the dataset, and the part to fit on."""
    from toolret.eval.datasets import split_queries

    fit, test = split_queries(dataset.queries)
    print(f"{dataset.name}: fit on {len(fit)} queries, report on the other {len(test)} (sha1(id) % 5 == 0)")
    return dataset.model_copy(update={"queries": test}), fit


def fit(kb: Any, fit_queries: list[Any]) -> float:
    """Record the fit queries' (request, relevant tools) bundles in the knowledge base's memory."""
    start = time.perf_counter()
    kb.record_many([(q.query, q.relevant) for q in fit_queries])
    weights = kb.fit()
    seconds = time.perf_counter() - start
    print(
        f"recorded {len(fit_queries)} bundles and fitted weights on {weights.n_queries} of them "
        f"({weights.n_pairs} pairs, loss {weights.loss_before:.3f} -> {weights.loss_after:.3f}) in {seconds:.1f} s; "
        f"l2 {weights.l2 if weights.l2 is not None else 'none (hand-set formula kept)'}, held-out R@5 "
        f"{weights.validation_recall_default:.3f} hand-set -> {weights.validation_recall:.3f} on {weights.n_validation}"
    )
    return seconds


class PresetView:
    """A knowledge base searched with one preset, as the eval harness's retriever."""

    def __init__(self, kb: Any, preset: str) -> None:
        from toolret.eval.reference_fusions import REFERENCE_FUSIONS, reference_config

        self.kb, self.preset, self.name = kb, preset, preset
        self.embedder = kb.embedder
        # A reference fusion (fusion-ec3e34e, fusion-eefafaa) is the fast preset with its overrides.
        self.config: Any = reference_config(preset) if preset in REFERENCE_FUSIONS else preset

    def search(self, query: str, k: int = 5) -> Any:
        return self.kb.search(query, k=k, config=self.config)


def release(retriever: Any) -> None:
    close = getattr(retriever, "close", None)
    if callable(close):
        close()


def fields_config(preset: str, fields: str | None) -> Any:
    """The preset searching only ``fields`` (comma-separated index fields), or None for all of them."""
    if not fields:
        return None
    from toolret import RetrievalConfig

    chosen = tuple(f.strip() for f in fields.split(",") if f.strip())
    return RetrievalConfig(**{**RetrievalConfig.preset(preset).model_dump(), "fields": chosen})


def dedupe(values: Sequence[str]) -> list[str]:
    """Keep the last occurrence of each value, in order (so 'the last given' stays last)."""
    seen: set[str] = set()
    kept: list[str] = []
    for value in reversed(values):
        if value not in seen:
            seen.add(value)
            kept.append(value)
    return kept[::-1]
