"""LlamaIndex retrievers over a toolret knowledge base.

Two layers, as in LlamaIndex itself:

* :class:`ToolRetriever` is a plain ``BaseRetriever``: a query in, ``NodeWithScore`` out, one
  node per tool with the tool's name and toolret's evidence (field scores, penalty, sub-task)
  in ``node.metadata``. Compose it with any ``ObjectRetriever`` or node postprocessor.
* :class:`ToolObjectRetriever` is an ``ObjectRetriever`` — the only type the workflow agents
  (``FunctionAgent``, ``ReActAgent``, ``CodeActAgent``, ``AgentWorkflow``) accept as
  ``tool_retriever`` — returning the live tools.

Both honour the agents' contract: they are queried with the user message before each model
call and again with the exact tool *name* when the model calls a tool, so a query that is
exactly a tool's name is a lookup that returns that tool (no search, no postprocessor can drop
it). The object retriever also remembers the last ``keep_used`` tools the agent called and
offers them again on later queries: a follow-up such as "and what about tomorrow?" names no
tool, yet the model, seeing the earlier call in its history, calls that tool again
(llama_index issue 15515). Create one object retriever per conversation to keep that memory
per conversation (``index.as_retriever()`` is cheap: the knowledge base is shared). With
``condensed_descriptions=True`` it returns copies of the tools described by their condensed
card (:mod:`llamaindex_toolret.condensed`), so the agent reads fewer tokens per tool.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from typing import Any, Literal

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.callbacks import CallbackManager
from llama_index.core.objects import ObjectRetriever
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle, QueryType, TextNode
from llama_index.core.tools import BaseTool

from llamaindex_toolret.condensed import CondensedTools
from llamaindex_toolret.mapping import ToolNodeMapping
from toolret import RetrievalConfig, SearchResult, ToolKnowledgeBase
from toolret.errors import ConfigError, ToolNotFoundError

__all__ = ["ToolObjectRetriever", "ToolRetriever"]

logger = logging.getLogger("toolret")

K = int | Literal["auto"]


def _bundle(query: QueryType) -> QueryBundle:
    if isinstance(query, str):
        return QueryBundle(query_str=query)
    if isinstance(query, QueryBundle):
        return query
    raise TypeError(f"expected a query string or a QueryBundle, got {type(query).__name__}")


def _check_k(k: Any) -> K:
    if k == "auto" or (isinstance(k, int) and not isinstance(k, bool) and k >= 1):
        return k
    raise ConfigError(f"k (similarity_top_k) must be a positive integer or 'auto', got {k!r}")


class ToolRetriever(BaseRetriever):
    """A LlamaIndex ``BaseRetriever`` returning one ``NodeWithScore`` per retrieved tool.

    ``k`` is how many tools a search returns (``"auto"``: a precise set, see
    :meth:`toolret.ToolKnowledgeBase.search`); ``config`` a preset name or
    :class:`~toolret.RetrievalConfig` (default: the knowledge base's). Node ``metadata``:
    ``name`` (the tool name, as ``SimpleToolNodeMapping`` expects), ``tool_id``,
    ``field_scores``, ``penalty``, ``subtask`` and ``match`` (``"search"`` or ``"name"``).
    :attr:`last_result` keeps the most recent :class:`~toolret.SearchResult` for debugging.
    """

    def __init__(
        self,
        kb: ToolKnowledgeBase,
        *,
        k: K = 5,
        config: RetrievalConfig | str | None = None,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
        super().__init__(callback_manager=callback_manager, verbose=verbose)
        self.kb = kb
        self.k: K = _check_k(k)
        self.config = None if config is None else RetrievalConfig.resolve(config)
        self.last_result: SearchResult | None = None

    def lookup(self, query: str) -> NodeWithScore | None:
        """The node for the tool whose id (its LlamaIndex name) is exactly ``query``, else None."""
        key = query.strip()
        if not key or key not in self.kb:
            return None
        return self._node(key, 1.0, {"match": "name"})

    def _node(self, tool_id: str, score: float, extra: dict[str, Any]) -> NodeWithScore:
        try:
            doc = self.kb.get(tool_id)
        except ToolNotFoundError:  # removed between search and conversion
            text = tool_id
        else:
            text = doc.card()
        keys = ["name", "tool_id", "field_scores", "penalty", "subtask", "match"]
        node = TextNode(
            id_=tool_id, text=text, metadata={"name": tool_id, "tool_id": tool_id, **extra},
            excluded_embed_metadata_keys=keys, excluded_llm_metadata_keys=keys,
        )
        return NodeWithScore(node=node, score=score)

    def _nodes(self, result: SearchResult) -> list[NodeWithScore]:
        self.last_result = result
        return [
            self._node(t.id, t.score, {
                "field_scores": dict(t.field_scores), "penalty": t.penalty, "subtask": t.subtask, "match": "search",
            })
            for t in result.tools
        ]

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        hit = self.lookup(query_bundle.query_str)
        if hit is not None:
            return [hit]
        return self._nodes(self.kb.search(query_bundle.query_str, k=self.k, config=self.config))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        hit = self.lookup(query_bundle.query_str)
        if hit is not None:
            return [hit]
        return self._nodes(await self.kb.asearch(query_bundle.query_str, k=self.k, config=self.config))


class ToolObjectRetriever(ObjectRetriever[BaseTool]):
    """The ``tool_retriever`` for LlamaIndex agents: toolret search in, live tools out.

    ``node_postprocessors`` run on search results (sync ones in :meth:`retrieve`, their async
    form in :meth:`aretrieve`), not on exact-name lookups. ``keep_used`` (default 3) is how
    many recently called tools are appended to every later result; 0 turns that memory off.
    ``aretrieve`` runs the search in a worker thread, so the event loop keeps serving.
    ``condensed_descriptions`` (default off) returns copies whose ``metadata.description`` is
    :func:`toolret.cards.card.agent_description` of the indexed tool; the copies run the same code.
    """

    def __init__(
        self,
        retriever: ToolRetriever,
        object_node_mapping: ToolNodeMapping,
        node_postprocessors: list[BaseNodePostprocessor] | None = None,
        *,
        keep_used: int = 3,
        condensed_descriptions: bool = False,
    ) -> None:
        if not isinstance(retriever, ToolRetriever):
            raise TypeError(f"ToolObjectRetriever needs a ToolRetriever, got {type(retriever).__name__}")
        if not isinstance(keep_used, int) or keep_used < 0:
            raise ConfigError(f"keep_used must be a non-negative integer, got {keep_used!r}")
        super().__init__(retriever, object_node_mapping, node_postprocessors)
        self.keep_used = keep_used
        #: Copies with condensed descriptions (None: the option is off).
        self.condensed = CondensedTools(retriever.kb) if condensed_descriptions else None
        self._used: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def retriever(self) -> ToolRetriever:
        return self._retriever  # type: ignore[return-value]

    @property
    def used_tools(self) -> list[str]:
        """Names of the tools remembered as used in this conversation, most recent first."""
        with self._lock:
            return list(reversed(self._used))

    def reset(self) -> None:
        """Forget the tools used so far (start of a new conversation)."""
        with self._lock:
            self._used.clear()

    def _remember(self, tool_id: str) -> None:
        if self.keep_used == 0:
            return
        with self._lock:
            self._used.pop(tool_id, None)
            self._used[tool_id] = None
            while len(self._used) > self.keep_used:
                self._used.popitem(last=False)

    def _tools(self, nodes: list[NodeWithScore]) -> list[BaseTool]:
        mapping: ToolNodeMapping = self._object_node_mapping  # type: ignore[assignment]
        tools: list[BaseTool] = []
        seen: set[str] = set()
        for node in nodes:
            tool_id = (node.node.metadata or {}).get("tool_id") or node.node.node_id
            tool = mapping.get(tool_id)
            if tool is None:
                logger.warning("no live LlamaIndex tool attached for %r; skipped (insert_object it)", tool_id)
                continue
            if tool_id not in seen:
                seen.add(tool_id)
                tools.append(tool)
        for tool_id in self.used_tools:
            tool = mapping.get(tool_id)
            if tool is not None and tool_id not in seen and tool_id in self.retriever.kb:
                seen.add(tool_id)
                tools.append(tool)
        return self._present(tools)

    def _present(self, tools: list[BaseTool]) -> list[BaseTool]:
        return self.condensed.tools(tools) if self.condensed is not None else tools

    def _named(self, query: QueryBundle) -> list[BaseTool] | None:
        hit = self.retriever.lookup(query.query_str)
        if hit is None:
            return None
        tool = self._object_node_mapping.get(hit.node.node_id)  # type: ignore[attr-defined]
        if tool is None:  # indexed, but no live object: the agent reports "not found" itself
            logger.warning("no live LlamaIndex tool attached for %r (insert_object it)", hit.node.node_id)
            return []
        self._remember(hit.node.node_id)
        return self._present([tool])

    def retrieve(self, str_or_query_bundle: QueryType) -> list[BaseTool]:
        query = _bundle(str_or_query_bundle)
        named = self._named(query)
        if named is not None:
            return named
        nodes = self._retriever.retrieve(query)
        for post in self._node_postprocessors:
            nodes = post.postprocess_nodes(nodes, query_bundle=query)
        return self._tools(nodes)

    async def aretrieve(self, str_or_query_bundle: QueryType) -> list[BaseTool]:
        query = _bundle(str_or_query_bundle)
        named = self._named(query)
        if named is not None:
            return named
        nodes = await self._retriever.aretrieve(query)
        for post in self._node_postprocessors:
            nodes = await post.apostprocess_nodes(nodes, query_bundle=query)
        return self._tools(nodes)
