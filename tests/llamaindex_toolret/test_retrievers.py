"""ToolObjectRetriever / ToolRetriever: exact-name lookups, used-tool memory, node postprocessors,
and an async path that leaves the event loop free."""

from __future__ import annotations

import asyncio
import threading

import pytest
from llama_index.core.postprocessor import SimilarityPostprocessor
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from pydantic import PrivateAttr

from llamaindex_toolret import ToolObjectIndex
from tests.llamaindex_toolret.conftest import agent_tools
from toolret.index.embedding import CallableEmbedder


def names(tools) -> list[str]:
    return [t.metadata.name for t in tools]


class Reverse(BaseNodePostprocessor):
    """Reverses the node order and counts its calls (sync and async separately)."""

    _calls: list[str] = PrivateAttr(default_factory=list)

    def _postprocess_nodes(self, nodes, query_bundle=None):
        self._calls.append("sync")
        return list(reversed(nodes))

    async def _apostprocess_nodes(self, nodes, query_bundle=None):
        self._calls.append("async")
        return list(reversed(nodes))


def test_exact_tool_name_returns_that_tool_whatever_k(shared_index):
    retriever = shared_index.as_retriever(similarity_top_k=1, keep_used=0)
    for tool_name in ("get_weather", "math_gcd", "hashlib_sha256"):
        assert names(retriever.retrieve(tool_name)) == [tool_name]
    assert names(retriever.retrieve("  book_hotel \n")) == ["book_hotel"]
    # a near miss is a search, not a lookup
    assert names(retriever.retrieve("book hotel")) == ["book_hotel"]
    assert retriever.retriever.last_result.query == "book hotel"


async def test_exact_tool_name_async(shared_index):
    retriever = shared_index.as_retriever(similarity_top_k=1)
    assert names(await retriever.aretrieve("send_email")) == ["send_email"]


def test_used_tools_are_offered_again_until_reset(shared_index):
    retriever = shared_index.as_retriever(similarity_top_k=2, keep_used=2, used_beyond_k=True)
    assert "get_weather" not in names(retriever.retrieve("convert 10 euros to dollars"))
    retriever.retrieve("get_weather")  # the agent called it
    found = names(retriever.retrieve("convert 10 euros to dollars"))
    assert found[:2] == names(retriever.retrieve("convert 10 euros to dollars"))[:2]
    assert found[-1] == "get_weather" and len(found) == 3
    retriever.retrieve("send_email")
    retriever.retrieve("book_hotel")  # memory holds the last two
    assert retriever.used_tools == ["book_hotel", "send_email"]
    assert {"book_hotel", "send_email"} <= set(names(retriever.retrieve("what's the weather in Oslo")))
    retriever.reset()
    assert len(retriever.retrieve("what's the weather in Oslo")) == 2


def test_memory_is_per_retriever_and_off_by_default(shared_index):
    first = shared_index.as_retriever(similarity_top_k=1, keep_used=3, used_beyond_k=True)
    second = shared_index.as_retriever(similarity_top_k=1, keep_used=3, used_beyond_k=True)
    off = shared_index.as_retriever(similarity_top_k=1)
    first.retrieve("translate_text")
    off.retrieve("translate_text")
    assert names(first.retrieve("weather in Oslo")) == ["get_weather", "translate_text"]
    assert names(second.retrieve("weather in Oslo")) == ["get_weather"]
    assert names(off.retrieve("weather in Oslo")) == ["get_weather"]


def test_node_postprocessors_apply_to_search_results(shared_index):
    reverse = Reverse()
    retriever = shared_index.as_retriever(node_postprocessors=[reverse], similarity_top_k=3)
    plain = names(shared_index.as_retriever(similarity_top_k=3).retrieve("weather in Paris"))
    assert names(retriever.retrieve("weather in Paris")) == list(reversed(plain))
    assert reverse._calls == ["sync"]


async def test_async_path_uses_async_postprocessors(shared_index):
    reverse = Reverse()
    retriever = shared_index.as_retriever(node_postprocessors=[reverse], similarity_top_k=3, keep_used=0)
    plain = names(await shared_index.as_retriever(similarity_top_k=3).aretrieve("weather in Paris"))
    assert names(await retriever.aretrieve("weather in Paris")) == list(reversed(plain))
    assert reverse._calls == ["async"]


def test_similarity_cutoff_drops_weak_tools_but_never_a_named_one(shared_index):
    scores = [n.score for n in shared_index.as_node_retriever(similarity_top_k=5).retrieve("weather in Paris")]
    cutoff = (scores[0] + scores[1]) / 2
    strict = shared_index.as_retriever(
        node_postprocessors=[SimilarityPostprocessor(similarity_cutoff=cutoff)], similarity_top_k=5, keep_used=0
    )
    assert names(strict.retrieve("weather in Paris")) == ["get_weather"]
    drop_all = shared_index.as_retriever(node_postprocessors=[SimilarityPostprocessor(similarity_cutoff=10.0)])
    assert drop_all.retrieve("weather in Paris") == []
    assert names(drop_all.retrieve("get_forecast")) == ["get_forecast"]


async def test_aretrieve_does_not_block_the_event_loop(embedder):
    """The query embedding waits for an event that only the event loop can set.

    A blocking ``aretrieve`` would hold the loop while waiting, so the event would be set only
    after the wait timed out; a truly async one lets the loop run and set it at once.
    """
    gate = threading.Event()
    armed = threading.Event()
    waits: list[bool] = []

    def embed(texts):
        if armed.is_set():
            waits.append(gate.wait(timeout=5.0))
        return embedder.embed(texts)

    index = ToolObjectIndex.from_objects(agent_tools(), embedder=CallableEmbedder(embed, name="gated"))
    retriever = index.as_retriever(similarity_top_k=1)
    armed.set()
    task = asyncio.create_task(retriever.aretrieve("weather in Paris"))
    ticks = 0
    while not task.done() and ticks < 200:
        await asyncio.sleep(0.01)
        ticks += 1
        gate.set()
    found = await task
    assert waits == [True], "the loop could not run while aretrieve was searching"
    assert names(found) == ["get_weather"]


def test_bad_keep_used_is_refused(shared_index):
    from toolret import ConfigError

    with pytest.raises(ConfigError, match="keep_used"):
        shared_index.as_retriever(keep_used=-1)


def test_tools_indexed_without_a_live_object_are_skipped_not_fatal(caplog):
    from toolret import ToolDoc

    index = ToolObjectIndex.from_objects(agent_tools())
    index.knowledge_base.add([ToolDoc(name="launch_rocket", description="Launch a rocket into orbit.")])
    retriever = index.as_retriever(similarity_top_k=2)
    assert retriever.retrieve("launch_rocket") == []
    found = names(retriever.retrieve("launch a rocket to orbit"))
    assert "launch_rocket" not in found and len(found) == 1
    assert "launch_rocket" in caplog.text


def test_a_tool_used_for_one_request_does_not_leak_into_an_unrelated_one(shared_index):
    """Maintainers' repro: retrieve("get_weather") then an unrelated request on the same retriever."""
    retriever = shared_index.as_retriever(similarity_top_k=3)
    fresh = names(shared_index.as_retriever(similarity_top_k=3).retrieve("refund payment 77"))
    assert "get_weather" not in fresh
    assert names(retriever.retrieve("get_weather")) == ["get_weather"]
    assert names(retriever.retrieve("refund payment 77")) == fresh


async def test_no_leak_on_the_async_path_either(shared_index):
    retriever = shared_index.as_retriever(similarity_top_k=3)
    fresh = names(await shared_index.as_retriever(similarity_top_k=3).aretrieve("refund payment 77"))
    await retriever.aretrieve("what's the weather in Oslo")
    await retriever.aretrieve("get_weather")
    assert names(await retriever.aretrieve("refund payment 77")) == fresh


def test_the_default_retriever_keeps_no_state_between_queries(shared_index):
    retriever = shared_index.as_retriever(similarity_top_k=3)
    retriever.retrieve("send_email")
    assert retriever.used_tools == []
    request = "convert 10 euros to dollars"
    assert names(retriever.retrieve(request)) == names(shared_index.as_retriever(similarity_top_k=3).retrieve(request))


def test_conversation_memory_is_explicit_and_stays_within_k(shared_index):
    """keep_used=N: this retriever is one conversation; earlier requests' tools stay, inside k."""
    retriever = shared_index.as_retriever(similarity_top_k=2, keep_used=2)
    retriever.retrieve("what's the weather in Paris?")
    retriever.retrieve("get_weather")
    follow_up = names(retriever.retrieve("and there?"))
    assert len(follow_up) == 2 and follow_up[-1] == "get_weather"
    assert follow_up[0] == names(shared_index.as_retriever(similarity_top_k=1).retrieve("and there?"))[0]
    retriever.reset()
    assert "get_weather" not in names(retriever.retrieve("convert 10 euros to dollars"))


def test_used_tools_beyond_k_only_when_asked(shared_index):
    retriever = shared_index.as_retriever(similarity_top_k=1, keep_used=1, used_beyond_k=True)
    retriever.retrieve("translate_text")
    assert names(retriever.retrieve("weather in Oslo")) == ["get_weather", "translate_text"]
    within = shared_index.as_retriever(similarity_top_k=1, keep_used=1)
    within.retrieve("translate_text")
    assert names(within.retrieve("weather in Oslo")) == ["get_weather"]  # the best search hit keeps its slot


def test_the_agents_chat_memory_reaches_the_search_as_its_conversation(embedder):
    """as_retriever(memory=...): earlier turns go to kb.search(conversation=...), where the LLM planner reads them."""
    from llama_index.core.base.llms.types import ChatMessage
    from llama_index.core.memory import ChatMemoryBuffer

    from toolret.llm.testing import ScriptedLLM

    llm = ScriptedLLM([RuntimeError("planner down")] * 20)
    index = ToolObjectIndex.from_objects(agent_tools(), embedder=embedder, llm=llm)  # llm given: full
    memory = ChatMemoryBuffer.from_defaults()
    for role, text in [
        ("user", "What's the weather in Lyon?"),
        ("assistant", "18 degrees in Lyon."),
        ("user", "and book a hotel there"),
    ]:
        memory.put(ChatMessage(role=role, content=text))
    retriever = index.as_retriever(similarity_top_k=2, memory=memory)
    assert "book_hotel" in names(retriever.retrieve("and book a hotel there"))
    planner_prompt = "\n".join(m.content for m in llm.calls[0])
    assert "Earlier conversation" in planner_prompt and "18 degrees in Lyon." in planner_prompt
    assert planner_prompt.count("and book a hotel there") == 1  # the request itself is not repeated as history
    memory.put(ChatMessage(role="assistant", content="", additional_kwargs={"tool_calls": []}))  # a later step
    memory.put(ChatMessage(role="tool", content="no rooms left"))
    before = len(llm.calls)
    assert "book_hotel" in names(asyncio.run(retriever.aretrieve("and book a hotel there")))
    later = [call for call in llm.calls[before:] if any("Earlier conversation" in m.content for m in call)]
    assert later and all("\n".join(m.content for m in call).count("and book a hotel there") == 1 for call in later)
    assert "18 degrees in Lyon." in "\n".join(m.content for m in later[0])
    with pytest.raises(Exception, match="memory"):
        index.as_retriever(memory="not a memory")


async def test_a_token_budget_fits_the_tools_as_the_agent_binds_them(shared_index):
    """Issue 25, item 8: counted on ``metadata.to_openai_tool()`` of what is handed out (condensed here)."""
    from toolret import QueryError
    from toolret.documents.tokens import token_counter
    from toolret.search.token_budget import definition_text

    query = "What's the weather in Paris, and how much is 100 USD in EUR?"
    count = token_counter().count
    full = shared_index.as_retriever(similarity_top_k=4, condensed_descriptions=True).retrieve(query)
    costs = [count(definition_text(t.metadata.to_openai_tool(skip_length_check=True))) for t in full]
    budget = costs[0] + costs[1]
    retriever = shared_index.as_retriever(similarity_top_k=4, condensed_descriptions=True, token_budget=budget)
    assert names(retriever.retrieve(query)) == names(full[:2])
    assert names(await retriever.aretrieve(query)) == names(full[:2])
    assert retriever.retriever.last_result.tokens == budget
    # The node retriever hands out no copies: the tool's own (longer) definition is what is counted.
    raw = shared_index.object_node_mapping.get(full[0].metadata.name)
    cost = count(definition_text(raw.metadata.to_openai_tool(skip_length_check=True)))
    assert cost > costs[0]
    nodes = shared_index.as_node_retriever(similarity_top_k=4, token_budget=cost).retrieve(query)
    assert [n.node.metadata["name"] for n in nodes] == [full[0].metadata.name]
    with pytest.raises(QueryError, match="token_budget must be a positive integer"):
        shared_index.as_retriever(token_budget=0)
