"""What one model call is offered: fixed tools first, the fallback, the checks of the options."""

from __future__ import annotations

import logging

import pytest

from toolret import ConfigError
from toolret.agents.fixed_tools import check_offer, fallback_filter, split_fixed, warn_fallback


def test_fixed_tools_come_sorted_with_the_search_tool_last_and_the_rest_keep_their_order():
    names = ["zeta", "search_tools", "get_weather", "ask_user", "alpha"]
    fixed, rest = split_fixed(names, ["zeta", "ask_user"], "search_tools", "demo")
    assert fixed == ["ask_user", "zeta", "search_tools"] and rest == ["get_weather", "alpha"]


def test_an_always_include_name_the_agent_lacks_is_a_config_error_naming_it_and_the_tools():
    with pytest.raises(ConfigError, match=r"demo: always_include names tools the agent does not have: \['ask_usr'\]"):
        split_fixed(["ask_user", "get_weather"], ["ask_usr"], None, "demo")


def test_the_fallback_offers_all_or_the_named_tools_and_the_search_tool():
    assert fallback_filter("all", ["ask_user"], "search_tools") is None
    keep = fallback_filter("always_include", ["ask_user"], "search_tools")
    assert keep is not None and keep("ask_user") and keep("search_tools") and not keep("get_weather")
    named = fallback_filter(["get_weather"], ["ask_user"], None)
    assert named is not None and named("get_weather") and not named("ask_user")


def test_a_failed_selection_is_said_with_its_reason_and_the_fallback(caplog):
    with caplog.at_level(logging.WARNING, logger="toolret"):
        warn_fallback("demo", RuntimeError("index down"), ["a", "b"])
    assert "demo: tool selection failed (RuntimeError: index down); offering the fallback tools (a, b)" in caplog.text


@pytest.mark.parametrize(("fallback", "limit", "match"), [("some", 5, "fallback must be"), ("all", 0, "tool_limit")])
def test_options_that_are_not_ones_are_config_errors(fallback, limit, match):
    with pytest.raises(ConfigError, match=match):
        check_offer(fallback, limit)
    assert isinstance(ConfigError("x"), ValueError)  # callers that caught ValueError keep working


def test_a_failed_selection_offers_the_fallbacks_tools_in_order_and_passes_non_tools():
    from toolret.agents.fixed_tools import fallback_tools

    tools = ["get_weather", {"type": "web_search"}, "ask_user", "search_tools", "send_email"]
    name_of = lambda t: t if isinstance(t, str) else None  # noqa: E731
    assert fallback_tools(tools, "all", ["ask_user"], "search_tools", name_of) == [
        "ask_user",
        "search_tools",
        "get_weather",
        {"type": "web_search"},
        "send_email",
    ]
    assert fallback_tools(tools, "always_include", ["ask_user"], "search_tools", name_of) == [
        {"type": "web_search"},
        "ask_user",
        "search_tools",
    ]
    assert fallback_tools(tools, ["send_email"], [], None, name_of) == [{"type": "web_search"}, "send_email"]


def test_an_agent_that_searches_its_tools_needs_a_free_search_tool_name_and_a_working_set():
    from toolret.agents.fixed_tools import check_agentic

    check_agentic(["get_weather"], "search_tools", 10, 0, 5)
    with pytest.raises(ValueError, match="already named 'search_tools'"):
        check_agentic(["search_tools"], "search_tools", 10, 3, 5)
    for sizes in [(0, 3, 5), (10, -1, 5), (10, 3, 0)]:
        with pytest.raises(ValueError, match="at least"):
            check_agentic([], "search_tools", *sizes)
