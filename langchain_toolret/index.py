"""A toolret knowledge base together with the live LangChain tools behind its ids.

The engine's :class:`~toolret.agents.agent_tools.AgentTools` does the work for any framework;
:class:`ToolIndex` adds LangChain's parts: tools converted one bad tool at a time
(:mod:`langchain_toolret.tool_docs`), chat models as the LLM and definitions as ``bind_tools``
sends them; a turn's search (``search_turn``) reads LangChain messages as the engine reads any shape.

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
    >>> [t.name for t in index.live(index.search("is it raining in Paris?", k=1))]
    ['get_weather']
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from langchain_toolret.binding import ToolDefinitions
from langchain_toolret.llm import as_toolret_llm
from langchain_toolret.tool_docs import tolerant_docs
from toolret import RetrievalConfig, ToolKnowledgeBase
from toolret.agents.agent_tools import AgentTools

__all__ = ["ToolIndex"]


class ToolIndex(AgentTools):
    """A knowledge base plus an id → LangChain tool map, kept in step with a tool set.

    ``ToolIndex()`` (or ``from_tools``) owns an in-memory knowledge base; ``ToolIndex(kb)`` uses
    one you built (see :class:`~toolret.agents.agent_tools.AgentTools` for what is checked).
    ``llm`` may be a LangChain chat model (wrapped in :class:`~langchain_toolret.llm.ChatModelLLM`)
    or a toolret LLM.
    """

    def __init__(
        self,
        knowledge_base: ToolKnowledgeBase | None = None,
        *,
        config: RetrievalConfig | str | None = None,
        embedder: Any = None,
        llm: Any = None,
    ) -> None:
        super().__init__(knowledge_base, config=config, embedder=embedder, llm=as_toolret_llm(llm))
        #: Each tool's definition as ``bind_tools`` sends it (:mod:`langchain_toolret.binding`), which
        #: :meth:`~toolret.agents.agent_tools.AgentTools.fit` reads.
        self.definitions = ToolDefinitions()

    @classmethod
    def coerce(cls, source: Any, *, config: RetrievalConfig | str | None = None, llm: Any = None) -> ToolIndex:
        """A ToolIndex from tools, a ToolIndex, a ``ToolKnowledgeBase`` or anything with an
        ``index`` (a :class:`~langchain_toolret.retriever.ToolRetriever`)."""
        inner = getattr(source, "index", None)
        if isinstance(inner, ToolIndex):
            source = inner
        if isinstance(source, ToolIndex):
            return source.view(config, llm)
        if isinstance(source, ToolKnowledgeBase):
            return cls(source, config=config, llm=llm)
        return cls.from_tools(source, config=config, llm=llm)

    @classmethod
    def from_tools(cls, tools: Iterable[Any], **kwargs: Any) -> ToolIndex:
        """Index ``tools`` (LangChain tools; callables and OpenAI dicts are accepted too)."""
        index = cls(**kwargs)
        index.add(tools)
        return index

    def convert(self, tools: Iterable[Any]) -> tuple[list[Any], dict[str, Any], dict[str, Any]]:
        return tolerant_docs(tools, self.kb.config.max_doc_chars)
