"""``langgraph-bigtool``'s ``create_agent``, with toolret's retrieval behind ``retrieve_tools``.

The same arguments and return (an uncompiled ``StateGraph`` of ``messages`` + ``selected_tool_ids``);
the registry is indexed by toolret instead of a LangGraph store, so ``namespace_prefix`` is unused;
``filter`` keeps tools whose ``metadata`` holds every key/value (a scope on their metadata,
:class:`toolret.scope.tool_scope.ToolScope`, applied by the engine); ``min_score`` leaves out weak
matches. Migrating is the import (docs/langchain.md, "Migrating from langgraph-bigtool").

Example:
    >>> from langchain_core.tools import tool
    >>> from langchain_toolret.testing import ScriptedChatModel, tool_call
    >>> @tool
    ... def get_weather(city: str) -> str:
    ...     '''Current weather for a city.'''
    ...     return f"sunny in {city}"
    >>> @tool
    ... def convert_currency(amount: float, to: str) -> str:
    ...     '''Convert an amount of money into another currency.'''
    ...     return "3200"
    >>> model = ScriptedChatModel(replies=[tool_call("retrieve_tools", query="weather"),
    ...                                    tool_call("get_weather", city="Oslo"), "Sunny."])
    >>> builder = create_agent(model, {"weather": get_weather, "fx": convert_currency}, limit=1)
    >>> out = builder.compile().invoke({"messages": [("user", "weather in Oslo?")]})
    >>> out["selected_tool_ids"], out["messages"][-1].content, model.calls[1].tool_names
    (['weather'], 'Sunny.', ['retrieve_tools', 'get_weather'])
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Mapping
from typing import Annotated, Any

from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import BaseTool, InjectedToolCallId, StructuredTool
from langchain_core.tools import tool as as_tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import InjectedStore, ToolNode, tools_condition
from langgraph.types import Command

from langchain_toolret.binding import ToolDefinitions
from langchain_toolret.index import ToolIndex
from toolret import ConfigError, RetrievalConfig, ToolKnowledgeBase, validate_k
from toolret.agents.search_tool_text import at_least
from toolret.agents.working_set import add_new
from toolret.scope.tool_scope import ToolScope, scoped

__all__ = ["BigToolState", "create_agent"]

_RETRIEVE_DOC = "Retrieve a tool to use, given a search query."


class BigToolState(MessagesState):
    """``messages`` plus ``selected_tool_ids``: the registry ids retrieved so far."""

    selected_tool_ids: Annotated[list[str], add_new]  # bigtool's reducer (toolret.agents.working_set)


def _store_arg(fn: Callable[..., Any] | None) -> str | None:
    """The name of ``fn``'s ``BaseStore`` argument, if it takes one (bigtool injects the store)."""
    if fn is None:
        return None
    for name, param in inspect.signature(fn).parameters.items():
        if "BaseStore" in str(param.annotation):
            return name
    return None


def create_agent(
    llm: Any,
    tool_registry: Mapping[str, BaseTool | Callable[..., Any]],
    *,
    limit: int = 2,
    filter: dict[str, Any] | None = None,  # noqa: A002 - bigtool's name
    namespace_prefix: tuple[str, ...] = ("tools",),
    retrieve_tools_function: Callable[..., Any] | None = None,
    retrieve_tools_coroutine: Callable[..., Any] | None = None,
    knowledge_base: ToolKnowledgeBase | None = None,
    config: RetrievalConfig | str | None = None,
    min_score: float | None = None,
) -> StateGraph:
    """An uncompiled agent graph with a ``retrieve_tools`` tool over ``tool_registry`` (see the module doc).

    ``tool_registry`` maps registry ids to LangChain tools or functions; ``limit`` is the most tools
    one ``retrieve_tools`` call returns; ``retrieve_tools_function``/``_coroutine`` replace toolret's
    retrieval (query → ids); ``knowledge_base``, ``config`` and ``min_score`` are toolret's.
    """
    del namespace_prefix  # toolret indexes the registry itself
    validate_k(limit)
    tools = {key: value if isinstance(value, BaseTool) else as_tool(value) for key, value in tool_registry.items()}
    id_of = {tool.name: key for key, tool in tools.items()}
    if len(id_of) != len(tools):
        raise ConfigError("two registry entries have the same tool name; the model could not tell them apart")
    scope = ToolScope(metadata=dict(filter)) if filter else None  # the engine's scope, not a filter here
    custom = retrieve_tools_function is not None or retrieve_tools_coroutine is not None
    index: list[ToolIndex] = []
    definitions = ToolDefinitions()  # a tool that cannot be bound is left out with a warning, not the turn

    def _index() -> ToolIndex:  # built on first use, so building the graph stays cheap
        if not index:
            index.append(ToolIndex(knowledge_base, config=config))
            index[0].ensure(list(tools.values()))
        return index[0]

    def _ids(found: list[str]) -> list[str]:
        return [id_of.get(i, i) for i in found if id_of.get(i, i) in tools]

    def _answer(ids: list[str], call_id: str) -> Command:
        names = [tools[i].name for i in ids]
        message = ToolMessage(f"Available tools: {names}", tool_call_id=call_id, name="retrieve_tools")
        return Command(update={"messages": [message], "selected_tool_ids": ids})

    def _default(query: str) -> list[str]:
        with scoped(scope):  # only tools whose metadata fits ``filter`` (the search says so in its trace)
            found = _index().search(query, limit)
        result = at_least(_index().fit(found), min_score)  # and never a tool it cannot bind
        return [t.name for t in result.tools]

    store_arg = _store_arg(retrieve_tools_function or retrieve_tools_coroutine)

    def _kwargs(query: str, store: Any) -> dict[str, Any]:
        return {"query": query, **({store_arg: store} if store_arg else {})}

    def _run(query: str, call_id: str, store: Any) -> Command:
        if not custom:
            return _answer(_ids(_default(query)), call_id)
        if retrieve_tools_function is None:
            raise ConfigError("only retrieve_tools_coroutine was given: invoke the agent asynchronously")
        return _answer(_ids(list(retrieve_tools_function(**_kwargs(query, store)))), call_id)

    async def _arun(query: str, call_id: str, store: Any) -> Command:
        if retrieve_tools_coroutine is not None:
            return _answer(_ids(list(await retrieve_tools_coroutine(**_kwargs(query, store)))), call_id)
        return await asyncio.to_thread(_run, query, call_id, store)

    if store_arg:  # the store is injected only where your function asks for it (compile with a store)

        def retrieve_tools(
            query: str, tool_call_id: Annotated[str, InjectedToolCallId], store: Annotated[Any, InjectedStore()]
        ) -> Command:
            return _run(query, tool_call_id, store)

        async def aretrieve_tools(
            query: str, tool_call_id: Annotated[str, InjectedToolCallId], store: Annotated[Any, InjectedStore()]
        ) -> Command:
            return await _arun(query, tool_call_id, store)
    else:

        def retrieve_tools(query: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:  # type: ignore[misc]
            return _run(query, tool_call_id, None)

        async def aretrieve_tools(query: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:  # type: ignore[misc]
            return await _arun(query, tool_call_id, None)

    retriever = StructuredTool.from_function(
        func=retrieve_tools, coroutine=aretrieve_tools, name="retrieve_tools", description=_RETRIEVE_DOC
    )

    def _bound(state: dict[str, Any]) -> Any:
        selected = [tools[i] for i in state.get("selected_tool_ids") or [] if i in tools]
        return llm.bind_tools(definitions.bindable([retriever, *selected], "bigtool agent"))

    def call_model(state: dict[str, Any]) -> dict[str, Any]:
        return {"messages": [_bound(state).invoke(state["messages"])]}

    async def acall_model(state: dict[str, Any]) -> dict[str, Any]:
        return {"messages": [await _bound(state).ainvoke(state["messages"])]}

    builder = StateGraph(BigToolState)
    agent: Any = RunnableLambda(call_model, afunc=acall_model, name="agent")  # reads BigToolState as a dict
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([retriever, *tools.values()]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
    builder.add_edge("tools", "agent")
    return builder
