"""Dense candidate search: the one place ranking asks for a field's query-to-tool similarities.

A snapshot stores each field's vectors for the tools that have that field
(:class:`~toolret.index.snapshot.Snapshot`); this module turns one query vector into a score per
tool of the registry (cosine; 0 where the tool lacks the field), which
:mod:`toolret.retrieval.ranking` then cuts to the top N per field. Keeping it behind one
function lets the index layer change how it answers (compact vectors, an approximate index above
some size) without touching ranking.
"""

from __future__ import annotations

import numpy as np

from toolret.index.snapshot import Snapshot

__all__ = ["dense_scores"]


def dense_scores(snap: Snapshot, field: str, query: np.ndarray) -> np.ndarray:
    """Cosine of ``query`` with every tool's ``field`` vector, in snapshot order (0 where absent)."""
    scores = np.zeros(len(snap), dtype=np.float32)
    rows = snap.rows[field]
    if len(rows):
        scores[rows] = snap.vectors[field] @ np.asarray(query, dtype=np.float32)
    return scores
