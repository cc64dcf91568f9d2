"""Agentic mode: a real create_tool_search_agent over several turns with a checkpointer; the bound set stays bounded."""

from __future__ import annotations

import pytest
from langchain.agents import AgentState
from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from typing_extensions import NotRequired

from langchain_toolret import create_tool_search_agent
from langchain_toolret.agent import lru_add
from langchain_toolret.testing import ModelCall, ScriptedChatModel, tool_call

THREAD = {"configurable": {"thread_id": "agentic"}}


class TravelState(AgentState):
    traveller: NotRequired[str]


def _seed(index, text: str, k: int) -> list[str]:
    return [t.name for t in index.search(text, k).tools]


def test_several_turns_search_seed_and_evict_within_the_cap(tool_index, tools):
    def book_found_flight(call: ModelCall) -> object:
        assert "book_flight" in call.tool_names
        return tool_call("book_flight", origin="CDG", destination="FCO", date="2025-06-03")

    replies = [
        tool_call("get_weather", city="Paris"),
        "Sunny.",  # turn 1
        "About 3200 yen.",  # turn 2
        tool_call("search_tools", query="book a plane ticket"),
        book_found_flight,
        "Booked.",  # turn 3
    ]
    model = ScriptedChatModel(replies=replies)
    agent = create_tool_search_agent(
        model,
        tools,
        max_tools=3,
        seed_k=2,
        search_k=2,
        knowledge_base=tool_index.kb,
        system_prompt="You plan trips.",
        state_schema=TravelState,
        checkpointer=InMemorySaver(),
    )
    turns = ["what's the weather in Paris?", "how many yen is 20 euros?", "get me to Rome on June 3rd"]

    agent.invoke({"messages": [HumanMessage(turns[0])], "traveller": "Ada"}, THREAD)
    expected = lru_add([], _seed(tool_index, turns[0], 2), 3)
    assert model.calls[0].tool_names == ["search_tools", *sorted(expected)]
    assert isinstance(model.calls[0].messages[0], SystemMessage)
    assert model.calls[0].messages[0].content == "You plan trips."
    expected = lru_add(expected, ["get_weather"], 3)  # used: most recent
    state = agent.get_state(THREAD).values
    assert state["selected_tool_ids"] == expected and state["traveller"] == "Ada"

    agent.invoke({"messages": [HumanMessage(turns[1])]}, THREAD)
    expected = lru_add(expected, _seed(tool_index, turns[1], 2), 3)
    assert "convert_currency" in model.calls[2].tool_names
    assert agent.get_state(THREAD).values["selected_tool_ids"] == expected

    out = agent.invoke({"messages": [HumanMessage(turns[2])]}, THREAD)
    found = next(m for m in out["messages"] if isinstance(m, ToolMessage) and m.name == "search_tools")
    assert found.artifact[0] == "book_flight"
    assert "- book_flight: Book a plane ticket between two airports on a date." in found.content
    assert out["messages"][-1].content == "Booked."
    final = agent.get_state(THREAD).values["selected_tool_ids"]
    assert final[-1] == "book_flight" and len(final) == 3
    for call in model.calls:
        assert len(call.tools) <= 1 + 3 and call.tool_names[0] == "search_tools"


def test_without_seeding_the_model_starts_from_search_only(tool_index, tools):
    model = ScriptedChatModel(
        replies=[tool_call("search_tools", query="stock price"), tool_call("get_stock_price", ticker="ACME"), "123.45"]
    )
    agent = create_tool_search_agent(model, tools, seed_k=0, search_k=1, knowledge_base=tool_index.kb)
    out = agent.invoke({"messages": [HumanMessage("how is ACME doing on the market?")]})
    assert model.calls[0].tool_names == ["search_tools"]
    assert model.calls[1].tool_names == ["search_tools", "get_stock_price"]
    assert any(isinstance(m, ToolMessage) and m.content == "ACME: 123.45 USD" for m in out["messages"])


async def test_async_agent_indexes_its_tools_on_first_use(tools):
    model = ScriptedChatModel(replies=[tool_call("read_file", path="notes.txt"), "It says hi."])
    agent = create_tool_search_agent(model, tools, seed_k=1, always_include=["ask_user"])
    out = await agent.ainvoke({"messages": [HumanMessage("show me what is in the file notes.txt")]})
    assert model.calls[0].tool_names == ["ask_user", "search_tools", "read_file"]
    assert out["messages"][-1].content == "It says hi."


def test_a_tool_named_like_the_search_tool_is_refused(tools):
    from langchain_core.tools import tool

    @tool
    def search_tools(query: str) -> str:
        """My own search."""
        return query

    with pytest.raises(ValueError, match="search_tool_name"):
        create_tool_search_agent(ScriptedChatModel(), [*tools, search_tools])
    agent = create_tool_search_agent(
        ScriptedChatModel(replies=["ok"]), [*tools, search_tools], search_tool_name="find_tools"
    )
    assert "find_tools" in agent.get_graph().nodes["tools"].data.tools_by_name


def test_lru_add_keeps_the_newest_within_the_cap():
    assert lru_add(["a", "b"], ["c"], 2) == ["b", "c"]
    assert lru_add(["a", "b", "c"], ["a"]) == ["b", "c", "a"]
    assert lru_add([], ["x", "y", "z"], 2) == ["y", "x"]


def test_search_tools_takes_a_score_threshold_as_well_as_k(tool_index, tools):
    from langchain_toolret import create_search_tool

    call = {"type": "tool_call", "name": "search_tools", "id": "1", "args": {"query": "weather forecast for a city"}}
    wide = create_search_tool(tool_index, k=4).invoke(call)
    strict = create_search_tool(tool_index, k=4, min_score=0.3).invoke(call)
    assert len(wide.artifact) == 4 and strict.artifact == ["get_weather"]

    model = ScriptedChatModel(replies=[tool_call("search_tools", query="weather forecast for a city"), "ok"])
    agent = create_tool_search_agent(
        model, tools, seed_k=0, search_k=4, search_min_score=0.3, knowledge_base=tool_index.kb
    )
    agent.invoke({"messages": [HumanMessage("I need the forecast")]})
    assert [n for n in model.calls[1].tool_names if n != "search_tools"] == ["get_weather"]
