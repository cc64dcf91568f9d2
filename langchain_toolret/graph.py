"""The retrieval pipeline as a LangGraph subgraph: one node per phase, the reflection loop as an edge.

Each node runs the engine's own stage (:meth:`toolret.search.search.Search.run_stage`) and each
edge asks the search which stage follows (``next_stage``), so the subgraph returns exactly what
``ToolKnowledgeBase.search`` returns, with every phase in LangGraph's streaming and tracing.
Input ``messages`` or ``query``; output ``selected_tools`` (``always_include`` first), ``trace`` and
``result``; the engine's state is an untracked channel (never checkpointed). A parent graph
without ``selected_tools`` would drop the output: pass ``parent=`` and it is refused at build time.

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
    >>> graph = build_tool_retrieval_graph([get_weather, convert_currency], k=2, config="balanced")
    >>> out = graph.invoke({"query": "weather in Paris and 20 euros in yen"})
    >>> sorted(out["selected_tools"]), [s.stage for s in out["trace"]][:2]
    (['convert_currency', 'get_weather'], ['plan', 'embed_query'])
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Annotated, Any

from langchain_core.messages import AnyMessage, BaseMessage
from langchain_core.runnables import RunnableLambda
from langgraph.channels.untracked_value import UntrackedValue
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import NotRequired, TypedDict

from langchain_toolret.conversation import conversation_query
from langchain_toolret.retriever import Selection
from toolret import ConfigError, K, QueryError, RetrievalConfig, SearchResult, TraceStep
from toolret.search.search import Search, StageName

__all__ = [
    "ToolRetrievalGraphInput",
    "ToolRetrievalGraphOutput",
    "ToolRetrievalGraphState",
    "build_tool_retrieval_graph",
    "check_parent_state",
]


class ToolRetrievalGraphInput(TypedDict):
    """What the subgraph reads: the conversation, or an explicit ``query`` (which wins)."""

    messages: NotRequired[Annotated[list[AnyMessage], add_messages]]
    query: NotRequired[str]


class ToolRetrievalGraphOutput(TypedDict):
    """What the subgraph writes back (to its parent's keys of the same names)."""

    selected_tools: list[str]
    trace: list[TraceStep]
    result: SearchResult


class ToolRetrievalGraphState(ToolRetrievalGraphInput, ToolRetrievalGraphOutput, total=False):
    """Input and output keys, plus the engine's search state (untracked: never checkpointed)."""

    search: Annotated[Search | None, UntrackedValue]


def _node(name: str, fn: Callable[[dict[str, Any]], dict[str, Any]]) -> RunnableLambda[Any, Any]:
    """A graph node running ``fn`` on the sync path, and in a worker thread on the async path."""

    async def afn(state: dict[str, Any]) -> dict[str, Any]:
        return await asyncio.to_thread(fn, state)

    return RunnableLambda(fn, afunc=afn, name=name)


def _search(state: dict[str, Any]) -> Search:
    search = state.get("search")
    if search is None:
        raise RuntimeError(
            "the search state is missing (a run resumed mid-search from a checkpoint?); "
            "invoke the retrieval graph again"
        )
    return search


def build_tool_retrieval_graph(
    source: Any,
    *,
    k: K | None = None,
    config: str | RetrievalConfig | None = None,
    llm: Any = None,
    always_include: Sequence[str] = (),
    query_builder: Callable[[list[BaseMessage]], str | None] | None = None,
    name: str = "tool_retrieval",
    parent: Any = None,
) -> Any:
    """Compile the retrieval phases into a LangGraph graph over ``source``.

    Args:
        source: LangChain tools (indexed in memory, once), a ``ToolIndex``, a ``ToolRetriever``
            (its ``k``, ``config``, ``token_budget`` and condensed copies carry) or a ``ToolKnowledgeBase``.
        k, config, llm: tools to select (default: the retriever's, else 5), the preset
            (``"balanced"`` plans offline and reflects, ``"full"`` uses ``llm``), the chat model.
        always_include: tool names put first in ``selected_tools`` whatever the search finds.
        query_builder: conversation → query, searched as it is (default: the latest user message).
        name: the compiled graph's name (how a parent graph's trace shows it).
        parent: the parent ``StateGraph`` builder (or its state schema), checked now: a parent that
            would drop ``selected_tools`` is an error.

    Returns:
        A compiled ``StateGraph``, standalone or a node of a graph with ``messages`` and ``selected_tools``.
    """
    if parent is not None:
        check_parent_state(parent)
    selection = Selection.of(source, k=k, config=config, llm=llm)
    index, k = selection.index, selection.k
    build = query_builder or conversation_query
    fixed = list(dict.fromkeys(always_include))

    def begin(state: dict[str, Any]) -> dict[str, Any]:
        query = state.get("query") or build(list(state.get("messages") or []))
        if not query:
            raise QueryError(
                "the tool retrieval graph got neither a query nor a user message in 'messages': "
                "there is nothing to select tools for"
            )
        return {"search": index.begin_search(query, k)}

    def stage_node(stage: StageName) -> Callable[[dict[str, Any]], dict[str, Any]]:
        def run(state: dict[str, Any]) -> dict[str, Any]:
            (search := _search(state)).run_stage(stage)
            return {"search": search}

        return run

    def route(done: StageName | None) -> Callable[[dict[str, Any]], str]:
        # The search decides which stage follows, as in ToolKnowledgeBase.search.
        def after(state: dict[str, Any]) -> str:
            search = state.get("search")
            return (search.next_stage(done) if search is not None else None) or "finish"

        return after

    def finish(state: dict[str, Any]) -> dict[str, Any]:
        index.check_always_include(fixed, f"the {name} graph")
        result = _search(state).finish()
        if not state.get("query") and query_builder is None:
            result = index.follow_up(list(state.get("messages") or []), result, k)
        result = selection.fit(result)  # a tool that cannot be bound is left out, with a warning and a trace step
        names = [t.name for t in result.tools]
        return {
            "selected_tools": list(dict.fromkeys([*fixed, *names])),
            "trace": list(result.trace),
            "result": result,
            "search": None,
        }

    builder = StateGraph(
        ToolRetrievalGraphState, input_schema=ToolRetrievalGraphInput, output_schema=ToolRetrievalGraphOutput
    )
    builder.add_node("begin", _node("begin", begin))
    for stage in Search.STAGES:
        builder.add_node(stage, _node(stage, stage_node(stage)))
    builder.add_node("finish", _node("finish", finish))
    builder.add_edge(START, "begin")
    builder.add_conditional_edges("begin", route(None))
    for stage in Search.STAGES:
        builder.add_conditional_edges(stage, route(stage))
    builder.add_edge("finish", END)
    return builder.compile(name=name)


def check_parent_state(parent: Any) -> None:
    """Refuse, at build time, a parent graph (a ``StateGraph`` builder or a state schema) whose
    state has no ``selected_tools`` key: LangGraph would silently drop the subgraph's output."""
    from typing import get_type_hints

    channels = getattr(parent, "channels", None)
    keys = set(channels) if isinstance(channels, dict) else set(get_type_hints(parent, include_extras=False))
    if "selected_tools" not in keys:
        label = getattr(parent, "__name__", None) or type(parent).__name__
        raise ConfigError(
            f"the parent graph's state ({label}) has no 'selected_tools' key, so LangGraph would drop the tool "
            "retrieval graph's output; build the parent on langchain_toolret.ToolRetrievalState (MessagesState + "
            "selected_tools) or add 'selected_tools: list[str]' to its state"
        )
