"""ToolObjectIndex with a LlamaIndex embed_model (or a LangChain one as embedder=): queries through the query side."""

from __future__ import annotations

from llama_index.core.tools import FunctionTool

from llamaindex_toolret import ToolObjectIndex
from tests.toolret.index.test_framework_embedding import PackagedEmbeddings, PackagedLlamaEmbedding


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}"


def send_email(to: str, body: str) -> str:
    """Send an email message to a recipient."""
    return "sent"


TOOLS = [FunctionTool.from_defaults(fn=get_weather), FunctionTool.from_defaults(fn=send_email)]


def test_an_asymmetric_embed_model_indexes_passages_and_searches_with_queries(embedder):
    index = ToolObjectIndex.from_objects(TOOLS, embed_model=PackagedLlamaEmbedding(embedder))
    kb = index.knowledge_base
    assert kb.embedder.name == "llamaindex:PackagedLlamaEmbedding:packaged-minilm"
    assert [t.metadata.name for t in index.as_retriever(similarity_top_k=1).retrieve("will it rain in Oslo?")] == [
        "get_weather"
    ]
    query = kb.embedder.embed_queries(["weather"])[0]
    assert float(query @ embedder.embed(["query: weather"])[0]) > 0.999


def test_a_langchain_embeddings_is_accepted_as_embedder(embedder):
    lc = PackagedEmbeddings(embedder)
    index = ToolObjectIndex.from_objects(TOOLS, embedder=lc)
    assert index.knowledge_base.embedder.name.startswith("langchain:PackagedEmbeddings")
    assert [t.metadata.name for t in index.as_retriever(similarity_top_k=1).retrieve("mail bob")] == ["send_email"]
