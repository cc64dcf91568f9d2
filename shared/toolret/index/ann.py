"""Dense search over one large field without a float32 scan: float16 rows, a 4-bit prefilter.

Above :data:`ANN_MIN_ROWS` rows in a field, the snapshot keeps that field's vectors as float16
inside a faiss flat scalar-quantizer index (``QT_fp16``), and
:func:`toolret.index.dense.dense_search` asks it for the field's top candidates. The index's
storage *is* the snapshot's matrix (:attr:`HalfScanIndex.matrix` is a view of it): one copy, two
bytes per value.

A search does not read every float16 row: a 4-bit product-quantizer code per row (one code per
two dimensions, 96 bytes at 384 dimensions, scanned by faiss's ``IndexPQFastScan`` from SIMD
registers) names the best :data:`RESCORE_MIN` rows, those are re-scored from their float16 rows
(``IndexRefine``), and the best k of them are returned. On the 100k-tool scale registry a field
search fell from 6-7 ms (the float16 scan, 77 MB read per query) to 0.7-0.9 ms, finding the same
candidates (recall@10 and @50 against the float32 scan equal to the full float16 scan's,
docs/decisions/2026-11-23-dense-search-100k.md). Coarser codes (one per 8 dimensions) missed 5% of the parameters' top 50 at
1,000 re-scored rows; int8 codes (``QT_8bit``) scanned no faster than float16 (compute-bound)
and missed 1-2%.

Why not a true approximate index (IVF, HNSW): measured on the 100k-tool scale registry, the
exact top 10 of a query's description neighbours are spread over many clusters (a real tool's
bundled variants differ by their other half), so IVF found 0.93 of them scanning 4% of the rows
and 0.97 scanning 20%, and an HNSW graph (M=16) 0.91 at efSearch 256 after a 20 s build per
field; ranking needs >= 0.99. The prefilter scans every row's code, so it has no such blind spots.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from toolret.errors import MissingDependencyError

__all__ = ["ANN_MIN_ROWS", "PREFILTER_MIN_ROWS", "RESCORE_MIN", "HalfScanIndex"]

#: Fields with at least this many rows are held as float16 and scanned by faiss; smaller ones stay
#: float32 and are scanned by numpy (about a millisecond at 20k rows, and exact to the last bit).
ANN_MIN_ROWS = 20_000

#: Fields with at least this many rows also get a 4-bit product-quantizer prefilter (below it the
#: float16 scan alone costs well under a millisecond, and the quantizer would have little to train on).
PREFILTER_MIN_ROWS = 8_192

#: A prefiltered search re-scores at least this many rows (and ``RESCORE_FACTOR`` x k) from the
#: float16 rows; the k returned are the best of those by their float16 cosine.
RESCORE_MIN = 1_000
RESCORE_FACTOR = 10

#: Dimensions per product-quantizer sub-vector (384 -> 192 sub-vectors of 4 bits: 96 bytes a row).
_DIMS_PER_CODE = 2

#: Rows the product quantizer trains on, about (a stride over the field, so every part of it is seen).
_TRAIN_ROWS = 4_096

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


def _subquantizers(dim: int) -> int:
    """Product-quantizer sub-vectors for ``dim``: ``dim / 2`` when it divides, else 0 (no prefilter)."""
    return dim // _DIMS_PER_CODE if dim % _DIMS_PER_CODE == 0 and dim >= 2 * _DIMS_PER_CODE else 0


class HalfScanIndex:
    """One field's rows as float16 in a faiss ``IndexScalarQuantizer``, searched by inner product.

    With at least :data:`PREFILTER_MIN_ROWS` rows a search does not scan every float16 row: a 4-bit
    product-quantizer code per row (``IndexPQFastScan``, 96 bytes at 384 dimensions, scanned from
    SIMD registers) names the best :data:`RESCORE_MIN` rows (or ``RESCORE_FACTOR`` x k), those are
    re-scored from their float16 rows (faiss ``IndexRefine``), and the best k of them are returned.
    """

    def __init__(self, index: Any, dim: int, build_seconds: float = 0.0, prefilter: Any = None) -> None:
        self._index = index
        self.rows = int(index.ntotal)
        #: The rows, float16, row r = the field's r-th row (a read-only view of the index's storage).
        self.matrix: np.ndarray = np.asarray(_CodesOwner(index, self.rows, dim))
        self._prefilter = prefilter
        self._refine = _faiss().IndexRefine(prefilter, index) if prefilter is not None else None
        #: Wall time of :meth:`build` (it is paid on every snapshot rebuild and every open).
        self.build_seconds = build_seconds

    @classmethod
    def build(cls, blocks: Any, dim: int, prefilter_min_rows: int = PREFILTER_MIN_ROWS) -> HalfScanIndex:
        """Encode row blocks (float32 arrays, in row order) without ever holding all rows as float32.

        The prefilter (when the field has ``prefilter_min_rows`` rows) is trained on a stride of
        the float16 rows and encoded from them a block at a time, after every row is in.
        """
        faiss = _faiss()
        start = time.perf_counter()
        index = faiss.IndexScalarQuantizer(dim, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT)
        for block in blocks:
            index.add(np.ascontiguousarray(block, dtype=np.float32))
        rows, subs = int(index.ntotal), _subquantizers(dim)
        prefilter = None
        if subs and rows >= max(prefilter_min_rows, 1):
            half = np.asarray(_CodesOwner(index, rows, dim))
            prefilter = faiss.IndexPQFastScan(dim, subs, 4, faiss.METRIC_INNER_PRODUCT)
            stride = max(rows // _TRAIN_ROWS, 1)
            prefilter.train(np.ascontiguousarray(half[::stride], dtype=np.float32))
            for s in range(0, rows, _BLOCK):
                prefilter.add(np.ascontiguousarray(half[s : s + _BLOCK], dtype=np.float32))
        return cls(index, dim, time.perf_counter() - start, prefilter)

    @classmethod
    def from_matrix(cls, mat: np.ndarray, prefilter_min_rows: int = PREFILTER_MIN_ROWS) -> HalfScanIndex:
        blocks = (mat[s : s + _BLOCK] for s in range(0, len(mat), _BLOCK))
        return cls.build(blocks, mat.shape[1], prefilter_min_rows)

    @property
    def prefiltered(self) -> bool:
        """Whether searches go through the product-quantizer prefilter (else every row is scanned)."""
        return self._refine is not None

    def search(self, query: np.ndarray, k: int, exhaustive: bool = False) -> np.ndarray:
        """Row numbers of the ``k`` rows with the largest inner product with ``query`` (best first).

        ``exhaustive`` scans every float16 row even when the index has a prefilter (the reference
        the prefilter is measured against).
        """
        if k <= 0 or self.rows == 0:
            return np.zeros(0, dtype=np.int64)
        q = np.ascontiguousarray(query, dtype=np.float32).reshape(1, -1)
        k = min(k, self.rows)
        rescored = min(max(RESCORE_MIN, RESCORE_FACTOR * k), self.rows)
        if self._refine is None or exhaustive or rescored >= self.rows:
            _, labels = self._index.search(q, k)
        else:
            params = _faiss().IndexRefineSearchParameters(k_factor=(rescored + 0.5) / k)  # faiss rounds k x factor down
            _, labels = self._refine.search(q, k, params=params)
        found: np.ndarray = labels[0]
        return found[found >= 0]

    @property
    def prefilter_nbytes(self) -> int:
        """Memory held by the prefilter's codes (0 without one)."""
        return 0 if self._prefilter is None else int(self._prefilter.codes.size())  # packed in blocks of 32 rows

    @property
    def nbytes(self) -> int:
        """Memory held: the float16 rows (the same bytes as :attr:`matrix`, counted once) and the prefilter."""
        return int(self.matrix.nbytes) + self.prefilter_nbytes
