"""A toolret knowledge base together with the live LangChain tools behind its ids.

Every adapter in this package needs the same things: index a set of LangChain tools (once,
and again only when the set changes), search, and turn retrieved ids back into the tool
objects the agent calls. :class:`ToolIndex` does exactly that; the retrieval itself is
:meth:`toolret.ToolKnowledgeBase.search`, the id → tool map the engine's
:class:`~toolret.index.live_tools.LiveTools`, the "did the tool set change" test the engine's
:func:`~toolret.index.persistence.registry_hash`.

One tool never switches selection off for the others: a tool whose document cannot be built
as it is (a 100,000-character description, a schema that does not convert) is indexed in a
shortened form, or by name only, with a warning naming it (:mod:`langchain_toolret.tool_docs`).

Example:
    >>> from langchain_core.tools import tool
    >>> @tool
    ... def get_weather(city: str) -> str:
    ...     '''Current weather for a city.'''
    ...     return "sunny"
    >>> @tool
    ... def convert_currency(amount: float, to: str) -> float:
    ...     '''Convert an amount of money into another currency.'''
    ...     return amount
    >>> index = ToolIndex.from_tools([get_weather, convert_currency])
    >>> [t.name for t in index.select("is it raining in Paris?", k=1)]
    ['get_weather']
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.tools import BaseTool

from langchain_toolret.binding import ToolDefinitions
from langchain_toolret.conversation import conversation_query, earlier_turns
from langchain_toolret.llm import as_toolret_llm
from langchain_toolret.tool_docs import tolerant_docs
from toolret import ConfigError, K, KnowledgeBaseError, RetrievalConfig, ScoredTool, SearchResult, ToolKnowledgeBase
from toolret.index.live_tools import LiveTools
from toolret.index.persistence import registry_hash
from toolret.retrieval.conversation import as_chat_history
from toolret.retrieval.definitions import fit_definitions
from toolret.retrieval.follow_up import add_context
from toolret.retrieval.search import Search

__all__ = ["ToolIndex"]

logger = logging.getLogger("toolret")


class ToolIndex:
    """A knowledge base plus an id → LangChain tool map, kept in step with a tool set.

    * ``ToolIndex()`` (or ``from_tools``) owns an in-memory knowledge base and indexes the
      tools given to :meth:`ensure`; a changed tool set is synced (only new or changed tools
      are embedded) and an unchanged one costs a hash. The live tools are the knowledge base's
      own :attr:`~toolret.ToolKnowledgeBase.live_tools`.
    * ``ToolIndex(knowledge_base=kb)`` uses a knowledge base you built (possibly persisted, or
      holding more tools than the agent has); :meth:`ensure` never writes to it and binds the
      agent's tools in a :class:`~toolret.index.live_tools.LiveTools` map of this index's own
      (agents sharing one knowledge base never see each other's tool objects). A knowledge
      base that lacks some of the agent's tools is an error naming them (they could never be
      offered); one holding tools the agent lacks is searched among the agent's tools only (the
      engine's ``allowed_ids``), so ``k`` of them come back, with a warning naming the others.

    ``config`` (a preset name or ``RetrievalConfig``) applies to every search through this
    index without changing a given knowledge base's own; with an ``llm`` and no ``config`` it
    is ``"full"`` (:meth:`toolret.RetrievalConfig.for_llm`). ``llm`` may be a LangChain chat
    model (wrapped in :class:`~langchain_toolret.llm.ChatModelLLM`) or a toolret LLM.
    """

    def __init__(
        self,
        knowledge_base: ToolKnowledgeBase | None = None,
        *,
        config: RetrievalConfig | str | None = None,
        embedder: Any = None,
        llm: Any = None,
    ) -> None:
        self.owned = knowledge_base is None
        config = RetrievalConfig.for_llm(config, llm)
        #: The retrieval config of every search through this index (None: the knowledge base's).
        self.config = None if config is None else RetrievalConfig.resolve(config)
        #: The LLM of searches through this index (None: the knowledge base's).
        self.llm = as_toolret_llm(llm)
        if knowledge_base is None:
            knowledge_base = ToolKnowledgeBase(embedder=embedder, config=config, llm=self.llm)
        self.kb = knowledge_base
        #: id/name → live tool: the knowledge base's map when owned, this index's own otherwise.
        self.live_tools: LiveTools = knowledge_base.live_tools if self.owned else LiveTools()
        #: Tools that could not be indexed at all (invalid name): offered only when named exactly.
        self.unindexed: dict[str, BaseTool] = {}
        #: Tools of the knowledge base the agent does not have (never searched, never returned).
        self.foreign: frozenset[str] = frozenset()
        #: The ids a search may return when the knowledge base holds foreign tools (the engine's
        #: ``allowed_ids``); None when every tool in it is the agent's.
        self.allowed: tuple[str, ...] | None = None
        #: Each tool's definition as ``bind_tools`` sends it (:mod:`langchain_toolret.binding`).
        self.definitions = ToolDefinitions()
        self._identity: tuple[int, ...] | None = None
        self._content: str | None = None
        self._lock = threading.Lock()

    @classmethod
    def coerce(cls, source: Any, *, config: RetrievalConfig | str | None = None, llm: Any = None) -> ToolIndex:
        """A ToolIndex from tools, a ToolIndex, a ``ToolKnowledgeBase`` or anything with an
        ``index`` (a :class:`~langchain_toolret.retriever.ToolRetriever`)."""
        inner = getattr(source, "index", None)
        if isinstance(inner, ToolIndex):
            source = inner
        if isinstance(source, ToolIndex):
            if config is None and llm is None:
                return source
            view = cls(source.kb, config=config or source.config, llm=llm if llm is not None else source.llm)
            view.owned, view.live_tools, view.unindexed = source.owned, source.live_tools, source.unindexed
            view.foreign, view.allowed, view.definitions = source.foreign, source.allowed, source.definitions
            return view
        if isinstance(source, ToolKnowledgeBase):
            return cls(source, config=config, llm=llm)
        return cls.from_tools(source, config=config, llm=llm)

    @classmethod
    def from_tools(cls, tools: Iterable[Any], **kwargs: Any) -> ToolIndex:
        """Index ``tools`` (LangChain tools; callables and OpenAI dicts are accepted too)."""
        index = cls(**kwargs)
        index.add(tools)
        return index

    # ------------------------------------------------------------------ keeping in step
    def add(self, tools: Iterable[Any]) -> list[str]:
        """Add tools to the knowledge base (an existing id is replaced); returns their ids."""
        docs, live, unindexed = tolerant_docs(tools, self.kb.config.max_doc_chars)
        with self._lock:
            ids = self.kb.add(docs, upsert=True)
            self.live_tools.update(live)
            self.unindexed.update(unindexed)
            self._identity = None
        return ids

    def ensure(self, tools: Sequence[BaseTool]) -> bool:
        """Make the index serve exactly ``tools``; returns True when it had to re-index.

        Cheap when nothing changed: the same tool objects are recognised by identity, equal
        content by :func:`~toolret.index.persistence.registry_hash`. An owned knowledge base is
        synced to the new set; a given one is checked against it (see the class doc).
        """
        identity = tuple(id(t) for t in tools)
        with self._lock:
            if identity == self._identity:
                return False
            if not self.owned:
                self._bind_to_given(tools)
                self._identity = identity
                return False
            docs, live, unindexed = tolerant_docs(tools, self.kb.config.max_doc_chars)
            content = registry_hash(docs)
            reindex = content != self._content
            if reindex:
                self.kb.sync(docs)
            self.live_tools.keep(live)
            self.live_tools.update(live)
            self.unindexed = unindexed
            self._identity, self._content = identity, content
            return reindex

    def _bind_to_given(self, tools: Sequence[BaseTool]) -> None:
        held = {d.name: d.id for d in self.kb.docs()}
        names = [t.name for t in tools]
        missing = [n for n in names if n not in held and n not in self.kb]
        if missing:
            raise KnowledgeBaseError(
                f"knowledge_base= lacks {len(missing)} of the agent's {len(names)} tools "
                f"({_names(missing)}): they could never be offered. Add them (kb.add(tools)), "
                "or leave knowledge_base= out to index the agent's own tools"
            )
        foreign = frozenset(held) - set(names)
        if foreign and foreign != self.foreign:
            logger.warning(
                "knowledge_base= holds %d tools the agent does not have (%s); searches leave them out",
                len(foreign),
                _names(sorted(foreign)),
            )
        self.foreign = foreign
        self.allowed = tuple(dict.fromkeys(held.get(n, n) for n in names)) if foreign else None
        self.live_tools = LiveTools()
        self.live_tools.update(
            {held.get(t.name, t.name): t for t in tools}, names={held.get(t.name, t.name): t.name for t in tools}
        )

    async def aensure(self, tools: Sequence[BaseTool]) -> bool:
        """:meth:`ensure` off the event loop (embedding new tools takes a while)."""
        if tuple(id(t) for t in tools) == self._identity:
            return False
        return await asyncio.to_thread(self.ensure, tools)

    # ------------------------------------------------------------------ reading
    def tool(self, name: str) -> BaseTool | None:
        """The live tool named ``name`` (a knowledge-base id or name), or None."""
        return self.live_tools.by_name(name) or self.unindexed.get(name)

    def check_always_include(self, names: Sequence[str], owner: str) -> None:
        """Raise :class:`toolret.ConfigError` naming each of ``names`` that is no tool of this index.

        ``always_include`` names go into the selection unsearched, and a model node binds only
        names it knows: a misspelt one would quietly leave the model without a tool the developer
        meant it to have on every call (LLMToolSelectorMiddleware raises the same way).
        """
        missing = [n for n in names if self.tool(n) is None and n not in self.kb]
        if missing:
            known = {d.name for d in self.kb.docs()}
            missing = [n for n in missing if n not in known]
        if missing:
            raise ConfigError(f"{owner}: always_include names tools this index does not have: {missing}")

    @property
    def tools(self) -> list[BaseTool]:
        return [tool for _, tool in self.live_tools.items()] + list(self.unindexed.values())

    def live(self, result: SearchResult, *, query: str | None = None) -> list[BaseTool]:
        """The live tools of a search result, best first (ids not bound to a tool are skipped).

        With ``query``: a tool that could not be indexed is put first when the query names it
        exactly, in place of the last result (so the count does not grow).
        """
        out: list[BaseTool] = []
        for scored in result.tools:
            tool = self.live_tools.get(scored.id) or self.live_tools.by_name(scored.name)
            if tool is not None and tool not in out:
                out.append(tool)
        named = [t for n, t in self.unindexed.items() if query and n in query.split()] if self.unindexed else []
        if named:
            out = [*named, *(t for t in out if t not in named)][: max(len(out), len(named))]
        return out

    def names(self, result: SearchResult, *, query: str | None = None) -> list[str]:
        """The tool names of a search result (for graph state), with an unindexable tool the
        query names exactly put first in place of the last one, as :meth:`live` does."""
        names = [t.name for t in result.tools]
        named = [n for n in self.unindexed if query and n in query.split()]
        return [*named, *(n for n in names if n not in named)][: max(len(names), len(named))]

    def search(
        self,
        query: str,
        k: K = 5,
        *,
        config: RetrievalConfig | str | None = None,
        conversation: Sequence[Any] | None = None,
    ) -> SearchResult:
        """``kb.search`` with this index's config and LLM; ``conversation`` = the earlier chat (LLM planner)."""
        return self.kb.search(
            query, k, config=config or self.config, conversation=conversation, llm=self.llm, allowed_ids=self.allowed
        )

    async def asearch(
        self,
        query: str,
        k: K = 5,
        *,
        config: RetrievalConfig | str | None = None,
        conversation: Sequence[Any] | None = None,
    ) -> SearchResult:
        return await self.kb.asearch(
            query, k, config=config or self.config, conversation=conversation, llm=self.llm, allowed_ids=self.allowed
        )

    def begin_search(
        self,
        query: str,
        k: K = 5,
        *,
        config: RetrievalConfig | str | None = None,
        conversation: Sequence[Any] | None = None,
    ) -> Search:
        """A not yet run search over the knowledge base, for driving the pipeline stages."""
        return self.kb.begin_search(
            query, k, config=config or self.config, conversation=conversation, llm=self.llm, allowed_ids=self.allowed
        )

    # ------------------------------------------------------------------ one user turn
    def search_turn(self, messages: Sequence[BaseMessage], k: K = 5) -> SearchResult | None:
        """The tools for the conversation's current user turn (None: no user message).

        The latest user message is searched on its own, and that selection is the turn's.
        Only when the message reads as a follow-up (the engine's rule,
        :mod:`toolret.retrieval.follow_up`: it opens as a continuation, names a back-reference,
        or matches no tool well) are the earlier user messages searched too, and their tools
        fill only the places of the message's weakly matched ones. The trace says which.
        """
        query = conversation_query(messages)
        if query is None:
            return None
        return self.follow_up(messages, self.search(query, k, conversation=earlier_turns(messages)), k)

    async def asearch_turn(self, messages: Sequence[BaseMessage], k: K = 5) -> SearchResult | None:
        """:meth:`search_turn` without blocking the event loop."""
        query = conversation_query(messages)
        if query is None:
            return None
        own = await self.asearch(query, k, conversation=earlier_turns(messages))
        return await asyncio.to_thread(self.follow_up, messages, own, k)

    def follow_up(self, messages: Sequence[BaseMessage], own: SearchResult, k: K) -> SearchResult:
        """``own`` (the latest user message's result) with the engine's follow-up rule applied
        (:func:`toolret.retrieval.follow_up.add_context`)."""
        query = conversation_query(messages)
        if not query:
            return own
        earlier = earlier_turns(messages)
        return add_context(
            query, own, as_chat_history(earlier), k, lambda context: self.search(context, k, conversation=earlier)
        )

    def fit(
        self,
        result: SearchResult,
        token_budget: int | None = None,
        *,
        present: Callable[[BaseTool], BaseTool] | None = None,
        always: Sequence[BaseTool] = (),
    ) -> SearchResult:
        """``result`` as it can be bound: the engine's rule
        (:func:`toolret.retrieval.definitions.fit_definitions`) on each tool's definition as
        ``bind_tools`` will send it. ``present`` maps a live tool to what is bound (its condensed
        copy); ``always`` are the tools sent with every selection (counted first under a budget)."""

        def bound(tool: BaseTool) -> BaseTool:
            return present(tool) if present is not None else tool

        def definition(scored: ScoredTool) -> Any:
            tool = self.live_tools.get(scored.id) or self.live_tools.by_name(scored.name)
            return self.kb.get(scored.id).definition() if tool is None else self.definitions(bound(tool))

        sent = [d for t in always if (d := self.definitions.safe(bound(t))) is not None]
        return fit_definitions(result, definition, token_budget, always=sent)

    def select(self, query: str, k: K = 5) -> list[BaseTool]:
        """The live tools that best serve ``query``."""
        return self.live(self.search(query, k), query=query)

    # ------------------------------------------------------------------ cold start
    def warmup(self, tools: Sequence[BaseTool] | None = None) -> float:
        """Load the embedding model (and the cross-encoder a preset uses) and run one search,
        so the first agent call is not the slow one; ``tools`` are indexed first when given.
        Returns the seconds it took."""
        start = time.perf_counter()
        if tools is not None:
            self.ensure(tools)
        self.kb.embedder.embed(["warm up"])
        if len(self.kb):
            self.search("warm up", 1)
        return time.perf_counter() - start

    def __len__(self) -> int:
        return len(self.kb)

    def __repr__(self) -> str:
        return f"ToolIndex({len(self.live_tools)} live tools, {self.kb!r})"


def _names(names: Sequence[str], limit: int = 10) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")
