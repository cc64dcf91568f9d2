"""The LangChain adapters take a LangChain ``Embeddings`` as their embedder (queries and documents apart)."""

from __future__ import annotations

from langchain.agents import create_agent
from langchain_core.messages import HumanMessage

from langchain_toolret import ToolIndex, ToolSelectionMiddleware
from langchain_toolret.testing import ScriptedChatModel
from tests.toolret.index.test_framework_embedding import PackagedEmbeddings


def test_the_index_and_the_middleware_embed_with_a_langchain_embeddings(tools, embedder):
    lc = PackagedEmbeddings(embedder, query_prefix="query: ", document_prefix="passage: ")
    index = ToolIndex.from_tools(tools, embedder=lc)
    assert index.kb.embedder.name == "langchain:PackagedEmbeddings:packaged-minilm"
    assert [t.name for t in index.live(index.search("is it going to rain in Paris?", k=1))] == ["get_weather"]

    lc.seen.clear()
    model = ScriptedChatModel(replies=["Sunny."])
    middleware = ToolSelectionMiddleware(k=2, embedder=lc)
    create_agent(model, tools=tools, middleware=[middleware]).invoke({"messages": [HumanMessage("weather in Rome?")]})
    assert model.calls[0].tool_names[0] == "get_weather"
    assert any(t == "query: weather in Rome?" for t in lc.seen)  # the request went through the query side
    assert all(t.startswith(("query: ", "passage: ")) for t in lc.seen)
