"""Tool names as the provider APIs accept them, and back to the knowledge base's ids.

OpenAI's and Anthropic's APIs accept function names of 1-64 letters, digits, ``_`` and ``-``;
a registry holds names such as ``GET /movie/{movie_id}`` or ``weather.get``. A name the APIs
accept is sent as it is; any other is spelt with ``_`` for each other character and a short
hash of the original, so two tools never share a wire name. :class:`WireNames` maps the names a
model calls back to tool ids.

Example:
    >>> from toolret import ToolDoc
    >>> function_name(ToolDoc(name="get_weather"))
    'get_weather'
    >>> function_name(ToolDoc(name="GET /movie/{movie_id}")).startswith("GET__movie__movie_id__")
    True
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

from toolret.documents.tool_doc import ToolDoc
from toolret.errors import ToolNotFoundError

__all__ = ["WireNames", "function_name", "namespace_of"]

_VALID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_INVALID_CHAR = re.compile(r"[^A-Za-z0-9_-]")


def function_name(doc: ToolDoc) -> str:
    """The name the model sees and calls ``doc`` by: its own when the APIs accept it."""
    if _VALID.match(doc.name):
        return doc.name
    digest = hashlib.sha256(doc.name.encode("utf-8")).hexdigest()[:8]
    return f"{_INVALID_CHAR.sub('_', doc.name)[:55]}_{digest}"


def namespace_of(doc: ToolDoc) -> str | None:
    """The namespace of a namespaced id (``"weather/get_forecast"`` -> ``weather``), else ``metadata["namespace"]``."""
    if doc.id != doc.name and doc.id.endswith("/" + doc.name):
        prefix = doc.id[: -len(doc.name) - 1]
        if _VALID.match(prefix):
            return prefix
        return _INVALID_CHAR.sub("_", prefix)[:64]
    value = doc.metadata.get("namespace")
    return value if isinstance(value, str) and _VALID.match(value) else None


class WireNames:
    """Wire name (and namespace) -> tool id, over one set of documents."""

    def __init__(self, docs: Iterable[ToolDoc]) -> None:
        self._plain: dict[str, str] = {}
        self._spaced: dict[tuple[str, str], str] = {}
        for doc in docs:
            name = function_name(doc)
            self._plain.setdefault(name, doc.id)
            if (ns := namespace_of(doc)) is not None:
                self._spaced.setdefault((ns, name), doc.id)

    def tool_id(self, name: str, namespace: str | None = None) -> str:
        """The id of the tool the model called ``name`` (inside ``namespace``, when it was loaded in one)."""
        found = self._spaced.get((namespace, name)) if namespace else self._plain.get(name)
        if found is None:
            where = f" in namespace {namespace!r}" if namespace else ""
            raise ToolNotFoundError(f"the model called {name!r}{where}, which no tool of the knowledge base is named")
        return found
