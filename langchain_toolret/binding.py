"""LangChain tools as ``bind_tools`` sends them, and what happens to one that cannot be sent.

``bind_tools`` converts every tool with ``convert_to_openai_tool``. A tool whose ``args_schema``
does not convert (a dangling ``$ref``, say) raises there, inside the model call, and the
agent's turn ends for every other tool too. :class:`ToolDefinitions` converts each tool object
once (its definition or its failure is cached), for two uses:

* the engine's rule for a selection (:func:`toolret.retrieval.definitions.fit_definitions`,
  through :meth:`langchain_toolret.index.ToolIndex.fit`) reads the definitions of the selected
  tools as they will be bound: one that cannot be bound is left out with a warning naming it
  and a ``definitions`` trace step, and a ``token_budget`` is counted on them;
* every place that binds (the middleware, the LangGraph model node, the bigtool agent) passes
  its final list through :meth:`ToolDefinitions.bindable`, which drops, with a warning naming
  it, any other tool that cannot be bound (an ``always_include`` tool, a fallback set, a
  selection written into the state elsewhere).

Example:
    >>> from langchain_core.tools import StructuredTool
    >>> def check(thing: str) -> str:
    ...     return "ok"
    >>> broken = StructuredTool.from_function(check, name="check_thing", description="Check a thing.",
    ...     args_schema={"type": "object", "properties": {"thing": {"$ref": "#/$defs/Thing"}}})
    >>> ToolDefinitions().bindable([broken], "example")
    []
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from toolret.documents.guards import safe_label
from toolret.retrieval.definitions import problem_text

__all__ = ["ToolDefinitions"]

logger = logging.getLogger("toolret")

#: Tool objects whose conversion is remembered; past it the cache starts over (tool sets are smaller).
_CACHE_LIMIT = 10_000


class ToolDefinitions:
    """``convert_to_openai_tool`` per tool object, remembered (a failure too), thread-safe."""

    def __init__(self, convert: Callable[[BaseTool], dict[str, Any]] = convert_to_openai_tool) -> None:
        self._convert = convert
        self._cache: dict[int, tuple[BaseTool, dict[str, Any] | Exception]] = {}
        self._lock = threading.Lock()

    def __call__(self, tool: BaseTool) -> dict[str, Any]:
        """The OpenAI definition ``bind_tools`` would send for ``tool``; raises what the conversion raises."""
        entry = self._cache.get(id(tool))
        if entry is None or entry[0] is not tool:
            try:
                out: dict[str, Any] | Exception = self._convert(tool)
            except Exception as exc:  # noqa: BLE001 - remembered, and raised to the caller below
                out = exc
            entry = (tool, out)
            with self._lock:
                if len(self._cache) >= _CACHE_LIMIT:
                    self._cache.clear()
                self._cache[id(tool)] = entry
        if isinstance(entry[1], Exception):
            raise entry[1]
        return entry[1]

    def safe(self, tool: BaseTool) -> dict[str, Any] | None:
        """:meth:`__call__`, or None when ``tool`` cannot be bound."""
        try:
            return self(tool)
        except Exception:  # noqa: BLE001 - None is the answer for a tool that cannot be bound
            return None

    def bindable(self, tools: Sequence[Any], owner: str) -> list[Any]:
        """``tools`` without the LangChain tools that cannot be bound, each named in a warning
        (entries that are not ``BaseTool``, provider-side dict tools, pass as they are)."""
        kept: list[Any] = []
        for tool in tools:
            if isinstance(tool, BaseTool):
                try:
                    self(tool)
                except Exception as exc:  # noqa: BLE001 - this tool is left out, the others are bound
                    logger.warning(
                        "%s: tool %r cannot be bound (%s); left out of this model call",
                        owner,
                        safe_label(tool.name),
                        problem_text(exc),
                    )
                    continue
            kept.append(tool)
        return kept
