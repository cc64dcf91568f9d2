"""The union condition of ``toolret bench`` and the cosine guard's margins."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolret.eval.union import UNION, bench_union, guard_rows, guard_table, union_dataset, union_id

from .test_datasets import write_dataset

WEATHER = [
    {"id": "get_weather", "name": "get_weather", "description": "Current weather forecast for a city."},
    {"id": "send_email", "name": "send_email", "description": "Send an email message to a recipient."},
]
FLIGHTS = [
    {"id": "search_flights", "name": "search_flights", "description": "Search flights between two airports."},
    {"id": "get_weather", "name": "get_weather", "description": "Weather at an airport, for pilots."},
]


@pytest.fixture
def two_sets(tmp_path: Path) -> list[Path]:
    return [
        write_dataset(
            tmp_path / "toole_single",
            WEATHER,
            [{"id": "q1", "query": "will it rain in Oslo", "relevant": ["get_weather"]}],
        ),
        write_dataset(
            tmp_path / "toole_multi",
            WEATHER,
            [{"id": "q1", "query": "weather, then mail it", "relevant": ["get_weather", "send_email"]}],
        ),
        write_dataset(
            tmp_path / "flights",
            FLIGHTS,
            [{"id": "q1", "query": "flights from Oslo to Rome", "relevant": ["search_flights"]}],
        ),
    ]


def test_union_holds_each_registry_once_with_prefixed_ids(two_sets: list[Path]) -> None:
    union, source = union_dataset(two_sets, limit=None)
    ids = union.tool_ids
    # ToolE's two sets share one registry: its tools appear once, under the registry's name.
    assert ids == ["toole/get_weather", "toole/send_email", "flights/search_flights", "flights/get_weather"]
    assert union_id("toole_multi", "x") == "toole/x"
    assert [q.id for q in union.queries] == ["toole_single/q1", "toole_multi/q1", "flights/q1"]
    assert union.queries[1].relevant == ["toole/get_weather", "toole/send_email"]
    assert source["flights/q1"] == "flights"
    assert union.name == UNION


def test_union_takes_each_sets_own_sample(two_sets: list[Path]) -> None:
    union, _ = union_dataset(two_sets, limit=0)
    assert union.queries == [] and len(union.tools) == 4


def _entry(dataset: str, preset: str, r1: float, r5: float) -> dict[str, object]:
    return {
        "dataset": dataset,
        "preset": preset,
        "level": "id",
        "split": "all",
        "metrics": {"recall@1": r1, "recall@5": r5},
    }


def test_guard_margins_are_two_sided_single_signals_and_reference_fusions() -> None:
    results = [
        _entry("a", "bm25", 0.5, 0.6),
        _entry("a", "cosine", 0.3, 0.5),
        _entry("a", "fusion-ec3e34e", 0.3, 0.62),
        _entry("a", "fusion-eefafaa", 0.3, 0.70),
        _entry("a", "fast", 0.6, 0.69),
        _entry("a", "balanced", 0.4, 0.75),
        {**_entry("a", "fast", 0.0, 0.0), "level": "name"},  # name level: not a guard row
    ]
    rows = {r[2]: r for r in guard_rows(results)}
    # R@1 - max(bm25, cosine), R@5 - max(bm25, cosine), R@5 - (max(references) - .01)
    assert rows["fast"][5:] == pytest.approx([0.1, 0.09, 0.0])
    assert rows["balanced"][5:] == pytest.approx([-0.1, 0.15, 0.06])
    assert "fusion-eefafaa" not in rows  # the references are measured against, not guarded
    text = guard_table(results)
    assert "worst margin: -0.100 (balanced, - on a)" in text


def test_guard_without_reference_rows_leaves_that_margin_blank() -> None:
    results = [_entry("a", "bm25", 0.1, 0.6), _entry("a", "cosine", 0.3, 0.5), _entry("a", "fast", 0.2, 0.55)]
    (row,) = guard_rows(results)
    assert row[5:7] == pytest.approx([-0.1, -0.05]) and row[7] is None
    assert "worst margin: -0.100" in guard_table(results)


@pytest.mark.slow
def test_bench_union_reports_every_set_and_the_whole_union(two_sets: list[Path], tmp_path: Path) -> None:
    from toolret.eval.bench import CachedIndexing

    results = bench_union(two_sets, ["fast"], CachedIndexing(tmp_path / "emb.npz"), limit=None, auto_k=True)
    datasets = {(e["dataset"], e["preset"]) for e in results}
    for part in ("union/toole_single", "union/toole_multi", "union/flights", UNION):
        assert {(part, "bm25"), (part, "cosine"), (part, "fast")} <= datasets
    whole = next(e for e in results if e["dataset"] == UNION and e["preset"] == "fast")
    assert whole["n_queries"] == 3 and "recall@1" in whole["metrics"]
    assert guard_rows(results)
