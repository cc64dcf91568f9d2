"""LangChain tools as ``bind_tools`` sends them (``convert_to_openai_tool``), converted once per tool
object, and what happens to one that cannot be sent: the engine's
:class:`toolret.retrieval.definitions.DefinitionCache`. A tool whose ``args_schema`` does not
convert (a dangling ``$ref``) would raise inside the model call and end the turn for every other
tool; the selection leaves it out (:meth:`langchain_toolret.index.ToolIndex.fit`) and every place
that binds (middleware, model node, bigtool agent) passes its list through
:meth:`~toolret.retrieval.definitions.DefinitionCache.bindable`, which drops it with a warning.

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

from toolret.retrieval.definitions import DefinitionCache

__all__ = ["ToolDefinitions"]


class ToolDefinitions(DefinitionCache):
    """``convert_to_openai_tool`` per LangChain tool object, remembered (a failure too), thread-safe."""

    def __init__(self, convert: Callable[[BaseTool], dict[str, Any]] = convert_to_openai_tool) -> None:
        super().__init__(convert, is_tool=lambda t: isinstance(t, BaseTool), name=lambda t: t.name)
