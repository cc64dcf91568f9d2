"""The cache-stable tool list of ToolSelectionMiddleware in real create_agent runs (only the model is scripted).

Providers cache the prompt prefix and the tool definitions come first, so each model call's tool list must
keep the previous call's as its prefix: it grows by appending, is rebuilt once past its cap, drops what a
changed scope takes away, and ``cache_stable=False`` turns it off.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_core.tools import StructuredTool
from langgraph.checkpoint.memory import InMemorySaver

from langchain_toolret import ToolIndex, ToolSelectionMiddleware
from langchain_toolret.testing import ModelCall, ScriptedChatModel, tool_call
from toolret import ToolScope
from toolret.documents.tokens import token_counter

from . import registry50

THREAD = {"configurable": {"thread_id": "t1"}}

#: Ten turns with topic switches, two follow-ups and a topic the conversation comes back to.
TURNS = [
    "book me a flight from Paris to Rome on June 3",
    "and a hotel room there for two nights",
    "turn on the kitchen lights",
    "play some jazz in the living room",
    "how much is 100 dollars in euros?",
    "and in yen?",
    "send an email to bob@example.com saying I'm late",
    "is it going to rain in Paris tomorrow?",
    "set an alarm for 7 am",
    "book a table for four at an Italian restaurant tonight",
]


@pytest.fixture(scope="module")
def registry_kb(embedder):
    return ToolIndex.from_tools(registry50.registry(), embedder=embedder).kb


def _agent(replies=(), *, checkpointer=True, tools=None, **options):
    model = ScriptedChatModel(replies=list(replies))
    middleware = ToolSelectionMiddleware(**options)
    agent = create_agent(
        model,
        tools=tools or registry50.registry(),
        middleware=[middleware],
        checkpointer=InMemorySaver() if checkpointer else None,
        context_schema=options.get("scope") and Ctx,
    )
    return agent, model


def _talk(agent, turns=TURNS, **invoke):
    """Each turn's own selection (the state's), the conversation held by the thread's checkpointer."""
    own = []
    for turn in turns:
        agent.invoke({"messages": [HumanMessage(turn)]}, THREAD, **invoke)
        own.append(agent.get_state(THREAD).values["toolret_selection"]["tools"])
    return own


def _prefix_kept(calls: list[ModelCall]) -> list[bool]:
    return [b.tools[: len(a.tools)] == a.tools for a, b in zip(calls, calls[1:])]


def test_each_call_keeps_the_previous_list_as_its_prefix_and_offers_the_turns_own_tools(registry_kb):
    """Issue 45: with k=3, 0 of 9 consecutive calls kept the previous list as a prefix."""
    agent, model = _agent(k=3, knowledge_base=registry_kb)
    own = _talk(agent)
    kept = _prefix_kept(model.calls)
    assert kept.count(False) <= 1  # at most one rebuild in ten turns, at the default cap
    for i, call in enumerate(model.calls):
        assert set(own[i]) <= set(call.tool_names), TURNS[i]  # each turn's right tools are offered
        assert len(call.tools) <= 20
        if i and not kept[i - 1]:
            assert call.tool_names == own[i]  # a rebuild starts from the turn's own tools
    off, off_model = _agent(k=3, knowledge_base=registry_kb, cache_stable=False)
    assert _talk(off) == own  # the same selections, bound each turn alone
    assert _prefix_kept(off_model.calls).count(True) <= 2
    assert all(c.tool_names == o for c, o in zip(off_model.calls, own))


def test_a_turn_that_needs_nothing_new_sends_the_same_list(registry_kb):
    agent, model = _agent(k=3, knowledge_base=registry_kb)
    own = _talk(agent, ["what's the weather in Madrid?", "and in Rome?", "what's the weather in Madrid?"])
    assert "get_weather" in own[1]  # the follow-up is still read with the request it continues
    assert set(own[2]) <= set(model.calls[1].tool_names)
    assert model.calls[2].tools == model.calls[1].tools  # the whole prompt prefix is the previous call's


def test_past_the_cap_the_list_is_rebuilt_once_from_the_turns_tools_then_grows_again(registry_kb):
    agent, model = _agent(k=3, knowledge_base=registry_kb, cache_cap=7)
    own = _talk(agent, TURNS[2:6])  # lights, jazz, dollars in euros, and in yen
    names = [c.tool_names for c in model.calls]
    assert names[1][:3] == names[0] and 3 < len(names[1]) <= 7
    assert len(set(names[1]) | set(own[2])) > 7 and names[2] == own[2]  # past 7: rebuilt once, from the turn's tools
    assert names[3][: len(names[2])] == names[2] and len(names[3]) <= 7  # then it grows again
    assert _prefix_kept(model.calls) == [True, False, True]
    assert agent.get_state(THREAD).values["toolret_selection"]["bound"] == names[3]


def test_off_binds_each_turns_own_tools_best_first(registry_kb):
    agent, model = _agent(k=3, knowledge_base=registry_kb, cache_stable=False)
    _talk(agent, TURNS[:3])
    lights = [t.name for t in ToolIndex(registry_kb).search(TURNS[2], 3).tools]
    assert model.calls[2].tool_names == lights and "book_flight" not in lights


def test_without_a_checkpointer_a_conversation_sent_in_full_keeps_its_prefix(registry_kb):
    agent, model = _agent(k=3, knowledge_base=registry_kb, checkpointer=False)
    messages: list = []
    for turn in TURNS[:5]:
        messages = agent.invoke({"messages": [*messages, HumanMessage(turn)]})["messages"]
    assert _prefix_kept(model.calls) == [True] * 4


async def test_the_async_path_keeps_the_prefix_too(registry_kb):
    agent, model = _agent(k=3, knowledge_base=registry_kb)
    for turn in TURNS[:4]:
        await agent.ainvoke({"messages": [HumanMessage(turn)]}, THREAD)
    assert _prefix_kept(model.calls) == [True] * 3 and len(model.calls[-1].tools) > 3


def test_a_tool_found_with_the_search_tool_stays_on_the_list_in_later_turns(registry_kb):
    replies = [tool_call("search_tools", query="translate text into another language"), "Found it.", "Sunny."]
    agent, model = _agent(replies, k=2, search_tool=True, search_k=1, knowledge_base=registry_kb)
    _talk(agent, ["play some jazz", "what's the weather in Rome?"])
    assert "translate_text" in model.calls[1].tool_names  # bound after the search
    assert model.calls[2].tools[: len(model.calls[1].tools)] == model.calls[1].tools
    assert _prefix_kept(model.calls) == [True, True]


def test_a_token_budget_rebuilds_the_list_rather_than_passing_it(registry_kb):
    count = token_counter().count
    agent, model = _agent(k=2, knowledge_base=registry_kb, token_budget=300)
    _talk(agent, TURNS[2:8])
    sent = [sum(count(json.dumps(t, ensure_ascii=False, separators=(",", ":"))) for t in c.tools) for c in model.calls]
    assert all(c.tools for c in model.calls) and max(sent) <= 300
    kept = _prefix_kept(model.calls)
    assert False in kept  # the budget forced a rebuild somewhere in six turns
    assert any(k and len(b.tools) > len(a.tools) for k, a, b in zip(kept, model.calls, model.calls[1:]))  # it grew


# ---------------------------------------------------------------------------- scopes
TEAMS = {
    "travel": {"book_flight", "cancel_booking", "book_hotel", "book_restaurant", "rent_car"},
    "home": {"turn_on_lights", "turn_off_lights", "set_thermostat", "lock_door", "play_music", "pause_music"},
}


@dataclass
class Ctx:
    tool_scope: ToolScope


def _tagged() -> list[StructuredTool]:
    tools = registry50.registry()
    for tool in tools:
        tool.tags = [team for team, names in TEAMS.items() if tool.name in names] or ["other"]
    return tools


def test_a_scope_change_drops_the_tools_outside_the_new_scope(embedder):
    agent, model = _agent(k=3, tools=_tagged(), scope="tool_scope", embedder=embedder)
    everything, home = Ctx(ToolScope()), Ctx(ToolScope(tags=["home", "other"]))
    agent.invoke({"messages": [HumanMessage(TURNS[0])]}, THREAD, context=everything)
    assert "book_flight" in model.calls[0].tool_names
    agent.invoke({"messages": [HumanMessage("turn on the kitchen lights")]}, THREAD, context=home)
    second = model.calls[1].tool_names
    assert "turn_on_lights" in second and not TEAMS["travel"] & set(second)
    assert not TEAMS["travel"] & set(agent.get_state(THREAD).values["toolret_selection"]["bound"])
    kept = [n for n in model.calls[0].tool_names if n not in TEAMS["travel"]]
    assert second[: len(kept)] == kept  # the tools still in scope keep their order
    agent.invoke({"messages": [HumanMessage("play some jazz")]}, THREAD, context=home)
    assert model.calls[2].tool_names[: len(second)] == second  # in one scope the list grows again


def test_cache_options_are_checked():
    from toolret import ConfigError

    with pytest.raises(ConfigError, match="cache_cap"):
        ToolSelectionMiddleware(k=3, cache_cap=0)
    with pytest.raises(ConfigError, match="cache_stable"):
        ToolSelectionMiddleware(k=3, cache_stable="yes")  # type: ignore[arg-type]
