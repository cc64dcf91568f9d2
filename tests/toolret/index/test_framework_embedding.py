"""LangChain ``Embeddings`` and LlamaIndex ``BaseEmbedding`` objects as the knowledge base's embedder.

The framework classes are the real ones; the model behind them is toolret's packaged one, so the
searches are real. The asymmetric case (e5-style ``"query: "`` / ``"passage: "`` prefixes) checks
that requests go through the query side and tool fields through the document side, never mixed.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings
from llama_index.core.base.embeddings.base import BaseEmbedding
from pydantic import PrivateAttr

from toolret import ModelMismatchError, ToolKnowledgeBase
from toolret.index.framework_embedding import AsymmetricEmbedder, embed_queries, framework_embedder

TOOLS = [
    {"name": "get_weather", "description": "Current weather for a city."},
    {"name": "send_email", "description": "Send an email message to a recipient."},
    {"name": "convert_currency", "description": "Convert an amount of money into another currency."},
]


class PackagedEmbeddings(Embeddings):
    """A HuggingFaceEmbeddings-style LangChain class over toolret's packaged model, with e5-style prefixes."""

    def __init__(self, model: Any, query_prefix: str = "", document_prefix: str = "") -> None:
        self._model = model
        self.model_name = "packaged-minilm"
        self.query_prefix, self.document_prefix = query_prefix, document_prefix
        self.seen: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        texts = [self.document_prefix + t for t in texts]
        self.seen.extend(texts)
        return self._model.embed(texts).tolist()

    def embed_query(self, text: str) -> list[float]:
        self.seen.append(self.query_prefix + text)
        return self._model.embed([self.query_prefix + text])[0].tolist()


class AsyncOnlyEmbeddings(PackagedEmbeddings):
    """An API client that implements only LangChain's async methods."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        raise NotImplementedError

    def embed_query(self, text: str) -> list[float]:
        raise NotImplementedError

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        await asyncio.sleep(0)
        return PackagedEmbeddings.embed_documents(self, texts)

    async def aembed_query(self, text: str) -> list[float]:
        return PackagedEmbeddings.embed_query(self, text)


class PackagedLlamaEmbedding(BaseEmbedding):
    """A LlamaIndex embedding model over toolret's packaged model, with e5-style prefixes."""

    _model: Any = PrivateAttr()

    def __init__(self, model: Any, **kwargs: Any) -> None:
        super().__init__(model_name="packaged-minilm", **kwargs)
        self._model = model

    @classmethod
    def class_name(cls) -> str:
        return "PackagedLlamaEmbedding"

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._model.embed(["passage: " + text])[0].tolist()

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._model.embed(["passage: " + t for t in texts]).tolist()

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._model.embed(["query: " + query])[0].tolist()

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)


def test_a_langchain_embeddings_object_indexes_and_searches(embedder):
    kb = ToolKnowledgeBase(embedder=PackagedEmbeddings(embedder))
    kb.add(TOOLS)
    assert kb.embedder.name == "langchain:PackagedEmbeddings:packaged-minilm"
    assert kb.search("is it raining in Paris?", k=1).ids == ["get_weather"]
    assert kb.search("convert 10 dollars to euros", k=1).ids == ["convert_currency"]


def test_queries_and_documents_stay_on_their_own_side(embedder):
    lc = PackagedEmbeddings(embedder, query_prefix="query: ", document_prefix="passage: ")
    kb = ToolKnowledgeBase(embedder=lc)
    kb.add(TOOLS)
    indexed = list(lc.seen)
    assert indexed and all(t.startswith("passage: ") for t in indexed)
    lc.seen.clear()
    assert kb.search("send a note to bob by email", k=1).ids == ["send_email"]
    assert lc.seen and all(t.startswith("query: ") for t in lc.seen)  # every request text, no document
    kb.record("mail the report to alice", ["send_email"])  # the tool-use memory embeds requests too
    assert lc.seen[-1] == "query: mail the report to alice"


def test_the_query_and_document_vectors_differ_for_an_asymmetric_model(embedder):
    emb = framework_embedder(PackagedEmbeddings(embedder, query_prefix="query: ", document_prefix="passage: "))
    assert isinstance(emb, AsymmetricEmbedder)
    doc, query = emb.embed(["weather in Oslo"])[0], embed_queries(emb, ["weather in Oslo"])[0]
    assert float(doc @ query) < 0.999
    assert emb.queries_embedded == 1 and emb.texts_embedded == 1


def test_an_async_only_langchain_client_is_driven_through_its_async_methods(embedder):
    kb = ToolKnowledgeBase(embedder=AsyncOnlyEmbeddings(embedder))
    kb.add(TOOLS)
    assert kb.search("weather in Rome", k=1).ids == ["get_weather"]
    assert asyncio.run(kb.asearch("email bob", k=1)).ids == ["send_email"]


def test_a_llamaindex_embedding_indexes_with_text_and_searches_with_query_embeddings(embedder):
    model = PackagedLlamaEmbedding(embedder)
    kb = ToolKnowledgeBase(embedder=model)  # callable, yet recognised as a framework model
    kb.add(TOOLS)
    assert kb.embedder.name == "llamaindex:PackagedLlamaEmbedding:packaged-minilm"
    assert kb.search("what's the weather in Berlin", k=1).ids == ["get_weather"]
    doc = kb.embedder.embed(["weather"])[0]
    assert doc == pytest.approx(embedder.embed(["passage: weather"])[0], abs=1e-5)
    assert embed_queries(kb.embedder, ["weather"])[0] == pytest.approx(embedder.embed(["query: weather"])[0], abs=1e-5)


def test_the_knowledge_base_records_the_framework_embedder(embedder, tmp_path):
    kb = ToolKnowledgeBase(tmp_path / "kb", embedder=PackagedEmbeddings(embedder))
    kb.add(TOOLS)
    kb.save()
    reopened = ToolKnowledgeBase.load(tmp_path / "kb", embedder=PackagedEmbeddings(embedder))
    assert reopened.embedder.name == "langchain:PackagedEmbeddings:packaged-minilm"
    with pytest.raises(ModelMismatchError):
        ToolKnowledgeBase.load(tmp_path / "kb", embedder=PackagedLlamaEmbedding(embedder))


def test_the_example_runs_and_keeps_the_sides_apart(capsys):
    import runpy
    from pathlib import Path

    example = Path(__file__).resolve().parents[3] / "examples" / "framework_embedders.py"
    runpy.run_path(str(example), run_name="__main__")
    out = capsys.readouterr().out
    assert "recorded embedder: langchain:PrefixedEmbeddings:minilm-e5-style" in out
    assert "is it raining in Paris? -> ['get_weather']" in out
    assert "embedded as documents / queries: {'documents': 6, 'queries': 1}" in out
    assert "recorded embedder: llamaindex:PrefixedLlamaEmbedding:minilm-e5-style" in out


def test_a_llamaindex_class_without_its_own_class_name_is_recorded_by_its_python_name(embedder):
    class Plain(PackagedLlamaEmbedding):
        @classmethod
        def class_name(cls) -> str:
            return "base_component"  # what LlamaIndex's BaseComponent answers when a class does not say

    assert framework_embedder(Plain(embedder)).name == "llamaindex:Plain:packaged-minilm"


class HashEmbeddings(Embeddings):
    """A LangChain Embeddings with no model attribute (recorded as ``langchain:HashEmbeddings:default``)
    whose dimension is a constructor argument, as many API clients' is (``dimensions=``)."""

    def __init__(self, dim: int = 64, query_dim: int | None = None, ragged: bool = False) -> None:
        self.dim, self.query_dim, self.ragged = dim, query_dim or dim, ragged

    def _vector(self, text: str, dim: int) -> list[float]:
        out = [0.0] * dim
        for word in text.lower().split():
            out[sum(map(ord, word)) % dim] += 1.0
        out[0] += 1e-3
        return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        rows = [self._vector(t, self.dim) for t in texts]
        return [row[: len(row) - i % 2] for i, row in enumerate(rows)] if self.ragged else rows

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text, self.query_dim)


def test_reopening_without_the_framework_embedder_says_to_pass_it_again_never_a_hub(tmp_path):
    import time

    kb = ToolKnowledgeBase(tmp_path / "kb", embedder=HashEmbeddings())
    kb.add(TOOLS)
    kb.save()
    start = time.perf_counter()
    for attempt in range(2):  # from the snapshot file, then through ChromaDB
        if attempt:
            (tmp_path / "kb" / "snapshot.npz").unlink()
        with pytest.raises(ModelMismatchError) as info:
            ToolKnowledgeBase.load(tmp_path / "kb")
        message = str(info.value)
        assert "framework embedder" in message and "HashEmbeddings" in message and "embedder=HashEmbeddings(" in message
        assert "embedder=None" not in message and "Repo id" not in message
    assert time.perf_counter() - start < 5  # nothing was looked up on a hub
    with pytest.raises(ModelMismatchError) as info:  # another model: the advice is to pass the framework one
        ToolKnowledgeBase.load(tmp_path / "kb", embedder="packaged:toolret-embed-mini")
    assert "embedder=HashEmbeddings(" in str(info.value) and "embedder=None" not in str(info.value)
    assert ToolKnowledgeBase.load(tmp_path / "kb", embedder=HashEmbeddings()).search("weather", k=1).ids


def test_an_embedder_of_another_dimension_under_the_same_name_is_an_error_naming_both(tmp_path):
    from toolret import ToolRetError

    kb = ToolKnowledgeBase(tmp_path / "kb", embedder=HashEmbeddings(64))
    kb.add(TOOLS)
    kb.save()
    other = ToolKnowledgeBase.load(tmp_path / "kb", embedder=HashEmbeddings(32))  # same recorded name
    assert other.embedder.name == kb.embedder.name
    with pytest.raises(ToolRetError, match=r"'langchain:HashEmbeddings:default' gives 32-dimensional query.*64-dim"):
        other.search("is it raining in Paris?", k=1)
    with pytest.raises(ToolRetError, match=r"'langchain:HashEmbeddings:default' gives 32-dimensional tool.*64-dim"):
        other.add([{"name": "book_flight", "description": "Book a flight."}])
    assert len(other) == len(TOOLS)


def test_query_and_document_sides_of_different_dimensions_are_an_error_naming_both():
    from toolret import ToolRetError

    kb = ToolKnowledgeBase(embedder=HashEmbeddings(64, query_dim=48))
    kb.add(TOOLS)
    with pytest.raises(ToolRetError, match=r"HashEmbeddings:default' gives 48-dimensional query vectors but 64-dim"):
        kb.search("is it raining in Paris?", k=1)


def test_ragged_vectors_are_an_error_naming_the_model_and_the_lengths():
    from toolret import ToolRetError

    with pytest.raises(
        ToolRetError, match=r"'langchain:HashEmbeddings:default' returned vectors of different lengths \(64 and 63\)"
    ):
        ToolKnowledgeBase(embedder=HashEmbeddings(64, ragged=True)).add(TOOLS)
