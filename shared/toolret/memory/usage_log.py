"""A knowledge base's tool-use memory: recorded (request, tools used) bundles and fitted weights.

PTR stage 1 retrieves past bundles for a new request (:mod:`toolret.memory.past_use`); MFTR
learns its weights from them (:mod:`toolret.memory.learn`). Both are persisted in the store and
written under the index writer's lock, so they change with the registry they refer to.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

import numpy as np

from toolret.config import LearnedWeights, RetrievalConfig
from toolret.errors import KnowledgeBaseError, ToolNotFoundError
from toolret.index.framework_embedding import embed_queries
from toolret.index.writer import IndexWriter
from toolret.memory.past_use import HistorySnapshot

__all__ = ["UsageLog"]

logger = logging.getLogger("toolret")

_LEARNED_KEY = "learned_weights"


class UsageLog:
    """Recorded bundles (:attr:`history`) and the fitted scorer (:attr:`learned`) of one knowledge base."""

    def __init__(self, writer: IndexWriter) -> None:
        self._writer = writer
        self.history = HistorySnapshot()
        self.learned: LearnedWeights | None = None
        self.reload()

    def reload(self) -> None:
        """Read the bundles and the fitted weights from the store (after opening or a refresh)."""
        self.history = HistorySnapshot.build(*self._writer.store.read_history())
        self.learned = self._load_learned()

    def record_many(self, bundles: Iterable[tuple[str, Sequence[str]]]) -> int:
        """Record bundles whose tool ids are all in the registry; returns how many distinct ones."""
        writer = self._writer
        clean: list[tuple[str, tuple[str, ...]]] = []
        known = writer.snapshot.index_of
        for query, tool_ids in bundles:
            if not isinstance(query, str) or not query.strip():
                raise KnowledgeBaseError("a recorded bundle needs a non-empty request text")
            ids = tuple(dict.fromkeys(tool_ids))
            missing = [t for t in ids if t not in known]
            if missing or not ids:
                raise ToolNotFoundError(
                    f"cannot record {query[:60]!r}: unknown tool id(s) {', '.join(map(repr, missing[:5])) or '(none given)'}"
                )
            clean.append((query.strip(), ids))
        clean = list(dict.fromkeys(clean))
        if not clean:
            return 0
        with writer.lock:
            vectors = np.concatenate(
                [embed_queries(writer.embedder, [q for q, _ in clean[i : i + 512]]) for i in range(0, len(clean), 512)]
            )
            writer.store.add_history(clean, vectors)
            writer.mark_written()
            seen = set(self.history.bundles)
            fresh = []
            for bundle, vector in zip(clean, vectors):
                if bundle not in seen:
                    seen.add(bundle)
                    fresh.append((bundle, vector))
            if fresh:
                old = self.history
                matrix = np.stack([v for _, v in fresh])
                if len(old):
                    matrix = np.concatenate([old.vectors, matrix])
                self.history = HistorySnapshot.build([*old.bundles, *(b for b, _ in fresh)], matrix)
        return len(clean)

    def fit(self, bundles: Iterable[tuple[str, Sequence[str]]] | None, *, max_queries: int) -> LearnedWeights:
        """Fit the scorer's weights on ``bundles`` (default: the recorded ones) and store them."""
        from toolret.memory.learn import fit_weights

        writer = self._writer
        pairs = list(bundles) if bundles is not None else list(self.history.bundles)
        if not pairs:
            raise KnowledgeBaseError("nothing to fit on: record bundles first (record/record_many) or pass them")
        config = RetrievalConfig.preset("balanced")
        weights = fit_weights(writer.snapshot, writer.embedder, self.history, pairs, config, max_queries=max_queries)
        with writer.lock:
            writer.store.put_meta(_LEARNED_KEY, weights.model_dump_json())
            writer.mark_written()
            self.learned = weights
        return weights

    def clear(self) -> None:
        """Forget every recorded bundle."""
        with self._writer.lock:
            self._writer.store.clear_history()
            self._writer.mark_written()
            self.history = HistorySnapshot()

    def _load_learned(self) -> LearnedWeights | None:
        text = self._writer.store.get_meta(_LEARNED_KEY)
        if not text:
            return None
        try:
            weights = LearnedWeights.model_validate_json(text)
        except ValueError as exc:
            logger.warning("ignoring unreadable fitted weights (%s); run fit() again", exc)
            return None
        from toolret.scoring.mftr import FEATURE_NAMES

        if weights.features != list(FEATURE_NAMES):
            logger.warning("ignoring fitted weights for other features; run fit() again")
            return None
        return weights
