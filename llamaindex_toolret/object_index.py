"""``ToolObjectIndex``: LlamaIndex's ``ObjectIndex`` surface over a toolret knowledge base.

One changed import (``from llamaindex_toolret import ToolObjectIndex as ObjectIndex``); the
differences from the stock index, each on purpose, are in docs/llamaindex.md. Attaching live tools
to a reopened index and persisting it elsewhere are the engine's
(:func:`toolret.agents.agent_tools.attach`, :func:`~toolret.agents.agent_tools.persist_to`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.objects.base_node_mapping import BaseObjectNodeMapping
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.tools import BaseTool

from llamaindex_toolret.embedding import embedder_from_llamaindex
from llamaindex_toolret.ingest import as_tool, tolerant_doc
from llamaindex_toolret.mapping import MANIFEST_FILE, ToolNodeMapping, read_manifest
from llamaindex_toolret.retrievers import ToolObjectRetriever, ToolRetriever
from toolret import RetrievalConfig, ToolKnowledgeBase
from toolret.agents.adapter_options import checked_options
from toolret.agents.agent_tools import attach, persist_to, warm_up
from toolret.errors import ConfigError, ToolNotFoundError

__all__ = ["ToolObjectIndex"]

logger = logging.getLogger("toolret")

DEFAULT_PERSIST_DIR = "./storage"
#: ``as_retriever``/``as_node_retriever`` options besides ``node_postprocessors``.
_RETRIEVER_OPTIONS = frozenset(
    {"similarity_top_k", "k", "config", "callback_manager", "verbose", "memory", "token_budget", "where"}
)
#: Options of ``as_retriever`` only (the object retriever's).
_OBJECT_OPTIONS = frozenset({"keep_used", "used_beyond_k", "condensed_descriptions"})


def _resolve_embedder(embedder: Any, embed_model: Any) -> Any:
    if embed_model is None:
        return embedder
    if embedder is not None:
        raise ConfigError("pass either embedder= (toolret) or embed_model= (LlamaIndex), not both")
    if not isinstance(embed_model, BaseEmbedding):
        raise ConfigError(f"embed_model must be a LlamaIndex BaseEmbedding, got {type(embed_model).__name__}")
    return embedder_from_llamaindex(embed_model)


def _refuse_custom_nodes(from_node_fn: Any, to_node_fn: Any, object_mapping: Any) -> None:
    # Stock ObjectIndex uses the two functions only together and only without a mapping
    # (so the classic ``from_objects(tools, mapping, VectorStoreIndex)`` call passes).
    if object_mapping is None and from_node_fn is not None and to_node_fn is not None:
        raise ConfigError(
            "ToolObjectIndex indexes tools by their metadata; from_node_fn/to_node_fn are for arbitrary "
            "objects; use llama_index.core.objects.ObjectIndex for those"
        )
    if object_mapping is not None and not isinstance(object_mapping, BaseObjectNodeMapping):
        raise ConfigError(
            f"object_mapping must be a LlamaIndex object node mapping, got {type(object_mapping).__name__}"
        )


def _tools_of_mapping(mapping: Any) -> list[Any]:
    """The tools held by a ToolNodeMapping or a stock Simple(Query)ToolNodeMapping."""
    if isinstance(mapping, ToolNodeMapping):
        return list(mapping.obj_node_mapping.values())
    tools = getattr(mapping, "_tools", None)
    if isinstance(tools, dict):
        return list(tools.values())
    raise ConfigError(f"cannot read tools from a {type(mapping).__name__}; pass objects=[...] (the live tools) instead")


class ToolObjectIndex:
    """Tools indexed by toolret, with ``ObjectIndex``'s methods.

    ``index`` / :attr:`knowledge_base` is the :class:`toolret.ToolKnowledgeBase`;
    :attr:`object_node_mapping` maps tool names to the live tools.
    """

    def __init__(self, index: ToolKnowledgeBase, object_node_mapping: ToolNodeMapping) -> None:
        if not isinstance(index, ToolKnowledgeBase):
            raise ConfigError(f"index must be a toolret ToolKnowledgeBase, got {type(index).__name__}")
        if not isinstance(object_node_mapping, ToolNodeMapping):
            raise ConfigError(
                f"object_node_mapping must be a ToolNodeMapping, got {type(object_node_mapping).__name__}"
            )
        self._kb = index
        object_node_mapping.bind(index.live_tools)  # one live map: kb.tool(name) is the agent's tool
        self._mapping = object_node_mapping

    @property
    def index(self) -> ToolKnowledgeBase:
        return self._kb

    @property
    def knowledge_base(self) -> ToolKnowledgeBase:
        return self._kb

    @property
    def object_node_mapping(self) -> ToolNodeMapping:
        return self._mapping

    def __len__(self) -> int:
        return len(self._kb)

    def __repr__(self) -> str:
        return f"ToolObjectIndex({len(self._mapping)} tools, {self._kb!r})"

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_objects(
        cls,
        objects: Sequence[Any],
        object_mapping: BaseObjectNodeMapping | None = None,
        from_node_fn: Any = None,
        to_node_fn: Any = None,
        index_cls: Any = None,
        *,
        path: str | os.PathLike[str] | None = None,
        embedder: Any = None,
        embed_model: BaseEmbedding | None = None,
        config: RetrievalConfig | str | None = None,
        llm: Any = None,
        show_progress: bool = False,
        **index_kwargs: Any,
    ) -> ToolObjectIndex:
        """Index ``objects`` (LlamaIndex tools or callables) in a new knowledge base (persistent with ``path``).

        ``llm`` is a toolret LLM (:class:`~llamaindex_toolret.LlamaIndexLLM` wraps a LlamaIndex one; with it the
        default preset is ``full``); ``object_mapping`` and ``index_cls`` are accepted and ignored.
        """
        _refuse_custom_nodes(from_node_fn, to_node_fn, object_mapping)
        if index_kwargs:
            logger.warning("ToolObjectIndex ignores VectorStoreIndex options: %s", ", ".join(sorted(index_kwargs)))
        kb = ToolKnowledgeBase(
            path,
            embedder=_resolve_embedder(embedder, embed_model),
            config=RetrievalConfig.for_llm(config, llm),
            llm=llm,
        )
        # sync: a knowledge base already at ``path`` ends up holding exactly ``objects``,
        # and only tools new or changed since it was built are embedded.
        return cls._attach(kb, objects, sync=True, progress=show_progress)

    @classmethod
    def from_objects_and_index(
        cls,
        objects: Sequence[Any],
        index: ToolKnowledgeBase | str | os.PathLike[str],
        object_mapping: BaseObjectNodeMapping | None = None,
        from_node_fn: Any = None,
        to_node_fn: Any = None,
        *,
        sync: bool = False,
        **kb_kwargs: Any,
    ) -> ToolObjectIndex:
        """Attach ``objects`` to an existing knowledge base (an object, or a saved one's path, opened with
        ``kb_kwargs``): every tool it holds needs a live object (:func:`toolret.agents.agent_tools.attach`);
        ``sync=True`` instead makes it hold exactly ``objects``.
        """
        _refuse_custom_nodes(from_node_fn, to_node_fn, object_mapping)
        kb = index if isinstance(index, ToolKnowledgeBase) else ToolKnowledgeBase.load(index, **kb_kwargs)
        return cls._attach(kb, objects, sync=sync, required=kb.ids)

    @classmethod
    def _attach(
        cls,
        kb: ToolKnowledgeBase,
        objects: Iterable[Any],
        *,
        sync: bool = False,
        required: Sequence[str] = (),
        progress: bool = False,
    ) -> ToolObjectIndex:
        tools = [as_tool(obj) for obj in objects]
        attach(
            kb,
            [tolerant_doc(t, kb.config.max_doc_chars) for t in tools],
            required=required,
            sync=sync,
            progress=progress,
        )
        return cls(kb, ToolNodeMapping(tools, live=kb.live_tools))

    # ------------------------------------------------------------------ writing
    def insert_object(self, obj: Any) -> None:
        """Index one more tool (or re-index a changed one with the same name)."""
        tool = as_tool(obj)
        doc = tolerant_doc(tool, self._kb.config.max_doc_chars)
        self._mapping.add_object(tool)
        self._kb.add([doc], upsert=True)

    def persist(
        self, persist_dir: str | os.PathLike[str] = DEFAULT_PERSIST_DIR, obj_node_mapping_fname: str = MANIFEST_FILE
    ) -> None:
        """Save the knowledge base (:func:`toolret.agents.agent_tools.persist_to`) and the tool names in ``persist_dir``."""
        persist_to(self._kb, persist_dir)
        self._mapping.persist(str(persist_dir), obj_node_mapping_fname)

    @classmethod
    def from_persist_dir(
        cls,
        persist_dir: str | os.PathLike[str] = DEFAULT_PERSIST_DIR,
        object_node_mapping: BaseObjectNodeMapping | None = None,
        *,
        objects: Sequence[Any] | None = None,
        obj_node_mapping_fname: str = MANIFEST_FILE,
        sync: bool = False,
        embedder: Any = None,
        embed_model: BaseEmbedding | None = None,
        config: RetrievalConfig | str | None = None,
        llm: Any = None,
    ) -> ToolObjectIndex:
        """Reopen a persisted index and re-attach the live tools (``objects``, or a ``ToolNodeMapping`` / stock
        ``SimpleToolNodeMapping``) by name; a persisted tool none of them is raises :class:`toolret.ToolNotFoundError`
        (:func:`toolret.agents.agent_tools.attach`); ``sync=True`` drops those instead.
        """
        if objects is None and object_node_mapping is None:
            raise ToolNotFoundError(
                "live tools are not stored on disk: pass them, "
                f"ToolObjectIndex.from_persist_dir({str(persist_dir)!r}, objects=tools)"
            )
        tools = list(objects) if objects is not None else _tools_of_mapping(object_node_mapping)
        names = read_manifest(Path(persist_dir), obj_node_mapping_fname)
        kb = ToolKnowledgeBase.load(
            persist_dir,
            embedder=_resolve_embedder(embedder, embed_model),
            config=RetrievalConfig.for_llm(config, llm),
            llm=llm,
        )
        return cls._attach(kb, tools, sync=sync, required=names)

    # ------------------------------------------------------------------ reading
    def as_node_retriever(self, **kwargs: Any) -> ToolRetriever:
        """A LlamaIndex ``BaseRetriever`` returning tool nodes (``similarity_top_k``/``k``, ``config``)."""
        return ToolRetriever(self._kb, **_retriever_kwargs(kwargs, objects=False))

    def as_retriever(
        self, node_postprocessors: list[BaseNodePostprocessor] | None = None, **kwargs: Any
    ) -> ToolObjectRetriever:
        """The ``tool_retriever`` for an agent: an ``ObjectRetriever`` returning live tools.

        Options: ``similarity_top_k`` (or ``k``; default 5, or ``"auto"``), ``config``, ``keep_used``,
        ``used_beyond_k``, ``condensed_descriptions`` (:class:`~llamaindex_toolret.retrievers.ToolObjectRetriever`),
        ``memory``, ``token_budget`` (:class:`~llamaindex_toolret.retrievers.ToolRetriever`), ``where`` (a
        :class:`toolret.ToolScope`; per call: ``retrieve(query, where=...)`` or ``with toolret.scoped(...)``),
        ``callback_manager``, ``verbose``. Other vector-retriever options (``filters``...) raise :class:`toolret.ConfigError`.
        """
        opts = _retriever_kwargs(kwargs, objects=True)
        keep_used = opts.pop("keep_used", 0)
        beyond = bool(opts.pop("used_beyond_k", False))
        condensed = bool(opts.pop("condensed_descriptions", False))
        return ToolObjectRetriever(
            ToolRetriever(self._kb, **opts),
            self._mapping,
            node_postprocessors,
            keep_used=keep_used,
            used_beyond_k=beyond,
            condensed_descriptions=condensed,
        )

    def warmup(self) -> float:
        """Load the embedding model and run one search now (:func:`toolret.agents.agent_tools.warm_up`), so
        the agent's first request does not pay for it; returns the seconds it took.
        """
        return warm_up(self._kb)

    def tools(self) -> list[BaseTool]:
        """Every live tool in the index."""
        return list(self._mapping.obj_node_mapping.values())


def _retriever_kwargs(kwargs: dict[str, Any], *, objects: bool) -> dict[str, Any]:
    allowed = _RETRIEVER_OPTIONS | _OBJECT_OPTIONS if objects else _RETRIEVER_OPTIONS
    return checked_options(kwargs, allowed, aliases={"similarity_top_k": "k"}, owner="toolret retrievers")
