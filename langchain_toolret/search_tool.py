"""The ``search_tools`` tool: the model widens its own tool set mid-conversation.

The answer names each found tool with a one-line description (its condensed card's with
``condensed_descriptions=True``; the words are the engine's, :mod:`toolret.agents.search_tool_text`),
and the names travel in ``ToolMessage.artifact`` so the selector binds those tools from the next
model call on.

Example:
    >>> from langchain_core.tools import tool
    >>> @tool
    ... def get_weather(city: str) -> str:
    ...     '''Current weather for a city.'''
    ...     return "sunny"
    >>> search = create_search_tool(ToolIndex.from_tools([get_weather]), k=1)
    >>> message = search.invoke({"type": "tool_call", "name": "search_tools", "id": "1",
    ...                          "args": {"query": "weather"}})
    >>> print(message.content)
    Tools found (you can call them from now on):
    - get_weather: Current weather for a city.
    >>> message.artifact
    ['get_weather']
"""

from __future__ import annotations

from typing import Annotated

from langchain_core.tools import BaseTool, StructuredTool

from langchain_toolret.condensed import CondensedTools
from langchain_toolret.index import ToolIndex
from toolret import SearchResult, validate_k
from toolret.agents import search_tool_text
from toolret.agents.search_tool_text import QUERY_DESCRIPTION as _QUERY
from toolret.agents.search_tool_text import SEARCH_TOOL_DESCRIPTION as _DESCRIPTION
from toolret.agents.search_tool_text import at_least, found_answer

__all__ = ["DEFAULT_SEARCH_TOOL_NAME", "create_search_tool", "describe_tools"]

DEFAULT_SEARCH_TOOL_NAME = "search_tools"


def describe_tools(tools: list[BaseTool]) -> str:
    """One line per tool: ``- name: first sentence of its description``
    (:func:`toolret.agents.search_tool_text.describe_tools`)."""
    return search_tool_text.describe_tools([(t.name, t.description) for t in tools])


def create_search_tool(
    index: ToolIndex,
    *,
    name: str = DEFAULT_SEARCH_TOOL_NAME,
    k: int = 5,
    min_score: float | None = None,
    condensed_descriptions: bool = False,
) -> StructuredTool:
    """A tool that searches ``index`` and returns names + one-line descriptions (artifact: names).

    ``k``: the most tools one search returns; ``min_score``: leave out tools scoring below it
    (a vague search then binds fewer, better tools; None keeps all ``k``).
    ``condensed_descriptions``: describe each found tool by its condensed card, not its raw text.
    """
    validate_k(k)
    condensed = CondensedTools(index) if condensed_descriptions else None

    def _found(query: str, result: SearchResult) -> list[BaseTool]:
        result = at_least(index.fit(result), min_score)  # never tell the model of a tool that cannot be bound
        return index.live(result, query=query)

    def _answer(query: str, found: list[BaseTool]) -> tuple[str, list[str]]:
        shown = condensed.tools(found) if condensed is not None else found
        return found_answer(query, [(t.name, t.description) for t in shown]), [t.name for t in found]

    def search(query: Annotated[str, _QUERY]) -> tuple[str, list[str]]:
        return _answer(query, _found(query, index.search(query, k)))

    async def asearch(query: Annotated[str, _QUERY]) -> tuple[str, list[str]]:
        return _answer(query, _found(query, await index.asearch(query, k)))

    search.__doc__ = asearch.__doc__ = _DESCRIPTION
    return StructuredTool.from_function(
        func=search,
        coroutine=asearch,
        name=name,
        description=_DESCRIPTION,
        response_format="content_and_artifact",
    )
