"""Dense search below the ANN threshold: exact, and the very answer of a scan over every tool."""

from __future__ import annotations

import numpy as np

from toolret import ToolDoc
from toolret.index.dense import dense_scores, dense_search
from toolret.index.snapshot import build_snapshot

DIM = 24


def _snapshot(n: int, seed: int = 0):
    """``n`` tools; every one has a description, one in four examples, none a response."""
    rng = np.random.default_rng(seed)
    docs, vectors = [], []
    for i in range(n):
        docs.append(ToolDoc(name=f"tool_{i}", description=f"tool number {i}"))
        vecs = {"description": rng.normal(size=DIM).astype(np.float32)}
        if i % 4 == 0:
            vecs["examples"] = rng.normal(size=DIM).astype(np.float32)
        vectors.append({f: v / np.linalg.norm(v) for f, v in vecs.items()})
    return build_snapshot(docs, vectors, DIM), rng.normal(size=(10, DIM)).astype(np.float32)


def _per_tool_top(scores: np.ndarray, mask: np.ndarray, n: int) -> np.ndarray:
    """The candidates as the search picked them before it worked on the field's rows."""
    shifted = scores + 1.0
    valid = np.flatnonzero(mask & (shifted > 0))
    return valid if len(valid) <= n else valid[np.argpartition(-shifted[valid], n - 1)[:n]]


def test_exact_search_picks_the_same_tools_and_cosines_as_a_per_tool_scan():
    snap, queries = _snapshot(3_000)
    assert not snap.ann  # below ANN_MIN_ROWS: the exact numpy path
    tools = np.arange(len(snap))
    for q in queries:
        for field in ("description", "examples", "response"):
            full = dense_scores(snap, field, q)
            hits = dense_search(snap, field, q, 50)
            np.testing.assert_array_equal(hits.top, _per_tool_top(full, snap.present[field], 50))
            np.testing.assert_array_equal(hits.at(tools), full)  # bit for bit, 0 where a tool lacks the field
    assert len(dense_search(snap, "response", queries[0], 50).top) == 0


def test_cuts_of_any_size_pick_the_same_tools():
    snap, _ = _snapshot(400, seed=1)
    q = snap.vectors["description"][7]  # a query equal to a row
    for n in (1, 5, 399, 500):
        full = dense_scores(snap, "description", q)
        np.testing.assert_array_equal(
            dense_search(snap, "description", q, n).top, _per_tool_top(full, snap.present["description"], n)
        )
