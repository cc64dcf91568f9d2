"""The shared skeleton of toolret's ``create_agent`` middleware: narrow ``request.tools``.

A subclass supplies two pure steps (:meth:`NarrowingMiddleware._prepare`, ``_finish``); this class
runs them on the sync or async path and turns any failure into the configured fallback, because a
selector must never break the agent.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain.agents.middleware import (
    AgentMiddleware,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
)
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import BaseTool
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from langchain_toolret.condensed import CondensedTools
from langchain_toolret.index import ToolIndex
from langchain_toolret.ingest import name_of
from langchain_toolret.options import selection_record
from langchain_toolret.scope import ScopeSource, in_scope, scope_of, tools_in_scope
from langchain_toolret.search_tool import DEFAULT_SEARCH_TOOL_NAME, create_search_tool
from toolret import K, KnowledgeBaseError, RetrievalConfig, SearchResult, ToolKnowledgeBase
from toolret.agents.fixed_tools import (
    DEFAULT_TOOL_LIMIT,
    Fallback,
    check_offer,
    fallback_tools,
    split_fixed,
    warn_fallback,
)
from toolret.agents.request_scope import checked_source, refusal
from toolret.agents.working_set import capped
from toolret.scope.tool_scope import ToolScope, current_scope, scoped
from toolret.search.token_budget import validate_budget

__all__ = ["DEFAULT_TOOL_LIMIT", "Fallback", "NarrowingMiddleware", "Step"]

logger = logging.getLogger("toolret")


@dataclass
class Step:
    """One model call's selection work: the split tool set and, when needed, a query to run."""

    candidates: list[BaseTool]
    fixed: list[BaseTool]
    extra: list[Any]
    query: str | None = None
    k: K = 5
    #: The conversation, when the turn's tools are searched from it (follow-up rule of
    #: :meth:`~langchain_toolret.index.ToolIndex.search_turn`) rather than from ``query`` alone.
    messages: list[BaseMessage] | None = None
    data: dict[str, Any] = field(default_factory=dict)


class NarrowingMiddleware(AgentMiddleware[Any, Any, Any]):
    """Base class: index the agent's tools, retrieve, narrow ``request.tools``, fall back on failure."""

    def __init__(
        self,
        *,
        knowledge_base: ToolKnowledgeBase | None,
        config: str | RetrievalConfig | None,
        llm: Any,
        embedder: Any,
        always_include: Sequence[str],
        search_tool: bool | str,
        search_k: int,
        fallback: Fallback,
        condensed_descriptions: bool = False,
        tool_limit: int = DEFAULT_TOOL_LIMIT,
        search_min_score: float | None = None,
        token_budget: int | None = None,
        scope: ScopeSource | None = None,
    ) -> None:
        super().__init__()
        check_offer(fallback, tool_limit)  # the engine's rules of what a call is offered (toolret.agents.fixed_tools)
        self.index = ToolIndex(knowledge_base, config=config, embedder=embedder, llm=llm)
        self.always_include = list(dict.fromkeys(always_include))
        self.fallback = fallback
        #: Most tools one model call is sent (the provider's limit), the fallback included.
        self.tool_limit = tool_limit
        #: Where each request's tool scope comes from (:mod:`toolret.agents.request_scope`; None: no scope).
        self.scope = checked_source(scope)  # a malformed fixed scope fails here
        #: Tokens the selected tools' definitions may take, the fixed tools' included (None: no budget).
        self.token_budget = validate_budget(token_budget)
        self.search_tool_name: str | None = None
        if search_tool:
            self.search_tool_name = search_tool if isinstance(search_tool, str) else DEFAULT_SEARCH_TOOL_NAME
        self.tools = (
            [
                create_search_tool(
                    self.index,
                    name=self.search_tool_name,
                    k=search_k,
                    min_score=search_min_score,
                    condensed_descriptions=condensed_descriptions,
                )
            ]
            if self.search_tool_name
            else []
        )
        #: Copies of the offered tools with condensed descriptions (None: the option is off).
        self.condensed = (
            CondensedTools(self.index, skip=[self.search_tool_name] if self.search_tool_name else [])
            if condensed_descriptions
            else None
        )

    def warmup(self, tools: Sequence[BaseTool] | None = None) -> float:
        """Load the embedding model and run one search now, so the agent's first call is not
        slow; ``tools`` (the agent's tools) are indexed too when given. Returns the seconds taken."""
        candidates = None if tools is None else [t for t in tools if t.name not in self._fixed_names()]
        return self.index.warmup(candidates)

    # ------------------------------------------------------------------ for subclasses
    def _prepare(self, request: ModelRequest[Any], step: Step) -> None:
        """Fill ``step.query`` (and ``step.data``) when this call needs a retrieval."""
        raise NotImplementedError

    def _finish(
        self, request: ModelRequest[Any], step: Step, result: SearchResult | None
    ) -> tuple[list[str], dict[str, Any] | None]:
        """The candidate names to offer, in order, and the state update to write (or None)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ shared steps
    def _fixed_names(self) -> set[str]:
        return {*self.always_include, *([self.search_tool_name] if self.search_tool_name else [])}

    def _split(self, request: ModelRequest[Any]) -> Step:
        tools = {t.name: t for t in request.tools if isinstance(t, BaseTool)}
        fixed, candidates = split_fixed(list(tools), self.always_include, self.search_tool_name, self.name)
        extra = [t for t in request.tools if not isinstance(t, BaseTool)]
        return Step(candidates=[tools[n] for n in candidates], fixed=[tools[n] for n in fixed], extra=extra)

    def _narrow(self, request: ModelRequest[Any], step: Step, names: list[str]) -> ModelRequest[Any]:
        by_name = {t.name: t for t in step.candidates}
        chosen = [by_name[n] for n in dict.fromkeys(names) if n in by_name]
        return request.override(tools=self._capped([*step.fixed, *chosen, *step.extra]))

    def _capped(self, tools: list[Any]) -> list[Any]:
        """``tools`` cut to :attr:`tool_limit` (the fixed tools come first, so they stay)."""
        return capped(tools, self.tool_limit, self.name)

    def _fallback(
        self, request: ModelRequest[Any], exc: BaseException, fallback: Fallback | None = None
    ) -> ModelRequest[Any]:
        """The request narrowed to ``fallback`` (default: :attr:`fallback`) after ``exc``, with a warning."""
        fallback = self.fallback if fallback is None else fallback
        warn_fallback(self.name, exc, fallback)
        tools = fallback_tools(list(request.tools), fallback, self.always_include, self.search_tool_name, name_of)
        return request.override(tools=self._capped(tools))

    def _as_bound(self, tool: BaseTool) -> BaseTool:
        """The object bound for ``tool``: its condensed copy with ``condensed_descriptions``."""
        return self.condensed.tool(tool) if self.condensed is not None else tool

    def _outgoing(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        """What the model is sent: condensed copies with ``condensed_descriptions``, and never a
        tool that cannot be bound (left out with a warning naming it; the others are sent)."""
        if self.condensed is not None:
            try:
                request = request.override(tools=self.condensed.tools(request.tools))
            except Exception:  # noqa: BLE001 - never break the agent over a description
                pass
        tools = self.index.definitions.bindable(request.tools, self.name)
        return request if len(tools) == len(request.tools) else request.override(tools=tools)

    def _fit(self, step: Step, result: SearchResult | None) -> SearchResult | None:
        """The selection as it can be bound, within :attr:`token_budget` (the engine's rule). A budget
        that fits no selected tool keeps the best one, with a warning, when no fixed tool is sent:
        a model call with no tool at all is never what a selector means."""
        if result is None:
            return None
        return self.index.fit(
            result, self.token_budget, present=self._as_bound, always=step.fixed, keep_best=not step.fixed
        )

    def _may_bind(self, step: Step) -> Callable[[str], bool]:
        """Which candidate names this call may bind: the agent's tools, inside the request's scope."""
        scope = current_scope()
        allowed = {t.name for t in (tools_in_scope(step.candidates, scope, self.index) if scope else step.candidates)}
        return allowed.__contains__

    def _fits(self, step: Step) -> Callable[[Sequence[str]], bool] | None:
        """Whether candidate names fit :attr:`token_budget` as bound, the fixed tools counted first (None: no budget)."""
        return self.index.fits(self.token_budget, present=self._as_bound, always=step.fixed)

    def _respond(self, response: Any, update: dict[str, Any] | None) -> Any:
        if not update:
            return response
        if isinstance(response, AIMessage):
            response = ModelResponse(result=[response])
        return ExtendedModelResponse(model_response=response, command=Command(update=update))

    def _log(self, step: Step, request: ModelRequest[Any], start: float) -> None:
        if logger.isEnabledFor(logging.DEBUG):
            names = [t.name for t in request.tools if isinstance(t, BaseTool)]
            how = f"retrieved for {step.query!r}" if step.query else "kept"
            logger.debug("%s: %s -> %s (%.1f ms)", self.name, how, names, (time.perf_counter() - start) * 1000)

    # ------------------------------------------------------------------ the selection, as a traced run
    def _record(
        self, step: Step, result: SearchResult | None, names: list[str], update: dict[str, Any] | None
    ) -> dict[str, Any]:
        """The selection's output, as callbacks and LangSmith see it and as the hook reads it back:
        the query, the tools to offer (``tools``), their scores, the engine's trace, and the state
        update the turn writes (``state_update``, None when nothing changes)."""
        return {**selection_record(step.query, result, names), "state_update": update}

    def _select(self, request: ModelRequest[Any], step: Step) -> dict[str, Any]:
        self.index.ensure(step.candidates)  # the search tool reads the index too
        conversation = step.data.get("conversation")
        result = self.index.search_turn(step.messages, step.k, query=step.query, conversation=conversation)
        result = self._fit(step, result)
        names, update = self._finish(request, step, result)
        return self._record(step, result, names, update)

    async def _aselect(self, request: ModelRequest[Any], step: Step) -> dict[str, Any]:
        await self.index.aensure(step.candidates)
        conversation = step.data.get("conversation")
        result = await self.index.asearch_turn(step.messages, step.k, query=step.query, conversation=conversation)
        result = await asyncio.to_thread(self._fit, step, result)  # the first count loads a tokenizer
        names, update = self._finish(request, step, result)
        return self._record(step, result, names, update)

    def _run(self, request: ModelRequest[Any], step: Step) -> RunnableLambda[Any, Any]:
        """The selection as a child run named after this middleware (LangSmith, callbacks)."""

        def select(_: Any) -> dict[str, Any]:
            return self._select(request, step)

        async def aselect(_: Any) -> dict[str, Any]:
            return await self._aselect(request, step)

        return RunnableLambda(select, afunc=aselect, name=self.name)

    # ------------------------------------------------------------------ the request's scope
    def _scoped_handler(
        self, handler: Callable[[ModelRequest[Any]], Any], scope: ToolScope | None
    ) -> Callable[[ModelRequest[Any]], Any]:
        """``handler`` sent only the tools in ``scope``, whichever path chose them (selection, pin, fallback)."""
        if scope is None:
            return handler
        keep = [self.search_tool_name] if self.search_tool_name else []

        def call(request: ModelRequest[Any]) -> Any:
            return handler(request.override(tools=tools_in_scope(request.tools, scope, self.index, keep)))

        return call

    def _refused(self, request: ToolCallRequest, scope: ToolScope | None) -> ToolMessage | None:
        """An error message for a call to a tool outside the request's scope (the tool is not run), else None."""
        tool = request.tool
        if scope is None or tool is None or tool.name == self.search_tool_name or in_scope(tool, scope, self.index):
            return None
        name = request.tool_call["name"]
        return ToolMessage(content=refusal(name), tool_call_id=request.tool_call["id"], name=name, status="error")

    def wrap_tool_call(self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Any]) -> Any:
        """Run the call inside the request's scope (the ``search_tools`` tool searches within it);
        a tool outside the scope is refused, not run."""
        scope = scope_of(self.scope, request.runtime)
        refused = self._refused(request, scope)
        if refused is not None:
            return refused
        with scoped(scope):
            return handler(request)

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[Any]]
    ) -> Any:
        """Async twin of :meth:`wrap_tool_call`."""
        scope = scope_of(self.scope, request.runtime)
        refused = self._refused(request, scope)
        if refused is not None:
            return refused
        with scoped(scope):
            return await handler(request)

    # ------------------------------------------------------------------ hooks
    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> Any:
        """Narrow the tools (retrieving when needed, within the request's scope), then call the model."""
        scope = scope_of(self.scope, request.runtime)  # outside the fallback: a missing scope is a set-up error
        with scoped(scope):
            return self._narrowed_call(request, self._scoped_handler(handler, scope))

    async def awrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]
    ) -> Any:
        """Async twin of :meth:`wrap_model_call`; indexing and search run off the event loop."""
        scope = scope_of(self.scope, request.runtime)
        with scoped(scope):
            return await self._anarrowed_call(request, self._scoped_handler(handler, scope))

    def _narrowed_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> Any:
        start = time.perf_counter()
        step = self._split(request)  # outside the fallback: an always_include name it lacks is a set-up error
        try:
            self._prepare(request, step)
            selected = self._run(request, step).invoke({"query": step.query, "k": step.k})
            names, update = selected["tools"], selected["state_update"]
            narrowed = self._narrow(request, step, names)
            self._log(step, narrowed, start)
        except KnowledgeBaseError:
            raise  # a knowledge base that does not match the agent's tools is a set-up error
        except Exception as exc:  # noqa: BLE001 - a selector failure must not break the agent
            narrowed, update = self._fallback(request, exc), None
        return self._respond(handler(self._outgoing(narrowed)), update)

    async def _anarrowed_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]
    ) -> Any:
        start = time.perf_counter()
        step = self._split(request)
        try:
            self._prepare(request, step)
            selected = await self._run(request, step).ainvoke({"query": step.query, "k": step.k})
            names, update = selected["tools"], selected["state_update"]
            narrowed = self._narrow(request, step, names)
            self._log(step, narrowed, start)
        except KnowledgeBaseError:
            raise
        except Exception as exc:  # noqa: BLE001 - a selector failure must not break the agent
            narrowed, update = self._fallback(request, exc), None
        return self._respond(await handler(self._outgoing(narrowed)), update)
