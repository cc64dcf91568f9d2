"""One agent's tools over a knowledge base (toolret.agents.agent_tools): real model, real ChromaDB."""

from __future__ import annotations

import logging

import pytest

from toolret import KnowledgeBaseError, ToolKnowledgeBase, ToolNotAttachedError, ToolNotFoundError
from toolret.agents.agent_tools import AgentTools, attach, persist_to


def get_weather(city: str) -> str:
    """Current weather and temperature forecast for a city."""
    return f"sunny in {city}"


def convert_currency(amount: float, to: str) -> str:
    """Convert an amount of money into another currency."""
    return f"{amount} {to}"


def send_email(to: str, body: str) -> str:
    """Send an e-mail message to a recipient."""
    return to


TOOLS = [get_weather, convert_currency, send_email]


def test_an_owned_index_syncs_a_changed_tool_set_and_hands_back_live_objects(embedder):
    tools = AgentTools(embedder=embedder)
    assert tools.ensure(TOOLS) is True and tools.ensure(TOOLS) is False  # the same objects: nothing to do
    assert tools.live(tools.search("is it raining in Paris?", 1)) == [get_weather]
    assert tools.ensure(TOOLS[:2]) is True and "send_email" not in tools.kb
    assert tools.tool("send_email") is None


def test_a_given_knowledge_base_missing_an_agent_tool_is_an_error_naming_it(embedder):
    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add(TOOLS[:2])
    with pytest.raises(KnowledgeBaseError, match="lacks 1 of the agent's 3 tools.*send_email"):
        AgentTools(kb).ensure(TOOLS)


def test_foreign_tools_of_a_given_knowledge_base_are_never_returned_and_named_once(embedder, caplog):
    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add(TOOLS)
    tools = AgentTools(kb)
    with caplog.at_level(logging.WARNING, logger="toolret"):
        tools.ensure(TOOLS[:2])
    assert "holds 1 tools the agent does not have (send_email)" in caplog.text
    assert tools.allowed == ("get_weather", "convert_currency")
    assert "send_email" not in tools.search("send an e-mail to Bob", 3).ids


def test_before_binding_a_reopened_knowledge_bases_live_tools_are_asked_for_not_dropped(tmp_path, embedder, caplog):
    built = ToolKnowledgeBase(tmp_path / "kb", embedder=embedder)
    built.add([*TOOLS, {"name": "get_time", "description": "Current time in a city."}])
    built.save()
    kb = ToolKnowledgeBase(tmp_path / "kb", embedder=embedder)
    tools = AgentTools(kb)
    with pytest.raises(ToolNotAttachedError, match=r"kb\.bind\(tools\)"):
        tools.live(tools.search("is it raining in Paris?", 1))
    kb.bind(TOOLS)
    assert tools.live(tools.search("is it raining in Paris?", 1)) == [get_weather]
    with caplog.at_level(logging.WARNING, logger="toolret"):
        assert tools.live(tools.search("what time is it in Tokyo?", 1)) == []
    assert "'get_time' is stored as data" in caplog.text  # a data tool has no live object: said, not silent


def test_attach_requires_every_indexed_tool_unless_syncing(tmp_path, embedder):
    kb = ToolKnowledgeBase(embedder=embedder)
    docs = [kb._writer.prepare([t])[0][0] for t in TOOLS]
    attach(kb, docs)
    with pytest.raises(ToolNotFoundError, match="1 indexed tool.*'send_email'"):
        attach(kb, docs[:2], required=kb.ids)
    attach(kb, docs[:2], required=kb.ids, sync=True)
    assert sorted(kb.ids) == ["convert_currency", "get_weather"]
    persist_to(kb, tmp_path / "copy")
    assert sorted(ToolKnowledgeBase.load(tmp_path / "copy", embedder=embedder).ids) == sorted(kb.ids)


async def test_a_turns_search_reads_the_latest_user_message_of_any_message_shape(embedder):
    tools = AgentTools(embedder=embedder)
    tools.ensure(TOOLS)
    chat = [
        {"role": "user", "content": "convert 20 euros to yen"},
        ("assistant", "2,600 yen."),
        ("user", "is it raining in Oslo?"),
    ]
    assert tools.search_turn(chat, 1).ids == ["get_weather"] == (await tools.asearch_turn(chat, 1)).ids
    assert tools.search_turn([("assistant", "hello")], 1) is None
    assert tools.live(tools.search("send an e-mail to Bob", 1)) == [send_email]
    own = tools.search("is it raining in Oslo?", 1)
    assert tools.follow_up(chat, own, 1).ids == own.ids  # a new request: its own result stands


def test_fit_reads_each_tools_definition_as_presented_and_counts_the_fixed_tools_first(embedder, caplog):
    tools = AgentTools(embedder=embedder)
    tools.ensure(TOOLS)
    result = tools.search("weather in Paris and 20 euros in yen", 2)
    assert tools.fit(result).ids == result.ids
    copies: list[str] = []

    def present(tool):
        copies.append(tool.__name__)
        return tool

    tools.fit(result, present=present)
    assert sorted(copies) == sorted(result.ids)  # what is bound is what is measured
    with caplog.at_level(logging.WARNING, logger="toolret"):
        fitted = tools.fit(result, 1, keep_best=True)
    assert fitted.ids == result.ids[:1] and "token_budget" in caplog.text
    with caplog.at_level(logging.WARNING, logger="toolret"):
        assert tools.fit(result, 60, always=[send_email, send_email]).ids == []  # the fixed tools took the budget


async def test_search_turn_runs_the_turns_search_or_a_custom_query_or_nothing(embedder):
    tools = AgentTools(embedder=embedder)
    tools.ensure(TOOLS)
    chat = [("user", "convert 20 euros to yen"), ("assistant", "2,600 yen."), ("user", "is it raining in Oslo?")]
    assert tools.search_turn(chat, 1, query="ignored when messages are given").ids == ["get_weather"]
    assert (await tools.asearch_turn(chat, 1)).ids == ["get_weather"]
    assert tools.search_turn(None, 1, query="send an e-mail to Bob", conversation=chat).ids == ["send_email"]
    assert tools.search_turn(None, 1, query="") is None and await tools.asearch_turn(None, 1) is None


def test_a_view_shares_the_tools_under_another_config(embedder):
    tools = AgentTools(embedder=embedder)
    tools.ensure(TOOLS)
    assert tools.view() is tools
    fast = tools.view("fast")
    assert type(fast) is AgentTools and fast.config.name == "fast" and fast.kb is tools.kb
    assert fast.live_tools is tools.live_tools and fast.definitions is tools.definitions
    assert fast.live(fast.search("is it raining in Paris?", 1)) == [get_weather]
