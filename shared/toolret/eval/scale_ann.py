"""What the approximate dense index costs and misses, measured on a scale-benchmark registry.

:mod:`toolret.index.ann` answers a large field's dense candidates approximately. The scale
benchmark reports, per field that has such an index, how much of the exact scan's top 10 it
finds for the benchmark queries (it must stay >= 0.99, or ranking would see other candidates),
how long it took to build (paid on every snapshot rebuild and every open) and the bytes the
field holds (compact rows plus index) next to what a float32 matrix would hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from toolret.index.dense import dense_scores, dense_search
from toolret.index.snapshot import Snapshot

__all__ = ["ann_report"]


def ann_report(snap: Snapshot, queries: Sequence[np.ndarray], ks: Sequence[int] = (10, 50)) -> dict[str, Any]:
    """Per ANN field: rows, recall@k of the approximate candidates vs the exact scan, build s, bytes.

    ``recall_at_k``: the share of the exact top k that a :func:`dense_search` for k candidates
    returns (k = 50 is ranking's default ``candidates_per_field``).
    """
    fields: dict[str, Any] = {}
    for field, index in snap.ann.items():
        present = snap.present[field]
        hits = dict.fromkeys(ks, 0)
        for q in queries:
            exact = dense_scores(snap, field, q)
            exact[~present] = -np.inf
            order = np.argsort(-exact, kind="stable")
            for k in ks:
                hits[k] += len(set(order[:k].tolist()) & set(dense_search(snap, field, q, k).top.tolist()))
        fields[field] = {
            "rows": index.rows,
            **{f"recall_at_{k}": hits[k] / (k * len(queries)) if queries else None for k in ks},
            "build_seconds": index.build_seconds,
            "index_mb": index.nbytes / 2**20,
            "rows_mb": snap.vectors[field].nbytes / 2**20,
            "float32_mb": index.rows * snap.dim * 4 / 2**20,
        }
    held = snap.vector_bytes()
    return {
        "fields": fields,
        "vectors_mb": sum(held.values()) / 2**20,
        "float32_mb": sum(len(snap.rows[f]) for f in held) * snap.dim * 4 / 2**20,
    }
