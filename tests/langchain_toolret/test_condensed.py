"""Condensed descriptions (opt-in): the model is bound copies of the tools carrying their card's text.

Real ``create_tool_search_agent`` runs (the model is scripted, nothing else is) over a knowledge base of the
shared test tools plus one tool with a long docstring, where one tool has an LLM-written card.
"""

from __future__ import annotations

import json
import logging

import pytest
from langchain.agents import create_agent as create_langchain_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver

from langchain_toolret import ToolRetriever, ToolSelectionMiddleware, create_tool_search_agent
from langchain_toolret.condensed import CondensedTools
from langchain_toolret.ingest import tools_to_docs
from langchain_toolret.testing import ScriptedChatModel, tool_call
from toolret import ToolKnowledgeBase
from toolret.cards import LLMCardWriter, agent_description
from toolret.llm import ScriptedLLM

from .conftest import TOOLS

THREAD = {"configurable": {"thread_id": "condensed"}}


@tool
def lookup_exchange_rate(base: str, quote: str) -> str:
    """Look up today's exchange rate between two currencies. The rate comes from the central
    bank's daily reference fixing, published at 16:00 CET on working days; weekends and holidays
    repeat the last fixing. Rates are mid-market, so a bank or card issuer will charge a spread
    on top. Use ISO 4217 codes such as EUR, USD or JPY; unknown codes raise an error.

    Args:
        base: ISO code of the currency to convert from.
        quote: ISO code of the currency to convert to.
    """
    return f"1 {base} = 162.4 {quote}"


ALL_TOOLS = [*TOOLS, lookup_exchange_rate]
LLM_CARD = {
    "description": "Translate a text into a target language.",
    "usage": "call translate_text with the text and the target language name.",
    "example": {"name": "translate_text", "arguments": {"text": "good morning", "target_language": "fr"}},
}


@pytest.fixture(scope="module")
def kb(embedder) -> ToolKnowledgeBase:
    """ALL_TOOLS indexed once; translate_text's card written by an (scripted) LLM."""
    docs, _ = tools_to_docs(ALL_TOOLS)
    writer = LLMCardWriter(ScriptedLLM([json.dumps(LLM_CARD)]))
    docs = [writer.write([d])[0] if d.name == "translate_text" else d for d in docs]
    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add(docs)
    return kb


def _descriptions(call) -> dict[str, str]:
    return {t["function"]["name"]: t["function"]["description"] for t in call.tools}


def _agent(kb, replies, **options):
    model = ScriptedChatModel(replies=replies)
    middleware = ToolSelectionMiddleware(knowledge_base=kb, **options)
    agent = create_langchain_agent(model, tools=ALL_TOOLS, middleware=[middleware], checkpointer=InMemorySaver())
    return agent, model, middleware


def test_by_default_the_raw_descriptions_are_bound(kb):
    agent, model, middleware = _agent(kb, ["ok"], k=3)
    agent.invoke({"messages": [HumanMessage("what is the exchange rate of EUR to JPY today?")]}, THREAD)
    bound = _descriptions(model.calls[0])
    assert "lookup_exchange_rate" in bound and middleware.condensed is None
    by_name = {t.name: t for t in ALL_TOOLS}
    assert bound == {name: convert_to_openai_tool(by_name[name])["function"]["description"] for name in bound}


def test_condensed_descriptions_are_bound_shorter_and_the_tool_still_runs(kb):
    raw = lookup_exchange_rate.description
    replies = [tool_call("lookup_exchange_rate", base="EUR", quote="JPY"), "162.4 yen per euro."]
    agent, model, middleware = _agent(kb, replies, k=3, condensed_descriptions=True)
    out = agent.invoke({"messages": [HumanMessage("what is the exchange rate of EUR to JPY today?")]}, THREAD)
    bound = _descriptions(model.calls[0])
    assert bound == {name: agent_description(kb.get(name)) for name in bound}
    assert bound["lookup_exchange_rate"] == "Look up today's exchange rate between two currencies."
    assert len(bound["lookup_exchange_rate"]) < len(raw) / 5
    # The parameters are the tool's own schema, unchanged.
    offered = next(t for t in model.calls[0].tools if t["function"]["name"] == "lookup_exchange_rate")
    assert offered["function"]["parameters"] == convert_to_openai_tool(lookup_exchange_rate)["function"]["parameters"]
    # The call ran, and the second model call of the loop got the same (cached) copies.
    assert isinstance(out["messages"][2], ToolMessage) and out["messages"][2].content == "1 EUR = 162.4 JPY"
    assert model.calls[1].tools == model.calls[0].tools
    copy = middleware.condensed.tool(lookup_exchange_rate)
    assert copy is middleware.condensed.tool(lookup_exchange_rate)
    assert copy.invoke({"base": "USD", "quote": "CHF"}) == "1 USD = 162.4 CHF"
    # The user's tools are untouched.
    assert lookup_exchange_rate.description == raw and copy is not lookup_exchange_rate
    assert ALL_TOOLS[-1] is lookup_exchange_rate


def test_an_llm_card_gives_usage_and_an_example_call(kb):
    agent, model, _ = _agent(kb, ["ok"], k=2, condensed_descriptions=True)
    agent.invoke({"messages": [HumanMessage("translate 'good night' into French")]}, THREAD)
    text = _descriptions(model.calls[0])["translate_text"]
    assert text == (
        "Translate a text into a target language.\n"
        "Usage: call translate_text with the text and the target language name.\n"
        'Example: translate_text({"text": "good morning", "target_language": "fr"})'
    )
    assert kb.get("translate_text").expansion.card["source"].startswith("llm:")


def test_always_include_tools_are_condensed_too_but_not_the_search_tool(kb):
    agent, model, _ = _agent(
        kb, ["ok"], k=1, always_include=["get_weather"], search_tool=True, condensed_descriptions=True
    )
    agent.invoke({"messages": [HumanMessage("book a flight from Paris to Rome on June 3")]}, THREAD)
    bound = _descriptions(model.calls[0])
    assert list(bound)[:2] == ["get_weather", "search_tools"]
    assert bound["get_weather"] == "Current weather and temperature forecast for a city."
    assert "Args:" in TOOLS[0].description  # the raw one carries the docstring's Args block
    assert bound["search_tools"].startswith("Search the catalogue of available tools.")


def test_always_include_outside_the_knowledge_base_gets_its_offline_card(kb):
    @tool
    def ask_supervisor(question: str) -> str:
        """Escalate a question to the human supervisor. They answer within the hour on working days.

        Args:
            question: What to ask.
        """
        return "approved"

    model = ScriptedChatModel(replies=["ok"])
    middleware = ToolSelectionMiddleware(
        k=1, knowledge_base=kb, always_include=["ask_supervisor"], condensed_descriptions=True
    )
    agent = create_langchain_agent(model, tools=[*ALL_TOOLS, ask_supervisor], middleware=[middleware])
    agent.invoke({"messages": [HumanMessage("what is the stock price of ACME?")]})
    assert "ask_supervisor" not in kb
    assert _descriptions(model.calls[0])["ask_supervisor"] == "Escalate a question to the human supervisor."


def test_search_tools_lists_found_tools_by_their_condensed_card(kb):
    replies = [tool_call("search_tools", query="translate text into another language"), "Bonjour."]
    agent, _, _ = _agent(kb, replies, k=1, search_tool=True, search_k=1, condensed_descriptions=True)
    out = agent.invoke({"messages": [HumanMessage("what is the weather in Paris?")]}, THREAD)
    found = next(m for m in out["messages"] if isinstance(m, ToolMessage) and m.name == "search_tools")
    assert found.artifact == ["translate_text"]
    assert "- translate_text: Translate a text into a target language." in found.content


def test_a_failing_lookup_keeps_the_raw_tool_and_logs(kb, caplog, monkeypatch):
    condensed = CondensedTools(kb)

    def broken(tool_id):
        raise RuntimeError("store offline")

    monkeypatch.setattr(kb, "get", broken)
    with caplog.at_level(logging.WARNING, logger="toolret"):
        out = condensed.tools([lookup_exchange_rate, {"type": "web_search"}])
    assert out[0] is lookup_exchange_rate and out[1] == {"type": "web_search"}
    assert "store offline" in caplog.text


def test_copies_are_cached_and_rebuilt_when_the_tool_changes(kb):
    condensed = CondensedTools(kb)
    first = condensed.tool(lookup_exchange_rate)
    assert condensed.tool(lookup_exchange_rate) is first and len(condensed) == 1
    replaced = lookup_exchange_rate.model_copy()  # same name, another object
    second = condensed.tool(replaced)
    assert second is not first and second.description == first.description
    single_sentence = TOOLS[-1]  # ask_user: nothing to shorten, the original is handed over
    assert condensed.tool(single_sentence) is single_sentence


async def test_agentic_create_agent_binds_condensed_copies(kb):
    model = ScriptedChatModel(replies=[tool_call("lookup_exchange_rate", base="EUR", quote="USD"), "1.08."])
    agent = create_tool_search_agent(
        model,
        ALL_TOOLS,
        max_tools=4,
        seed_k=2,
        knowledge_base=kb,
        condensed_descriptions=True,
        checkpointer=InMemorySaver(),
    )
    out = await agent.ainvoke({"messages": [HumanMessage("today's exchange rate from EUR to USD?")]}, THREAD)
    bound = _descriptions(model.calls[0])
    assert bound["lookup_exchange_rate"] == "Look up today's exchange rate between two currencies."
    assert bound["search_tools"].startswith("Search the catalogue of available tools.")
    assert all(bound[n] == agent_description(kb.get(n)) for n in bound if n != "search_tools")
    assert "1 EUR = 162.4 USD" in out["messages"][2].content


def test_retriever_get_tools_returns_condensed_copies_when_asked(kb):
    plain = ToolRetriever(knowledge_base=kb, k=1)
    plain.index.ensure(ALL_TOOLS)
    query = "look up today's exchange rate between euro and yen"
    assert plain.get_tools(query) == [lookup_exchange_rate]
    condensed = ToolRetriever(knowledge_base=plain.index, k=1, condensed_descriptions=True)
    [copy] = condensed.get_tools(query)
    assert copy.name == "lookup_exchange_rate" and copy is not lookup_exchange_rate
    assert copy.description == agent_description(kb.get("lookup_exchange_rate"))


def test_model_node_binds_condensed_copies_when_asked(kb):
    from langgraph.graph import START, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    from langchain_toolret import (
        ToolRetrievalState,
        create_model_node,
        create_tool_retrieval_node,
    )

    def graph(model, **options):
        builder = StateGraph(ToolRetrievalState)
        builder.add_node("select_tools", create_tool_retrieval_node(kb, k=2))
        builder.add_node("agent", create_model_node(model, ALL_TOOLS, **options))
        builder.add_node("tools", ToolNode(ALL_TOOLS))
        builder.add_edge(START, "select_tools")
        builder.add_edge("select_tools", "agent")
        builder.add_conditional_edges("agent", tools_condition)
        builder.add_edge("tools", "agent")
        return builder.compile()

    question = {"messages": [HumanMessage("what is the exchange rate of EUR to JPY today?")]}
    raw_model = ScriptedChatModel(replies=["ok"])
    graph(raw_model).invoke(question)
    assert _descriptions(raw_model.calls[0])["lookup_exchange_rate"] == lookup_exchange_rate.description

    model = ScriptedChatModel(replies=[tool_call("lookup_exchange_rate", base="EUR", quote="JPY"), "162.4."])
    out = graph(model, condensed_descriptions=True, cards=kb).invoke(question)
    bound = _descriptions(model.calls[0])
    assert set(bound) == set(out["selected_tools"])
    assert bound == {name: agent_description(kb.get(name)) for name in bound}
    assert bound["lookup_exchange_rate"] == "Look up today's exchange rate between two currencies."
    assert any(isinstance(m, ToolMessage) and m.content == "1 EUR = 162.4 JPY" for m in out["messages"])
    # Without a knowledge base the node falls back to the offline card of each tool.
    offline = ScriptedChatModel(replies=["ok"])
    graph(offline, condensed_descriptions=True).invoke(question)
    assert _descriptions(offline.calls[0])["lookup_exchange_rate"] == bound["lookup_exchange_rate"]
