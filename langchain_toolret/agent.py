"""Agentic tool search: the model finds its own tools (``search_tools``), with a bounded working set.

Built on LangChain's ``create_agent`` (so its options and middleware work as usual); the bound set
is the engine's least-recently-used list of at most ``max_tools`` names
(:func:`toolret.agents.working_set.lru_add`), seeded each user turn with ``seed_k`` tools for the
user message. docs/langchain.md ("Agentic mode") says how it differs from langgraph-bigtool.

Example::

    agent = create_tool_search_agent(model, tools=all_tools, max_tools=8, checkpointer=InMemorySaver())
    agent.invoke({"messages": [("user", "convert 20 euros to yen")]},
                 {"configurable": {"thread_id": "1"}})
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any

from langchain.agents import create_agent as create_langchain_agent
from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest
from langchain.agents.middleware.types import OmitFromInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool
from typing_extensions import NotRequired

from langchain_toolret.conversation import conversation_query
from langchain_toolret.narrowing import DEFAULT_TOOL_LIMIT, Fallback, NarrowingMiddleware, Step
from langchain_toolret.scope import ScopeSource
from langchain_toolret.search_tool import DEFAULT_SEARCH_TOOL_NAME
from toolret import RetrievalConfig, SearchResult, ToolKnowledgeBase
from toolret.agents.fixed_tools import check_agentic
from toolret.agents.working_set import lru_add, rebind

__all__ = ["ToolSearchMiddleware", "ToolSearchState", "create_tool_search_agent", "lru_add"]

_KEY = "selected_tool_ids"


class ToolSearchState(AgentState[Any]):
    """Agent state plus ``selected_tool_ids``: the bound tools, least recently used first."""

    selected_tool_ids: NotRequired[Annotated[list[str], OmitFromInput]]


class ToolSearchMiddleware(NarrowingMiddleware):
    """The agentic mode's middleware: bind the searched, seeded and used tools, at most ``max_tools``.

    See :func:`create_tool_search_agent` for the arguments.
    """

    state_schema = ToolSearchState

    def __init__(
        self,
        *,
        max_tools: int = 10,
        search_k: int = 5,
        seed_k: int = 3,
        knowledge_base: ToolKnowledgeBase | None = None,
        config: str | RetrievalConfig | None = None,
        llm: Any = None,
        embedder: Any = None,
        always_include: Sequence[str] = (),
        search_tool_name: str = DEFAULT_SEARCH_TOOL_NAME,
        search_min_score: float | None = None,
        fallback: Fallback = "always_include",
        tool_limit: int = DEFAULT_TOOL_LIMIT,
        query_builder: Callable[[list[BaseMessage]], str | None] | None = None,
        condensed_descriptions: bool = False,
        scope: ScopeSource | None = None,
    ) -> None:
        check_agentic((), search_tool_name, max_tools, seed_k, search_k)  # toolret.agents.fixed_tools
        super().__init__(
            knowledge_base=knowledge_base,
            config=config,
            llm=llm,
            embedder=embedder,
            always_include=always_include,
            search_tool=search_tool_name,
            search_k=search_k,
            fallback=fallback,
            condensed_descriptions=condensed_descriptions,
            tool_limit=tool_limit,
            search_min_score=search_min_score,
            scope=scope,
        )
        self.max_tools = max_tools
        self.seed_k = seed_k
        self.query_builder = query_builder

    def _prepare(self, request: ModelRequest[Any], step: Step) -> None:
        messages: list[BaseMessage] = list(request.messages)
        bound: Any = dict(request.state).get(_KEY) if isinstance(request.state, dict) else None
        step.data["bound"] = list(bound or [])
        if self.seed_k and messages and isinstance(messages[-1], HumanMessage):
            step.query = (self.query_builder or conversation_query)(messages)
            step.k = self.seed_k
            if self.query_builder is None:
                step.messages = messages  # the follow-up rule of ToolIndex.search_turn
        # Tool results since the model's last answer: what it searched for and what it used.
        last_ai = max((i for i, m in enumerate(messages) if isinstance(m, AIMessage)), default=-1)
        step.data["results"] = [m for m in messages[last_ai + 1 :] if isinstance(m, ToolMessage)]

    def _finish(
        self, request: ModelRequest[Any], step: Step, result: SearchResult | None
    ) -> tuple[list[str], dict[str, Any] | None]:
        old: list[str] = step.data["bound"]
        seeded = [t.name for t in self.index.live(result, query=step.query)] if result is not None else []
        events = [  # a search's answer names what it found; any other result is a call
            ([str(n) for n in m.artifact], True) if m.name == self.search_tool_name else ([str(m.name)], False)
            for m in step.data["results"]
            if m.name != self.search_tool_name or isinstance(m.artifact, list)
        ]
        bound = rebind(old, seeded, events, {t.name for t in step.candidates}, self.max_tools)  # the engine's rule
        # The model sees the bound set in a fixed (name) order: the prompt prefix changes only
        # when the set does, not when recency does.
        return sorted(bound), ({_KEY: bound} if bound != old else None)


def create_tool_search_agent(
    model: Any,
    tools: Sequence[BaseTool | Callable[..., Any] | dict[str, Any]],
    *,
    max_tools: int = 10,
    search_k: int = 5,
    seed_k: int = 3,
    knowledge_base: ToolKnowledgeBase | None = None,
    config: str | RetrievalConfig | None = None,
    llm: Any = None,
    always_include: Sequence[str] = (),
    search_tool_name: str = DEFAULT_SEARCH_TOOL_NAME,
    search_min_score: float | None = None,
    condensed_descriptions: bool = False,
    scope: ScopeSource | None = None,
    system_prompt: Any = None,
    state_schema: type[Any] | None = None,
    middleware: Sequence[AgentMiddleware[Any, Any, Any]] = (),
    **kwargs: Any,
) -> Any:
    """A LangChain agent that searches its own tools (toolret retrieval behind ``search_tools``).

    Args:
        model: a chat model or ``"provider:model"`` string, as for LangChain's ``create_agent``.
        tools: every tool the agent may use; at most ``max_tools`` (plus ``search_tools`` and
            ``always_include``) are bound to one model call, the least recently used evicted first.
        search_k, search_min_score: most tools one search returns, and the score below which a
            found tool is left out (None: keep all), so a vague search does not bind weak matches.
        seed_k: tools pre-retrieved from each new user message (0: the model must search).
        knowledge_base, config, llm, always_include, condensed_descriptions, scope: as for
            :class:`~langchain_toolret.middleware.ToolSelectionMiddleware` (``scope``: the request's
            tool scope from the runtime context; pass ``context_schema=`` for it).
        system_prompt, state_schema, middleware, and any other keyword: passed to
            ``langchain.agents.create_agent`` (a custom ``state_schema`` is merged with :class:`ToolSearchState`).

    Returns:
        The compiled LangGraph agent.
    """
    check_agentic([getattr(t, "name", None) for t in tools], search_tool_name, max_tools, seed_k, search_k)
    searcher = ToolSearchMiddleware(
        max_tools=max_tools,
        search_k=search_k,
        seed_k=seed_k,
        knowledge_base=knowledge_base,
        config=config,
        llm=llm,
        always_include=always_include,
        search_tool_name=search_tool_name,
        search_min_score=search_min_score,
        condensed_descriptions=condensed_descriptions,
        scope=scope,
    )
    return create_langchain_agent(
        model,
        tools=list(tools),
        system_prompt=system_prompt,
        middleware=[searcher, *middleware],
        state_schema=state_schema,
        **kwargs,
    )
