"""The metrics of docs/method.md §6 on tiny examples whose values are worked out by hand."""

from __future__ import annotations

import math

import pytest

from toolret.eval.metrics import (
    completeness_at_k,
    ndcg_at_k,
    percentile,
    recall_at_k,
    recall_curve,
    tracc,
)

LOG2_3 = math.log2(3)  # discount at rank 2
LOG2_5 = math.log2(5)  # discount at rank 4


def test_recall_counts_relevant_tools_within_the_cutoff() -> None:
    ranked = ["x", "a", "y", "b"]
    assert recall_at_k(["a", "b"], ranked, 1) == 0.0  # top 1 = {x}
    assert recall_at_k(["a", "b"], ranked, 2) == 0.5  # top 2 = {x, a}: 1 of 2
    assert recall_at_k(["a", "b"], ranked, 4) == 1.0
    assert recall_at_k(["a", "b"], ranked, 100) == 1.0  # k beyond the list is fine


def test_recall_ignores_a_repeated_hit() -> None:
    assert recall_at_k(["a", "b"], ["a", "a", "c"], 3) == 0.5


def test_ndcg_with_relevant_tools_at_rank_2_and_4() -> None:
    # DCG = 1/log2(3) + 1/log2(5) = 0.63093 + 0.43068 = 1.06161
    # IDCG (2 relevant at ranks 1, 2) = 1 + 1/log2(3) = 1.63093  ->  NDCG = 0.65093
    value = ndcg_at_k(["a", "b"], ["x", "a", "y", "b"], 4)
    assert value == pytest.approx((1 / LOG2_3 + 1 / LOG2_5) / (1 + 1 / LOG2_3))
    assert value == pytest.approx(0.65093, abs=1e-5)


def test_ndcg_ideal_uses_min_of_relevant_and_k() -> None:
    # 3 relevant, k = 2, both slots hit: DCG = IDCG = 1 + 1/log2(3) -> 1.0
    assert ndcg_at_k(["a", "b", "c"], ["a", "b", "x"], 2) == pytest.approx(1.0)
    # 1 relevant at rank 3 of k = 5: DCG = 1/log2(4) = 0.5, IDCG = 1 -> 0.5
    assert ndcg_at_k(["a"], ["x", "y", "a", "z"], 5) == pytest.approx(0.5)


def test_ndcg_counts_a_repeated_hit_once() -> None:
    # a at ranks 1 and 2: only rank 1 gains; IDCG for 2 relevant = 1 + 1/log2(3)
    assert ndcg_at_k(["a", "b"], ["a", "a"], 2) == pytest.approx(1 / (1 + 1 / LOG2_3))


def test_ndcg_is_zero_without_hits() -> None:
    assert ndcg_at_k(["a"], ["x", "y"], 2) == 0.0


def test_completeness_needs_every_relevant_tool() -> None:
    assert completeness_at_k(["a", "b"], ["a", "x", "b"], 2) == 0.0
    assert completeness_at_k(["a", "b"], ["a", "x", "b"], 3) == 1.0


def test_tracc_is_one_for_the_exact_set() -> None:
    assert tracc(["a", "b"], ["b", "a"]) == 1.0


def test_tracc_penalizes_extra_and_missing_tools() -> None:
    # A = {a, b}, B = {a, c, d}: recall 1/2; | |B| - |A| | = 1, |A u B| = 4 -> 0.5 * (1 - 1/4) = 0.375
    assert tracc(["a", "b"], ["a", "c", "d"]) == pytest.approx(0.375)
    # one tool needed, ten handed over (a fixed top-10): 1 * (1 - 9/10) = 0.1
    assert tracc(["a"], ["a"] + [f"x{i}" for i in range(9)]) == pytest.approx(0.1)
    # too few: A = {a, b}, B = {a}: 1/2 * (1 - 1/2) = 0.25
    assert tracc(["a", "b"], ["a"]) == pytest.approx(0.25)


def test_tracc_of_an_empty_choice_is_zero() -> None:
    assert tracc(["a"], []) == 0.0


def test_recall_curve_matches_recall_at_each_k() -> None:
    ranked = ["x", "a", "y", "b"]
    curve = recall_curve(["a", "b"], ranked, 6)
    assert curve == [recall_at_k(["a", "b"], ranked, k) for k in range(1, 7)]
    assert curve == [0.0, 0.5, 0.5, 1.0, 1.0, 1.0]


def test_percentile_interpolates_linearly() -> None:
    assert percentile([40.0, 10.0, 30.0, 20.0], 50) == pytest.approx(25.0)  # between 20 and 30
    # position (4 - 1) * 0.95 = 2.85 -> 30 + 0.85 * (40 - 30) = 38.5
    assert percentile([10.0, 20.0, 30.0, 40.0], 95) == pytest.approx(38.5)
    assert percentile([7.0], 95) == 7.0
    assert percentile([1.0, 2.0], 0) == 1.0
    assert percentile([1.0, 2.0], 100) == 2.0


@pytest.mark.parametrize(
    "call",
    [
        lambda: recall_at_k([], ["a"], 1),
        lambda: ndcg_at_k(["a"], ["a"], 0),
        lambda: completeness_at_k([], [], 1),
        lambda: tracc([], ["a"]),
        lambda: percentile([], 50),
        lambda: percentile([1.0], 101),
    ],
)
def test_undefined_inputs_raise_value_error(call) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError):
        call()
