"""Framework embedding models as toolret's embedder: a LangChain ``Embeddings`` and a LlamaIndex ``BaseEmbedding``.

A team that already runs an embedding model through a framework passes that object as
``ToolKnowledgeBase(embedder=...)``. Asymmetric models (e5, Cohere, instruction-tuned OpenAI models)
embed a query and a document differently; toolret embeds tool fields with the document method and
requests with the query method, never mixed. Here both framework classes wrap toolret's packaged
model with e5-style ``"query: "`` / ``"passage: "`` prefixes, and count what each side was asked.

Offline. Run: ``python examples/framework_embedders.py``.
"""

from __future__ import annotations

from typing import Any

from langchain_core.embeddings import Embeddings
from llama_index.core.base.embeddings.base import BaseEmbedding
from pydantic import PrivateAttr

from toolret import ToolKnowledgeBase
from toolret.index.embedding import resolve_embedder

TOOLS = [
    {"name": "get_weather", "description": "Current weather for a city."},
    {"name": "send_email", "description": "Send an email message to a recipient."},
    {"name": "convert_currency", "description": "Convert an amount of money into another currency."},
]


class PrefixedEmbeddings(Embeddings):
    """A LangChain embedding model (HuggingFaceEmbeddings-style) with e5's query/passage prefixes."""

    def __init__(self, model: Any) -> None:
        self.model_name = "minilm-e5-style"
        self._model = model
        self.sides = {"documents": 0, "queries": 0}

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.sides["documents"] += len(texts)
        return self._model.embed(["passage: " + t for t in texts]).tolist()

    def embed_query(self, text: str) -> list[float]:
        self.sides["queries"] += 1
        return self._model.embed(["query: " + text])[0].tolist()


class PrefixedLlamaEmbedding(BaseEmbedding):
    """The same model as a LlamaIndex embedding model."""

    _model: Any = PrivateAttr()

    def __init__(self, model: Any) -> None:
        super().__init__(model_name="minilm-e5-style")
        self._model = model

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._model.embed(["passage: " + text])[0].tolist()

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._model.embed(["passage: " + t for t in texts]).tolist()

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._model.embed(["query: " + query])[0].tolist()

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)


def main() -> None:
    model = resolve_embedder(None)  # toolret's packaged model, offline
    langchain_model = PrefixedEmbeddings(model)
    kb = ToolKnowledgeBase(embedder=langchain_model)
    kb.add(TOOLS, progress=False)
    print("recorded embedder:", kb.embedder.name)
    print("is it raining in Paris? ->", kb.search("is it raining in Paris?", k=1).ids)
    print("embedded as documents / queries:", langchain_model.sides)

    kb = ToolKnowledgeBase(embedder=PrefixedLlamaEmbedding(model))
    kb.add(TOOLS, progress=False)
    print("recorded embedder:", kb.embedder.name)
    print("100 dollars in euros? ->", kb.search("how much is 100 dollars in euros?", k=1).ids)


if __name__ == "__main__":
    main()
