"""langgraph-bigtool's create_agent, one import away: same arguments, an uncompiled StateGraph back."""

from __future__ import annotations

import math

from langchain_core.messages import HumanMessage
from langgraph.graph import StateGraph
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langchain_toolret.bigtool import create_agent
from langchain_toolret.testing import ScriptedChatModel, tool_call

from . import registry50


def _registry() -> dict:
    return {f"id_{t.name}": t for t in registry50.registry()}


def test_returns_an_uncompiled_graph_whose_retrieved_tools_are_bound_next(embedder):
    model = ScriptedChatModel(
        replies=[
            tool_call("retrieve_tools", query="play some jazz music"),
            tool_call("play_music", request="jazz"),
            "Playing jazz.",
        ]
    )
    builder = create_agent(model, _registry(), limit=2)
    assert isinstance(builder, StateGraph)
    out = builder.compile().invoke({"messages": [HumanMessage("put on some jazz")]})
    assert out["selected_tool_ids"][0] == "id_play_music" and len(out["selected_tool_ids"]) == 2
    assert model.calls[0].tool_names == ["retrieve_tools"]
    assert model.calls[1].tool_names[:2] == ["retrieve_tools", "play_music"]
    assert out["messages"][-1].content == "Playing jazz." and "play_music done" in out["messages"][-2].content


def test_plain_functions_filter_and_a_custom_retrieval_with_the_store():
    def retrieve(query: str, *, store: BaseStore) -> list[str]:
        store.put(("seen",), "q", {"query": query})
        return ["sqrt"]

    registry = {"sqrt": math.sqrt, "floor": math.floor}
    model = ScriptedChatModel(replies=[tool_call("retrieve_tools", query="square root"), "done"])
    store = InMemoryStore()
    out = (
        create_agent(model, registry, retrieve_tools_function=retrieve)
        .compile(store=store)
        .invoke({"messages": [HumanMessage("root of 2")]})
    )
    assert out["selected_tool_ids"] == ["sqrt"] and model.calls[1].tool_names == ["retrieve_tools", "sqrt"]
    assert store.get(("seen",), "q").value == {"query": "square root"}


def test_filter_keeps_only_matching_tools_searchable():
    tools = registry50.registry()
    for tool in tools:
        tool.metadata = {"area": "home" if tool.name in {"turn_on_lights", "set_thermostat"} else "other"}
    model = ScriptedChatModel(replies=[tool_call("retrieve_tools", query="book a flight"), "ok"])
    out = (
        create_agent(model, {t.name: t for t in tools}, limit=2, filter={"area": "home"})
        .compile()
        .invoke({"messages": [HumanMessage("book a flight")]})
    )
    assert set(out["selected_tool_ids"]) <= {"turn_on_lights", "set_thermostat"}


async def test_async_invocation():
    model = ScriptedChatModel(replies=[tool_call("retrieve_tools", query="weather forecast"), "Sunny."])
    out = await create_agent(model, _registry(), limit=1).compile().ainvoke({"messages": [HumanMessage("weather?")]})
    assert out["selected_tool_ids"] == ["id_get_weather"]


def test_a_tool_that_cannot_be_bound_is_never_offered_or_bound(embedder, caplog):
    """Issue 25, item 4: a registry tool whose schema does not convert must not end the turn."""
    import logging

    from .conftest import make_unbindable_tool

    registry = {**_registry(), "id_check_thing": make_unbindable_tool()}
    model = ScriptedChatModel(replies=[tool_call("retrieve_tools", query="check a thing"), "Nothing to check with."])
    with caplog.at_level(logging.WARNING, logger="toolret"):
        out = create_agent(model, registry, limit=3).compile().invoke({"messages": [HumanMessage("check a thing")]})
        assert "id_check_thing" not in out["selected_tool_ids"]
        assert out["messages"][-1].content == "Nothing to check with."

        def retrieve(query: str) -> list[str]:
            return ["id_check_thing", "id_play_music"]

        model = ScriptedChatModel(replies=[tool_call("retrieve_tools", query="check"), "ok"])
        create_agent(model, registry, retrieve_tools_function=retrieve).compile().invoke(
            {"messages": [HumanMessage("check a thing")]}
        )
    assert model.calls[1].tool_names == ["retrieve_tools", "play_music"]
    assert "'check_thing' cannot be bound" in caplog.text and "bigtool agent: tool 'check_thing'" in caplog.text
