"""``ToolRetriever``: toolret as a LangChain retriever of tools.

One ``Document`` per retrieved tool (``id``: the tool id; ``metadata``: the score's evidence), so
anything that consumes retrievers works with tools; :meth:`ToolRetriever.get_tools` gives the live
tools instead, ready for ``bind_tools``. :class:`Selection` carries a retriever's settings into the
LangGraph node and subgraph built over it.

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
    >>> retriever = ToolRetriever.from_tools([get_weather, convert_currency], k=1)
    >>> doc = retriever.invoke("how many yen is 20 euros?")[0]
    >>> doc.id, doc.metadata["name"], sorted(doc.metadata)
    ('convert_currency', 'convert_currency', ['anchor', 'field_scores', 'floor_shift', 'name', 'penalty', 'score', 'strength_shift', 'subtask'])
    >>> [t.name for t in retriever.get_tools("is it raining in Paris?")]
    ['get_weather']
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.tools import BaseTool
from pydantic import ConfigDict, Field, PrivateAttr, field_validator

from langchain_toolret.condensed import CondensedTools
from langchain_toolret.index import ToolIndex
from toolret import K, RetrievalConfig, SearchResult, ToolKnowledgeBase, validate_k
from toolret.agents import adapter_options
from toolret.errors import QueryError
from toolret.scope.tool_scope import Where, scoped
from toolret.search.token_budget import validate_budget

__all__ = ["Selection", "ToolRetriever", "result_to_documents"]


def result_to_documents(result: SearchResult, index: ToolIndex | ToolKnowledgeBase) -> list[Document]:
    """One ``Document`` per retrieved tool: the tool's card as content, the evidence as metadata."""
    kb = index.kb if isinstance(index, ToolIndex) else index
    return [
        Document(id=t.id, page_content=kb.get(t.id).card(), metadata={"name": t.name, **t.evidence()})
        for t in result.tools
    ]


class ToolRetriever(BaseRetriever):
    """Retrieve the tools that serve a query from a toolret knowledge base.

    Build it from LangChain tools (:meth:`from_tools`) or over a knowledge base
    (``ToolRetriever(knowledge_base=kb)``; after reopening one, bind the live tools with ``kb.bind``
    for :meth:`get_tools`). ``k`` (or ``"auto"``) is the default, ``invoke(query, k=3)`` overrides it;
    ``config`` applies to every search; ``condensed_descriptions`` makes :meth:`get_tools` return
    copies described by their condensed card; ``token_budget`` keeps the definitions handed out
    within that many tokens. A tool that cannot be bound is left out with a warning naming it.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    index: ToolIndex = Field(exclude=True)
    k: K = 5
    config: RetrievalConfig | str | None = None
    condensed_descriptions: bool = False
    token_budget: int | None = None
    _condensed: CondensedTools | None = PrivateAttr(default=None)

    def __init__(self, knowledge_base: ToolKnowledgeBase | ToolIndex | None = None, **data: Any) -> None:
        if knowledge_base is not None:
            data["index"] = knowledge_base if isinstance(knowledge_base, ToolIndex) else ToolIndex(knowledge_base)
        super().__init__(**data)

    @field_validator("k")
    @classmethod
    def _check_k(cls, value: K) -> K:
        return validate_k(value)

    @field_validator("token_budget")
    @classmethod
    def _check_budget(cls, value: int | None) -> int | None:
        return validate_budget(value)

    @classmethod
    def from_tools(
        cls,
        tools: Iterable[BaseTool | Any],
        *,
        k: K = 5,
        config: str | RetrievalConfig | None = None,
        embedder: Any = None,
        llm: Any = None,
        condensed_descriptions: bool = False,
        token_budget: int | None = None,
    ) -> ToolRetriever:
        """Index ``tools`` in an in-memory knowledge base and retrieve from it (``llm``: for ``"full"``)."""
        index = ToolIndex.from_tools(tools, config=config, embedder=embedder, llm=llm)
        return cls(index=index, k=k, condensed_descriptions=condensed_descriptions, token_budget=token_budget)

    @property
    def knowledge_base(self) -> ToolKnowledgeBase:
        return self.index.kb

    def _k(self, k: K | None) -> K:
        if k is None:
            return self.k
        return validate_k(k)

    def search(self, query: str, k: K | None = None, *, where: Where | None = None) -> SearchResult:
        """The raw toolret result (ids, scores, plan and trace) for ``query``; ``where``: this call's
        tool scope (:class:`toolret.ToolScope`; :mod:`toolret.scope.tool_scope`)."""
        with scoped(where):
            return self._fit(self.index.search(query, self._k(k), config=self.config))

    async def asearch(self, query: str, k: K | None = None, *, where: Where | None = None) -> SearchResult:
        with scoped(where):
            result = await self.index.asearch(query, self._k(k), config=self.config)
        return await asyncio.to_thread(self._fit, result)  # the first count loads a tokenizer

    def _fit(self, result: SearchResult) -> SearchResult:
        """The tools as :meth:`get_tools` hands them out: bindable, within ``token_budget``."""
        return self.index.fit(result, self.token_budget, present=self._one)

    def _one(self, tool: BaseTool) -> BaseTool:
        return self._present([tool])[0]

    def _present(self, tools: list[BaseTool]) -> list[BaseTool]:
        if not self.condensed_descriptions:
            return tools
        if self._condensed is None or self._condensed.source is not self.index:
            self._condensed = CondensedTools(self.index)
        return self._condensed.tools(tools)

    def get_tools(self, query: str, k: K | None = None, *, where: Where | None = None) -> list[BaseTool]:
        """The live LangChain tools for ``query``, best first, ready for ``bind_tools``
        (condensed copies with ``condensed_descriptions``); ``where``: this call's tool scope."""
        return self._present(self.index.live(self.search(query, k, where=where), query=query))

    async def aget_tools(self, query: str, k: K | None = None, *, where: Where | None = None) -> list[BaseTool]:
        return self._present(self.index.live(await self.asearch(query, k, where=where), query=query))

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        k: K | None = None,
        where: Where | None = None,
    ) -> list[Document]:
        _check_query(query)
        return result_to_documents(self.search(query, k, where=where), self.index)

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        k: K | None = None,
        where: Where | None = None,
    ) -> list[Document]:
        _check_query(query)
        return result_to_documents(await self.asearch(query, k, where=where), self.index)


class Selection(adapter_options.Selection):
    """The engine's :class:`~toolret.agents.adapter_options.Selection` over a source: a
    :class:`ToolRetriever` source brings its own settings, so a node or graph built over one selects
    as the retriever does; what the caller passes explicitly wins."""

    index: ToolIndex

    @classmethod
    def of(
        cls, source: Any, *, k: K | None = None, config: RetrievalConfig | str | None = None, llm: Any = None
    ) -> Selection:
        if not isinstance(source, ToolRetriever):
            return cls(ToolIndex.coerce(source, config=config, llm=llm), validate_k(5 if k is None else k))
        index = ToolIndex.coerce(source.index, config=config or source.config, llm=llm)
        present = source._one if source.condensed_descriptions else None
        return cls(index, validate_k(source.k if k is None else k), source.token_budget, present)


def _check_query(query: Any) -> None:
    if not isinstance(query, str):
        raise QueryError(f"ToolRetriever takes a text query, not {type(query).__name__}")
