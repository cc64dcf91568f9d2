"""Condensed copies of framework tools: the tool an agent is handed, described by its card.

Adapters (LangChain, LlamaIndex) can bind copies of the user's tools whose description is
:func:`toolret.cards.card.agent_description` of the tool's document instead of the raw text. What
is the same for every framework lives here: which document the text comes from (the knowledge
base's, with its LLM card if one was written; else the offline card indexing would give the
tool), a cache per tool name rebuilt only when the tool object, its raw description or its
indexed document changes (so the pinned calls of an agent's tool loop cost a dict lookup),
and the rule that condensing never breaks a model call (any failure hands over the raw tool,
with one warning per tool). An adapter supplies only how its tools are named, described,
turned into a :class:`~toolret.documents.tool_doc.ToolDoc` and copied, and which entries are its tools.

Example:
    >>> from dataclasses import dataclass, replace
    >>> from toolret import ToolDoc
    >>> @dataclass(frozen=True)
    ... class Tool:
    ...     name: str
    ...     description: str
    >>> copies = CondensedCopies(
    ...     None, name=lambda t: t.name, description=lambda t: t.description,
    ...     to_doc=lambda t: ToolDoc(name=t.name, description=t.description),
    ...     copy=lambda t, text: replace(t, description=text))
    >>> copies.get(Tool("get_weather", "Current weather for a city. Backed by METAR reports.")).description
    'Current weather for a city.'
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from toolret.cards.card import agent_description
from toolret.documents.tool_doc import ToolDoc
from toolret.index.expansion import expand_offline

if TYPE_CHECKING:
    from toolret.knowledge_base import ToolKnowledgeBase

__all__ = ["CondensedCopies"]

logger = logging.getLogger("toolret")

ToolT = TypeVar("ToolT")


@dataclass(frozen=True)
class _Entry(Generic[ToolT]):
    original: ToolT
    raw: str  # the original's description when the copy was made
    doc: ToolDoc | None  # the indexed document the text came from (None: derived from the tool)
    tool: ToolT  # what the agent gets: the copy, or the original when nothing is shorter


class CondensedCopies(Generic[ToolT]):
    """Cached condensed copies of one framework's tools, read from ``kb`` (None: offline cards).

    ``name``/``description`` read a tool, ``to_doc`` turns one the knowledge base does not hold
    into a document for its offline card, ``copy(tool, text)`` returns a copy described by
    ``text`` without changing ``tool``.
    """

    def __init__(
        self,
        kb: ToolKnowledgeBase | None,
        *,
        name: Callable[[ToolT], str],
        description: Callable[[ToolT], str],
        to_doc: Callable[[ToolT], ToolDoc],
        copy: Callable[[ToolT, str], ToolT],
        is_tool: Callable[[Any], bool] = lambda obj: True,
        skip: Collection[str] = (),
    ) -> None:
        self.kb = kb
        #: Entries that pass :meth:`tool` unchanged: not the framework's tools (provider-side dicts), or named here.
        self.is_tool, self.skip = is_tool, set(skip)
        self._name, self._description, self._to_doc, self._copy = name, description, to_doc, copy
        self._cache: dict[str, _Entry[ToolT]] = {}
        self._lock = threading.Lock()
        self._warned: set[str] = set()

    def get(self, tool: ToolT) -> ToolT:
        """The condensed copy of ``tool`` (cached), or ``tool`` itself when there is nothing to swap."""
        name = type(tool).__name__
        try:
            name = self._name(tool)
            raw = self._description(tool)
            doc = self.kb.get(name) if self.kb is not None and name in self.kb else None
            with self._lock:
                entry = self._cache.get(name)
            if entry is not None and entry.original is tool and entry.raw == raw and entry.doc is doc:
                return entry.tool
            text = agent_description(doc if doc is not None else expand_offline(self._to_doc(tool)))
            out = self._copy(tool, text) if text.strip() and text != raw else tool
            with self._lock:
                self._cache[name] = _Entry(original=tool, raw=raw, doc=doc, tool=out)
            return out
        except Exception as exc:  # noqa: BLE001 - a description swap must never break the agent
            if name not in self._warned:
                self._warned.add(name)
                logger.warning(
                    "condensed description of %r unavailable (%s: %s); using the raw one", name, type(exc).__name__, exc
                )
            return tool

    def tool(self, obj: Any) -> Any:
        """:meth:`get` for a framework tool not in :attr:`skip`; anything else as it is."""
        return self.get(obj) if self.is_tool(obj) and self._name(obj) not in self.skip else obj

    def tools(self, objs: Sequence[Any]) -> list[Any]:
        """:meth:`tool` for each entry, in order."""
        return [self.tool(obj) for obj in objs]

    def __len__(self) -> int:
        return len(self._cache)
