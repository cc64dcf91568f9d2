"""LangGraph building blocks: a tool-retrieval node and a model node that binds only its picks.

The LangGraph pattern for large tool sets: a selector node writes the chosen tool ids into the
state; the model node binds only those tools (``bind_tools``); a ``ToolNode`` knows every
tool, so whatever the model calls can run. Both nodes work in sync and async graphs (the
async path searches off the event loop).

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

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, SystemMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import BaseTool
from langgraph.graph import MessagesState

from langchain_toolret.condensed import CondensedTools
from langchain_toolret.conversation import conversation_query
from langchain_toolret.index import K, ToolIndex
from langchain_toolret.retriever import ToolRetriever
from toolret import RetrievalConfig, SearchResult, ToolKnowledgeBase

__all__ = ["ToolRetrievalState", "create_model_node", "create_tool_retrieval_node"]

Source = Sequence[BaseTool] | ToolRetriever | ToolIndex | ToolKnowledgeBase


class ToolRetrievalState(MessagesState):
    """``messages`` plus ``selected_tools``: the tool ids the retrieval node picked."""

    selected_tools: list[str]


def create_tool_retrieval_node(
    source: Source,
    *,
    k: K = 5,
    key: str = "selected_tools",
    messages_key: str = "messages",
    always_include: Sequence[str] = (),
    preset: str | RetrievalConfig | None = None,
    llm: Any = None,
    query_builder: Callable[[list[BaseMessage]], str | None] | None = None,
) -> RunnableLambda[dict[str, Any], dict[str, Any]]:
    """A node that reads the conversation from ``state[messages_key]`` and writes the names
    (the ids LangChain and ``ToolNode`` use) of the retrieved tools, ``always_include``
    first, to ``state[key]``.

    ``source`` is the tools to index (in memory, once), a :class:`ToolRetriever`, a
    :class:`~langchain_toolret.index.ToolIndex` or a prebuilt ``ToolKnowledgeBase``. A
    conversation without a user message selects only ``always_include``.
    """
    index = ToolIndex.coerce(source, config=preset, llm=llm)
    build = query_builder or conversation_query
    fixed = list(dict.fromkeys(always_include))

    def _update(result: SearchResult | None) -> dict[str, Any]:
        ids = [] if result is None else [t.name for t in result.tools]
        return {key: list(dict.fromkeys([*fixed, *ids]))}

    def select(state: dict[str, Any]) -> dict[str, Any]:
        query = build(list(state.get(messages_key) or []))
        return _update(index.search(query, k) if query else None)

    async def aselect(state: dict[str, Any]) -> dict[str, Any]:
        query = build(list(state.get(messages_key) or []))
        return _update(await index.asearch(query, k) if query else None)

    return RunnableLambda(select, afunc=aselect, name="tool_retrieval")


def create_model_node(
    model: BaseChatModel,
    tools: Sequence[BaseTool],
    *,
    key: str = "selected_tools",
    messages_key: str = "messages",
    system_prompt: str | None = None,
    condensed_descriptions: bool = False,
    cards: ToolIndex | ToolKnowledgeBase | ToolRetriever | None = None,
) -> RunnableLambda[dict[str, Any], dict[str, Any]]:
    """A node that calls ``model`` with only the tools whose ids are in ``state[key]`` bound.

    ``tools`` are all the tools the graph knows (the same list its ``ToolNode`` gets); ids
    not among them are ignored, so a stale selection cannot bind a tool that does not exist.
    ``condensed_descriptions=True`` (opt-in) binds copies of the selected tools described by
    their condensed card (:mod:`langchain_toolret.condensed`): the card the knowledge base of
    ``cards`` holds for the tool (an LLM card when one was written), else the offline card.
    The ``ToolNode`` still runs the user's own tools.
    """
    by_name = {t.name: t for t in tools}
    source = cards.index if isinstance(cards, ToolRetriever) else cards
    condensed = CondensedTools(source) if condensed_descriptions else None

    def _call(state: dict[str, Any]) -> tuple[Any, list[BaseMessage]]:
        selected = [by_name[i] for i in state.get(key) or [] if i in by_name]
        if condensed is not None:
            selected = condensed.tools(selected)
        bound = model.bind_tools(selected) if selected else model
        messages = list(state.get(messages_key) or [])
        if system_prompt:
            messages = [SystemMessage(system_prompt), *messages]
        return bound, messages

    def call(state: dict[str, Any]) -> dict[str, Any]:
        bound, messages = _call(state)
        return {messages_key: [bound.invoke(messages)]}

    async def acall(state: dict[str, Any]) -> dict[str, Any]:
        bound, messages = _call(state)
        return {messages_key: [await bound.ainvoke(messages)]}

    return RunnableLambda(call, afunc=acall, name="model")
