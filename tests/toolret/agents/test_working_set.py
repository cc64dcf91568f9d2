"""The working set rules every adapter shares: recency, remembered tools within k, the tool limit."""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor

import pytest

from toolret import ConfigError
from toolret.agents.working_set import RecentTools, capped, lru_add, offered, rebind, share_slots


def test_lru_add_makes_names_most_recent_and_cuts_to_the_cap():
    assert lru_add(["a", "b", "c"], ["d", "a"], cap=3) == ["c", "a", "d"]
    assert lru_add(["a"], []) == ["a"]


def test_a_remembered_tool_takes_a_slot_but_never_the_best_hits():
    assert share_slots(["w1", "w2", "w3"], ["used"], 3) == ["w1", "w2", "used"]
    assert share_slots(["w1"], ["u1", "u2", "u3"], 2) == ["w1", "u1"]  # the best hit keeps its slot
    assert share_slots([], ["u1"], 2) == ["u1"]


def test_a_remembered_tool_ranked_below_the_hits_that_fit_stays_on_offer():
    """The tool called last is a hit at rank 3 of 3 while two remembered tools take two slots:
    it is counted once, as remembered, and never cut with the hits (the LlamaIndex example's
    "And for 2029?" lost calendar_monthrange this way)."""
    live = {n: 1 for n in ["isleap", "prcal", "monthrange", "median", "factorial"]}.get
    found = ["isleap", "prcal", "monthrange"]
    assert offered(found, ["monthrange", "median", "factorial"], live, limit=3) == ["isleap", "monthrange", "median"]
    assert share_slots(["u", "w1", "w2"], ["u"], 2) == ["u", "w1"]  # a remembered best hit takes one slot
    assert share_slots(["w1", "w2", "u"], ["u"], 4) == ["w1", "w2", "u"]


def test_rebind_seeds_then_applies_searches_and_calls_in_order_within_known_and_cap():
    events = [(["d"], True), (["a"], False), (["zz"], False)]  # zz was called but never bound: no effect
    assert rebind(["a", "b"], ["c"], events, known="abcd", cap=3) == ["c", "d", "a"]
    assert rebind(["a", "gone"], [], [], known="a", cap=5) == ["a"]


def test_offered_skips_a_tool_without_a_live_object_naming_it(caplog):
    live = {"a": 1, "b": 2, "c": 3}.get
    with caplog.at_level(logging.WARNING, logger="toolret"):
        assert offered(["a", "gone", "a", "b"], ["c"], live, limit=2) == ["a", "c"]
    assert "'gone'" in caplog.text
    assert offered(["a", "b"], ["c", "missing"], live, limit=2, beyond=True) == ["a", "b", "c"]


def test_capped_warns_when_it_cuts(caplog):
    with caplog.at_level(logging.WARNING, logger="toolret"):
        assert capped([1, 2, 3], 2, "owner") == [1, 2]
    assert "owner: 3 tools exceed tool_limit=2" in caplog.text
    assert capped([1], 2, "owner") == [1]


def test_recent_tools_keep_the_last_n_most_recent_first_and_are_thread_safe():
    recent = RecentTools(2)
    for name in ["a", "b", "a", "c"]:
        recent.remember(name)
    assert recent.ids == ["c", "a"] and len(recent) == 2
    recent.clear()
    assert recent.ids == []
    none = RecentTools(0)
    none.remember("a")
    assert none.ids == []
    many = RecentTools(50)
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(many.remember, [f"t{i % 60}" for i in range(2000)]))
    assert len(many.ids) == 50 == len(set(many.ids))


@pytest.mark.parametrize("bad", [-1, 1.5, True, "2"])
def test_a_recent_tools_size_that_is_not_a_count_is_a_config_error(bad):
    with pytest.raises(ConfigError, match="keep_used must be a non-negative integer"):
        RecentTools(bad)


def test_add_new_only_grows_in_order_and_slots_of_auto_are_its_most():
    from toolret import RetrievalConfig
    from toolret.agents.working_set import add_new, slots

    assert add_new(["a", "b"], ["b", "c", "a", "d"]) == ["a", "b", "c", "d"]
    config = RetrievalConfig.resolve("fast")
    assert slots(3, config) == 3 and slots("auto", config) == config.auto_k.max_k


def test_a_tool_called_by_name_is_remembered_only_when_its_live_object_is_attached(caplog):
    recent = RecentTools(2)
    live = {"get_weather": "the weather tool"}.get
    assert recent.called("get_weather", live) == "the weather tool" and recent.ids == ["get_weather"]
    with caplog.at_level(logging.WARNING, logger="toolret"):
        assert recent.called("gone", live, "insert_object it") is None
    assert recent.ids == ["get_weather"] and "'gone' (insert_object it)" in caplog.text
