"""The scale benchmark's registries, embedding cache and reporting (not the timed run itself)."""

from __future__ import annotations

import numpy as np
import pytest

from toolret.documents.tool_doc import INDEX_FIELDS
from toolret.errors import DatasetError
from toolret.eval.scale import (
    ComposedEmbedder,
    SyntheticPlan,
    approximation_quality,
    build_registry,
    expand_all,
    load_real,
    sampled_queries,
)
from toolret.eval.scale_bench import first_drop, plot_scale, scale_table


@pytest.fixture(scope="module")
def pool(benchmarks):
    return load_real(benchmarks)


def test_real_pool_prefixes_ids_by_family_and_shares_identical_registries(pool):
    assert pool.family["toole_single"] == pool.family["toole_multi"] == "toole"
    assert len([d for d in pool.docs if d.id.startswith("toole/")]) == 199  # once, not twice
    ids = {d.id for d in pool.docs}
    assert len(ids) == len(pool.docs)
    for name, queries in pool.queries.items():
        assert all(r in ids for q in queries[:50] for r in q.relevant), name


def test_registries_are_nested_deterministic_and_hold_the_core(pool):
    queries = sampled_queries(pool, ["toole_single", "bfcl"], 50)
    core = {r for q in queries for r in q.relevant}
    size = len(pool.docs) + 300  # past the real pool (~16,000 tools over eleven sets): synthetic tools fill the rest
    small = build_registry(pool, 1_000, core)
    big = build_registry(pool, size, core)
    assert len(small) == 1_000 and len(big) == size
    assert [d.id for d in small] == [d.id for d in big[:1_000]]
    assert core <= {d.id for d in small}
    assert [d.id for d in build_registry(pool, size, core)] == [d.id for d in big]
    synthetic = [d for d in big if d.metadata.get("synthetic")]
    assert len(synthetic) == 300
    with pytest.raises(DatasetError, match="cannot hold"):
        build_registry(pool, 10, core)


def test_synthetic_variant_bundles_two_distinct_parents(pool):
    by_id = {d.id: d for d in pool.docs}
    for doc in SyntheticPlan(pool.docs).variants(300):
        a, b = (by_id[p] for p in doc.metadata["parents"])
        assert a.id != b.id
        assert doc.name == f"{a.name}_and_{b.name}"
        assert doc.description.startswith(a.description)
        assert [p.name for p in doc.parameters[: len(a.parameters)]] == [p.name for p in a.parameters]
        assert len({p.name for p in doc.parameters}) == len(doc.parameters)
        assert doc.response == (a.response or b.response)


@pytest.mark.slow
def test_composed_embedder_reuses_cached_texts_and_blends_the_rest(pool, embedder, tmp_path):
    real = expand_all(pool.docs[:40])
    variants = expand_all(SyntheticPlan(real).variants(20))
    cache = ComposedEmbedder(embedder, tmp_path / "cache.npz")
    texts = [d.field_text(f) for d in real for f in INDEX_FIELDS if d.field_text(f)]
    assert cache.warm(texts) == len(set(texts))
    cache.save()
    again = ComposedEmbedder(embedder, tmp_path / "cache.npz")  # reloaded from the file
    assert len(again) == len(set(texts))
    assert again.compose_registry(variants, {d.id: d for d in real}) > 0
    before = embedder.texts_embedded
    rows = again.embed([d.field_text("description") for d in variants] + texts[:5])
    assert embedder.texts_embedded == before  # nothing went through the model
    assert rows.shape == (25, 384)
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-4)
    quality = approximation_quality(again, variants, sample=20)
    assert quality["n"] > 0 and quality["mean_cosine"] > 0.8  # the blend is close to the true embedding
    again.frozen = True
    query = "a query the cache has never seen"
    again.embed([query])
    again.embed([query])
    assert not again.has(query) and again.model_texts == 2  # queries always go through the model


def _entry(size: int, r5_fast: float, r5_bal: float) -> dict:
    def preset(r5: float, p50: float) -> dict:
        return {
            "recall": {"recall@1": r5 / 2, "recall@5": r5, "recall@10": min(1.0, r5 + 0.1)},
            "latency_ms": {"p50": p50, "p95": 2 * p50},
            "by_dataset": {},
        }

    return {
        "size": size,
        "index_seconds": size / 1000,
        "rss_peak_mb": 500 + size / 100,
        "embed_floor_ms": {"p50": 8.0, "p95": 12.0},
        "presets": {"fast": preset(r5_fast, 10 + size / 1e4), "balanced": preset(r5_bal, 20 + size / 1e4)},
    }


def test_first_drop_table_and_plot(tmp_path):
    entries = [_entry(1_000, 0.80, 0.82), _entry(10_000, 0.75, 0.80), _entry(100_000, 0.70, 0.77)]
    assert first_drop(entries, "fast") == 100_000  # 0.70 < 0.9 * 0.80; 0.75 is not
    assert first_drop(entries, "balanced") is None
    table = scale_table(entries)
    assert table.splitlines()[0].split() == [
        "tools",
        "preset",
        "R@1",
        "R@5",
        "R@10",
        "p50",
        "ms",
        "p95",
        "ms",
        "embed",
        "p50",
        "ms",
        "index",
        "s",
        "RSS",
        "MB",
    ]
    assert table.splitlines()[2].split()[7] == "8.000"  # the embedding floor beside the latencies
    assert len(table.splitlines()) == 2 + 6
    png = plot_scale(entries, tmp_path / "scale.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_each_model_has_its_own_embedding_cache_and_the_floor_is_measured(embedder):
    from toolret.eval.datasets import EvalQuery
    from toolret.eval.scale_bench import cache_file, embedding_floor

    assert cache_file("packaged:all-MiniLM-L6-v2") != cache_file("packaged:all-MiniLM-L6-v2-onnx-int8")
    assert cache_file("sentence-transformers/x y").endswith(".npz") and "/" not in cache_file("a/b")
    floor = embedding_floor(
        embedder, [EvalQuery(id=str(i), query=f"weather in city {i}", relevant=["x"]) for i in range(5)]
    )
    assert 0 < floor["p50"] <= floor["p95"]


def test_peak_rss_is_this_process_own_and_at_least_its_current_rss():
    from toolret.eval.scale_bench import _peak_rss_mb

    with open("/proc/self/status") as status:
        current = next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) / 1024.0
    assert _peak_rss_mb() >= current > 0
