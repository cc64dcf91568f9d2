"""LangGraph building blocks: a tool-retrieval node and a model node that binds only its picks.

The selector node writes the chosen tool names into the state, the model node binds only those, a
``ToolNode`` knows every tool. Neither does nothing silently: no user message is a
:class:`toolret.QueryError`; a model node whose state has no ``selected_tools`` selects the turn's
tools itself; a tool that cannot be bound is left out with a warning naming it (docs/langchain.md).

Example::

    builder = StateGraph(ToolRetrievalState)
    builder.add_node("select_tools", create_tool_retrieval_node(all_tools, k=5))
    builder.add_node("agent", create_model_node(model, all_tools))
    builder.add_node("tools", ToolNode(all_tools))
    builder.add_edge(START, "select_tools")
    builder.add_edge("select_tools", "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    graph = builder.compile()
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, SystemMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import BaseTool
from langgraph.graph import MessagesState
from langgraph.runtime import get_runtime

from langchain_toolret.binding import ToolDefinitions
from langchain_toolret.condensed import CondensedTools
from langchain_toolret.index import ToolIndex
from langchain_toolret.ingest import tool_to_doc
from langchain_toolret.options import record_selection
from langchain_toolret.retriever import Selection, ToolRetriever
from langchain_toolret.scope import ScopeSource, scope_of, tools_in_scope
from toolret import K, QueryError, RetrievalConfig, SearchResult, ToolKnowledgeBase, validate_k
from toolret.agents.request_scope import tool_allowed
from toolret.agents.stable_tools import StableTools
from toolret.agents.working_set import slots
from toolret.scope.tool_scope import current_scope, scoped

__all__ = ["ToolRetrievalState", "create_model_node", "create_tool_retrieval_node"]

Source = Sequence[BaseTool] | ToolRetriever | ToolIndex | ToolKnowledgeBase


class ToolRetrievalState(MessagesState):
    """``messages`` plus ``selected_tools``: the tool ids the retrieval node picked."""

    selected_tools: list[str]


def create_tool_retrieval_node(
    source: Source,
    *,
    k: K | None = None,
    key: str = "selected_tools",
    messages_key: str = "messages",
    always_include: Sequence[str] = (),
    config: str | RetrievalConfig | None = None,
    llm: Any = None,
    query_builder: Callable[[list[BaseMessage]], str | None] | None = None,
    scope: ScopeSource | None = None,
    cache_stable: bool = True,
    cache_cap: int | None = None,
) -> RunnableLambda[dict[str, Any], dict[str, Any]]:
    """A node writing to ``state[key]`` the names of the tools retrieved for ``state[messages_key]``,
    ``always_include`` first.

    ``source``: tools (indexed in memory, once), a :class:`ToolRetriever` (its ``k``, ``config``,
    ``token_budget`` and condensed copies carry; ``k=``/``config=`` given here win), a ``ToolIndex`` or a
    ``ToolKnowledgeBase``. The query is the latest user message (earlier ones for a follow-up), or a
    ``query_builder``'s, searched as it is; no user message is a :class:`toolret.QueryError`. ``scope``: the
    request's tool scope from the graph's runtime context (:mod:`langchain_toolret.scope`).

    ``cache_stable`` (default): within a conversation ``state[key]`` only grows, each turn's new tools
    appended after the ones it holds, so the model node's bound list keeps the provider's prompt cache;
    past ``cache_cap`` tools (default 20, at least twice ``k``) it is rebuilt once from the turn's tools
    (:mod:`toolret.agents.stable_tools`). ``False``: each turn's own tools, best first.
    """
    selection = Selection.of(source, k=k, config=config, llm=llm)
    index, k = selection.index, selection.k
    fixed = list(dict.fromkeys(always_include))
    stable = StableTools(cache_stable, cache_cap)

    def _may_bind(name: str) -> bool:  # the model node ignores a name it does not know; the scope is kept here
        request_scope = current_scope()
        return request_scope is None or tool_allowed(index.tool(name), name, request_scope, index.kb, tool_to_doc)

    def _messages(state: dict[str, Any]) -> list[BaseMessage]:
        if messages_key not in state:
            raise QueryError(
                f"the tool retrieval node reads state[{messages_key!r}], which this graph's state "
                "does not have; pass messages_key= to name the conversation's key"
            )
        return list(state.get(messages_key) or [])

    def _update(
        state: dict[str, Any], messages: list[BaseMessage], result: SearchResult | None, query: str | None
    ) -> dict[str, Any]:
        if result is None:
            raise QueryError(
                f"the tool retrieval node found no user message in state[{messages_key!r}]: there "
                "is nothing to select tools for (run it after the user's message)"
            )
        index.check_always_include(fixed, "the tool retrieval node")
        result = selection.fit(result)  # a tool that cannot be bound is left out, with a warning and a trace step
        held = state.get(key)
        growth = stable.next(
            messages,
            None if held is None else [n for n in held if n not in fixed],
            [n for n in index.names(result, query=query) if n not in fixed],
            slots=slots(k, index.config or index.kb.config),
            keep=_may_bind,
            fits=index.fits(selection.token_budget, present=selection.present),
            owner="the tool retrieval node",
        )
        names = list(dict.fromkeys([*fixed, *growth.names]))
        record_selection("tool_selection", query or result.query, result, names)
        return {key: names}

    def select(state: dict[str, Any]) -> dict[str, Any]:
        request_scope = _runtime_scope(scope)
        with scoped(request_scope):
            return _in_scope(_select(state), request_scope)

    async def aselect(state: dict[str, Any]) -> dict[str, Any]:
        request_scope = _runtime_scope(scope)
        with scoped(request_scope):
            return _in_scope(await _aselect(state), request_scope)

    def _in_scope(update: dict[str, Any], request_scope: Any) -> dict[str, Any]:
        if request_scope is None:
            return update
        live = [t for name in update[key] if (t := index.tool(name)) is not None]
        kept = {t.name for t in tools_in_scope(live, request_scope, index)}
        return {key: [n for n in update[key] if n in kept]}  # always_include too: nothing outside the scope

    def _select(state: dict[str, Any]) -> dict[str, Any]:
        messages = _messages(state)
        query = query_builder(messages) if query_builder is not None else None
        return _update(state, messages, index.search_turn(None if query_builder else messages, k, query=query), query)

    async def _aselect(state: dict[str, Any]) -> dict[str, Any]:
        messages = _messages(state)
        query = query_builder(messages) if query_builder is not None else None
        found = await index.asearch_turn(None if query_builder else messages, k, query=query)
        return _update(state, messages, found, query)

    return RunnableLambda(select, afunc=aselect, name="tool_retrieval")


def _runtime_scope(source: ScopeSource | None) -> Any:
    """The running graph's per-request scope (None: none configured), read from its runtime context."""
    return None if source is None else scope_of(source, get_runtime())


def create_model_node(
    model: BaseChatModel,
    tools: Sequence[BaseTool],
    *,
    key: str = "selected_tools",
    messages_key: str = "messages",
    system_prompt: str | None = None,
    condensed_descriptions: bool = False,
    cards: ToolIndex | ToolKnowledgeBase | ToolRetriever | None = None,
    k: K = 5,
    config: str | RetrievalConfig | None = None,
    scope: ScopeSource | None = None,
) -> RunnableLambda[dict[str, Any], dict[str, Any]]:
    """A node that calls ``model`` with only the tools named in ``state[key]`` bound.

    ``tools`` are all the graph's tools (its ``ToolNode``'s); names not among them are ignored. A state
    without ``key`` (no selector node) makes the node select ``k`` tools for the user turn itself, over
    ``tools`` or ``cards``. ``condensed_descriptions`` binds copies described by the condensed card of
    ``cards``' knowledge base; ``scope``: no tool outside the request's scope is bound.
    """
    by_name = {t.name: t for t in tools}
    k = validate_k(k)
    source = cards.index if isinstance(cards, ToolRetriever) else cards
    condensed = CondensedTools(source) if condensed_descriptions else None
    own: list[ToolIndex] = []
    definitions = source.definitions if isinstance(source, ToolIndex) else ToolDefinitions()

    def _index() -> ToolIndex:
        if not own:
            if isinstance(source, ToolIndex):
                own.append(source)
            else:
                index = ToolIndex(source, config=config)
                index.ensure(list(tools))
                own.append(index)
        return own[0]

    def _select(state: dict[str, Any], messages: list[BaseMessage]) -> list[str]:
        if key in state:
            return list(state.get(key) or [])
        result = _index().search_turn(messages, k)
        result = _index().fit(result) if result is not None else None
        names = _index().names(result) if result is not None else []
        if result is not None:
            record_selection("tool_selection", result.query, result, names)
        return names

    def _call(state: dict[str, Any]) -> tuple[Any, list[BaseMessage]]:
        messages = list(state.get(messages_key) or [])
        request_scope = _runtime_scope(scope)
        with scoped(request_scope):
            selected = [by_name[i] for i in _select(state, messages) if i in by_name]
        selected = tools_in_scope(selected, request_scope, own[0] if own else None)
        if condensed is not None:
            selected = condensed.tools(selected)
        selected = definitions.bindable(selected, "model node")  # one unbindable tool never ends the turn
        bound = model.bind_tools(selected) if selected else model
        if system_prompt:
            messages = [SystemMessage(system_prompt), *messages]
        return bound, messages

    def call(state: dict[str, Any]) -> dict[str, Any]:
        bound, messages = _call(state)
        return {messages_key: [bound.invoke(messages)]}

    async def acall(state: dict[str, Any]) -> dict[str, Any]:
        if key not in state and not own:
            await asyncio.to_thread(_index)  # the first indexing embeds every tool: off the loop
        bound, messages = await asyncio.to_thread(_call, state) if key not in state else _call(state)
        return {messages_key: [await bound.ainvoke(messages)]}

    return RunnableLambda(call, afunc=acall, name="model")
