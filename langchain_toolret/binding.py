"""LangChain tools as ``bind_tools`` sends them, converted once per tool object: the engine's
:class:`toolret.search.token_budget.DefinitionCache` over ``convert_to_openai_tool``. A tool that
cannot be bound is left out of a selection, and of any list bound, with a warning naming it.

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

from collections.abc import Callable
from typing import Any

from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from toolret.search.token_budget import DefinitionCache

__all__ = ["ToolDefinitions"]


class ToolDefinitions(DefinitionCache):
    """``convert_to_openai_tool`` per LangChain tool object, remembered (a failure too), thread-safe."""

    def __init__(self, convert: Callable[[BaseTool], dict[str, Any]] = convert_to_openai_tool) -> None:
        super().__init__(convert, is_tool=lambda t: isinstance(t, BaseTool), name=lambda t: t.name)
