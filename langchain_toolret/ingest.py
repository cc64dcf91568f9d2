"""LangChain tools as toolret documents: ``BaseTool`` → :class:`~toolret.documents.tool_doc.ToolDoc`.

toolret indexes what ``bind_tools`` sends (``convert_to_openai_tool`` of ``tool_call_schema``, injected
arguments excluded), so what is retrieved is what the model can call; a docstring's ``Args:`` and
``Returns:`` blocks become the per-argument descriptions and the ``response`` field.

Example:
    >>> from langchain_core.tools import tool
    >>> @tool
    ... def get_weather(city: str) -> str:
    ...     '''Current weather for a city.
    ...
    ...     Args:
    ...         city: City name, e.g. "Paris".
    ...
    ...     Returns:
    ...         One sentence about the sky and the temperature.
    ...     '''
    ...     return "sunny"
    >>> doc = tool_to_doc(get_weather)
    >>> doc.id, doc.description
    ('get_weather', 'Current weather for a city.')
    >>> doc.field_text("parameters")
    'city (string, required): City name, e.g. "Paris".'
    >>> doc.response
    'One sentence about the sky and the temperature.'
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from langchain_core.tools import BaseTool

from toolret.documents.docstrings import with_docstrings
from toolret.documents.guards import plain_metadata
from toolret.documents.tool_doc import ToolDoc
from toolret.errors import InvalidToolError
from toolret.sources.ingest import from_openai

__all__ = ["name_of", "openai_definition", "tool_to_doc", "tools_to_docs"]


def name_of(tool: Any) -> str | None:
    """A LangChain tool's name; None for anything else (a provider's tool dict), which toolret's rules pass."""
    return tool.name if isinstance(tool, BaseTool) else None


def openai_definition(tool: BaseTool) -> dict[str, Any]:
    """The ``{"type": "function", "function": {...}}`` definition ``bind_tools`` sends for ``tool``."""
    from langchain_core.utils.function_calling import convert_to_openai_tool

    return convert_to_openai_tool(tool)


def tool_to_doc(tool: BaseTool) -> ToolDoc:
    """One LangChain tool as a ToolDoc (id: its name); a schema that does not convert is an
    :class:`~toolret.errors.InvalidToolError` naming the tool.
    """
    if not isinstance(tool, BaseTool):
        raise InvalidToolError(
            str(getattr(tool, "name", "<unnamed>")), "tool", f"expected a LangChain BaseTool, got {type(tool).__name__}"
        )
    try:
        spec = openai_definition(tool)
    except Exception as exc:  # noqa: BLE001 - any schema failure names the tool
        raise InvalidToolError(tool.name, "tool_call_schema", f"cannot convert: {exc}") from None
    doc = from_openai(spec)
    func = getattr(tool, "func", None) or getattr(tool, "coroutine", None)
    return with_docstrings(doc, doc.description, getattr(func, "__doc__", None), metadata=_metadata(tool))


def _metadata(tool: BaseTool) -> dict[str, Any]:
    """What a scope (``where=``) reads of a LangChain tool: its ``tags`` and the plain-JSON entries of its
    ``metadata`` (MCP tools loaded by langchain-mcp-adapters carry their ``annotations`` there;
    :func:`toolret.documents.guards.plain_metadata`)."""
    base = {"framework": "langchain", "class": type(tool).__name__}
    return plain_metadata(base, tool.tags, tool.metadata, tool=tool.name)


def tools_to_docs(tools: Iterable[Any]) -> tuple[list[ToolDoc | Any], dict[str, BaseTool]]:
    """Every LangChain tool as a ToolDoc (other entries pass through), and the id → tool map; a
    repeated name is an error. Strict: :func:`langchain_toolret.tool_docs.tolerant_docs` degrades instead.
    """
    out: list[ToolDoc | Any] = []
    live: dict[str, BaseTool] = {}
    for obj in tools:
        if isinstance(obj, BaseTool):
            doc = tool_to_doc(obj)
            if doc.id in live:
                raise InvalidToolError(doc.id, "name", "two LangChain tools have this name; tool names must be unique")
            live[doc.id] = obj
            out.append(doc)
        else:
            out.append(obj)
    return out, live


def definitions_chars(tools: Sequence[BaseTool | dict[str, Any]]) -> int:
    """Characters of the JSON tool definitions a model receives for ``tools`` (tokens ≈ chars / 4)."""
    total = 0
    for tool in tools:
        spec = tool if isinstance(tool, dict) else openai_definition(tool)
        total += len(json.dumps(spec, ensure_ascii=False))
    return total
