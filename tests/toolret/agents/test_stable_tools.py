"""The cache-stable list rule: grow by appending, rebuild once past the cap or budget, drop what may not be bound."""

from __future__ import annotations

import pytest

from toolret import ConfigError
from toolret.agents.stable_tools import DEFAULT_CACHE_CAP, StableTools, grow


def test_new_tools_are_appended_in_the_turns_order_and_held_ones_keep_their_place():
    g = grow(["a", "b"], ["c", "b", "d"], cap=10)
    assert g.names == ["a", "b", "c", "d"] and g.added == ["c", "d"] and g.rebuilt is None
    assert grow(["a", "b"], ["b"], cap=10).note == "unchanged"


def test_past_the_cap_the_list_is_rebuilt_from_the_turns_tools_whole():
    g = grow(["a", "b", "c"], ["d", "e"], cap=4)
    assert g.names == ["d", "e"] and g.rebuilt == "cap"
    assert grow([], ["a", "b", "c"], cap=2).names == ["a", "b", "c"]  # the turn's tools are never cut
    assert grow(["a"], ["a", "b", "c"], cap=2).rebuilt is None  # the rebuilt list still starts with the old one


def test_a_tool_the_request_may_not_have_is_dropped_and_never_added():
    g = grow(["a", "b", "c"], ["x", "d"], cap=10, keep=lambda n: n not in {"b", "x"})
    assert g.names == ["a", "c", "d"] and g.rebuilt == "dropped"


def test_a_list_that_would_pass_the_budget_is_rebuilt():
    fits = lambda names: len(names) <= 3  # noqa: E731
    assert grow(["a", "b"], ["c"], cap=10, fits=fits).names == ["a", "b", "c"]
    g = grow(["a", "b", "c"], ["d"], cap=10, fits=fits)
    assert g.names == ["d"] and g.rebuilt == "budget"


def test_a_conversation_resent_in_full_finds_its_previous_list():
    stable = StableTools()
    chat = [("user", "weather in Oslo")]
    assert stable.next(chat, None, ["w1", "w2"], slots=2).names == ["w1", "w2"]
    chat += [("assistant", "Rain."), ("user", "20 EUR in USD?")]
    assert stable.next(chat, None, ["c1"], slots=2).names == ["w1", "w2", "c1"]
    assert stable.recall(chat) == ["w1", "w2", "c1"]
    assert stable.recall([("user", "something else")]) is None
    # The state's list, when the adapter has one, wins over the remembered one.
    assert stable.next(chat, ["s"], ["c1"], slots=2).names == ["s", "c1"]


def test_off_offers_the_turns_tools_alone_and_remembers_nothing():
    stable = StableTools(enabled=False)
    assert stable.next([("user", "q")], ["a", "b"], ["c", "d"], slots=2, keep=lambda n: n != "d").names == ["c"]
    assert stable.recall([("user", "q")]) is None


def test_the_default_cap_is_twenty_or_twice_the_slots_and_never_past_the_limit():
    assert StableTools().cap_for(3) == DEFAULT_CACHE_CAP == 20
    assert StableTools().cap_for(15) == 30
    assert StableTools(cap=8).cap_for(15) == 8
    assert StableTools().cap_for(3, limit=12) == 12


@pytest.mark.parametrize(("options", "field"), [({"cap": 0}, "cache_cap"), ({"enabled": "yes"}, "cache_stable")])
def test_bad_options_are_config_errors_naming_them(options, field):
    with pytest.raises(ConfigError, match=field):
        StableTools(**options)
