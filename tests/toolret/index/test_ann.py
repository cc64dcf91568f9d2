"""The float16 dense path (forced on with a low threshold) answers like the float32 scan."""

from __future__ import annotations

import gc

import numpy as np

from toolret import ToolDoc
from toolret.config import RetrievalConfig
from toolret.index.ann import HalfScanIndex
from toolret.index.dense import dense_scores, dense_search
from toolret.index.snapshot import build_snapshot
from toolret.scoring.candidates import rank_tools

DIM = 32
WORDS = "weather currency email calendar invoice stock flight hotel music translate map recipe".split()


def _clustered(rng: np.random.Generator, n: int, centres: np.ndarray, noise: float) -> np.ndarray:
    rows = centres[rng.integers(0, len(centres), n)] + noise * rng.normal(size=(n, DIM))
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def _registry(n: int, seed: int = 0) -> tuple[list[ToolDoc], list[dict[str, np.ndarray]], np.ndarray]:
    """``n`` synthetic tools with topic-clustered vectors (like real embeddings), a third with examples."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(len(WORDS), DIM))
    desc = _clustered(rng, n, centres, 0.8)
    examples = _clustered(rng, n, centres, 0.8)
    docs, vectors = [], []
    for i in range(n):
        topic = WORDS[i % len(WORDS)]
        docs.append(ToolDoc(name=f"{topic}_tool_{i}", description=f"{topic} helper number {i} for {WORDS[i * 7 % 12]}"))
        vectors.append({"description": desc[i]} | ({"examples": examples[i]} if i % 3 == 0 else {}))
    return docs, vectors, _clustered(rng, 40, centres, 1.0)


def test_forced_ann_finds_the_exact_scans_top_candidates():
    docs, vectors, queries = _registry(600)
    exact = build_snapshot(docs, vectors, DIM)
    approx = build_snapshot(docs, vectors, DIM, ann_min_rows=100)
    assert set(approx.ann) == {"description", "examples"} and not exact.ann
    assert approx.vectors["description"].dtype == np.float16 and exact.vectors["description"].dtype == np.float32
    hits, total = 0, 0
    for q in queries:
        for field, n in (("description", 10), ("description", 50), ("examples", 10)):
            want = set(dense_search(exact, field, q, n).top.tolist())
            got = dense_search(approx, field, q, n)
            hits += len(want & set(got.top.tolist()))
            total += len(want)
            assert approx.present[field][got.top].all()  # rows mapped back to tools that have the field
    assert hits / total >= 0.99


def test_compact_rescoring_gives_the_float32_cosines_and_zero_where_absent():
    docs, vectors, queries = _registry(300, seed=1)
    exact = build_snapshot(docs, vectors, DIM)
    approx = build_snapshot(docs, vectors, DIM, ann_min_rows=50)
    tools = np.arange(len(docs))
    for q in queries[:5]:
        for field in ("description", "examples", "topics"):
            want = dense_scores(exact, field, q)
            np.testing.assert_allclose(dense_search(approx, field, q, 20).at(tools), want, atol=2e-3)
            np.testing.assert_allclose(dense_scores(approx, field, q), want, atol=2e-3)
        assert (dense_search(approx, "examples", q, 20).at(tools)[tools % 3 != 0] == 0).all()


def test_float16_snapshot_ranks_the_same_top_k_as_float32():
    docs, vectors, queries = _registry(300, seed=2)
    exact = build_snapshot(docs, vectors, DIM)
    approx = build_snapshot(docs, vectors, DIM, ann_min_rows=50)
    # The hand-set formula: the order of its top five is exact. The learned fusion weighs the raw cosine
    # more (docs/method.md 4c), so float16's ~1e-3 error may swap near-tied tools of these random vectors:
    # four of the same five.
    heuristic = RetrievalConfig.preset("fast").with_(fusion="heuristic")
    for i, q in enumerate(queries[:20]):
        text = f"{WORDS[i % len(WORDS)]} helper for {WORDS[(i * 5) % len(WORDS)]}"
        want = rank_tools(exact, text, q, heuristic).candidates
        got = rank_tools(approx, text, q, heuristic).candidates
        assert [c.index for c in got[:5]] == [c.index for c in want[:5]]
        want = rank_tools(exact, text, q, RetrievalConfig.preset("fast")).candidates
        got = rank_tools(approx, text, q, RetrievalConfig.preset("fast")).candidates
        assert len({c.index for c in got[:5]} & {c.index for c in want[:5]}) >= 4


def test_memory_accounting_counts_float16_rows_once():
    docs, vectors, _ = _registry(400, seed=3)
    exact = build_snapshot(docs, vectors, DIM)
    approx = build_snapshot(docs, vectors, DIM, ann_min_rows=100)
    n_desc, n_ex = 400, len(range(0, 400, 3))
    assert exact.vector_bytes()["description"] == n_desc * DIM * 4
    assert approx.vector_bytes()["description"] == n_desc * DIM * 2
    assert approx.vectors["examples"].shape == (n_ex, DIM)
    # the snapshot's matrix is the index's storage, not a second copy
    assert approx.vectors["description"] is approx.ann["description"].matrix
    assert approx.ann["description"].nbytes == n_desc * DIM * 2
    assert not approx.vectors["description"].flags.writeable
    assert exact.vector_bytes()["topics"] == 0 and "topics" not in approx.ann


def test_float16_rows_outlive_the_index_object_that_holds_them():
    rng = np.random.default_rng(5)
    mat = _clustered(rng, 500, rng.normal(size=(5, DIM)), 0.5)
    index = HalfScanIndex.from_matrix(mat)
    row = index.matrix[123]
    del index
    gc.collect()
    np.testing.assert_allclose(row.astype(np.float32), mat[123], atol=1e-3)


def test_half_scan_index_alone_finds_the_exact_neighbours():
    rng = np.random.default_rng(4)
    centres = rng.normal(size=(30, DIM))
    mat = _clustered(rng, 3000, centres, 0.5)
    index = HalfScanIndex.from_matrix(mat)
    assert index.rows == 3000 and index.matrix.dtype == np.float16
    recall = []
    for q in _clustered(rng, 30, centres, 0.6):
        exact = np.argsort(-(mat @ q))[:10]
        found = index.search(q, 10)
        recall.append(len(set(exact.tolist()) & set(found.tolist())) / 10)
        assert found[0] == exact[0]  # best first
    assert np.mean(recall) >= 0.99
    assert len(index.search(mat[0], 0)) == 0


def _large(rng: np.random.Generator, n: int, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` unit rows in many topic clusters and queries far from every row (like the scale bench's)."""
    centres = rng.normal(size=(200, dim))
    rows = centres[rng.integers(0, 200, n)] + 0.9 * rng.normal(size=(n, dim))
    queries = centres[rng.integers(0, 200, 40)] + 1.5 * rng.normal(size=(40, dim))
    unit = [(m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32) for m in (rows, queries)]
    return unit[0], unit[1]


def _tie_aware_recall(mat: np.ndarray, queries: np.ndarray, search, k: int) -> float:
    """Share of returned rows scoring at least the exact float32 scan's k-th cosine."""
    hits = 0
    for q in queries:
        exact = mat @ q
        kth = np.sort(exact)[-k]
        hits += int(np.sum(exact[search(q, k)] >= kth - 1e-6))
    return hits / (k * len(queries))


def test_prefiltered_search_keeps_the_exact_scans_top_candidates():
    rng = np.random.default_rng(6)
    mat, queries = _large(rng, 24_000, 128)
    index = HalfScanIndex.from_matrix(mat)
    assert index.prefiltered
    for k in (10, 50):
        assert _tie_aware_recall(mat, queries, index.search, k) >= 0.99
        scanned = _tie_aware_recall(mat, queries, lambda q, n: index.search(q, n, exhaustive=True), k)
        assert _tie_aware_recall(mat, queries, index.search, k) >= scanned - 0.005
    assert index.search(queries[0], 7).shape == (7,)  # k x factor not a whole number of rows
    assert len(index.search(queries[0], 30_000)) == 24_000  # more than the rows: every row, no prefilter


def test_fields_below_the_prefilter_threshold_scan_every_row():
    rng = np.random.default_rng(7)
    mat, queries = _large(rng, 5_000, 64)
    index = HalfScanIndex.from_matrix(mat)
    assert not index.prefiltered and index.nbytes == 5_000 * 64 * 2
    for q in queries[:10]:
        np.testing.assert_array_equal(index.search(q, 50), index.search(q, 50, exhaustive=True))


def test_prefilter_memory_is_a_small_share_of_the_float16_rows():
    rng = np.random.default_rng(8)
    mat, _ = _large(rng, 10_000, 64)
    index = HalfScanIndex.from_matrix(mat, prefilter_min_rows=1_000)
    # 4 bits per 2 dimensions, rows packed in blocks of 32: 16 bytes a row here (1/8 of float16)
    assert index.prefilter_nbytes == 10_016 * 64 // 4
    assert index.nbytes == index.matrix.nbytes + index.prefilter_nbytes
    assert index.matrix.nbytes == 10_000 * 64 * 2  # the stored rows are still float16, once


def test_allowed_tools_restrict_both_dense_paths_to_the_exact_best_allowed():
    """With ``allowed``, the ``n`` are the best allowed tools, on the exact and the float16 path alike."""
    docs, vectors, queries = _registry(600, seed=3)
    exact = build_snapshot(docs, vectors, DIM)
    approx = build_snapshot(docs, vectors, DIM, ann_min_rows=100)
    allowed = np.zeros(len(docs), dtype=bool)
    allowed[::7] = True  # 86 of 600: an approximate top 10 of everything would hold about one
    for q in queries[:10]:
        scores = np.where(allowed & exact.present["description"], dense_scores(exact, "description", q), -np.inf)
        want = set(np.argsort(-scores)[:10].tolist())
        for snap in (exact, approx):
            got = dense_search(snap, "description", q, 10, allowed).top
            assert allowed[got].all() and len(got) == 10
            assert len(want & set(got.tolist())) >= 9  # float16 rounding may swap a near-tie
