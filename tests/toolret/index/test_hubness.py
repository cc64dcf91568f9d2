"""Registry adaptation at index time: the hubness statistic, its effect on ranking, its life cycle."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from toolret import RetrievalConfig, ToolDoc, ToolKnowledgeBase
from toolret.index import snapshot as snapshot_module
from toolret.index.hubness import HUB_FIELDS, hubness, load_hubness, save_hubness, tool_hubness
from toolret.index.snapshot import build_snapshot
from toolret.scoring.candidates import rank_tools


def _fast() -> RetrievalConfig:
    """The fast preset with the hand-set formula these tests pin (the learned fusion: test_learned_fusion.py)."""
    return RetrievalConfig.preset("fast").with_(fusion="heuristic")


def _unit(*values: float) -> np.ndarray:
    v = np.asarray(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_hubness_is_the_mean_cosine_to_the_k_nearest_other_rows() -> None:
    x = np.stack([_unit(1, 0, 0), _unit(1, 1, 0), _unit(0, 1, 0), _unit(0, 0, 1)])
    # cosines: 0-1 .7071, 0-2 0, 0-3 0, 1-2 .7071, 1-3 0, 2-3 0
    np.testing.assert_allclose(hubness(x, k=1), [0.70711, 0.70711, 0.70711, 0.0], atol=1e-5)
    np.testing.assert_allclose(hubness(x, k=2), [0.35355, 0.70711, 0.35355, 0.0], atol=1e-5)
    # a row never counts itself, and a copy (cosine above the duplicate threshold) is not a neighbour
    dup = np.stack([_unit(1, 0), _unit(1, 0), _unit(0, 1)])
    np.testing.assert_allclose(hubness(dup, k=1), [0.0, 0.0, 0.0], atol=1e-6)
    np.testing.assert_allclose(hubness(dup, k=1, duplicate=1.01), [1.0, 1.0, 0.0], atol=1e-6)
    near = np.stack([_unit(1, 0), _unit(1, 0.1), _unit(1, 1)])  # 0-1: .995 (a copy), 0-2: .707, 1-2: .774
    np.testing.assert_allclose(hubness(near, k=2), [0.70711, 0.77396, 0.74053], atol=1e-4)
    assert hubness(x[:1]).tolist() == [0.0]  # nothing to compare with


def test_above_the_cap_neighbours_come_from_a_seeded_sample() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(300, 8)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    sampled = hubness(x, k=5, cap=100)
    np.testing.assert_array_equal(sampled, hubness(x, k=5, cap=100))  # deterministic
    exact = hubness(x, k=5)
    assert np.all(sampled <= exact + 1e-6)  # a subset's nearest are never nearer
    assert np.corrcoef(sampled, exact)[0, 1] > 0.5


def test_tool_hubness_is_per_field_and_zero_where_a_tool_lacks_the_field() -> None:
    vectors = {"description": np.stack([_unit(1, 0), _unit(1, 1), _unit(0, 1)]), "response": _unit(1, 0)[None, :]}
    rows = {"description": np.array([0, 1, 2]), "response": np.array([1])}
    out = tool_hubness(vectors, rows, 3, k=1, fields=("description", "response", "examples"))
    np.testing.assert_allclose(out["description"], [0.70711, 0.70711, 0.70711], atol=1e-5)
    assert out["response"].tolist() == [0.0, 0.0, 0.0]  # one tool alone in the field
    assert out["examples"].tolist() == [0.0, 0.0, 0.0]  # no tool has it
    assert set(tool_hubness(vectors, rows, 3)) == set(HUB_FIELDS) == {"description"}  # what the engine keeps


def _cluster_registry() -> tuple[list[ToolDoc], list[dict[str, np.ndarray]]]:
    """Three related tools around one direction (a dense region) and one tool on its own."""
    names = ["alpha_one", "alpha_two", "alpha_three", "omega"]
    vecs = [_unit(1, 0.4, 0, 0), _unit(1, 0, 0.4, 0), _unit(1, 0, 0, 0.4), _unit(0, 1, 0, 0)]
    docs = [ToolDoc(name=n, description=f"{n} tool") for n in names]
    return docs, [{"description": v} for v in vecs]


@pytest.mark.parametrize(("weight", "first"), [(0.3, "omega"), (-0.3, "alpha_one")])
def test_hubness_weight_demotes_or_favours_a_tool_in_a_dense_region(weight: float, first: str) -> None:
    docs, vectors = _cluster_registry()
    snap = build_snapshot(docs, vectors, 4)
    assert snap.hubness["description"][0] > snap.hubness["description"][3] + 0.2
    query = _unit(0.67703, 1, 0, 0)  # the same cosine with alpha_one as with omega
    cfg = _fast().with_(fields=("description",), evidence_slope=0.0, hubness_weight=0.0)
    tie = rank_tools(snap, "zzz", query, cfg).candidates
    scores = {docs[c.index].name: c.score for c in tie}
    assert abs(scores["alpha_one"] - scores["omega"]) < 1e-3
    ranked = rank_tools(snap, "zzz", query, cfg.with_(hubness_weight=weight)).candidates
    assert docs[ranked[0].index].name == first
    assert ranked[0].cosine == pytest.approx(max(c.cosine for c in tie), abs=1e-5)  # the raw cosine, unchanged


def test_saved_values_are_reused_only_for_the_same_registry(tmp_path: Path) -> None:
    values = {"description": np.array([0.5, 0.25], dtype=np.float32)}
    save_hubness(tmp_path / "a.npz", values, "hash1")
    got = load_hubness(tmp_path / "a.npz", "hash1", 2)
    assert got is not None and got["description"].tolist() == [0.5, 0.25]
    assert load_hubness(tmp_path / "a.npz", "hash2", 2) is None  # another registry
    assert load_hubness(tmp_path / "a.npz", "hash1", 3) is None
    assert load_hubness(tmp_path / "missing.npz", "hash1", 2) is None


TOOLS = [
    ToolDoc(name="get_weather", description="Current weather forecast for a city."),
    ToolDoc(name="send_email", description="Send an email message to a recipient."),
    ToolDoc(name="convert_currency", description="Convert an amount of money between currencies."),
]
TWIN = ToolDoc(name="get_weather_now", description="Current weather forecast for a town.")


@pytest.mark.slow
def test_hubness_is_recomputed_when_tools_are_added_or_removed(embedder) -> None:
    kb = ToolKnowledgeBase(None, embedder=embedder)
    kb.add(TOOLS)
    before = kb._writer.snapshot.hubness["description"].copy()
    kb.add([TWIN])
    snap = kb._writer.snapshot
    after = snap.hubness["description"]
    weather = snap.index_of[TOOLS[0].id]
    assert after[weather] > before[0] + 0.2  # its new near-duplicate is now its nearest neighbour
    kb.remove([TWIN.id])
    np.testing.assert_allclose(kb._writer.snapshot.hubness["description"], before, atol=1e-6)
    kb.close()


@pytest.mark.slow
def test_saved_with_the_knowledge_base_and_reloaded(tmp_path: Path, embedder, monkeypatch) -> None:
    cfg = _fast().with_(hubness_weight=-0.3)
    kb = ToolKnowledgeBase(tmp_path / "kb", embedder=embedder, config=cfg)
    kb.add([*TOOLS, TWIN])
    kb.save()
    saved = {f: v.copy() for f, v in kb._writer.snapshot.hubness.items()}
    expected = kb.search("weather in Oslo", k=4).ids
    assert (tmp_path / "kb" / "adaptation.npz").exists()

    def fail(vectors: object, rows: object, n_tools: int, *args: object) -> dict[str, np.ndarray]:
        if n_tools:  # the empty snapshot a knowledge base starts from is fine
            raise AssertionError("recomputed instead of read back")
        return {}

    monkeypatch.setattr(snapshot_module, "tool_hubness", fail)
    again = ToolKnowledgeBase.load(tmp_path / "kb", embedder=embedder, config=cfg)
    for f, v in saved.items():
        np.testing.assert_array_equal(again._writer.snapshot.hubness[f], v)
    assert again.search("weather in Oslo", k=4).ids == expected
