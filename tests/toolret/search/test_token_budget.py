"""The chosen tools as the model is sent them: a tool that cannot be bound is left out, a token budget is kept."""

from __future__ import annotations

import logging

import pytest

from toolret import QueryError, RetrievalConfig, ScoredTool, SearchResult
from toolret.documents.tokens import TokenCounter, token_counter
from toolret.search.token_budget import definition_text, fit_definitions

#: One token a word: budgets in these tests are read off the definitions at a glance.
WORDS = TokenCounter("words", lambda text: len(text.split()))


def get_weather(city: str) -> str:
    """Current weather and temperature forecast for a city."""
    return city


def get_forecast(city: str, days: int = 3) -> str:
    """Weather forecast for the next days in a city, hour by hour, with rain, wind and humidity.

    Args:
        city: City name, e.g. "Paris".
        days: Number of days to forecast, 1 to 14.
    """
    return city


def convert_currency(amount: float, from_currency: str, to_currency: str) -> str:
    """Convert an amount of money from one currency to another at today's exchange rate."""
    return str(amount)


def send_email(to: str, subject: str, body: str) -> str:
    """Send an e-mail message to a recipient."""
    return to


def book_flight(origin: str, destination: str, date: str) -> str:
    """Book a plane ticket between two airports on a date."""
    return date


TOOLS = [get_weather, get_forecast, convert_currency, send_email, book_flight]


@pytest.fixture(scope="module")
def kb(make_kb):
    return make_kb(TOOLS)


def _tokens(kb, tool_id: str) -> int:
    return token_counter().count(definition_text(kb.get(tool_id).definition()))


def test_a_token_budget_keeps_the_best_tools_whose_definitions_fit(kb):
    query = "will it rain in Paris this week?"
    ranked = kb.search(query, k=5).ids
    budget = _tokens(kb, ranked[0]) + _tokens(kb, ranked[1])
    result = kb.search(query, k=5, token_budget=budget)
    assert result.ids == ranked[:2] and result.tokens == budget
    step = result.trace[-1]
    assert step.stage == "definitions" and f"{budget} of {budget} tokens, {token_counter().name}" in step.note
    assert "left out 3 over the budget" in step.note and all(name in step.note for name in ranked[2:])


def test_a_tool_over_what_is_left_is_skipped_and_a_smaller_one_after_it_still_fits(kb):
    query = "will it rain in Paris this week?"
    ranked = kb.search(query, k=10).ids
    costs = [_tokens(kb, tool_id) for tool_id in ranked]
    # The first tool with a cheaper one after it (the best one too), and that cheaper one.
    n = len(ranked)
    i, j = next((i, j) for i in range(n) for j in range(i + 1, n) if costs[j] < costs[i])
    budget = sum(costs[:i]) + costs[j]
    result = kb.search(query, k=10, token_budget=budget)
    assert result.ids == [*ranked[:i], ranked[j]] and result.tokens == budget
    assert f"{ranked[i]} ({costs[i]})" in result.trace[-1].note


def test_the_budget_applies_to_the_precise_set_of_k_auto(kb):
    query = "will it rain in Paris this week?"
    wide = RetrievalConfig.resolve("fast").with_(auto_ratio=None, auto_margin=100.0, auto_max_k=4)
    auto = kb.search(query, k="auto", config=wide)
    assert len(auto.ids) == 4
    budget = _tokens(kb, auto.ids[0]) + _tokens(kb, auto.ids[1])
    result = kb.search(query, k="auto", config=wide, token_budget=budget)
    assert result.ids == auto.ids[:2] and result.tokens == budget
    assert [s.stage for s in result.trace][-3:] == ["auto_k", "floor", "definitions"]


def test_without_a_budget_nothing_is_counted_and_the_result_is_unchanged(kb):
    result = kb.search("will it rain in Paris this week?", k=3)
    assert result.tokens is None and "definitions" not in [s.stage for s in result.trace]


@pytest.mark.parametrize("budget", [0, -5, 1.5, True, "100"])
def test_a_budget_that_is_not_a_positive_integer_is_a_query_error_naming_it(kb, budget):
    with pytest.raises(QueryError, match="token_budget must be a positive integer"):
        kb.search("weather in Paris", token_budget=budget)


def test_the_callers_definition_is_what_is_counted(kb):
    """An adapter passes the definition it binds (a condensed one, say): that text is counted."""
    ranked = kb.search("will it rain in Paris this week?", k=3).ids
    short = {tool_id: f"{tool_id} short" for tool_id in ranked}
    result = kb.search(
        "will it rain in Paris this week?",
        k=3,
        token_budget=sum(token_counter().count(text) for text in short.values()),
        definition=lambda tool: short[tool.id],
    )
    assert result.ids == ranked


def test_a_tool_that_cannot_be_bound_is_left_out_with_a_warning_naming_it(kb, caplog):
    def definition(tool: ScoredTool) -> dict:
        if tool.name == "get_forecast":
            raise KeyError("Reference '#/$defs/Days' not found.")
        return kb.get(tool.id).definition()

    ranked = kb.search("will it rain in Paris this week?", k=3).ids
    assert "get_forecast" in ranked
    with caplog.at_level(logging.WARNING, logger="toolret"):
        result = kb.search("will it rain in Paris this week?", k=3, definition=definition)
    assert result.ids == [t for t in ranked if t != "get_forecast"]
    assert "'get_forecast' cannot be bound (KeyError: Reference '#/$defs/Days' not found.)" in caplog.text
    assert result.trace[-1].note == (
        "left out 1 tool that cannot be bound: get_forecast (KeyError: Reference '#/$defs/Days' not found.)"
    )


def test_definitions_sent_with_every_selection_are_counted_first():
    tools = [ScoredTool(id=n, name=n, score=1.0) for n in ("a", "b")]
    result = SearchResult(query="q", tools=tools)
    fitted = fit_definitions(
        result, lambda t: f"{t.name} two three", token_budget=7, always=["one two three four"], counter=WORDS
    )
    assert fitted.ids == ["a"] and fitted.tokens == 7  # 4 always sent + 3 for "a"; "b" would make 10
    assert fitted.trace[-1].note == "7 of 7 tokens (1 always sent), words; left out 1 over the budget: b (3)"


def test_a_budget_no_tool_fits_warns_naming_it_and_the_smallest_definition(kb, caplog):
    ranked = kb.search("will it rain in Paris this week?", k=3).ids
    smallest = min(_tokens(kb, t) for t in ranked)
    with caplog.at_level(logging.WARNING, logger="toolret"):
        result = kb.search("will it rain in Paris this week?", k=3, token_budget=5)
    assert result.ids == []
    assert "token_budget=5 fits none of the 3 selected tools" in caplog.text
    assert f"the smallest definition takes {smallest} tokens" in caplog.text


def test_keep_best_binds_the_best_tool_when_the_budget_fits_none(caplog):
    tools = [ScoredTool(id=n, name=n, score=1.0) for n in ("a", "b")]
    with caplog.at_level(logging.WARNING, logger="toolret"):
        fitted = fit_definitions(
            SearchResult(query="q", tools=tools),
            lambda t: f"{t.name} two three",
            token_budget=2,
            counter=WORDS,
            keep_best=True,
        )
    assert fitted.ids == ["a"] and fitted.tokens == 3
    assert "token_budget=2 fits none of the 2 selected tools" in caplog.text and "'a'" in caplog.text


def test_a_definition_cache_converts_each_tool_object_once_and_drops_what_cannot_be_bound(caplog):
    from toolret.search.token_budget import DefinitionCache

    calls: list[str] = []

    def convert(tool: str) -> dict:
        calls.append(tool)
        if tool == "broken":
            raise KeyError("Reference '#/$defs/Thing' not found.")
        return {"name": tool}

    cache = DefinitionCache(convert, is_tool=lambda t: isinstance(t, str), name=str)
    with caplog.at_level(logging.WARNING, logger="toolret"):
        assert cache.bindable(["ok", "broken", {"type": "web_search"}], "demo") == ["ok", {"type": "web_search"}]
        assert cache.bindable(["ok", "broken"], "demo") == ["ok"]
    assert calls == ["ok", "broken"]  # a failure is remembered too
    assert "demo: tool 'broken' cannot be bound (KeyError: Reference '#/$defs/Thing' not found.)" in caplog.text
    assert cache.safe("broken") is None and cache("ok") == {"name": "ok"}
