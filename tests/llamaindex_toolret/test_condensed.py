"""Condensed descriptions (opt-in): ``as_retriever(condensed_descriptions=True)`` hands the agent copies.

A real FunctionAgent (the model is LlamaIndex's MockFunctionCallingLLM driven by a script) over a
small knowledge base where one tool has an LLM-written card; the copies must still run.
"""

from __future__ import annotations

import json
import logging

import pytest
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, ToolCallBlock
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.query_engine import CustomQueryEngine
from llama_index.core.tools import FunctionTool, QueryEngineTool, ToolMetadata
from llama_index.core.tools.types import BaseTool, ToolOutput

from llamaindex_toolret import ToolNodeMapping, ToolObjectIndex, tool_to_doc
from llamaindex_toolret.condensed import CondensedTools
from toolret import ConfigError, ToolKnowledgeBase
from toolret.cards import LLMCardWriter, agent_description
from toolret.llm import ScriptedLLM

from .conftest import agent_tools
from .test_agents import ok, run_agent


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


class EchoEngine(CustomQueryEngine):
    """A query engine without an LLM: answers with the question it got."""

    def custom_query(self, query_str: str) -> str:
        return f"the handbook says: {query_str}"


LLM_CARD = {
    "description": "Translate a text into a target language.",
    "usage": "call translate_text with the text and the target language name.",
    "example": {"name": "translate_text", "arguments": {"text": "good morning", "language": "French"}},
}


@pytest.fixture(scope="module")
def tools() -> list[BaseTool]:
    handbook = QueryEngineTool.from_defaults(
        EchoEngine(),
        name="employee_handbook",
        description="Answers questions about the employee handbook: leave, expenses and travel policy. "
        "It quotes the handbook's 2024 edition, approved by the works council in March. "
        "Ask one question at a time, in plain language.",
    )
    return [*agent_tools(), FunctionTool.from_defaults(fn=lookup_exchange_rate), handbook]


@pytest.fixture(scope="module")
def index(tools, embedder) -> ToolObjectIndex:
    """The tools indexed once; translate_text's card written by a (scripted) LLM."""
    docs = [tool_to_doc(t) for t in tools]
    writer = LLMCardWriter(ScriptedLLM([json.dumps(LLM_CARD)]))
    docs = [writer.write([d])[0] if d.name == "translate_text" else d for d in docs]
    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add(docs)
    return ToolObjectIndex(kb, ToolNodeMapping(tools))


def recording_model(plan: list[tuple[str, dict]], offered: list[dict[str, str]]) -> MockFunctionCallingLLM:
    """Calls the planned tools in order, recording each call's tool definitions (name → description)."""

    def respond(messages, **kwargs) -> ChatMessage:
        definitions = [t.metadata.to_openai_tool()["function"] for t in kwargs.get("tools") or []]
        offered.append({d["name"]: d["description"] for d in definitions})
        done = sum(1 for m in messages if m.role == "tool")
        if done < len(plan):
            name, args = plan[done]
            return ChatMessage(
                role="assistant", blocks=[ToolCallBlock(tool_call_id=f"c{done}", tool_name=name, tool_kwargs=args)]
            )
        return ChatMessage(role="assistant", content="done")

    return MockFunctionCallingLLM(response_generator=respond)


def _by_name(tools: list[BaseTool]) -> dict[str, BaseTool]:
    return {t.metadata.name: t for t in tools}


async def test_by_default_the_agent_gets_the_raw_descriptions(index, tools):
    offered: list[dict[str, str]] = []
    agent = FunctionAgent(tool_retriever=index.as_retriever(similarity_top_k=2), llm=recording_model([], offered))
    await run_agent(agent, "what is the exchange rate of EUR to JPY today?")
    originals = _by_name(tools)
    assert "lookup_exchange_rate" in offered[0]
    assert offered[0] == {n: originals[n].metadata.description for n in offered[0]}
    retrieved = index.as_retriever(similarity_top_k=2).retrieve("exchange rate of EUR to JPY")
    assert all(t is originals[t.metadata.name] for t in retrieved)


async def test_condensed_descriptions_reach_the_agent_and_the_tool_still_runs(index, tools):
    original = _by_name(tools)["lookup_exchange_rate"]
    raw = original.metadata.description
    offered: list[dict[str, str]] = []
    model = recording_model([("lookup_exchange_rate", {"base": "EUR", "quote": "JPY"})], offered)
    retriever = index.as_retriever(similarity_top_k=2, condensed_descriptions=True)
    agent = FunctionAgent(tool_retriever=retriever, llm=model)
    _, calls = await run_agent(agent, "what is the exchange rate of EUR to JPY today?")
    assert ok(calls) == ["lookup_exchange_rate"] and calls[0].tool_output.content == "1 EUR = 162.4 JPY"
    first = offered[0]
    assert first == {n: agent_description(index.knowledge_base.get(n)) for n in first}
    assert first["lookup_exchange_rate"] == "Look up today's exchange rate between two currencies."
    assert len(first["lookup_exchange_rate"]) < len(raw) / 5
    # The copy: new metadata, same function and schema; the original is untouched.
    copy = retriever.retrieve("lookup_exchange_rate")[0]
    assert copy is retriever.retrieve("lookup_exchange_rate")[0]  # cached
    assert copy is not original and copy.metadata is not original.metadata
    assert copy.metadata.fn_schema is original.metadata.fn_schema and copy.fn is original.fn
    assert copy.metadata.to_openai_tool()["function"]["description"] == first["lookup_exchange_rate"]
    assert original.metadata.description == raw and raw.startswith("lookup_exchange_rate(base") and "Args:" in raw
    assert copy.call(base="USD", quote="CHF").content == "1 USD = 162.4 CHF"


def test_an_llm_card_gives_usage_and_an_example_call(index):
    retriever = index.as_retriever(similarity_top_k=1, condensed_descriptions=True)
    [tool] = retriever.retrieve("translate 'good morning' into French")
    assert tool.metadata.description == (
        "Translate a text into a target language.\n"
        "Usage: call translate_text with the text and the target language name.\n"
        'Example: translate_text({"text": "good morning", "language": "French"})'
    )
    assert tool.call(text="hi", language="French").content == "[French] hi"


async def test_a_query_engine_tool_copy_still_queries(index, tools):
    retriever = index.as_retriever(similarity_top_k=1, condensed_descriptions=True)
    [tool] = await retriever.aretrieve("what does the employee handbook say about travel expenses?")
    assert isinstance(tool, QueryEngineTool) and tool.metadata.name == "employee_handbook"
    assert tool.metadata.description == (
        "Answers questions about the employee handbook: leave, expenses and travel policy."
    )
    assert tool.query_engine is _by_name(tools)["employee_handbook"].query_engine
    out = tool.call(input="travel expenses")
    assert out.content == "the handbook says: travel expenses"


def test_a_tool_that_cannot_be_copied_is_kept_raw(index, caplog):
    class Opaque(BaseTool):
        @property
        def metadata(self) -> ToolMetadata:  # not stored in _metadata
            return ToolMetadata(name="opaque", description="Does a thing. In great detail, at length.")

        def __call__(self, input: str) -> ToolOutput:
            return ToolOutput(content=input, tool_name="opaque", raw_input={}, raw_output=input)

    opaque = Opaque()
    with caplog.at_level(logging.WARNING, logger="toolret"):
        assert CondensedTools(index.knowledge_base).tool(opaque) is opaque
    assert "opaque" in caplog.text and "_metadata" in caplog.text


def test_the_option_belongs_to_the_object_retriever_only(index):
    with pytest.raises(ConfigError, match="condensed_descriptions"):
        index.as_node_retriever(condensed_descriptions=True)
