"""The plain BM25 baseline: lexical ranking, raw records, and the benchmark READMEs' numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolret.documents.tool_doc import ToolDoc
from toolret.eval import evaluate, load_dataset
from toolret.eval.baseline import BM25Baseline

DOCS = [
    ToolDoc(name="get_weather", description="Current weather forecast for a city."),
    ToolDoc(name="send_email", description="Send an email message to a recipient."),
    ToolDoc(name="convert_currency", description="Convert an amount of money between currencies."),
]


def test_lexically_matching_tool_ranks_first() -> None:
    bm25 = BM25Baseline(DOCS)
    result = bm25.search("please send an email to Bob", k=3)
    assert result.ids[0] == "send_email"
    assert result.tools[0].score > result.tools[1].score
    assert result.tools[0].field_scores == {"bm25": result.tools[0].score}
    assert result.trace[0].stage == "bm25"


def test_raw_benchmark_records_are_accepted() -> None:
    records = [
        {"id": "w#v1", "name": "get_weather", "description": "Weather forecast for a city."},
        {"id": "c", "name": "convert_currency", "description": "Convert money between currencies."},
    ]
    result = BM25Baseline(records).search("weather forecast in Rome", k=1)
    assert result.ids == ["w#v1"]
    assert result.tools[0].name == "get_weather"


def test_k_larger_than_the_registry_returns_every_tool() -> None:
    assert len(BM25Baseline(DOCS).search("weather", k=50).tools) == 3


def test_stopword_only_query_returns_registry_order_with_zero_scores() -> None:
    result = BM25Baseline(DOCS).search("the of and", k=2)
    assert result.ids == ["get_weather", "send_email"]
    assert all(t.score == 0.0 for t in result.tools)


def test_empty_registry_returns_nothing() -> None:
    assert BM25Baseline([]).search("anything", k=5).tools == []


def test_reproduces_the_plain_baseline_of_the_restbench_tmdb_readme(benchmarks: Path) -> None:
    # README table, row "plain": R@1 0.200, R@5 0.429, R@10 0.542, NDCG@10 0.443, Comp@5 0.190, Comp@10 0.300
    ds = load_dataset(benchmarks / "restbench_tmdb")
    m = evaluate(BM25Baseline(ds.tools), ds, ks=(1, 5, 10), curve_k=0).metrics
    assert m["recall@1"] == pytest.approx(0.200, abs=5e-4)
    assert m["recall@5"] == pytest.approx(0.429, abs=5e-4)
    assert m["recall@10"] == pytest.approx(0.542, abs=5e-4)
    assert m["ndcg@10"] == pytest.approx(0.443, abs=5e-4)
    assert m["completeness@5"] == pytest.approx(0.190, abs=5e-4)
    assert m["completeness@10"] == pytest.approx(0.300, abs=5e-4)


def test_cosine_baseline_ranks_a_paraphrase_by_meaning(embedder) -> None:
    from toolret.eval.baseline import CosineBaseline

    cos = CosineBaseline(DOCS, embedder=embedder)
    # No word of the query appears in any tool: BM25 has nothing, the embedding still finds it.
    assert BM25Baseline(DOCS).scores("is it going to rain tomorrow").max() == 0
    result = cos.search("is it going to rain tomorrow", k=3)
    assert result.ids[0] == "get_weather"
    assert result.tools[0].field_scores["cosine"] > result.tools[1].field_scores["cosine"]
    assert cos.search("exchange rate of yen into pounds", k=1).ids == ["convert_currency"]


def test_cosine_baseline_embeds_name_colon_description(embedder) -> None:
    from toolret.eval.baseline import CosineBaseline

    cos = CosineBaseline(DOCS[:1], embedder=embedder)
    expected = embedder.embed(["get_weather: Current weather forecast for a city."])[0]
    assert float(cos.scores("get_weather: Current weather forecast for a city.")[0]) == pytest.approx(1.0, abs=1e-5)
    assert float(cos._matrix[0] @ expected) == pytest.approx(1.0, abs=1e-5)
