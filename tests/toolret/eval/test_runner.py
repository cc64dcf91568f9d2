"""The evaluation runner on a fake retriever whose rankings are fixed, so every number is known."""

from __future__ import annotations

import math

import pytest

from toolret.errors import ConfigError
from toolret.eval.datasets import Dataset, EvalQuery
from toolret.eval.runner import EvalReport, QueryRun, evaluate, score_runs
from toolret.results import ScoredTool, SearchResult


class FakeRetriever:
    """Returns a fixed ranking per query (cut at k) and records every call."""

    name = "fake"

    def __init__(self, rankings: dict[str, list[str]]) -> None:
        self.rankings = rankings
        self.calls: list[tuple[str, int]] = []

    def search(self, query: str, k: int = 5) -> SearchResult:
        self.calls.append((query, k))
        ids = self.rankings[query][:k]
        tools = [ScoredTool(id=i, name=i.split("#")[0], score=1.0 / (r + 1)) for r, i in enumerate(ids)]
        return SearchResult(query=query, tools=tools)


QUERIES = [
    EvalQuery(id="q1", query="one", relevant=["a"]),
    EvalQuery(id="q2", query="two", relevant=["b", "c"]),
]
RANKINGS = {"one": ["a", "x", "y", "b", "c"], "two": ["x", "b", "y", "c", "a"]}
DATASET = Dataset(name="tiny", tools=[{"id": i} for i in "abcxy"], queries=QUERIES)


def test_report_means_match_hand_computed_values() -> None:
    report = evaluate(FakeRetriever(RANKINGS), DATASET, ks=(1, 2, 4), curve_k=0)
    m = report.metrics
    # q1: relevant a at rank 1 -> recall 1, 1, 1; q2: b at 2, c at 4 -> recall 0, 1/2, 1
    assert m["recall@1"] == pytest.approx(0.5)
    assert m["recall@2"] == pytest.approx(0.75)
    assert m["recall@4"] == pytest.approx(1.0)
    # q2 NDCG@2 = (1/log2 3) / (1 + 1/log2 3) = 0.38685; NDCG@4 = (1/log2 3 + 1/log2 5) / (1 + 1/log2 3) = 0.65093
    ideal = 1 + 1 / math.log2(3)
    assert m["ndcg@1"] == pytest.approx(0.5)
    assert m["ndcg@2"] == pytest.approx((1 + (1 / math.log2(3)) / ideal) / 2)
    assert m["ndcg@4"] == pytest.approx((1 + (1 / math.log2(3) + 1 / math.log2(5)) / ideal) / 2)
    assert m["completeness@1"] == pytest.approx(0.5)
    assert m["completeness@2"] == pytest.approx(0.5)
    assert m["completeness@4"] == pytest.approx(1.0)
    # TRACC on the 4 returned tools: q1 1*(1 - 3/4) = 0.25, q2 1*(1 - 2/4) = 0.5
    assert m["tracc"] == pytest.approx(0.375)
    assert report.n_queries == 2
    assert report.dataset == "tiny"
    assert report.preset == "fake"


def test_search_is_called_once_per_query_with_the_largest_cutoff() -> None:
    fake = FakeRetriever(RANKINGS)
    evaluate(fake, DATASET, ks=(4, 1), curve_k=0, warmup=0)
    assert fake.calls == [("one", 4), ("two", 4)]


def test_one_untimed_warmup_search_runs_first() -> None:
    fake = FakeRetriever(RANKINGS)
    report = evaluate(fake, DATASET, ks=(1,), curve_k=0)
    assert fake.calls == [("one", 1), ("one", 1), ("two", 1)]
    assert report.n_queries == 2


def test_tracc_uses_the_set_the_retriever_returned() -> None:
    class Precise(FakeRetriever):
        def search(self, query: str, k: int = 5) -> SearchResult:
            result = super().search(query, k)
            return result.model_copy(update={"tools": [t for t in result.tools if t.id in "abc"][:2]})

    report = evaluate(Precise({"one": ["a", "x"], "two": ["b", "c", "x"]}), QUERIES, ks=(1, 5), curve_k=0)
    assert report.metrics["tracc"] == pytest.approx(1.0)  # exactly {a} and {b, c}
    assert report.dataset == "queries"


def test_json_dict_has_exactly_the_documented_keys() -> None:
    report = evaluate(FakeRetriever(RANKINGS), DATASET, ks=(1, 5, 10), method="fast")
    data = report.to_json_dict()
    assert set(data) == {"dataset", "preset", "n_queries", "metrics", "latency_ms"}
    assert data["preset"] == "fast"
    assert set(data["latency_ms"]) == {"p50", "p95"}
    expected = {f"{name}@{k}" for name in ("recall", "ndcg", "completeness") for k in (1, 5, 10)} | {"tracc"}
    assert set(data["metrics"]) == expected
    assert data["latency_ms"]["p50"] <= data["latency_ms"]["p95"]


def test_latency_percentiles_come_from_each_search() -> None:
    runs = [QueryRun(id="q1", ids=["a"], ms=1.0), QueryRun(id="q2", ids=["b"], ms=3.0)]
    report = score_runs(runs, QUERIES, ks=(1,), curve_k=0)
    assert report.latency_ms["p50"] == pytest.approx(2.0)
    assert report.latency_ms["p95"] == pytest.approx(2.9)  # 1 + 0.95 * (3 - 1)


def test_recall_curve_takes_an_extra_untimed_search_when_longer_than_k() -> None:
    fake = FakeRetriever(RANKINGS)
    report = evaluate(fake, DATASET, ks=(1, 2), curve_k=5, warmup=0)
    assert fake.calls == [("one", 2), ("one", 5), ("two", 2), ("two", 5)]
    # q1: 1 from k=1; q2: 0, 1/2, 1/2, 1, 1
    assert report.recall_curve == pytest.approx([0.5, 0.75, 0.75, 1.0, 1.0])
    assert report.metrics["recall@2"] == pytest.approx(0.75)


def test_curve_can_be_skipped() -> None:
    fake = FakeRetriever(RANKINGS)
    report = evaluate(fake, DATASET, ks=(1, 2), curve_k=0, warmup=0)
    assert report.recall_curve == []
    assert len(fake.calls) == 2


def test_name_level_counts_a_sibling_variant_and_collapses_names() -> None:
    queries = [EvalQuery(id="q", query="area", relevant=["area#v1"])]
    fake = FakeRetriever({"area": ["area#v2", "area#v1", "volume", "area#v3"]})
    strict = evaluate(fake, queries, ks=(1, 2), curve_k=0)
    by_name = evaluate(fake, queries, ks=(1, 2), curve_k=0, name_level=True)
    assert strict.metrics["recall@1"] == 0.0
    assert by_name.metrics["recall@1"] == 1.0
    assert by_name.name_level is True
    # the search asks for max(ks) * 4 tools, then ranks distinct names: [area, volume]
    assert fake.calls[-1] == ("area", 8)
    # chosen set = first 2 distinct names {area, volume}: 1 * (1 - 1/2)
    assert by_name.metrics["tracc"] == pytest.approx(0.5)


def test_limit_samples_queries() -> None:
    queries = [EvalQuery(id=f"q{i}", query="one", relevant=["a"]) for i in range(10)]
    report = evaluate(FakeRetriever(RANKINGS), queries, ks=(1,), limit=3, curve_k=0)
    assert report.n_queries == 3
    assert len(report.per_query) == 3


@pytest.mark.parametrize("ks", [(), (0,), (1, -5), ("5",)])
def test_bad_cutoffs_are_config_errors(ks: tuple) -> None:
    with pytest.raises(ConfigError):
        evaluate(FakeRetriever(RANKINGS), DATASET, ks=ks)


def test_report_round_trips_through_pydantic() -> None:
    report = evaluate(FakeRetriever(RANKINGS), DATASET, ks=(1, 5))
    again = EvalReport.model_validate_json(report.model_dump_json())
    assert again.to_json_dict() == report.to_json_dict()


def test_auto_k_measures_tracc_on_the_precise_set() -> None:
    from toolret.eval.datasets import EvalQuery
    from toolret.eval.runner import evaluate
    from toolret.results import ScoredTool, SearchResult

    class TwoModes:
        name = "two-modes"

        def search(self, query, k=5):
            ranked = ["a", "b", "c", "d"]
            ids = ranked[:2] if k == "auto" else ranked[:k]
            return SearchResult(query=query, tools=[ScoredTool(id=i, name=i, score=1.0) for i in ids])

    queries = [EvalQuery(id="q", query="x", relevant=["a", "b"])]
    fixed = evaluate(TwoModes(), queries, ks=(1, 5), curve_k=0)
    auto = evaluate(TwoModes(), queries, ks=(1, 5), curve_k=0, auto_k=True)
    assert fixed.metrics["tracc"] == 0.5  # (2/2) * (1 - |4-2| / 4)
    assert auto.metrics["tracc"] == 1.0
    assert auto.metrics["recall@5"] == fixed.metrics["recall@5"] == 1.0
