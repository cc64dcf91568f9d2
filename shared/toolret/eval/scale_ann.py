"""What the float16 dense index costs and misses, measured on a scale-benchmark registry.

:mod:`toolret.index.ann` answers a large field's dense candidates from float16 rows. The scale
benchmark reports, per field that has such an index, how much of the float32 scan's top k it
finds for the benchmark queries (it must stay >= 0.99, or ranking would see other candidates),
how long it took to build (paid on every snapshot rebuild and every open) and the bytes the
field holds next to what a float32 matrix would hold.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from toolret.index.dense import dense_scores, dense_search
from toolret.index.snapshot import Snapshot

__all__ = ["ann_report"]


def ann_report(
    snap: Snapshot,
    queries: Sequence[np.ndarray],
    float32_rows: Callable[[str], np.ndarray] | None = None,
    ks: Sequence[int] = (10, 50),
) -> dict[str, Any]:
    """Per float16 field: rows, recall@k of its candidates vs the exact scan, search ms, build s, bytes.

    ``recall_at_k``: the share of the k tools a :func:`dense_search` for k candidates returns that
    score at least the exact k-th cosine (k = 50 is ranking's default ``candidates_per_field``);
    ``id_recall_at_k`` asks for the exact top k's very ids, which undercounts where duplicate
    texts tie (many synthetic variants share a parent's parameters). The exact scan is over
    ``float32_rows(field)`` (the field's rows as float32, in row order) when given, else over the
    float16 rows themselves (which then checks the search, not the rounding). ``scan_recall_at_k``
    is the same for a scan of every float16 row (what a prefiltered field is measured against),
    ``search_ms`` / ``scan_ms`` the median time of one search for k = 50 each way.
    """
    fields: dict[str, Any] = {}
    for field, index in snap.ann.items():
        reference = float32_rows(field) if float32_rows is not None else None
        hits = dict.fromkeys(ks, 0)
        ids = dict.fromkeys(ks, 0)
        scan_hits = dict.fromkeys(ks, 0)
        times: dict[bool, list[float]] = {False: [], True: []}
        for q in queries:
            if reference is not None:
                exact = np.full(len(snap), -np.inf, dtype=np.float32)
                exact[snap.rows[field]] = reference @ np.asarray(q, dtype=np.float32)
            else:
                exact = dense_scores(snap, field, q)
                exact[~snap.present[field]] = -np.inf
            order = np.argsort(-exact, kind="stable")
            for k in ks:
                got = dense_search(snap, field, q, k).top
                ids[k] += len(set(order[:k].tolist()) & set(got.tolist()))
                # a row tied with the exact k-th (duplicate texts share a vector) is as good a find
                hits[k] += int(np.sum(exact[got] >= exact[order[k - 1]] - 1e-6))
                scanned = snap.rows[field][index.search(q, k, exhaustive=True)]
                scan_hits[k] += int(np.sum(exact[scanned] >= exact[order[k - 1]] - 1e-6))
            for exhaustive in (False, True):  # one k = 50 search each way, alternating
                start = time.perf_counter()
                index.search(q, 50, exhaustive=exhaustive)
                times[exhaustive].append(1000 * (time.perf_counter() - start))
        fields[field] = {
            "rows": index.rows,
            **{f"recall_at_{k}": hits[k] / (k * len(queries)) if queries else None for k in ks},
            **{f"id_recall_at_{k}": ids[k] / (k * len(queries)) if queries else None for k in ks},
            **{f"scan_recall_at_{k}": scan_hits[k] / (k * len(queries)) if queries else None for k in ks},
            "prefiltered": index.prefiltered,
            "search_ms": float(np.median(times[False])) if queries else None,
            "scan_ms": float(np.median(times[True])) if queries else None,
            "build_seconds": index.build_seconds,
            "mb": index.nbytes / 2**20,
            "float32_mb": index.rows * snap.dim * 4 / 2**20,
        }
    held = snap.vector_bytes()
    return {
        "fields": fields,
        "vectors_mb": sum(held.values()) / 2**20,
        "float32_mb": sum(len(snap.rows[f]) for f in held) * snap.dim * 4 / 2**20,
    }
