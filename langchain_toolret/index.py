"""A toolret knowledge base together with the live LangChain tools behind its ids.

Every adapter in this package needs the same three things: index a set of LangChain tools
(once, and again only when the set changes), search, and turn retrieved ids back into the
tool objects the agent calls. :class:`ToolIndex` does exactly that and nothing more; the
retrieval itself is :meth:`toolret.ToolKnowledgeBase.search`.

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
import hashlib
import threading
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from langchain_core.tools import BaseTool

from langchain_toolret.ingest import tools_to_docs
from langchain_toolret.llm import as_toolret_llm
from toolret import RetrievalConfig, SearchResult, ToolKnowledgeBase
from toolret.retrieval.pipeline import SearchState

__all__ = ["K", "ToolIndex"]

#: How many tools to retrieve: a number, or ``"auto"`` for toolret's precise-set cut.
K = int | Literal["auto"]


class ToolIndex:
    """A knowledge base plus an id → LangChain tool map, kept in step with a tool set.

    * ``ToolIndex()`` (or ``from_tools``) owns an in-memory knowledge base and indexes the
      tools given to :meth:`ensure`; a changed tool set is synced (only new or changed tools
      are embedded) and an unchanged one costs a hash.
    * ``ToolIndex(knowledge_base=kb)`` uses a knowledge base you built (possibly holding
      more tools than the agent has, or persisted on disk); :meth:`ensure` then only binds
      the live tools by name and never writes to it.

    ``config`` (a preset name or ``RetrievalConfig``) applies to every search through this
    index without changing a given knowledge base's own. ``llm`` may be a LangChain chat model
    (wrapped in :class:`~langchain_toolret.llm.ChatModelLLM`) or a toolret LLM; it is what
    ``preset="full"`` plans and reranks with in searches through this index (None: the knowledge
    base's ``llm``). A given knowledge base is not changed, so agents sharing one can each
    bring their own model.
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
        #: The retrieval config of every search through this index (None: the knowledge base's).
        self.config = None if config is None else RetrievalConfig.resolve(config)
        #: The LLM of searches through this index (None: the knowledge base's).
        self.llm = as_toolret_llm(llm)
        if knowledge_base is None:
            knowledge_base = ToolKnowledgeBase(embedder=embedder, config=config, llm=self.llm)
        self.kb = knowledge_base
        self._by_name: dict[str, BaseTool] = {}
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
            view._by_name = dict(source._by_name)
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
        docs, live = tools_to_docs(tools)
        with self._lock:
            ids = self.kb.add(docs)
            self._by_name.update(live)
            self._identity = None
        return ids

    def ensure(self, tools: Sequence[BaseTool]) -> bool:
        """Make the index serve exactly ``tools``; returns True when it had to re-index.

        Cheap when nothing changed: the same tool objects are recognised by identity, equal
        content by hash. An owned knowledge base is synced to the new set.
        """
        identity = tuple(id(t) for t in tools)
        with self._lock:
            if identity == self._identity:
                return False
            if not self.owned:
                self._by_name = {t.name: t for t in tools}
                self._identity = identity
                return False
            docs, live = tools_to_docs(tools)
            content = _content_hash(docs)
            reindex = content != self._content
            if reindex:
                self.kb.sync(docs)
            self._by_name = live
            self._identity, self._content = identity, content
            return reindex

    async def aensure(self, tools: Sequence[BaseTool]) -> bool:
        """:meth:`ensure` off the event loop (embedding new tools takes a while)."""
        if tuple(id(t) for t in tools) == self._identity:
            return False
        return await asyncio.to_thread(self.ensure, tools)

    # ------------------------------------------------------------------ reading
    def tool(self, name: str) -> BaseTool | None:
        """The live tool named ``name`` (a knowledge-base id or name), or None."""
        return self._by_name.get(name)

    @property
    def tools(self) -> list[BaseTool]:
        return list(self._by_name.values())

    def live(self, result: SearchResult) -> list[BaseTool]:
        """The live tools of a search result, best first (ids not bound to a tool are skipped)."""
        out: list[BaseTool] = []
        for scored in result.tools:
            tool = self._by_name.get(scored.id) or self._by_name.get(scored.name)
            if tool is not None and tool not in out:
                out.append(tool)
        return out

    def search(self, query: str, k: K = 5, *, config: RetrievalConfig | str | None = None,
               history: Sequence[Any] | None = None) -> SearchResult:
        """``kb.search`` with this index's config; ``history`` = the earlier conversation (LLM planner)."""
        return self.kb.search(query, k, config=config or self.config, history=history, llm=self.llm)

    async def asearch(self, query: str, k: K = 5, *, config: RetrievalConfig | str | None = None,
                      history: Sequence[Any] | None = None) -> SearchResult:
        return await self.kb.asearch(query, k, config=config or self.config, history=history, llm=self.llm)

    def begin_search(self, query: str, k: K = 5, *, config: RetrievalConfig | str | None = None,
                     history: Sequence[Any] | None = None) -> SearchState:
        """A not yet run search over the knowledge base, for driving the pipeline stages."""
        return self.kb.begin_search(query, k, config=config or self.config, history=history, llm=self.llm)

    def select(self, query: str, k: K = 5) -> list[BaseTool]:
        """The live tools that best serve ``query``."""
        return self.live(self.search(query, k))

    def __len__(self) -> int:
        return len(self.kb)

    def __repr__(self) -> str:
        return f"ToolIndex({len(self._by_name)} live tools, {self.kb!r})"


def _content_hash(docs: Sequence[Any]) -> str:
    h = hashlib.sha256()
    for doc in docs:
        key = f"{doc.id}\0{doc.content_hash}" if hasattr(doc, "content_hash") else repr(doc)
        h.update(key.encode("utf-8", "surrogatepass") + b"\n")
    return h.hexdigest()
