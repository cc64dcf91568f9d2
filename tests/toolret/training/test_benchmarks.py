"""Training pairs from the dev sets: training splits where a set has one, caps per registry and per tool."""

from __future__ import annotations

import collections
from pathlib import Path

from toolret.eval.datasets import load_dataset
from toolret.training.benchmarks import PAIRS_PER_TOOL, benchmark_pairs


def test_an_intent_set_trains_on_its_training_split_never_its_test_queries(benchmarks: Path) -> None:
    pairs = benchmark_pairs(benchmarks, ["hwu64"], cap=500)
    test = {q.query for q in load_dataset(benchmarks / "hwu64").queries}
    train = {q.query for q in load_dataset(benchmarks / "hwu64", split="train").queries}
    assert len(pairs) == 500
    assert {p.query for p in pairs} <= train
    assert not {p.query for p in pairs} & (test - train)


def test_a_registry_of_few_tools_is_capped_per_tool(benchmarks: Path) -> None:
    pairs = benchmark_pairs(benchmarks, ["snips", "restbench_tmdb"])
    per_registry = collections.Counter(p.registry for p in pairs)
    assert per_registry["snips"] == 7 * PAIRS_PER_TOOL  # 13,784 training requests over seven intents
    assert per_registry["restbench_tmdb"] == sum(
        len(q.relevant) for q in load_dataset(benchmarks / "restbench_tmdb").queries
    )


def test_a_small_registry_is_repeated_up_to_the_floor_never_past_the_per_tool_cap(benchmarks: Path) -> None:
    plain = benchmark_pairs(benchmarks, ["restbench_spotify", "snips", "bfcl"], cap=400)
    floored = benchmark_pairs(benchmarks, ["restbench_spotify", "snips", "bfcl"], cap=400, floor=300)
    count = collections.Counter(p.registry for p in plain)
    floored_count = collections.Counter(p.registry for p in floored)
    assert count["restbench_spotify"] < 300 and floored_count["restbench_spotify"] == 300
    spotify = [p for p in plain if p.registry == "restbench_spotify"]
    assert {(p.query, p.tool_id) for p in floored if p.registry == "restbench_spotify"} == {
        (p.query, p.tool_id) for p in spotify
    }
    assert floored_count["snips"] == count["snips"] == 7 * PAIRS_PER_TOOL  # floor 300 > 280: the cap holds
    assert floored_count["bfcl"] == count["bfcl"] == 400  # already above the floor: unchanged
