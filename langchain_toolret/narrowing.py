"""The shared skeleton of toolret's ``create_agent`` middleware: narrow ``request.tools``.

Both the per-turn selector (:class:`~langchain_toolret.middleware.ToolSelectionMiddleware`)
and the agentic tool search (:class:`~langchain_toolret.agent.ToolSearchMiddleware`) do the
same thing around a model call: split the offered tools into candidates and fixed ones, maybe
run one retrieval, pick names, and call the model with only those tools — writing what they
picked into the agent state. A subclass supplies the two pure steps (:meth:`_prepare`,
:meth:`_finish`); this class runs them on the sync or async path and turns any failure into
the configured fallback, because a selector must never break the agent.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain.agents.middleware import (
    AgentMiddleware,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
)
from langchain_core.messages import AIMessage
from langchain_core.tools import BaseTool
from langgraph.types import Command

from langchain_toolret.condensed import CondensedTools
from langchain_toolret.index import K, ToolIndex
from langchain_toolret.search_tool import DEFAULT_SEARCH_TOOL_NAME, create_search_tool
from toolret import RetrievalConfig, SearchResult, ToolKnowledgeBase

__all__ = ["Fallback", "NarrowingMiddleware", "Step"]

logger = logging.getLogger("toolret")

#: What the model gets when selection fails: every tool, only ``always_include``, or these names.
Fallback = Literal["all", "always_include"] | Sequence[str]


@dataclass
class Step:
    """One model call's selection work: the split tool set and, when needed, a query to run."""

    candidates: list[BaseTool]
    fixed: list[BaseTool]
    extra: list[Any]
    query: str | None = None
    k: K = 5
    #: The conversation before the current user message (read by an LLM planner only).
    history: list[Any] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)


class NarrowingMiddleware(AgentMiddleware[Any, Any, Any]):
    """Base class: index the agent's tools, retrieve, narrow ``request.tools``, fall back on failure."""

    def __init__(
        self,
        *,
        knowledge_base: ToolKnowledgeBase | None,
        preset: str | RetrievalConfig | None,
        llm: Any,
        embedder: Any,
        always_include: Sequence[str],
        search_tool: bool | str,
        search_k: int,
        fallback: Fallback,
        condensed_descriptions: bool = False,
    ) -> None:
        super().__init__()
        if isinstance(fallback, str) and fallback not in ("all", "always_include"):
            raise ValueError(f"fallback must be 'all', 'always_include' or a list of tool names, not {fallback!r}")
        config = preset if preset is not None else ("full" if llm is not None else None)
        self.index = ToolIndex(knowledge_base, config=config, embedder=embedder, llm=llm)
        self.always_include = list(dict.fromkeys(always_include))
        self.fallback = fallback
        self.search_tool_name: str | None = None
        if search_tool:
            self.search_tool_name = search_tool if isinstance(search_tool, str) else DEFAULT_SEARCH_TOOL_NAME
        self.tools = [create_search_tool(self.index, name=self.search_tool_name, k=search_k,
                                         condensed_descriptions=condensed_descriptions)] \
            if self.search_tool_name else []
        #: Copies of the offered tools with condensed descriptions (None: the option is off).
        self.condensed = CondensedTools(
            self.index, skip=[self.search_tool_name] if self.search_tool_name else []
        ) if condensed_descriptions else None
        self._warned: set[str] = set()

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
    def _split(self, request: ModelRequest[Any]) -> Step:
        fixed_names = {*self.always_include, *([self.search_tool_name] if self.search_tool_name else [])}
        tools = [t for t in request.tools if isinstance(t, BaseTool)]
        fixed = sorted((t for t in tools if t.name in fixed_names),
                       key=lambda t: (t.name == self.search_tool_name, t.name))
        missing = set(self.always_include) - {t.name for t in fixed} - self._warned
        if missing:
            self._warned |= missing
            logger.warning("%s: always_include names not among the agent's tools: %s",
                           self.name, ", ".join(sorted(missing)))
        return Step(candidates=[t for t in tools if t.name not in fixed_names], fixed=fixed,
                    extra=[t for t in request.tools if not isinstance(t, BaseTool)])

    def _narrow(self, request: ModelRequest[Any], step: Step, names: list[str]) -> ModelRequest[Any]:
        by_name = {t.name: t for t in step.candidates}
        chosen = [by_name[n] for n in dict.fromkeys(names) if n in by_name]
        return request.override(tools=[*step.fixed, *chosen, *step.extra])

    def _fallback(self, request: ModelRequest[Any], exc: BaseException) -> ModelRequest[Any]:
        logger.warning("%s: tool selection failed (%s: %s); offering the fallback tools (%s)",
                       self.name, type(exc).__name__, exc,
                       self.fallback if isinstance(self.fallback, str) else ", ".join(self.fallback))
        if self.fallback == "all":
            return request
        keep = set(self.always_include) if self.fallback == "always_include" else set(self.fallback)
        if self.search_tool_name:
            keep.add(self.search_tool_name)
        return request.override(tools=[t for t in request.tools if not isinstance(t, BaseTool) or t.name in keep])

    def _condense(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        """With ``condensed_descriptions``: the offered tools as copies carrying their condensed text."""
        if self.condensed is None:
            return request
        try:
            return request.override(tools=self.condensed.tools(request.tools))
        except Exception:  # noqa: BLE001 - never break the agent over a description
            return request

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

    # ------------------------------------------------------------------ hooks
    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> Any:
        """Narrow the tools (retrieving when needed), then call the model."""
        start = time.perf_counter()
        try:
            step = self._split(request)
            self._prepare(request, step)
            result = None
            self.index.ensure(step.candidates)  # the search tool reads the index too
            if step.query:
                result = self.index.search(step.query, step.k, history=step.history)
            names, update = self._finish(request, step, result)
            narrowed = self._narrow(request, step, names)
            self._log(step, narrowed, start)
        except Exception as exc:  # noqa: BLE001 - a selector failure must not break the agent
            narrowed, update = self._fallback(request, exc), None
        return self._respond(handler(self._condense(narrowed)), update)

    async def awrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]
    ) -> Any:
        """Async twin of :meth:`wrap_model_call`; indexing and search run off the event loop."""
        start = time.perf_counter()
        try:
            step = self._split(request)
            self._prepare(request, step)
            result = None
            await self.index.aensure(step.candidates)
            if step.query:
                result = await self.index.asearch(step.query, step.k, history=step.history)
            names, update = self._finish(request, step, result)
            narrowed = self._narrow(request, step, names)
            self._log(step, narrowed, start)
        except Exception as exc:  # noqa: BLE001 - a selector failure must not break the agent
            narrowed, update = self._fallback(request, exc), None
        return self._respond(await handler(self._condense(narrowed)), update)
