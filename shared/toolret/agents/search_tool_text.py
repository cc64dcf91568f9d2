"""What a tool-search tool tells the model: its description, and the answer naming the tools it found.

An agent that searches its own tools (LangChain's ``search_tools``, langgraph-bigtool's
``retrieve_tools``) calls a tool whose answer is text: each found tool's name with the first
sentence of its description (cut to a line), or a hint to describe the capability differently
when nothing was found. A ``min_score`` leaves weak matches out, so a vague search binds fewer,
better tools. Every adapter's search tool says the same, so the words live here.

Example:
    >>> print(found_answer("weather", [("get_weather", "Current weather for a city. Uses METAR.")]))
    Tools found (you can call them from now on):
    - get_weather: Current weather for a city.
    >>> found_answer("fax", [])
    "No tools found for 'fax'. Try describing the capability differently."
"""

from __future__ import annotations

from collections.abc import Sequence

from toolret.documents.docstrings import docstring_summary
from toolret.results import SearchResult

__all__ = ["QUERY_DESCRIPTION", "SEARCH_TOOL_DESCRIPTION", "at_least", "describe_tools", "found_answer"]

#: The search tool's description: when to call it, what to pass.
SEARCH_TOOL_DESCRIPTION = (
    "Search the catalogue of available tools. Call it when none of the tools you have fits the "
    "task; describe the capability you need (e.g. 'convert currencies'). The tools it finds can "
    "be called from your next step on."
)
#: The description of its one argument.
QUERY_DESCRIPTION = "The capability you need, in a few words."
#: Most characters of one found tool's summary line.
SUMMARY_CHARS = 160


def describe_tools(tools: Sequence[tuple[str, str]]) -> str:
    """One line per ``(name, description)``: ``- name: first sentence of its description``."""
    lines = []
    for name, description in tools:
        summary = docstring_summary(description or "")
        if len(summary) > SUMMARY_CHARS:
            summary = summary[: SUMMARY_CHARS - 1].rstrip() + "…"
        lines.append(f"- {name}: {summary}" if summary else f"- {name}")
    return "\n".join(lines)


def found_answer(query: str, tools: Sequence[tuple[str, str]]) -> str:
    """The search tool's answer for ``query``: the found ``(name, description)`` pairs, or a hint when none."""
    if not tools:
        return f"No tools found for {query!r}. Try describing the capability differently."
    return "Tools found (you can call them from now on):\n" + describe_tools(tools)


def at_least(result: SearchResult, min_score: float | None) -> SearchResult:
    """``result`` without the tools scoring below ``min_score`` (None: as it is)."""
    if min_score is None:
        return result
    return result.model_copy(update={"tools": [t for t in result.tools if t.score >= min_score]})
