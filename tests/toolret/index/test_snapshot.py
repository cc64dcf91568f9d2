"""Snapshots keep each field's vectors for the tools that have that field only."""

from __future__ import annotations

import numpy as np

from toolret import ToolDoc
from toolret.index.dense import dense_scores
from toolret.index.snapshot import build_snapshot


def _unit(*values: float) -> np.ndarray:
    v = np.asarray(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_a_field_only_some_tools_have_takes_rows_for_those_tools_only():
    docs = [ToolDoc(name=n, description=f"{n} tool") for n in ("a", "b", "c")]
    vectors = [
        {"description": _unit(1, 0, 0)},
        {"description": _unit(0, 1, 0), "examples": _unit(0, 0, 1)},
        {"description": _unit(1, 1, 0)},
    ]
    snap = build_snapshot(docs, vectors, 3)
    assert snap.vectors["description"].shape == (3, 3)
    assert snap.vectors["examples"].shape == (1, 3) and snap.rows["examples"].tolist() == [1]
    assert snap.vectors["topics"].shape == (0, 3)
    assert snap.present["examples"].tolist() == [False, True, False]
    for i, vecs in enumerate(vectors):
        got = snap.field_vectors(i)
        assert set(got) == set(vecs)
        for f, v in vecs.items():
            np.testing.assert_array_equal(got[f], v)


def test_dense_scores_are_the_full_scan_with_zero_for_a_missing_field():
    rng = np.random.default_rng(0)
    docs = [ToolDoc(name=f"t{i}", description=f"tool {i}") for i in range(50)]
    vectors = [
        {"description": _unit(*rng.normal(size=8))} | ({"response": _unit(*rng.normal(size=8))} if i % 3 else {})
        for i in range(50)
    ]
    snap = build_snapshot(docs, vectors, 8)
    query = _unit(*rng.normal(size=8))
    for field in ("description", "response", "examples"):
        expected = np.array([float(v[field] @ query) if field in v else 0.0 for v in vectors], dtype=np.float32)
        np.testing.assert_allclose(dense_scores(snap, field, query), expected, atol=1e-6)
