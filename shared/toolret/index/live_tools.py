"""The live objects behind tool ids: Toolshed's metadata dictionary, kept once for every adapter.

A knowledge base stores documents; an agent needs the callables and framework tools they were
made from. :class:`LiveTools` maps each tool id to the object given for it (and its name back to
the id), so the engine and every adapter resolve a search result to the same live tool.
Live objects cannot be saved: :meth:`LiveTools.resolve` gives a tool given as data (a dict, a
ToolDoc, a tool file) its stored definition, and names a live one that is not attached.

Example:
    >>> live = LiveTools()
    >>> live.update({"math.sqrt": print}, names={"math.sqrt": "sqrt"})
    >>> live.get("math.sqrt") is print, live.by_name("sqrt") is print, live.by_name("nope")
    (True, True, None)
"""

from __future__ import annotations

import threading
from collections.abc import Container, Iterator, Mapping
from typing import Any

from toolret.documents.tool_doc import ToolDoc
from toolret.errors import ToolNotAttachedError

__all__ = ["LiveTools", "live_origin"]

#: Metadata keys the converters of live objects write (sources.callables, the LangChain and
#: LlamaIndex adapters' ``tool_to_doc``): a stored tool with one was made from a live object.
_LIVE_KEYS = {"module": "Python callable", "framework": "{} tool", "llamaindex_type": "LlamaIndex {}"}


def live_origin(doc: ToolDoc) -> str | None:
    """What kind of live object ``doc`` was made from ("Python callable", "langchain tool"...), or None for data."""
    for key, kind in _LIVE_KEYS.items():
        value = doc.metadata.get(key)
        if isinstance(value, str):
            return kind.format(value)
    return None


class LiveTools:
    """Thread-safe ``id -> live object`` map with a ``name -> id`` index."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_id: dict[str, Any] = {}
        self._id_of_name: dict[str, str] = {}

    def update(self, objects: Mapping[str, Any], *, names: Mapping[str, str] | None = None) -> None:
        """Attach ``objects`` by id; ``names`` gives each id's tool name when it differs from the id."""
        with self._lock:
            for tool_id, obj in objects.items():
                self._by_id[tool_id] = obj
                self._id_of_name[(names or {}).get(tool_id, tool_id)] = tool_id

    def keep(self, ids: Container[str]) -> None:
        """Forget every object whose id is not in ``ids`` (after a removal or a sync)."""
        with self._lock:
            self._by_id = {t: o for t, o in self._by_id.items() if t in ids}
            self._id_of_name = {n: t for n, t in self._id_of_name.items() if t in self._by_id}

    def pop(self, tool_id: str) -> Any:
        with self._lock:
            self._id_of_name = {n: t for n, t in self._id_of_name.items() if t != tool_id}
            return self._by_id.pop(tool_id, None)

    def get(self, tool_id: str) -> Any:
        """The object attached to ``tool_id``, or None."""
        return self._by_id.get(tool_id)

    def resolve(self, doc: ToolDoc) -> Any:
        """The object attached to ``doc``; for a tool given as data, its OpenAI definition.

        A tool made from a live object that is not attached (the knowledge base was reopened)
        raises :class:`~toolret.errors.ToolNotAttachedError` saying how to re-attach it.
        """
        obj = self._by_id.get(doc.id)
        if obj is not None:
            return obj
        origin = live_origin(doc)
        if origin is None:
            return doc.definition()
        raise ToolNotAttachedError(
            f"tool {doc.id!r} was indexed from a {origin}, and live objects are not saved with a knowledge "
            f"base: after reopening it, re-attach them with kb.bind(tools) (the same objects; it returns how "
            f"many matched). kb.get({doc.id!r}) gives the stored definition"
        )

    def by_name(self, name: str) -> Any:
        """The object whose tool name (or id) is ``name``, or None."""
        tool_id = self._id_of_name.get(name, name)
        return self._by_id.get(tool_id)

    def items(self) -> list[tuple[str, Any]]:
        return list(self._by_id.items())

    def __contains__(self, tool_id: object) -> bool:
        return tool_id in self._by_id

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._by_id))

    def __len__(self) -> int:
        return len(self._by_id)
