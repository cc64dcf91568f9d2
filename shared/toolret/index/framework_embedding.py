"""Framework embedding models (LangChain ``Embeddings``, LlamaIndex ``BaseEmbedding``) as toolret embedders.

A team that already runs an embedding model through LangChain or LlamaIndex (OpenAI, Cohere, e5,
a local server) passes that object as ``ToolKnowledgeBase(embedder=...)``, or to any adapter. Many
such models are *asymmetric*: a query and a document are embedded differently (e5's ``"query: "``
/ ``"passage: "`` prefixes, Cohere's ``input_type``, OpenAI's instruction-tuned models), and both
frameworks expose the two sides as two methods. :class:`AsymmetricEmbedder` keeps them apart:
tool fields are embedded with the document method (:meth:`~AsymmetricEmbedder.embed`), requests
with the query method (:meth:`~AsymmetricEmbedder.embed_queries`, which the search calls through
:func:`embed_queries`). Mixing them up silently costs recall, which is why the engine never does.

The objects are recognised by their methods, not their classes, so the engine imports neither
framework:

* LangChain: ``embed_documents(texts)`` and ``embed_query(text)`` (``aembed_*`` used when the
  sync form is not implemented);
* LlamaIndex: ``get_text_embedding_batch(texts)`` and ``get_query_embedding(query)``
  (``aget_*`` likewise).

The name recorded in the knowledge base is ``langchain:<class>:<model>`` or
``llamaindex:<class>:<model>``, so reopening it checks that the same model is passed again.

Example:
    >>> class PrefixEmbeddings:  # any LangChain-style object: two methods
    ...     model = "toy"
    ...     def embed_documents(self, texts): return [[1.0, float(t.startswith("doc"))] for t in texts]
    ...     def embed_query(self, text): return [0.0, 1.0]
    >>> emb = framework_embedder(PrefixEmbeddings())
    >>> emb.name, emb.embed(["doc a"]).shape, embed_queries(emb, ["q"]).tolist()
    ('langchain:PrefixEmbeddings:toy', (1, 2), [[0.0, 1.0]])
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import numpy as np

from toolret.errors import ConfigError, ToolRetError
from toolret.index.unit_vectors import check_dim, embed_rows

__all__ = [
    "FRAMEWORK_PREFIXES",
    "AsymmetricEmbedder",
    "embed_queries",
    "framework_embedder",
    "is_framework_embedder",
    "pass_again",
]

#: How the recorded name of a framework embedder starts, and what the framework calls such an object.
FRAMEWORK_PREFIXES = {"langchain:": "LangChain Embeddings", "llamaindex:": "LlamaIndex BaseEmbedding"}

#: Attributes that name a framework model, in the order they are tried.
_MODEL_ATTRS = ("model", "model_name", "model_id", "deployment", "model_path")


def _run(sync: Callable[[], Any], async_: Callable[[], Awaitable[Any]] | None) -> Any:
    """``sync()``, or the async form when the object implements only that (run to completion here).

    A search runs in a worker thread under ``asearch``, where no event loop is running, so the
    coroutine gets its own loop.
    """
    try:
        return sync()
    except NotImplementedError:
        if async_ is None:
            raise
    import asyncio  # here, not at the top: a search with the packaged model never loads asyncio (cold start)

    return asyncio.run(_awaited(async_()))


async def _awaited(value: Awaitable[Any]) -> Any:
    return await value


def _side(obj: Any, method: str, *, batch: bool) -> Callable[[list[str]], Any]:
    """``texts -> vectors`` through ``obj.<method>`` (a batch method, or one text at a time), falling
    back to its async twin (``a<method>``, LangChain's and LlamaIndex's naming) when the sync one is
    not implemented."""
    sync = getattr(obj, method)
    async_ = getattr(obj, "a" + method, None)

    def one(arg: Any) -> Any:
        return _run(lambda: sync(arg), (lambda: async_(arg)) if callable(async_) else None)

    def embed(texts: list[str]) -> Any:
        return one(texts) if batch else [one(t) for t in texts]

    return embed


class AsymmetricEmbedder:
    """An embedder with separate document and query functions (texts -> vectors each).

    ``documents`` embeds tool fields, ``queries`` embeds requests; both return one vector per
    text (lists or arrays), normalised here to unit length. ``name`` is recorded in the knowledge
    base (reopening it with another embedder is an error).
    """

    def __init__(
        self,
        documents: Callable[[list[str]], Any],
        queries: Callable[[list[str]], Any],
        *,
        name: str,
    ) -> None:
        if not name:
            raise ConfigError("an asymmetric embedder needs a name, so a knowledge base can check it on reopen")
        self._documents = documents
        self._queries = queries
        self.name = name
        self.texts_embedded = 0
        self.queries_embedded = 0
        self.calls = 0
        #: The dimension each side returned last (0: not called yet), so sides that differ are told apart.
        self._dims = {"document": 0, "query": 0}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Document vectors (what the knowledge base stores for each tool field)."""
        texts = list(texts)
        self.calls += 1
        self.texts_embedded += len(texts)
        return self._checked(embed_rows(self._documents, texts, self.name), "document")

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Query vectors (what a search compares with the stored ones)."""
        texts = list(texts)
        self.calls += 1
        self.queries_embedded += len(texts)
        return self._checked(embed_rows(self._queries, texts, self.name), "query")

    def _checked(self, vectors: np.ndarray, side: str) -> np.ndarray:
        """``vectors``, after checking that both sides of the model give one dimension (a query
        vector of another size than the tools' could never be compared with them)."""
        if not vectors.shape[0]:
            return vectors
        self._dims[side] = int(vectors.shape[1])
        other = "query" if side == "document" else "document"
        if self._dims[other] and self._dims[other] != self._dims[side]:
            raise ToolRetError(
                f"embedder {self.name!r} gives {self._dims['query']}-dimensional query vectors but "
                f"{self._dims['document']}-dimensional document vectors; its query and document sides must "
                "be the same model (the same dimension) for a request to be compared with the tools"
            )
        return vectors

    def __repr__(self) -> str:
        return f"AsymmetricEmbedder({self.name!r})"


def embed_queries(embedder: Any, texts: Sequence[str], dim: int = 0) -> np.ndarray:
    """Embed requests with the embedder's query side when it has one (else its ``embed``).

    Every place the engine embeds a request (search, reflection's re-query, the tool-use memory)
    goes through here, so an asymmetric model sees each text on the side it was trained for.
    ``dim``, the dimension of the tool vectors the requests are compared with (0: unknown), makes
    vectors of another size an error naming the model and both sizes
    (:func:`~toolret.index.unit_vectors.check_dim`), not numpy's matmul error.
    """
    method = getattr(embedder, "embed_queries", None)
    vectors = method(texts) if callable(method) else embedder.embed(texts)
    return check_dim(np.asarray(vectors), dim, str(getattr(embedder, "name", type(embedder).__name__)))


def _model_label(obj: Any) -> str:
    for attr in _MODEL_ATTRS:
        value = getattr(obj, attr, None)
        if isinstance(value, str) and value:
            return value
    return "default"


def _is_langchain(obj: Any) -> bool:
    return callable(getattr(obj, "embed_documents", None)) and callable(getattr(obj, "embed_query", None))


def _is_llamaindex(obj: Any) -> bool:
    return callable(getattr(obj, "get_text_embedding_batch", None)) and callable(
        getattr(obj, "get_query_embedding", None)
    )


def is_framework_embedder(obj: Any) -> bool:
    """Is ``obj`` a LangChain ``Embeddings`` or a LlamaIndex ``BaseEmbedding`` (by their methods)?"""
    return _is_langchain(obj) or _is_llamaindex(obj)


def pass_again(recorded: str) -> str | None:
    """What to tell a user who reopens a knowledge base built with ``recorded`` without that model,
    when no name can load it: a framework object's or a function's name is a label, not a model
    to look up on a hub (None for names that load by themselves: packaged, paths, hub names).

    >>> pass_again("langchain:HashEmbeddings:default")
    "it was built with a framework embedder, the LangChain Embeddings HashEmbeddings (recorded as 'langchain:HashEmbeddings:default'); pass that object again: embedder=HashEmbeddings(...)"
    """
    for prefix, kind in FRAMEWORK_PREFIXES.items():
        if recorded.startswith(prefix):
            cls = recorded[len(prefix) :].split(":", 1)[0] or "?"
            return (
                f"it was built with a framework embedder, the {kind} {cls} (recorded as {recorded!r}); "
                f"pass that object again: embedder={cls}(...)"
            )
    if recorded.startswith("callable:"):
        return f"it was built with the custom embedder {recorded!r} (a function); pass it again as embedder="
    return None


def framework_embedder(obj: Any, *, name: str | None = None) -> AsymmetricEmbedder:
    """A toolret embedder over a LangChain ``Embeddings`` or a LlamaIndex ``BaseEmbedding``.

    ``name`` overrides the recorded ``langchain:<class>:<model>`` / ``llamaindex:<class>:<model>``
    (useful when the class carries no model attribute and two configurations must be told apart).
    """
    cls = type(obj).__name__
    if _is_langchain(obj):
        docs_fn, query_fn = "embed_documents", "embed_query"
        label = f"langchain:{cls}"
    elif _is_llamaindex(obj):
        docs_fn, query_fn = "get_text_embedding_batch", "get_query_embedding"
        own = getattr(obj, "class_name", None)  # LlamaIndex's own name for the class, when it gives one
        own_name = own() if callable(own) else ""
        label = f"llamaindex:{own_name if own_name and own_name != 'base_component' else cls}"
    else:
        docs_fn = ""
    if docs_fn:
        return AsymmetricEmbedder(
            _side(obj, docs_fn, batch=True),
            _side(obj, query_fn, batch=False),
            name=name or f"{label}:{_model_label(obj)}",
        )
    raise ConfigError(
        f"{cls} is not a framework embedding model: a LangChain Embeddings has embed_documents and embed_query, "
        "a LlamaIndex BaseEmbedding get_text_embedding_batch and get_query_embedding"
    )
