"""Fusion of ranked lists: RRF for variants of one need, budgets across sub-tasks."""

from __future__ import annotations

from toolret.search.fusion import budgeted_merge, reciprocal_rank_fusion, subtask_budgets


def test_rrf_rewards_agreement_between_lists():
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["b", "c", "a"], ["b", "a"]])
    assert [t for t, _ in fused] == ["b", "a", "c"]
    assert abs(fused[0][1] - (1 / 62 + 1 / 61 + 1 / 61)) < 1e-12


def test_rrf_weights_scale_a_list():
    fused = reciprocal_rank_fusion([["a"], ["b"]], weights=[1.0, 2.0])
    assert fused[0][0] == "b"


def test_budgets_sum_to_k_and_favour_earlier_subtasks():
    assert subtask_budgets(5, 2) == [3, 2]
    assert subtask_budgets(10, 3) == [4, 3, 3]
    assert sum(subtask_budgets(7, 4)) == 7
    assert subtask_budgets(1, 3) == [1, 0, 0]


def test_budgeted_merge_gives_every_subtask_its_share_without_duplicates():
    weather = ["weather", "news", "calendar"]
    news = ["news", "rss", "weather"]
    picked = budgeted_merge([weather, news], k=4, head=["weather", "news", "x"])
    ids = [t for t, _ in picked]
    assert ids == ["weather", "news", "calendar", "rss"]
    assert [s for _, s in picked] == [0, 1, 0, 1]


def test_budgeted_merge_fills_from_head_when_a_subtask_runs_dry():
    picked = budgeted_merge([["a"], ["a"]], k=3, head=["a", "z", "y"])
    assert picked == [("a", 0), ("z", None), ("y", None)]


def test_a_list_whose_best_is_already_picked_waits_a_round_for_its_second():
    whole = ["convert_currency", "get_weather", "translate_text"]
    convert = ["convert_currency", "translate_text"]
    weather = ["get_weather", "send_email"]
    picked = budgeted_merge([whole, convert, weather], k=4, head=[*whole, "send_email"])
    # Every list's best before any list's second: a top-2 cut keeps both needs. The currency list's
    # share (one of four) was its best, so its second best is not added; the head fills the rest.
    assert picked == [("convert_currency", 0), ("get_weather", 2), ("translate_text", 0), ("send_email", None)]
