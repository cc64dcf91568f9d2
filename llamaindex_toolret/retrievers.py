"""LlamaIndex retrievers over a toolret knowledge base (docs/llamaindex.md).

* :class:`ToolRetriever`, a ``BaseRetriever``: one ``NodeWithScore`` per tool, toolret's evidence
  in ``node.metadata``.
* :class:`ToolObjectRetriever`, an ``ObjectRetriever`` (what the workflow agents accept as
  ``tool_retriever``): the live tools.

Both honour the agents' contract: a query that is exactly a tool's name returns that tool (the
agent asks again by name when the model calls one). ``keep_used=N`` makes an object retriever one
conversation, keeping the last N called tools on offer (the engine's
:class:`~toolret.agents.working_set.RecentTools` and :func:`~toolret.agents.working_set.share_slots`);
by default it keeps no state and may serve unrelated requests.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.callbacks import CallbackManager
from llama_index.core.objects import ObjectRetriever
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle, QueryType, TextNode
from llama_index.core.tools import BaseTool

from llamaindex_toolret.condensed import CondensedTools
from llamaindex_toolret.mapping import ToolNodeMapping
from toolret import K, RetrievalConfig, ScoredTool, SearchResult, ToolKnowledgeBase, validate_k
from toolret.agents.request_scope import in_current_scope, named_in_scope
from toolret.agents.working_set import RecentTools, offered, slots
from toolret.errors import ConfigError, QueryError, ToolNotFoundError
from toolret.scope.tool_scope import Where, as_scope, scoped
from toolret.search.conversation import earlier_than
from toolret.search.token_budget import validate_budget

__all__ = ["ToolObjectRetriever", "ToolRetriever"]


def _bundle(query: QueryType) -> QueryBundle:
    if isinstance(query, str):
        return QueryBundle(query_str=query)
    if isinstance(query, QueryBundle):
        return query
    raise TypeError(f"expected a query string or a QueryBundle, got {type(query).__name__}")


def _check_k(k: Any, config: RetrievalConfig | None) -> K:
    """:func:`toolret.validate_k`, reported under LlamaIndex's name for the option."""
    try:
        return validate_k(k, config)
    except QueryError as exc:
        raise ConfigError(f"similarity_top_k (k): {exc}") from None


class ToolRetriever(BaseRetriever):
    """A LlamaIndex ``BaseRetriever`` returning one ``NodeWithScore`` per retrieved tool.

    ``k`` (or ``"auto"``) and ``config`` as for :meth:`toolret.ToolKnowledgeBase.search`. Node ``metadata``:
    ``name``, ``tool_id``, the score's evidence and ``match`` (``"search"`` or ``"name"``); :attr:`last_result`
    is the most recent :class:`~toolret.SearchResult`. ``memory`` (the agent's ``BaseMemory``) hands the chat
    before the query to the search (the LLM planner resolves "and there?"); ``token_budget`` keeps the tools'
    definitions as the agent binds them within that many tokens, a tool whose schema cannot be rendered left
    out with a warning naming it.
    """

    def __init__(
        self,
        kb: ToolKnowledgeBase,
        *,
        k: K = 5,
        config: RetrievalConfig | str | None = None,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
        memory: Any = None,
        token_budget: int | None = None,
        where: Where | None = None,
    ) -> None:
        super().__init__(callback_manager=callback_manager, verbose=verbose)
        if memory is not None and not callable(getattr(memory, "aget_all", None)):
            raise ConfigError(f"memory must be a LlamaIndex chat memory (BaseMemory), got {type(memory).__name__}")
        self.kb = kb
        self.memory = memory
        self.config = None if config is None else RetrievalConfig.resolve(config)
        self.k: K = _check_k(k, self.config or kb.config)
        self.last_result: SearchResult | None = None
        self.token_budget = validate_budget(token_budget)
        #: The scope every search and lookup keeps to (None: every tool; :mod:`toolret.scope.tool_scope`).
        self.where = None if where is None else as_scope(where)
        #: Live tool -> what the agent is handed (the object retriever's condensed copy); None: the tool.
        self.present: Callable[[BaseTool], BaseTool] | None = None

    def definition(self, scored: ScoredTool) -> dict[str, Any]:
        """A retrieved tool's definition as an agent binds it (``metadata.to_openai_tool``, of the
        copy handed out); the stored one for a tool with no live object. Raises for a tool whose
        schema cannot be rendered: the search then leaves it out with a warning naming it."""
        tool = self.kb.live_tools.get(scored.id)
        if not isinstance(tool, BaseTool):
            return self.kb.get(scored.id).definition()
        tool = self.present(tool) if self.present is not None else tool
        return tool.metadata.to_openai_tool(skip_length_check=True)

    def _options(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "config": self.config,
            "token_budget": self.token_budget,
            "definition": self.definition,
            "where": self.where,
        }

    def in_scope(self, tool_id: str) -> bool:
        """May this retriever return ``tool_id`` (its ``where`` and the enclosing ``toolret.scoped`` block)?"""
        return in_current_scope(self.kb, tool_id, self.where)

    def lookup(self, query: str) -> NodeWithScore | None:
        """The node for the tool whose id (its LlamaIndex name) is exactly ``query``, else None."""
        key = named_in_scope(self.kb, query, self.where)  # none outside the scope, even by its exact name
        return None if key is None else self._node(key, 1.0, {"match": "name"})

    def _node(self, tool_id: str, score: float, extra: dict[str, Any]) -> NodeWithScore:
        try:
            doc = self.kb.get(tool_id)
        except ToolNotFoundError:  # removed between search and conversion
            text = tool_id
        else:
            text = doc.card()
        keys = ["name", "tool_id", "score", "field_scores", "penalty", "subtask", "match"]
        node = TextNode(
            id_=tool_id,
            text=text,
            metadata={"name": tool_id, "tool_id": tool_id, **extra},
            excluded_embed_metadata_keys=keys,
            excluded_llm_metadata_keys=keys,
        )
        return NodeWithScore(node=node, score=score)

    def _nodes(self, result: SearchResult) -> list[NodeWithScore]:
        self.last_result = result
        return [self._node(t.id, t.score, {**t.evidence(), "match": "search"}) for t in result.tools]

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        hit = self.lookup(query_bundle.query_str)
        if hit is not None:
            return [hit]
        turns = earlier_than(self.memory.get_all(), query_bundle.query_str) if self.memory is not None else None
        return self._nodes(self.kb.search(query_bundle.query_str, conversation=turns, **self._options()))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        hit = self.lookup(query_bundle.query_str)
        if hit is not None:
            return [hit]
        turns = earlier_than(await self.memory.aget_all(), query_bundle.query_str) if self.memory is not None else None
        return self._nodes(await self.kb.asearch(query_bundle.query_str, conversation=turns, **self._options()))


class ToolObjectRetriever(ObjectRetriever[BaseTool]):
    """The ``tool_retriever`` for LlamaIndex agents: toolret search in, live tools out.

    ``node_postprocessors`` run on search results, not on exact-name lookups. ``keep_used`` recently called
    tools stay on offer within the ``k`` slots (``used_beyond_k``: after them), which makes the retriever one
    conversation; ``condensed_descriptions`` returns copies described by their condensed card. ``aretrieve``
    searches in a worker thread.
    """

    def __init__(
        self,
        retriever: ToolRetriever,
        object_node_mapping: ToolNodeMapping,
        node_postprocessors: list[BaseNodePostprocessor] | None = None,
        *,
        keep_used: int = 0,
        used_beyond_k: bool = False,
        condensed_descriptions: bool = False,
    ) -> None:
        if not isinstance(retriever, ToolRetriever):
            raise TypeError(f"ToolObjectRetriever needs a ToolRetriever, got {type(retriever).__name__}")
        self._used = RecentTools(keep_used)  # the engine's rule: toolret.agents.working_set
        super().__init__(retriever, object_node_mapping, node_postprocessors)
        self.keep_used = keep_used
        self.used_beyond_k = bool(used_beyond_k)
        #: Copies with condensed descriptions (None: the option is off).
        self.condensed = CondensedTools(retriever.kb) if condensed_descriptions else None
        if self.condensed is not None:  # the definitions searched (budget, bindability) are the copies'
            retriever.present = self.condensed.tool

    @property
    def retriever(self) -> ToolRetriever:
        return self._retriever  # type: ignore[return-value]

    @property
    def used_tools(self) -> list[str]:
        """Names of the tools remembered as used in this conversation, most recent first."""
        return self._used.ids

    def reset(self) -> None:
        """Forget the tools used so far (start of a new conversation)."""
        self._used.clear()

    def _tools(self, nodes: list[NodeWithScore]) -> list[BaseTool]:
        mapping: ToolNodeMapping = self._object_node_mapping  # type: ignore[assignment]
        found = [(node.node.metadata or {}).get("tool_id") or node.node.node_id for node in nodes]
        used = [t for t in self.used_tools if t in self.retriever.kb and self.retriever.in_scope(t)]
        limit = slots(self.retriever.k, self.retriever.config or self.retriever.kb.config)
        ids = offered(found, used, mapping.get, limit, self.used_beyond_k, "insert_object it")  # the engine's rule
        return self._present([tool for t in ids if (tool := mapping.get(t)) is not None])

    def _present(self, tools: list[BaseTool]) -> list[BaseTool]:
        return self.condensed.tools(tools) if self.condensed is not None else tools

    def _named(self, query: QueryBundle) -> list[BaseTool] | None:
        hit = self.retriever.lookup(query.query_str)
        if hit is None:
            return None
        mapping: ToolNodeMapping = self._object_node_mapping  # type: ignore[assignment]
        tool = self._used.called(hit.node.node_id, mapping.get, "insert_object it")  # the engine's rule
        return [] if tool is None else self._present([tool])

    def retrieve(self, str_or_query_bundle: QueryType, *, where: Where | None = None) -> list[BaseTool]:
        """The live tools for a request (or the one a tool name names), within ``where`` for this call."""
        with scoped(where):
            return self._retrieve_tools(str_or_query_bundle)

    async def aretrieve(self, str_or_query_bundle: QueryType, *, where: Where | None = None) -> list[BaseTool]:
        """:meth:`retrieve` without blocking the event loop."""
        with scoped(where):
            return await self._aretrieve_tools(str_or_query_bundle)

    def _retrieve_tools(self, str_or_query_bundle: QueryType) -> list[BaseTool]:
        query = _bundle(str_or_query_bundle)
        named = self._named(query)
        if named is not None:
            return named
        nodes = self._retriever.retrieve(query)
        for post in self._node_postprocessors:
            nodes = post.postprocess_nodes(nodes, query_bundle=query)
        return self._tools(nodes)

    async def _aretrieve_tools(self, str_or_query_bundle: QueryType) -> list[BaseTool]:
        query = _bundle(str_or_query_bundle)
        named = self._named(query)
        if named is not None:
            return named
        nodes = await self._retriever.aretrieve(query)
        for post in self._node_postprocessors:
            nodes = await post.apostprocess_nodes(nodes, query_bundle=query)
        return self._tools(nodes)
