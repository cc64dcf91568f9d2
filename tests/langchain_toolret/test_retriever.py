"""ToolRetriever: LangChain's standard retriever suite, plus what a tool retriever adds."""

from __future__ import annotations

import asyncio
import functools

import pytest
from langchain_core.documents import Document
from langchain_tests.integration_tests import RetrieversIntegrationTests

from langchain_toolret import ToolRetriever
from langchain_toolret.index import ToolIndex
from toolret import QueryError, ToolKnowledgeBase
from toolret.search.auto_k import auto_cut

from .conftest import TOOLS


@functools.cache
def _shared_index() -> ToolIndex:
    return ToolIndex.from_tools(TOOLS)


class TestToolRetrieverStandard(RetrieversIntegrationTests):
    """langchain-tests' own conformance suite (k in the constructor and in invoke, sync and async)."""

    @property
    def retriever_constructor(self) -> type[ToolRetriever]:
        return ToolRetriever

    @property
    def retriever_constructor_params(self) -> dict:
        return {"knowledge_base": _shared_index(), "k": 2}

    @property
    def retriever_query_example(self) -> str:
        return "what's the weather like in Lisbon tomorrow?"


def test_documents_carry_the_tool_id_and_the_evidence(tool_index):
    docs = ToolRetriever(tool_index, k=3).invoke("convert 20 euros into japanese yen")
    assert all(isinstance(d, Document) for d in docs) and len(docs) == 3
    top = docs[0]
    assert top.id == "convert_currency" and top.metadata["name"] == "convert_currency"
    assert set(top.metadata["field_scores"]) >= {"description", "parameters"}
    assert top.metadata["score"] >= docs[1].metadata["score"] >= docs[2].metadata["score"]
    assert isinstance(top.metadata["penalty"], float) and top.metadata["subtask"] is None
    # the embedder's anchor is part of the score and shown: the best tool's description is closer than the pool's
    assert top.metadata["anchor"] > 0
    assert top.page_content.startswith("convert_currency: Convert an amount of money")


def test_k_per_call_overrides_the_constructor_and_is_validated(tool_index):
    retriever = ToolRetriever(tool_index, k=4)
    assert len(retriever.invoke("send an e-mail to Bob")) == 4
    assert len(retriever.invoke("send an e-mail to Bob", k=1)) == 1
    with pytest.raises(ValueError, match="positive integer"):
        retriever.invoke("send an e-mail to Bob", k=0)
    with pytest.raises(ValueError):
        ToolRetriever(tool_index, k=-1)


def test_auto_k_returns_a_precise_set(tool_index):
    docs = ToolRetriever(tool_index, k="auto").invoke("what is the stock price of ACME?")
    assert docs[0].id == "get_stock_price"
    top5 = ToolRetriever(tool_index, k=5).invoke("what is the stock price of ACME?")
    cfg = tool_index.kb.config
    n = auto_cut([d.metadata["score"] for d in top5], margin=cfg.auto_k.margin, ratio=cfg.auto_k.ratio, max_k=5)
    within = [d.id for d in top5][:n]
    assert [d.id for d in docs] == within and len(within) < 5  # the cut, not the fixed k


def test_get_tools_returns_the_live_tool_objects(tool_index, tools):
    retriever = ToolRetriever(tool_index, k=2)
    found = retriever.get_tools("book a plane ticket from Paris to Rome")
    assert found[0] is next(t for t in tools if t.name == "book_flight")
    assert found[0].invoke({"origin": "CDG", "destination": "FCO", "date": "2025-06-01"}).startswith("flight")


async def test_async_retrieval_does_not_block_the_event_loop(tool_index):
    retriever = ToolRetriever(tool_index, k=2)
    ticks = 0

    async def ticker():
        nonlocal ticks
        while True:
            await asyncio.sleep(0.001)
            ticks += 1

    task = asyncio.create_task(ticker())
    results = await asyncio.gather(
        *(retriever.ainvoke(q) for q in ["weather in Oslo", "translate hello to French", "read the file notes.txt"])
    )
    task.cancel()
    assert [r[0].id for r in results] == ["get_weather", "translate_text", "read_file"]
    assert ticks > 0
    assert [t.name for t in await retriever.aget_tools("remind me at 5pm", k=1)] == ["set_reminder"]


def test_from_tools_builds_its_own_knowledge_base(tools):
    retriever = ToolRetriever.from_tools(tools, k=1, config="balanced")
    assert isinstance(retriever.knowledge_base, ToolKnowledgeBase)
    assert retriever.knowledge_base.config.name == "balanced"
    assert retriever.invoke("create a meeting on Monday at 10")[0].id == "create_calendar_event"
    retriever.knowledge_base.close()


def test_over_a_prebuilt_knowledge_base(tool_index):
    retriever = ToolRetriever(knowledge_base=tool_index.kb, k=1)
    assert retriever.invoke("what does the file report.txt contain?")[0].id == "read_file"


def test_bad_queries_raise_query_errors(tool_index):
    retriever = ToolRetriever(tool_index)
    with pytest.raises(QueryError):
        retriever.invoke("   ")


def test_a_request_over_eight_thousand_characters_is_searched_not_refused(tool_index):
    retriever = ToolRetriever(tool_index, k=3)
    request = (
        "Here is the log. "
        + "".join(f"Line {i}: the job ran and nothing happened. " for i in range(200))
        + "Read the file report.txt"
    )
    assert len(request) > 8_000
    # 8,000 characters of revenue text around a one-line ask: the ask's tool is still among the top 3
    assert "read_file" in [doc.id for doc in retriever.invoke(request)]
    assert retriever.search(request).trace[0].stage == "query_text"
    assert retriever.search("東京の天気を教えて " * 1_000).tools  # non-English, long: no error


def test_k_is_checked_by_the_engine_rule(tool_index):
    with pytest.raises(ValueError, match=r"exceeds max_k=200 \(RetrievalConfig.max_k\)"):  # pydantic wraps it
        ToolRetriever(tool_index, k=1_000)


async def test_a_token_budget_fits_the_tools_as_get_tools_hands_them_out(tool_index):
    """Issue 25, item 8: the budget is counted on the definitions that will be bound (condensed here)."""
    from langchain_core.utils.function_calling import convert_to_openai_tool

    from toolret.documents.tokens import token_counter
    from toolret.search.token_budget import definition_text

    query = "is it going to rain in Paris? and convert 100 dollars to euros"
    count = token_counter().count
    full = ToolRetriever(tool_index, k=4, condensed_descriptions=True).get_tools(query)
    costs = [count(definition_text(convert_to_openai_tool(t))) for t in full]
    retriever = ToolRetriever(tool_index, k=4, condensed_descriptions=True, token_budget=costs[0] + costs[1])
    assert [t.name for t in retriever.get_tools(query)] == [t.name for t in full[:2]]
    assert [t.name for t in await retriever.aget_tools(query)] == [t.name for t in full[:2]]
    assert [d.id for d in retriever.invoke(query)] == [t.name for t in full[:2]]
    result = retriever.search(query)
    assert result.tokens == costs[0] + costs[1] and result.trace[-1].stage == "definitions"
    with pytest.raises(ValueError, match="token_budget must be a positive integer"):
        ToolRetriever(tool_index, token_budget=-1)


def test_a_tool_that_cannot_be_bound_is_never_handed_out(unbindable_index):
    retriever = ToolRetriever(unbindable_index, k=3)
    tools = retriever.get_tools("please check a thing for me")
    assert "check_thing" not in [t.name for t in tools] and len(tools) == 2
    assert "check_thing" not in [d.id for d in retriever.invoke("please check a thing for me")]


def test_get_tools_over_a_reopened_knowledge_base_says_to_bind_the_live_tools(tmp_path, embedder):
    from toolret import ToolNotAttachedError

    built = ToolKnowledgeBase(tmp_path / "kb", embedder=embedder)
    built.add(TOOLS)
    built.save()
    kb = ToolKnowledgeBase(tmp_path / "kb", embedder=embedder)
    retriever = ToolRetriever(knowledge_base=kb, k=2)
    assert len(retriever.invoke("is it raining in Paris?")) == 2
    with pytest.raises(ToolNotAttachedError, match=r"kb\.bind\(tools\)"):
        retriever.get_tools("is it raining in Paris?")
    kb.bind(TOOLS)
    tools = retriever.get_tools("is it raining in Paris?")
    assert len(tools) == 2 and tools[0] is next(t for t in TOOLS if t.name == "get_weather")


def test_get_tools_over_a_knowledge_base_built_in_this_process_returns_its_tools(embedder):
    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add(TOOLS)
    tools = ToolRetriever(knowledge_base=kb, k=2).get_tools("is it raining in Paris?")
    assert [t.name for t in tools][0] == "get_weather" and len(tools) == 2
