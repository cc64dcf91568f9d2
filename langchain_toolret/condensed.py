"""Condensed tool descriptions: copies of LangChain tools whose ``description`` is the card's text.

With ``condensed_descriptions=True`` the adapters bind these copies (same class, function and
``args_schema``; the user's tools are never modified). The text, the cache and the never-fail rule
are the engine's (:class:`toolret.agents.condensing.CondensedCopies`, :func:`toolret.cards.card.agent_description`).

Example:
    >>> from langchain_core.tools import tool
    >>> @tool
    ... def get_weather(city: str) -> str:
    ...     '''Current weather for a city. Backed by METAR reports, refreshed every 30 minutes.
    ...
    ...     Args:
    ...         city: City name, e.g. "Paris".
    ...     '''
    ...     return f"sunny in {city}"
    >>> short = CondensedTools().tool(get_weather)
    >>> short.description, short.invoke({"city": "Paris"})
    ('Current weather for a city.', 'sunny in Paris')
    >>> get_weather.description.startswith("Current weather for a city. Backed by METAR")
    True
"""

from __future__ import annotations

from collections.abc import Collection

from langchain_core.tools import BaseTool

from langchain_toolret.index import ToolIndex
from langchain_toolret.ingest import tool_to_doc
from toolret import ToolKnowledgeBase
from toolret.agents.condensing import CondensedCopies

__all__ = ["CondensedTools", "condensed_copy"]


def condensed_copy(tool: BaseTool, description: str) -> BaseTool:
    """A shallow copy of ``tool`` with ``description`` replaced (the original is left as it is)."""
    return tool.model_copy(update={"description": description})


class CondensedTools(CondensedCopies[BaseTool]):
    """LangChain tools as copies described by their condensed card (the engine's
    :class:`~toolret.agents.condensing.CondensedCopies`). ``source`` is where the cards are read (a
    ``ToolIndex``, a ``ToolKnowledgeBase``, or None: offline cards); tools named in ``skip`` (the
    ``search_tools`` tool, whose description is an instruction) and entries that are not ``BaseTool``
    pass through unchanged."""

    def __init__(self, source: ToolIndex | ToolKnowledgeBase | None = None, *, skip: Collection[str] = ()) -> None:
        self.source = source
        kb = source.kb if isinstance(source, ToolIndex) else source
        super().__init__(
            kb,
            name=lambda t: t.name,
            description=lambda t: t.description,
            to_doc=tool_to_doc,
            copy=condensed_copy,
            is_tool=lambda obj: isinstance(obj, BaseTool),
            skip=skip,
        )
