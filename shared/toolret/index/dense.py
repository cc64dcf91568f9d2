"""Dense candidate search: the one place ranking asks for a field's query-to-tool similarities.

A snapshot stores each field's vectors for the tools that have that field
(:class:`~toolret.index.snapshot.Snapshot`). Ranking needs two things per field and query: the
``n`` tools most similar to the query (candidates) and the similarity of every candidate the
other signals brought in (lexical hits, named tools). :func:`dense_search` answers both:

* a field with fewer rows than the snapshot's ANN threshold is a float32 matrix, scanned exactly
  (one BLAS matrix-vector product over the field's rows; at 20k rows it costs about a millisecond);
* a larger field is a float16 matrix that faiss searches (:mod:`toolret.index.ann`: 4-bit codes
  name the best thousand rows, their float16 rows decide); the similarity of any other candidate
  is computed from the same float16 rows. Scanning every row of 100k per field per query was the
  largest part of a 100k-tool search after the query embedding.

Keeping it behind these functions lets the index layer change how it answers without touching
ranking; ranking sees the same cosines either way (float16 rounding moves them by ~1e-5).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from toolret.index.snapshot import Snapshot

__all__ = ["DenseHits", "dense_scores", "dense_search", "rows_float32"]


#: Every float16 value as float32, by bit pattern: numpy's own float16 cast runs a scalar loop
#: (~60M values/s here); a table lookup of 65,536 entries (256 KB, cache-resident) is about twice as fast.
_HALF_TO_FLOAT = np.arange(65_536, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32)


def rows_float32(mat: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """Rows of a field matrix (all when ``rows`` is None) as float32, ready for BLAS."""
    picked = mat if rows is None else mat[rows]
    if picked.dtype == np.float16:
        return np.take(_HALF_TO_FLOAT, picked.view(np.uint16))
    return np.asarray(picked, dtype=np.float32)


@dataclass(frozen=True)
class DenseHits:
    """One field's dense answer to one query.

    ``top`` holds the (up to) ``n`` tools most similar to the query among those with the field,
    in no particular order; :meth:`at` gives the cosine of any tools (0 where a tool lacks the
    field). ``row_scores`` is the cosine of every row of the field when it was scanned exactly
    (None after a search of a large field, which never computes it).
    """

    snap: Snapshot
    field: str
    query: np.ndarray
    top: np.ndarray
    row_scores: np.ndarray | None = None

    def at(self, tools: np.ndarray) -> np.ndarray:
        """Cosine of the query with each of ``tools``' field vector (0 where absent)."""
        out = np.zeros(len(tools), dtype=np.float32)
        slots = self.snap.slot[self.field][tools]
        have = slots >= 0
        if have.any():
            if self.row_scores is not None:
                out[have] = self.row_scores[slots[have]]
            else:
                out[have] = rows_float32(self.snap.vectors[self.field], slots[have]) @ self.query
        return out


def _row_scores(mat: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Cosine of ``q`` with every row of a field matrix (a float16 one cast in blocks, never whole)."""
    if mat.dtype == np.float32:
        return mat @ q
    out = np.empty(len(mat), dtype=np.float32)
    for start in range(0, len(mat), 8192):
        out[start : start + 8192] = rows_float32(mat[start : start + 8192]) @ q
    return out


def dense_scores(snap: Snapshot, field: str, query: np.ndarray) -> np.ndarray:
    """Cosine of ``query`` with every tool's ``field`` vector, in snapshot order (0 where absent).

    Always exact and complete (evaluation code reads every tool's score); searches use
    :func:`dense_search`, which avoids the full scan on large fields.
    """
    scores = np.zeros(len(snap), dtype=np.float32)
    rows = snap.rows[field]
    if len(rows):
        scores[rows] = _row_scores(snap.vectors[field], np.asarray(query, dtype=np.float32))
    return scores


def _top(snap: Snapshot, field: str, row_scores: np.ndarray, n: int, row_ok: np.ndarray | None = None) -> np.ndarray:
    """The ``n`` best-scoring tools with the field (ranking's ``top_n`` on cosine + 1, which is > 0),
    among the rows ``row_ok`` allows (all when None).

    Works on the field's rows, not a per-tool array: the rows are in tool order, so this picks
    the very tools a per-tool scan picked, without filling and masking an array of every tool.
    """
    shifted = row_scores + 1.0
    valid = np.flatnonzero(shifted > 0 if row_ok is None else (shifted > 0) & row_ok)
    if len(valid) > n:
        valid = valid[np.argpartition(-shifted[valid], n - 1)[:n]]
    return snap.rows[field][valid]


def dense_search(snap: Snapshot, field: str, query: np.ndarray, n: int, allowed: np.ndarray | None = None) -> DenseHits:
    """The ``n`` tools whose ``field`` is closest to ``query``, and a scorer for any others.

    Exact below the snapshot's threshold; above it, a prefiltered search of float16 rows (it finds
    0.9995 of the float32 scan's top 10 at 100k tools, as a scan of every float16 row does; the
    rest are rounding between near-equal cosines, see docs/storage.md).

    ``allowed`` (a boolean per tool) restricts the ``n`` to those tools. A large field is then
    scanned exactly over the allowed rows alone, never searched past disallowed ones: an
    approximate search for the ``n`` best of everything could return none that are allowed.
    """
    q = np.asarray(query, dtype=np.float32)
    index = snap.ann.get(field)
    row_ok = None if allowed is None else allowed[snap.rows[field]]
    if index is None:
        row_scores = _row_scores(snap.vectors[field], q)
        return DenseHits(snap, field, q, _top(snap, field, row_scores, n, row_ok), row_scores)
    if row_ok is None:
        return DenseHits(snap, field, q, snap.rows[field][index.search(q, n)])
    rows = np.flatnonzero(row_ok)
    scores = np.full(len(row_ok), -2.0, dtype=np.float32)  # below any cosine: never in the top
    for start in range(0, len(rows), 8192):
        block = rows[start : start + 8192]
        scores[block] = rows_float32(snap.vectors[field], block) @ q
    return DenseHits(snap, field, q, _top(snap, field, scores, n, row_ok))
