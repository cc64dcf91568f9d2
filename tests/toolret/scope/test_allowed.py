"""``allowed_ids``: a search that may return only some of the knowledge base's tools."""

from __future__ import annotations

import pytest

from toolret import ToolDoc, ToolNotFoundError

WEATHER = [ToolDoc(name=f"weather_{c}", description=f"Current weather and forecast for {c}.") for c in "abcdef"]
OTHERS = [
    ToolDoc(name="get_umbrella_advice", description="Tell whether to take an umbrella, given rain."),
    ToolDoc(name="send_email", description="Send an email message to a recipient."),
    ToolDoc(name="convert_currency", description="Convert an amount between currencies."),
]


@pytest.fixture(scope="module")
def kb(make_kb):
    return make_kb([*WEATHER, *OTHERS])


def test_k_allowed_tools_come_back_even_when_others_rank_above_them(kb):
    allowed = ["get_umbrella_advice", "send_email", "convert_currency"]
    everything = kb.search("what is the weather forecast, will it rain?", k=3).ids
    assert set(everything) <= {d.name for d in WEATHER}  # unrestricted, the weather tools fill the top 3
    restricted = kb.search("what is the weather forecast, will it rain?", k=3, allowed_ids=allowed)
    assert sorted(restricted.ids) == sorted(allowed)
    assert restricted.ids[0] == "get_umbrella_advice"  # still ranked by the query among the allowed
    step = next(s for s in restricted.trace if s.stage == "allowed")
    assert step.note == f"3 of {len(kb)} tools allowed"


@pytest.mark.parametrize("config", ["fast", "balanced"])
def test_no_preset_or_k_returns_a_tool_outside_the_allowed_ones(kb, config):
    allowed = {"weather_c", "send_email"}
    for k in (1, 5, "auto"):
        ids = kb.search("weather in Oslo and email it to bob", k=k, config=config, allowed_ids=allowed).ids
        assert ids and set(ids) <= allowed


def test_an_allowed_id_the_knowledge_base_lacks_is_an_error_naming_it(kb):
    with pytest.raises(ToolNotFoundError, match="'book_flight'"):
        kb.search("weather", allowed_ids=["weather_a", "book_flight"])


def test_no_allowed_ids_means_every_tool_and_no_trace_step(kb):
    result = kb.search("convert 10 dollars to euros", k=2)
    assert result.ids[0] == "convert_currency"
    assert all(s.stage != "allowed" for s in result.trace)
