"""Dense search over one large field without a float32 scan: float16 rows scanned by faiss.

Above :data:`ANN_MIN_ROWS` rows in a field, the snapshot keeps that field's vectors as float16
inside a faiss flat scalar-quantizer index (``QT_fp16``), and
:func:`toolret.index.dense.dense_search` asks it for the field's top candidates. faiss decodes
float16 with SIMD while it scans, so the scan reads half the bytes of a float32 matrix and runs
2-2.7x faster than numpy's float32 matrix-vector product at 100k rows (docs/storage.md), and
the index's storage *is* the snapshot's matrix (:attr:`HalfScanIndex.matrix` is a view of it):
one copy, two bytes per value, and no build beyond encoding.

Why not a true approximate index (IVF, HNSW): measured on the 100k-tool scale registry, the
exact top 10 of a query's description neighbours are spread over many clusters (a real tool's
bundled variants differ by their other half), so IVF found 0.93 of them scanning 4% of the rows
and 0.97 scanning 20%, and an HNSW graph (M=16) 0.91 at efSearch 256 after a 20 s build per
field; ranking needs >= 0.99. The float16 scan finds 0.998 (the misses are float16 rounding
between near-equal cosines).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from toolret.errors import MissingDependencyError

__all__ = ["ANN_MIN_ROWS", "HalfScanIndex"]

#: Fields with at least this many rows are held as float16 and scanned by faiss; smaller ones stay
#: float32 and are scanned by numpy (about a millisecond at 20k rows, and exact to the last bit).
ANN_MIN_ROWS = 20_000

_BLOCK = 16_384


_threads_set = False


def _faiss() -> Any:
    """faiss, with its OpenMP pool set to one thread on first use.

    A search scans for one query, which faiss runs on one thread anyway; with the default pool
    (one thread per core) the idle threads spin against the query embedding and other work: on
    two busy cores a 100k-row float16 scan took 12-13 ms with two threads and 6-7 ms with one.
    This is faiss's process-wide setting: an application that runs its own multi-threaded faiss
    work can raise it again with ``faiss.omp_set_num_threads``.
    """
    global _threads_set
    try:
        import faiss
    except ImportError:
        raise MissingDependencyError("faiss-cpu", purpose="dense search over large registries") from None
    if not _threads_set:
        faiss.omp_set_num_threads(1)
        _threads_set = True
    return faiss


class _CodesOwner:
    """Exposes the index's float16 codes to numpy while holding the index: arrays (and every view
    of them) keep this object, hence the faiss storage under them, alive."""

    def __init__(self, index: Any, rows: int, dim: int) -> None:
        self.index = index
        address = 0
        if rows:
            codes = _faiss().rev_swig_ptr(index.codes.data(), rows * dim * 2)
            address = codes.__array_interface__["data"][0]
        self.__array_interface__ = {
            "shape": (rows, dim),
            "typestr": "<f2",
            "data": (address, True),  # read-only: faiss scans these bytes
            "version": 3,
        }


class HalfScanIndex:
    """One field's rows as float16 in a faiss ``IndexScalarQuantizer``, searched by inner product."""

    def __init__(self, index: Any, dim: int, build_seconds: float = 0.0) -> None:
        self._index = index
        self.rows = int(index.ntotal)
        #: The rows, float16, row r = the field's r-th row (a read-only view of the index's storage).
        self.matrix: np.ndarray = np.asarray(_CodesOwner(index, self.rows, dim))
        #: Wall time of :meth:`build` (it is paid on every snapshot rebuild and every open).
        self.build_seconds = build_seconds

    @classmethod
    def build(cls, blocks: Any, dim: int) -> HalfScanIndex:
        """Encode row blocks (float32 arrays, in row order) without ever holding all rows as float32."""
        faiss = _faiss()
        start = time.perf_counter()
        index = faiss.IndexScalarQuantizer(dim, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT)
        for block in blocks:
            index.add(np.ascontiguousarray(block, dtype=np.float32))
        return cls(index, dim, time.perf_counter() - start)

    @classmethod
    def from_matrix(cls, mat: np.ndarray) -> HalfScanIndex:
        return cls.build((mat[s : s + _BLOCK] for s in range(0, len(mat), _BLOCK)), mat.shape[1])

    def search(self, query: np.ndarray, k: int) -> np.ndarray:
        """Row numbers of the ``k`` rows with the largest inner product with ``query`` (best first)."""
        if k <= 0 or self.rows == 0:
            return np.zeros(0, dtype=np.int64)
        q = np.ascontiguousarray(query, dtype=np.float32).reshape(1, -1)
        _, labels = self._index.search(q, min(k, self.rows))
        found: np.ndarray = labels[0]
        return found[found >= 0]

    @property
    def nbytes(self) -> int:
        """Memory held: the float16 rows (the same bytes as :attr:`matrix`, counted once)."""
        return int(self.matrix.nbytes)
