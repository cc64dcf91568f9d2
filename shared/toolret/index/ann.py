"""An approximate nearest-neighbour index over one large field: candidates without a full scan.

Above :data:`ANN_MIN_ROWS` rows in a field, :func:`toolret.index.dense.dense_search` asks this
index for candidates instead of scanning every row. It is a faiss inverted-file index (IVF):
the rows are clustered once (k-means on a sample), each query scans the rows of its
``nprobe`` nearest clusters only, with the vectors held as 8-bit codes (a quarter of float32).
The index only proposes: it returns a few times more rows than asked for, and
:mod:`toolret.index.dense` re-scores them from the snapshot's float16 rows, so what ranking
reads is the true cosine and only the choice of candidates is approximate.

Why IVF and not a graph (HNSW): measured on the 100k-tool scale registry (docs/storage.md),
both reach recall@10 >= 0.99 of the exact scan, but an HNSW graph took several times longer to
build, and a snapshot is rebuilt on every write and on every open (the index is not persisted:
rebuilding it is cheaper than storing it beside ChromaDB).
"""

from __future__ import annotations

import math
import time

import numpy as np

from toolret.errors import MissingDependencyError

__all__ = ["ANN_MIN_ROWS", "AnnIndex"]

#: Fields with at least this many rows get an approximate index; smaller ones are scanned exactly
#: (a 20k x 384 float32 scan is about a millisecond, and small registries keep exact answers).
ANN_MIN_ROWS = 20_000

#: Clusters scanned per query, and how many clusters per sqrt(rows). 4*sqrt(100k) = 1265 clusters of
#: ~80 rows; 48 of them are ~4% of the rows.
NPROBE = 48
_CLUSTERS_PER_SQRT = 4
#: The approximate search returns this many times the candidates asked for, re-scored exactly.
POOL_FACTOR = 2
_TRAIN_PER_CLUSTER = 40


def _faiss() -> object:
    try:
        import faiss
    except ImportError:
        raise MissingDependencyError("faiss-cpu", purpose="approximate dense search on large registries") from None
    return faiss


class AnnIndex:
    """Approximate inner-product search over the rows of one field matrix (unit vectors)."""

    def __init__(self, index: object, rows: int, nprobe: int, build_seconds: float = 0.0) -> None:
        self._index = index
        self.rows = rows
        self.nprobe = nprobe
        #: Wall time of :meth:`build` (reported by the scale benchmark: it is paid on every rebuild).
        self.build_seconds = build_seconds

    @classmethod
    def build(cls, mat: np.ndarray, *, nprobe: int = NPROBE, seed: int = 0) -> AnnIndex:
        """Cluster ``mat``'s rows and index them; deterministic for a given matrix and seed."""
        faiss = _faiss()
        start = time.perf_counter()
        n, dim = mat.shape
        nlist = max(1, min(n // _TRAIN_PER_CLUSTER, int(_CLUSTERS_PER_SQRT * math.sqrt(n))))
        quantizer = faiss.IndexFlatIP(dim)  # type: ignore[attr-defined]
        index = faiss.IndexIVFScalarQuantizer(  # type: ignore[attr-defined]
            quantizer,
            dim,
            nlist,
            faiss.ScalarQuantizer.QT_8bit,
            faiss.METRIC_INNER_PRODUCT,  # type: ignore[attr-defined]
        )
        index.cp.niter = 10
        index.cp.seed = seed
        index.cp.max_points_per_centroid = _TRAIN_PER_CLUSTER
        index.cp.min_points_per_centroid = 1
        rng = np.random.default_rng(seed)
        sample = rng.choice(n, size=min(n, nlist * _TRAIN_PER_CLUSTER), replace=False)
        index.train(np.ascontiguousarray(mat[np.sort(sample)], dtype=np.float32))
        for start in range(0, n, 16_384):  # float32 in blocks: never a whole float32 copy
            index.add(np.ascontiguousarray(mat[start : start + 16_384], dtype=np.float32))
        index.nprobe = min(nprobe, nlist)
        return cls(index, n, index.nprobe, time.perf_counter() - start)

    def pool_size(self, n: int) -> int:
        """How many rows to ask for when ranking wants ``n``."""
        return min(self.rows, POOL_FACTOR * n)

    def search(self, query: np.ndarray, k: int) -> np.ndarray:
        """Row numbers of (about) the ``k`` rows with the largest inner product with ``query``."""
        q = np.ascontiguousarray(query, dtype=np.float32).reshape(1, -1)
        _, labels = self._index.search(q, k)  # type: ignore[attr-defined]
        found = labels[0]
        return found[found >= 0]

    @property
    def nbytes(self) -> int:
        """Memory held by the index: codes, row ids and centroids."""
        index = self._index
        codes = index.ntotal * (index.code_size + 8)  # type: ignore[attr-defined]
        return int(codes + index.nlist * index.d * 4)  # type: ignore[attr-defined]
