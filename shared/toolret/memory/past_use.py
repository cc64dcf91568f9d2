"""Tool-use memory: past (request -> tools actually used) bundles as a retrieval signal.

Requests repeat. When an agent has solved "what's the EUR/USD rate" with ``get_fx_rate``,
the next "how many dollars is 30 euros" should find that tool even if its description never
says "dollars". PTR's first stage retrieves such bundles of past requests by similarity and
offers their tools as candidates; toolret turns the neighbours into one score per tool:

    h(t) = max over the m most similar past requests r that used t of  cos(q, r)

clipped at 0, so a tool used for a near-identical request scores close to 1. The pipeline
adds ``history_weight * h(t)`` to the MFTR score and adds those tools to the candidates.

Example:
    >>> import numpy as np
    >>> memory = HistorySnapshot.build([("weather in Rome", ("get_weather",))], np.array([[1.0, 0.0]]))
    >>> memory.tool_scores(np.array([0.8, 0.6]), m=5)
    {'get_weather': 0.8}
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Bundle", "HistorySnapshot"]

Bundle = tuple[str, tuple[str, ...]]


@dataclass(frozen=True)
class HistorySnapshot:
    """An immutable view of the recorded bundles and their query embeddings."""

    bundles: tuple[Bundle, ...] = ()
    vectors: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))

    @classmethod
    def build(cls, bundles: Sequence[Bundle], vectors: np.ndarray) -> HistorySnapshot:
        vecs = np.asarray(vectors, dtype=np.float32)
        if len(bundles) != len(vecs):
            raise ValueError(f"{len(bundles)} bundles but {len(vecs)} vectors")
        return cls(tuple(bundles), vecs)

    def __len__(self) -> int:
        return len(self.bundles)

    def tool_scores(self, qvec: np.ndarray, *, m: int, exclude_query: str | None = None) -> dict[str, float]:
        """h(t) for every tool used by one of the ``m`` past requests most similar to ``qvec``.

        ``exclude_query`` leaves out bundles recorded for that exact request text, so
        fitting on logged requests does not learn from each request's own answer.
        """
        if not self.bundles or m <= 0:
            return {}
        sims = self.vectors @ qvec
        if exclude_query is not None:
            for i, (query, _) in enumerate(self.bundles):
                if query == exclude_query:
                    sims[i] = -1.0
        n = min(m, len(sims))
        top = np.argpartition(-sims, n - 1)[:n] if n < len(sims) else np.arange(len(sims))
        scores: dict[str, float] = {}
        for i in top[np.argsort(-sims[top], kind="stable")]:
            sim = float(sims[i])
            if sim <= 0:
                continue
            for tool_id in self.bundles[i][1]:
                if sim > scores.get(tool_id, 0.0):
                    scores[tool_id] = round(sim, 6)
        return scores
