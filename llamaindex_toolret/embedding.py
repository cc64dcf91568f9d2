"""Embedding models across the two libraries: :func:`embedder_from_llamaindex` (a LlamaIndex
``embed_model`` as toolret's embedder) and :class:`ToolretEmbedding` (toolret's embedder as a
LlamaIndex ``BaseEmbedding``, so stock code runs offline with the same model).

Example:
    >>> from llama_index.core.embeddings import MockEmbedding
    >>> embedder_from_llamaindex(MockEmbedding(embed_dim=4)).embed(["a", "b"]).shape
    (2, 4)
"""

from __future__ import annotations

import asyncio
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding
from pydantic import PrivateAttr

from toolret.index.embedding import Embedder, resolve_embedder
from toolret.index.framework_embedding import embed_queries, framework_embedder

__all__ = ["ToolretEmbedding", "embedder_from_llamaindex"]


def embedder_from_llamaindex(embed_model: BaseEmbedding) -> Embedder:
    """A toolret embedder over a LlamaIndex embedding model: tool fields through its batch text API,
    requests through ``get_query_embedding`` (an asymmetric model sees each on its own side;
    :mod:`toolret.index.framework_embedding`).

    The name recorded in the knowledge base is ``llamaindex:<class>:<model_name>``: reopening
    the knowledge base needs the same ``embed_model`` again.
    """
    if not isinstance(embed_model, BaseEmbedding):
        raise TypeError(f"embed_model must be a LlamaIndex BaseEmbedding, got {type(embed_model).__name__}")
    return framework_embedder(embed_model, name=f"llamaindex:{embed_model.class_name()}:{embed_model.model_name}")


class ToolretEmbedding(BaseEmbedding):
    """A toolret embedder as a LlamaIndex embedding model (default: the packaged toolret-embed-mini, offline).

    ``embedder`` is anything :func:`toolret.index.embedding.resolve_embedder` accepts. Async calls
    run in a worker thread so they do not block the event loop.
    """

    _embedder: Embedder = PrivateAttr()

    def __init__(self, embedder: Any = None, **kwargs: Any) -> None:
        resolved = resolve_embedder(embedder)
        kwargs.setdefault("model_name", resolved.name)
        kwargs.setdefault("embed_batch_size", 64)  # a local model: LlamaIndex's default of 10 is for APIs
        super().__init__(**kwargs)
        self._embedder = resolved

    @classmethod
    def class_name(cls) -> str:
        return "ToolretEmbedding"

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._embedder.embed(texts).tolist()

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._get_text_embeddings([text])[0]

    def _get_query_embedding(self, query: str) -> list[float]:
        return embed_queries(self._embedder, [query])[0].tolist()

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return await asyncio.to_thread(self._get_query_embedding, query)

    async def _aget_text_embedding(self, text: str) -> list[float]:
        return await asyncio.to_thread(self._get_text_embedding, text)
