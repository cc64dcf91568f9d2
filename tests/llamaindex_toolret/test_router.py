"""ToolRetrieverRouterQueryEngine with QueryEngineTools retrieved by toolret.

The query engines are real LlamaIndex vector indexes (embedded with toolret's packaged model
through ToolretEmbedding); only the answer-writing LLM is LlamaIndex's MockLLM, which echoes
its prompt — so the answer shows which engine's documents were used.
"""

from __future__ import annotations

import pytest
from llama_index.core import Document, VectorStoreIndex
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import ToolRetrieverRouterQueryEngine
from llama_index.core.tools import QueryEngineTool

from llamaindex_toolret import ToolObjectIndex, ToolretEmbedding

GUIDES = {
    "paris_guide": (
        "Answers questions about Paris, the capital of France: sights, museums, districts.",
        "The Louvre is the most visited museum in Paris.",
    ),
    "tokyo_guide": (
        "Answers questions about Tokyo, Japan's capital: population, transport, food.",
        "Greater Tokyo has about 37 million inhabitants.",
    ),
    "python_docs": (
        "Answers questions about the Python programming language and its standard library.",
        "The itertools module provides fast iterator building blocks.",
    ),
}


@pytest.fixture(scope="module")
def router_tools(embedder) -> list[QueryEngineTool]:
    embed_model = ToolretEmbedding()
    tools = []
    for name, (description, fact) in GUIDES.items():
        engine = VectorStoreIndex.from_documents([Document(text=fact)], embed_model=embed_model).as_query_engine(
            llm=MockLLM(), similarity_top_k=1
        )
        tools.append(QueryEngineTool.from_defaults(engine, name=name, description=description))
    return tools


def test_router_queries_the_engine_toolret_retrieves(router_tools):
    index = ToolObjectIndex.from_objects(router_tools)
    router = ToolRetrieverRouterQueryEngine(index.as_retriever(similarity_top_k=1), llm=MockLLM())
    response = router.query("How many people live in Tokyo?")
    assert [t.metadata.name for t in response.metadata["retrieved_tools"]] == ["tokyo_guide"]
    assert "37 million" in str(response)
    assert "Louvre" not in str(response)


async def test_router_async_query_with_two_engines(router_tools):
    index = ToolObjectIndex.from_objects(router_tools)
    router = ToolRetrieverRouterQueryEngine(index.as_retriever(similarity_top_k=2, keep_used=0), llm=MockLLM())
    response = await router.aquery("Which museum in Paris gets the most visitors?")
    names = [t.metadata.name for t in response.metadata["retrieved_tools"]]
    assert names[0] == "paris_guide" and len(names) == 2
    assert "Louvre" in str(response)
