"""ToolObjectIndex: ObjectIndex's construction and retriever surface over a real knowledge base."""

from __future__ import annotations

import pytest
from llama_index.core import VectorStoreIndex
from llama_index.core.objects import ObjectRetriever, SimpleToolNodeMapping
from llama_index.core.tools import FunctionTool

from llamaindex_toolret import (
    ToolObjectIndex,
    ToolObjectRetriever,
    ToolretEmbedding,
    ToolRetriever,
)
from tests.llamaindex_toolret.conftest import agent_tools, get_weather
from toolret import ConfigError, ToolKnowledgeBase, ToolNotFoundError
from toolret.search.auto_k import auto_cut

REQUESTS = {
    "what's the weather like in Lisbon right now?": "get_weather",
    "how many euros is 250 dollars": "convert_currency",
    "email the report to anna@example.com": "send_email",
    "are there flights from Oslo to Rome next Friday?": "search_flights",
    "what is Apple's share price": "get_stock_price",
    "say 'good morning' in Japanese": "translate_text",
    "greatest common divisor of 84 and 36": "math_gcd",
    "median of 3, 9, 4 and 7": "statistics_median",
}


def names(tools) -> list[str]:
    return [t.metadata.name for t in tools]


def test_retriever_is_an_object_retriever_returning_live_tools(shared_index, registry):
    retriever = shared_index.as_retriever(similarity_top_k=5)
    assert isinstance(retriever, ObjectRetriever) and isinstance(retriever, ToolObjectRetriever)
    by_name = {t.metadata.name: t for t in registry}
    for request, expected in REQUESTS.items():
        found = retriever.retrieve(request)
        assert len(found) == 5
        assert expected in names(found), (request, names(found))
        assert all(t is by_name[t.metadata.name] for t in found)  # the objects indexed, not copies


def test_similarity_top_k_and_k_auto(shared_index):
    assert len(shared_index.as_retriever(similarity_top_k=2).retrieve("weather in Paris")) == 2
    assert len(shared_index.as_retriever(k=7).retrieve("weather in Paris")) == 7
    auto = shared_index.as_retriever(similarity_top_k="auto").retrieve("convert 100 dollars to yen")
    assert "convert_currency" in names(auto)
    top5 = shared_index.knowledge_base.search("convert 100 dollars to yen", k=5).tools
    cfg = shared_index.knowledge_base.config
    within = [t.name for t in top5][
        : auto_cut([t.score for t in top5], margin=cfg.auto_k.margin, ratio=cfg.auto_k.ratio, max_k=5)
    ]
    assert names(auto) == within and len(within) < 5  # the cut, not the fixed k


def test_config_preset_is_applied_per_retriever(shared_index):
    retriever = shared_index.as_retriever(similarity_top_k=3, config="balanced")
    found = retriever.retrieve("check the weather in Rome and book a hotel there for 2 nights")
    assert {"get_weather", "book_hotel"} <= set(names(found))
    trace = retriever.retriever.last_result.trace
    assert any(step.stage == "plan" for step in trace)


def test_unsupported_retriever_options_are_errors(shared_index):
    with pytest.raises(ConfigError, match="filters"):
        shared_index.as_retriever(filters={"a": 1})
    with pytest.raises(ConfigError, match="similarity_top_k"):
        shared_index.as_retriever(similarity_top_k=0)
    with pytest.raises(ConfigError, match="not both"):
        shared_index.as_retriever(similarity_top_k=2, k=3)


def test_stock_construction_pattern_is_accepted():
    tools = agent_tools()
    mapping = SimpleToolNodeMapping.from_objects(tools)
    index = ToolObjectIndex.from_objects(tools, mapping, VectorStoreIndex)  # the LlamaIndex docs' call
    assert names(index.as_retriever(similarity_top_k=1).retrieve("stock price of NVDA")) == ["get_stock_price"]


def test_custom_node_functions_are_refused():
    with pytest.raises(ConfigError, match="from_node_fn"):
        ToolObjectIndex.from_objects(agent_tools(), from_node_fn=lambda n: n, to_node_fn=lambda o: o)


def test_duplicate_tool_names_are_an_error():
    with pytest.raises(Exception, match="get_weather"):
        ToolObjectIndex.from_objects([get_weather, FunctionTool.from_defaults(fn=get_weather)])


def test_insert_object_makes_a_new_tool_retrievable():
    index = ToolObjectIndex.from_objects(agent_tools())

    def order_pizza(size: str, toppings: list[str]) -> str:
        """Order a pizza for delivery."""
        return "ordered"

    retriever = index.as_retriever(similarity_top_k=1)
    assert names(retriever.retrieve("order a large pepperoni pizza")) != ["order_pizza"]
    index.insert_object(order_pizza)
    assert names(retriever.retrieve("order a large pepperoni pizza")) == ["order_pizza"]
    assert len(index) == len(agent_tools()) + 1


def test_from_objects_and_index_attaches_tools_to_an_existing_knowledge_base():
    kb = ToolObjectIndex.from_objects(agent_tools()).knowledge_base
    embedded = kb.embedder.texts_embedded
    index = ToolObjectIndex.from_objects_and_index(agent_tools(), kb)
    assert kb.embedder.texts_embedded == embedded  # nothing re-embedded
    assert names(index.as_retriever(similarity_top_k=1).retrieve("translate hello to Spanish")) == ["translate_text"]
    with pytest.raises(ToolNotFoundError, match="send_email"):
        ToolObjectIndex.from_objects_and_index([t for t in agent_tools() if t.metadata.name != "send_email"], kb)


def test_embed_model_from_llamaindex_is_used_for_indexing_and_queries(embedder):
    index = ToolObjectIndex.from_objects(agent_tools(), embed_model=ToolretEmbedding())
    assert index.knowledge_base.embedder.name.startswith("llamaindex:ToolretEmbedding")
    assert names(index.as_retriever(similarity_top_k=1).retrieve("weather in Madrid")) == ["get_weather"]
    with pytest.raises(ConfigError, match="not both"):
        ToolObjectIndex.from_objects(agent_tools(), embed_model=ToolretEmbedding(), embedder=embedder)


def test_node_retriever_returns_scored_nodes_with_evidence(shared_index):
    retriever = shared_index.as_node_retriever(similarity_top_k=3)
    assert isinstance(retriever, ToolRetriever)
    nodes = retriever.retrieve("convert 20 pounds to dollars")
    assert len(nodes) == 3
    top = nodes[0]
    assert top.node.metadata["name"] == "convert_currency"
    assert top.node.metadata["match"] == "search"
    assert set(top.node.metadata["field_scores"]) >= {"description"}
    assert top.score == pytest.approx(retriever.last_result.tools[0].score)
    assert [n.score for n in nodes] == sorted((n.score for n in nodes), reverse=True)
    assert "convert_currency" in top.node.get_content()


def test_node_retriever_composes_with_a_stock_object_retriever(shared_index, registry):
    stock = ObjectRetriever(
        retriever=shared_index.as_node_retriever(similarity_top_k=2),
        object_node_mapping=SimpleToolNodeMapping.from_objects(registry),
    )
    assert "book_hotel" in names(stock.retrieve("reserve a hotel room in Vienna"))
    assert names(stock.retrieve("get_stock_price")) == ["get_stock_price"]  # exact name is a lookup


def test_index_built_from_a_shared_knowledge_base_object_is_the_same_store():
    kb = ToolKnowledgeBase()
    index = ToolObjectIndex.from_objects_and_index(agent_tools(), kb)
    assert index.index is kb and len(kb) == len(agent_tools())


def test_k_is_checked_by_the_engines_validate_k(shared_index):
    """One k rule for the engine and every adapter: max_k applies to similarity_top_k too."""
    from toolret import RetrievalConfig

    limit = RetrievalConfig().max_k
    with pytest.raises(ConfigError, match="max_k"):
        shared_index.as_retriever(similarity_top_k=limit + 1)
    with pytest.raises(ConfigError, match="similarity_top_k"):
        shared_index.as_node_retriever(similarity_top_k=True)
    assert shared_index.as_retriever(similarity_top_k="auto").retriever.k == "auto"


def test_the_mapping_is_a_view_of_the_knowledge_bases_live_tools(embedder):
    """One live map for the engine and the adapter: kb.tool(name) is the agent's tool, removals reach both."""
    tools = agent_tools()
    index = ToolObjectIndex.from_objects(tools, embedder=embedder)
    kb, mapping = index.knowledge_base, index.object_node_mapping
    assert mapping.live is kb.live_tools
    assert kb.tool("get_weather") is mapping.get("get_weather") is tools[0]
    extra = FunctionTool.from_defaults(
        fn=lambda city: city, name="get_air_quality", description="Air quality index of a city."
    )
    index.insert_object(extra)
    assert kb.tool("get_air_quality") is extra
    kb.remove(["get_weather"])
    assert mapping.get("get_weather") is None and "get_weather" not in mapping
    assert "get_weather" not in [t.metadata.name for t in index.as_retriever().retrieve("get_weather")]


def test_a_mapping_built_apart_is_bound_to_the_knowledge_base(embedder):
    from llamaindex_toolret import ToolNodeMapping

    tools = agent_tools()
    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add(tools)
    mapping = ToolNodeMapping(tools)
    index = ToolObjectIndex(kb, mapping)
    assert mapping.live is kb.live_tools and kb.tool("send_email") is tools[3]
    assert index.as_retriever().retrieve("send_email")[0] is tools[3]
