"""``ToolSelectionMiddleware``: hand a ``create_agent`` model only the tools the turn needs.

``create_agent(model, tools=ALL, middleware=[ToolSelectionMiddleware(k=5)])`` is the whole set-up:
before each model call ``request.tools`` is narrowed to the tools toolret retrieves for the current
user turn (the latest user message; earlier ones only for a follow-up), pinned for the turn's tool
loop. What it adds to LangChain's ``LLMToolSelectorMiddleware``, whose keywords it accepts, is in
docs/langchain.md; the per-tool rules (degradation, what cannot be bound, the token budget) are the
engine's (:mod:`toolret.agents.agent_tools`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal

from langchain.agents.middleware import AgentState, ModelRequest
from langchain.agents.middleware.types import PrivateStateAttr
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from typing_extensions import NotRequired

from langchain_toolret.conversation import conversation_query, current_turn, earlier_turns, tool_results, turn_key
from langchain_toolret.llm import resolve_chat_model
from langchain_toolret.narrowing import DEFAULT_TOOL_LIMIT, Fallback, NarrowingMiddleware, Step
from langchain_toolret.scope import ScopeSource
from toolret import K, QueryError, RetrievalConfig, SearchResult, ToolKnowledgeBase
from toolret.agents.selector_options import UNSET, check_one_model, parsing_fallback, selector_k, with_selector_options
from toolret.agents.stable_tools import StableTools
from toolret.agents.working_set import found_by_search, pin_record, pinned_selection, slots

__all__ = ["OnParsingFailure", "ToolSelectionMiddleware", "ToolSelectionState"]

_KEY = "toolret_selection"
#: LangChain's ``on_parsing_failure``: what the turn gets when the LLM's answer stays malformed.
OnParsingFailure = Literal["error", "none", "all"] | Sequence[str] | Callable[[Any], Sequence[str]]


class ToolSelectionState(AgentState[Any]):
    """Agent state plus the turn's pinned selection ``{"turn", "query", "tools", "bound"}`` (private):
    ``tools`` the turn's own, ``bound`` the conversation's cache-stable list."""

    toolret_selection: NotRequired[Annotated[dict[str, Any] | None, PrivateStateAttr]]


class ToolSelectionMiddleware(NarrowingMiddleware):
    """Narrow each model call's tools to those toolret retrieves for the current user turn.

    Args:
        k: tools per turn, or ``"auto"``; ``max_tools`` is the same (LangChain's name; ``None``: ``"auto"``).
        knowledge_base: a prebuilt knowledge base holding every agent tool (one missing is a
            ``KnowledgeBaseError``; extra ones are never offered); default: index ``request.tools``.
        config: retrieval preset or ``RetrievalConfig`` (default ``"full"`` with an LLM, else ``"fast"``).
        llm, model: a chat model (or toolret LLM; ``model`` may be a ``"provider:model"`` string) for the
            LLM steps; none means retrieval only, not the agent's model.
        system_prompt, max_retries, on_parsing_failure: LangChain's, for the LLM steps
            (:mod:`toolret.agents.selector_options`); ``on_parsing_failure`` is ``"error"`` (raise),
            ``"none"`` (``always_include`` only), ``"all"``, names, or a function of the raw answer.
        embedder: the embedding model of an indexed-on-first-use knowledge base.
        always_include: tool names offered on every call, outside ``k`` (an unknown one is a ``ConfigError``).
        search_tool, search_k: add the ``search_tools`` escape hatch (``True`` or its name), and its k.
        fallback: what selection failing offers: ``"all"``, ``"always_include"`` or names.
        tool_limit: most tools one model call is sent, the fallback included (default 128).
        query_builder: conversation → query, searched as it is (default: the latest user message,
            earlier ones for a follow-up).
        condensed_descriptions: bind copies described by their condensed card (``always_include`` too).
        token_budget: tokens the turn's definitions may take as bound (fixed tools counted first); a
            budget no selected tool fits binds the best one, with a warning, when no fixed tool is sent.
        scope: the request's tool scope (:mod:`langchain_toolret.scope`): a runtime-context key, a
            function of the context, or a fixed scope; no tool outside it is bound or run.
        cache_stable: keep the provider's prompt cache (default): within a conversation the bound list
            only grows, each turn's new tools appended (:mod:`toolret.agents.stable_tools`); ``False``
            binds each turn's own tools only, best first.
        cache_cap: tools the cache-stable list holds before it is rebuilt once from the turn's tools
            (default 20, at least twice ``k``; docs/prompt-cache.md gives its cost).

    Example::

        agent = create_agent(model, tools=all_tools,
                             middleware=[ToolSelectionMiddleware(k=5, always_include=["ask_user"])])
    """

    state_schema = ToolSelectionState

    def __init__(
        self,
        k: K | None = None,
        *,
        max_tools: int | None = UNSET,
        knowledge_base: ToolKnowledgeBase | None = None,
        config: str | RetrievalConfig | None = None,
        llm: Any = None,
        embedder: Any = None,
        always_include: Sequence[str] | None = (),
        search_tool: bool | str = False,
        search_k: int = 5,
        fallback: Fallback = "all",
        tool_limit: int = DEFAULT_TOOL_LIMIT,
        query_builder: Callable[[list[BaseMessage]], str | None] | None = None,
        condensed_descriptions: bool = False,
        model: str | BaseChatModel | None = None,
        system_prompt: str | None = None,
        max_retries: int | None = None,
        on_parsing_failure: OnParsingFailure | None = None,
        token_budget: int | None = None,
        scope: ScopeSource | None = None,
        cache_stable: bool = True,
        cache_cap: int | None = None,
    ) -> None:
        k = selector_k(k, max_tools)  # LangChain's max_tools is k (toolret.agents.selector_options)
        check_one_model(model, llm)
        llm = resolve_chat_model(model) if model is not None else llm
        config = with_selector_options(  # LangChain's options, in the engine's llm_steps
            config,
            knowledge_base.config if knowledge_base is not None else None,
            llm,
            system_prompt=system_prompt,
            max_retries=max_retries,
            on_parsing_failure=on_parsing_failure,
        )
        super().__init__(
            knowledge_base=knowledge_base,
            config=config,
            llm=llm,
            embedder=embedder,
            always_include=always_include or (),
            search_tool=search_tool,
            search_k=search_k,
            fallback=fallback,
            condensed_descriptions=condensed_descriptions,
            tool_limit=tool_limit,
            token_budget=token_budget,
            scope=scope,
        )
        self.k: K = k
        #: The cache-stable policy (on or off, the cap) and the lists of recent conversations.
        self.stable = StableTools(cache_stable, cache_cap)
        self.query_builder = query_builder
        #: LangChain's ``on_parsing_failure`` (None: a malformed answer takes the offline path).
        self.on_parsing_failure = on_parsing_failure

    def _fallback(
        self, request: ModelRequest[Any], exc: BaseException, fallback: Fallback | None = None
    ) -> ModelRequest[Any]:
        """A malformed LLM answer gets ``on_parsing_failure``'s tools, or raises
        (:func:`toolret.agents.selector_options.parsing_fallback`); else the base fallback."""
        chosen = parsing_fallback(self.on_parsing_failure, exc, self.always_include)
        return super()._fallback(request, exc, fallback if chosen is None else chosen)

    def _prepare(self, request: ModelRequest[Any], step: Step) -> None:
        messages: list[BaseMessage] = list(request.messages)
        turn = turn_key(messages)
        pinned: Any = dict(request.state).get(_KEY) if isinstance(request.state, dict) else None
        step.data["bound"] = pinned.get("bound") if pinned else None  # None: not in the state (no checkpointer)
        pin = pinned_selection(pinned, turn)  # the turn's selection, pinned for its tool loop
        if pin is not None:
            step.data["names"], step.data["query"] = pin
        else:
            step.query = (self.query_builder or conversation_query)(messages)
            if not step.query:
                raise QueryError("the conversation has no user message to select tools for")
            step.k = self.k
            if self.query_builder is None:
                step.messages = messages
            else:  # a custom query is searched as it is; an LLM planner still reads the chat before it
                step.data["conversation"] = earlier_turns(messages)
        step.data["turn"] = turn
        step.data["discovered"] = found_by_search(
            tool_results(current_turn(messages), self.search_tool_name) if self.search_tool_name else []
        )

    def _finish(
        self, request: ModelRequest[Any], step: Step, result: SearchResult | None
    ) -> tuple[list[str], dict[str, Any] | None]:
        if result is not None:
            names, query = [t.name for t in self.index.live(result, query=step.query)], step.query
        else:
            names, query = step.data["names"], step.data["query"]
        growth = self.stable.next(
            list(request.messages),
            step.data["bound"],
            [*names, *step.data["discovered"]],
            slots=slots(self.k, self.index.config or self.index.kb.config),
            limit=self.tool_limit - len(step.fixed) - len(step.extra),
            keep=self._may_bind(step),
            fits=self._fits(step),
            owner=self.name,
        )
        if result is None and (not self.stable.enabled or growth.names == step.data["bound"]):
            return growth.names, None  # the turn's list, unchanged: nothing to write
        bound = growth.names if self.stable.enabled else None
        return growth.names, {_KEY: pin_record(step.data["turn"], query, names, bound)}
