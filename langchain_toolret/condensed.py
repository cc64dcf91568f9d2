"""Condensed tool descriptions for the model: copies of LangChain tools carrying the card's text.

The engine gives every indexed tool a condensed card (:mod:`toolret.cards`), and
:func:`toolret.cards.agent_description` is the text an agent should read about it: an offline
card's first sentence, or an LLM card's description, usage line and example call. With
``condensed_descriptions=True`` the adapters bind :class:`CondensedTools` copies instead of the
user's tools: the same class, ``func``/``coroutine`` and ``args_schema`` (so the tool still runs
and its JSON parameters are unchanged), only ``description`` replaced. The user's tool objects
are never modified.

Where the text comes from: the knowledge base's document for the tool's name (what retrieval
used, with its LLM card if one was written); a tool the knowledge base does not hold
(``always_include`` tools, which the middleware does not index) gets the offline card indexing
would have given it. Copies are cached per tool name and rebuilt only when the tool object,
its description or its indexed document changes. Condensing never fails a model call: any
problem keeps the raw tool.

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

import logging
import threading
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.tools import BaseTool
from toolret import ToolKnowledgeBase
from toolret.cards import agent_description
from toolret.documents import ToolDoc
from toolret.expansion import expand_offline

from langchain_toolret.index import ToolIndex
from langchain_toolret.ingest import tool_to_doc

__all__ = ["CondensedTools", "condensed_copy"]

logger = logging.getLogger("toolret")


def condensed_copy(tool: BaseTool, description: str) -> BaseTool:
    """A shallow copy of ``tool`` with ``description`` replaced (the original is left as it is)."""
    return tool.model_copy(update={"description": description})


@dataclass(frozen=True)
class _Entry:
    original: BaseTool
    raw: str  # the original's description when the copy was made
    doc: ToolDoc | None  # the indexed document the text came from (None: derived from the tool)
    tool: BaseTool  # what the model gets: the copy, or the original when nothing is shorter


class CondensedTools:
    """Turn LangChain tools into copies whose description is the condensed agent description.

    ``source`` is where the cards are read: a :class:`~langchain_toolret.index.ToolIndex`, a
    ``ToolKnowledgeBase``, or None (every tool gets its offline card). Tools named in ``skip``
    (e.g. the ``search_tools`` tool, whose description is an instruction) and entries that are
    not ``BaseTool`` (provider-side dict tools) pass through unchanged.
    """

    def __init__(self, source: ToolIndex | ToolKnowledgeBase | None = None, *, skip: Collection[str] = ()) -> None:
        self.source = source
        self.skip = set(skip)
        self._cache: dict[str, _Entry] = {}
        self._lock = threading.Lock()
        self._warned: set[str] = set()

    def _indexed(self, name: str) -> ToolDoc | None:
        kb = self.source.kb if isinstance(self.source, ToolIndex) else self.source
        if kb is None or name not in kb:
            return None
        return kb.get(name)

    def tool(self, tool: Any) -> Any:
        """The condensed copy of ``tool`` (cached), or ``tool`` itself when there is nothing to swap."""
        if not isinstance(tool, BaseTool) or tool.name in self.skip:
            return tool
        try:
            doc = self._indexed(tool.name)
            with self._lock:
                entry = self._cache.get(tool.name)
            if entry is not None and entry.original is tool and entry.raw == tool.description and entry.doc is doc:
                return entry.tool
            text = agent_description(doc if doc is not None else expand_offline(tool_to_doc(tool)))
            out = condensed_copy(tool, text) if text.strip() and text != tool.description else tool
            with self._lock:
                self._cache[tool.name] = _Entry(original=tool, raw=tool.description, doc=doc, tool=out)
            return out
        except Exception as exc:  # noqa: BLE001 - a description swap must never break the agent
            if tool.name not in self._warned:
                self._warned.add(tool.name)
                logger.warning("condensed description of %r unavailable (%s: %s); using the raw one",
                               tool.name, type(exc).__name__, exc)
            return tool

    def tools(self, tools: Sequence[Any]) -> list[Any]:
        """:meth:`tool` for each entry, in order."""
        return [self.tool(t) for t in tools]

    def __len__(self) -> int:
        return len(self._cache)
