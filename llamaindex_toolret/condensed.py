"""Condensed tool descriptions for the agent: copies of LlamaIndex tools carrying the card's text.

The engine gives every indexed tool a condensed card (:mod:`toolret.cards`), and
:func:`toolret.cards.agent_description` is the text an agent should read about it: an offline
card's first sentence, or an LLM card's description, usage line and example call.
``FunctionTool.from_defaults`` packs a signature line and the whole docstring into the
description; with ``as_retriever(condensed_descriptions=True)`` the agent gets
:class:`CondensedTools` copies instead: a shallow copy of the tool (same function, query engine
and ``fn_schema``, so calling it runs the same code) whose ``metadata`` is a
``dataclasses.replace`` of the original with only ``description`` changed. The user's tools
and their metadata are never modified.

The text comes from the knowledge base's document for the tool's name (with its LLM card if
one was written); a tool the knowledge base does not hold gets the offline card indexing would
have given it. Copies are cached per tool name and rebuilt only when the tool object, its
description or its indexed document changes. Any problem keeps the raw tool.

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
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from llama_index.core.tools import BaseTool, ToolMetadata
from toolret import ToolKnowledgeBase
from toolret.cards import agent_description
from toolret.documents import ToolDoc
from toolret.expansion import expand_offline

from llamaindex_toolret.ingest import tool_to_doc
from llamaindex_toolret.mapping import tool_name

__all__ = ["CondensedTools", "condensed_copy"]

logger = logging.getLogger("toolret")


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


@dataclass(frozen=True)
class _Entry:
    original: BaseTool
    raw: str  # the original's description when the copy was made
    doc: ToolDoc | None  # the indexed document the text came from (None: derived from the tool)
    tool: BaseTool  # what the agent gets: the copy, or the original when nothing is shorter


class CondensedTools:
    """Turn LlamaIndex tools into copies whose description is the condensed agent description.

    ``kb`` is where the cards are read (None: every tool gets its offline card).
    """

    def __init__(self, kb: ToolKnowledgeBase | None = None) -> None:
        self.kb = kb
        self._cache: dict[str, _Entry] = {}
        self._lock = threading.Lock()
        self._warned: set[str] = set()

    def tool(self, tool: BaseTool) -> BaseTool:
        """The condensed copy of ``tool`` (cached), or ``tool`` itself when there is nothing to swap."""
        name = getattr(getattr(tool, "metadata", None), "name", None) or type(tool).__name__
        try:
            name = tool_name(tool)
            raw = tool.metadata.description
            doc = self.kb.get(name) if self.kb is not None and name in self.kb else None
            with self._lock:
                entry = self._cache.get(name)
            if entry is not None and entry.original is tool and entry.raw == raw and entry.doc is doc:
                return entry.tool
            text = agent_description(doc if doc is not None else expand_offline(tool_to_doc(tool)))
            out = condensed_copy(tool, text) if text.strip() and text != raw else tool
            with self._lock:
                self._cache[name] = _Entry(original=tool, raw=raw, doc=doc, tool=out)
            return out
        except Exception as exc:  # noqa: BLE001 - a description swap must never break the agent
            if name not in self._warned:
                self._warned.add(name)
                logger.warning("condensed description of %r unavailable (%s: %s); using the raw one",
                               name, type(exc).__name__, exc)
            return tool

    def tools(self, tools: Sequence[BaseTool]) -> list[BaseTool]:
        """:meth:`tool` for each tool, in order."""
        return [self.tool(t) for t in tools]

    def __len__(self) -> int:
        return len(self._cache)
