"""A selection's settings, the adapters' options and what a selection leaves in a trace (toolret.agents.adapter_options)."""

from __future__ import annotations

import logging

import pytest

from toolret import ConfigError
from toolret.agents.adapter_options import Selection, checked_options, selection_record
from toolret.agents.agent_tools import AgentTools


def get_weather(city: str) -> str:
    """Current weather and temperature forecast for a city."""
    return f"sunny in {city}"


def convert_currency(amount: float, to: str) -> str:
    """Convert an amount of money into another currency."""
    return f"{amount} {to}"


TOOLS = [get_weather, convert_currency]


def test_a_selection_fits_its_results_as_its_settings_say(embedder, caplog):
    tools = AgentTools(embedder=embedder)
    tools.ensure(TOOLS)
    result = tools.search("weather in Paris and 20 euros in yen", 2)
    presented: list[object] = []
    selection = Selection(tools, 2, token_budget=10_000, present=lambda t: presented.append(t) or t)
    assert selection.fit(result).ids == result.ids and len(presented) == 2
    with caplog.at_level(logging.WARNING, logger="toolret"):
        assert Selection(tools, 2, token_budget=5).fit(result).ids == []


def test_an_adapters_options_are_checked_and_a_frameworks_name_becomes_toolrets():
    allowed, aliases = {"k", "similarity_top_k", "config"}, {"similarity_top_k": "k"}
    assert checked_options({"similarity_top_k": 3, "config": "fast"}, allowed, aliases=aliases, owner="demo") == {
        "k": 3,
        "config": "fast",
    }
    assert checked_options({"k": 3, "similarity_top_k": 3}, allowed, aliases=aliases, owner="demo") == {"k": 3}
    with pytest.raises(ConfigError, match="unsupported option\\(s\\) filters; demo take config, k, similarity_top_k"):
        checked_options({"filters": []}, allowed, aliases=aliases, owner="demo")
    with pytest.raises(ConfigError, match="either similarity_top_k or k, not both"):
        checked_options({"k": 3, "similarity_top_k": 4}, allowed, aliases=aliases, owner="demo")


def test_a_selection_record_holds_the_query_the_tools_their_scores_and_the_trace(embedder):
    tools = AgentTools(embedder=embedder)
    tools.ensure(TOOLS)
    result = tools.search("weather in Paris", 1)
    record = selection_record("weather in Paris", result, ["get_weather"])
    assert record["query"] == "weather in Paris" and record["tools"] == ["get_weather"]
    assert list(record["scores"]) == ["get_weather"] and record["trace"][0]["stage"] == result.trace[0].stage
