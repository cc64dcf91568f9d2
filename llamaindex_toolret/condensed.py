"""Condensed tool descriptions: copies of LlamaIndex tools whose description is the card's text.

With ``as_retriever(condensed_descriptions=True)`` the agent gets shallow copies (same function,
query engine and ``fn_schema``) whose ``metadata`` differs only in ``description``; the user's tools
are never modified. The text, the cache and the never-fail rule are the engine's
(:class:`toolret.agents.condensing.CondensedCopies`, :func:`toolret.cards.card.agent_description`).

Example:
    >>> from llama_index.core.tools import FunctionTool
    >>> def get_weather(city: str) -> str:
    ...     '''Current weather for a city. Backed by METAR reports, refreshed every 30 minutes.
    ...
    ...     Args:
    ...         city: City name, e.g. "Paris".
    ...     '''
    ...     return f"sunny in {city}"
    >>> weather = FunctionTool.from_defaults(fn=get_weather)
    >>> short = CondensedTools().tool(weather)
    >>> short.metadata.description, short.call(city="Paris").content
    ('Current weather for a city.', 'sunny in Paris')
    >>> "Backed by METAR" in weather.metadata.description  # the original keeps its whole docstring
    True
"""

from __future__ import annotations

import copy
import dataclasses

from llama_index.core.tools import BaseTool, ToolMetadata

from llamaindex_toolret.ingest import tool_to_doc
from llamaindex_toolret.mapping import tool_name
from toolret import ToolKnowledgeBase
from toolret.agents.condensing import CondensedCopies

__all__ = ["CondensedTools", "condensed_copy"]


def condensed_copy(tool: BaseTool, description: str) -> BaseTool:
    """A shallow copy of ``tool`` whose ``metadata.description`` is ``description``.

    Works for tools that keep their ``ToolMetadata`` in ``_metadata`` (``FunctionTool``,
    ``QueryEngineTool``, ``RetrieverTool``...); raises ``TypeError`` for any other.
    """
    metadata = getattr(tool, "_metadata", None)
    if not isinstance(metadata, ToolMetadata):
        raise TypeError(f"{type(tool).__name__} keeps no ToolMetadata in _metadata; it cannot be copied")
    out = copy.copy(tool)
    out._metadata = dataclasses.replace(metadata, description=description)  # type: ignore[attr-defined]
    return out


class CondensedTools(CondensedCopies[BaseTool]):
    """LlamaIndex tools as copies described by their condensed card (the engine's
    :class:`~toolret.agents.condensing.CondensedCopies`); ``kb`` is where the cards are read (None:
    every tool gets its offline card)."""

    def __init__(self, kb: ToolKnowledgeBase | None = None) -> None:
        super().__init__(
            kb, name=tool_name, description=lambda t: t.metadata.description, to_doc=tool_to_doc, copy=condensed_copy
        )
