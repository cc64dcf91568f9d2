"""Tool names as the provider APIs accept them, and back to the knowledge base's ids.

OpenAI's and Anthropic's APIs accept function names of 1-64 letters, digits, ``_`` and ``-``;
a registry holds names such as ``GET /movie/{movie_id}`` or ``weather.get``. A name the APIs
accept is sent as it is; any other is spelt with ``_`` for each other character and a short
hash of the original (:func:`function_name`).

Names alone are not unique: two MCP servers may each have ``create_lead`` (ids
``crm/create_lead`` and ``mkt/create_lead``). A model calls a tool by its name only, so a shared
name would run whichever tool the map happened to keep. :class:`WireNames` gives each tool id
its own wire name for the lifetime of one helper: a name no other tool of the knowledge base
has stays as it is; tools sharing one are spelt with their namespace (``crm_create_lead``,
``mkt_create_lead``), or the hash of their id. A name, once given, never changes nor passes to
another tool (a model may still call what it loaded earlier), and maps back to exactly its id.

Example:
    >>> from toolret import ToolDoc
    >>> function_name(ToolDoc(name="get_weather"))
    'get_weather'
    >>> function_name(ToolDoc(name="GET /movie/{movie_id}")).startswith("GET__movie__movie_id__")
    True
    >>> names = WireNames()
    >>> names.update([ToolDoc(id="crm/create_lead", name="create_lead"),
    ...               ToolDoc(id="mkt/create_lead", name="create_lead"), ToolDoc(name="get_weather")])
    >>> [names.name_of(i) for i in ("crm/create_lead", "mkt/create_lead", "get_weather")]
    [(None, 'crm_create_lead'), (None, 'mkt_create_lead'), (None, 'get_weather')]
    >>> names.tool_id("mkt_create_lead")
    'mkt/create_lead'
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Sequence

from toolret.documents.tool_doc import ToolDoc
from toolret.errors import QueryError, ToolNotFoundError

__all__ = ["WireNames", "function_name", "namespace_of"]

_VALID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_INVALID_CHAR = re.compile(r"[^A-Za-z0-9_-]")
_MAX = 64

#: (namespace the tool is loaded in, or None) and the name inside it: what a model's call names.
WireKey = tuple[str | None, str]


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def function_name(doc: ToolDoc) -> str:
    """The name ``doc`` is sent by when no other tool claims it: its own when the APIs accept it."""
    if _VALID.match(doc.name):
        return doc.name
    return f"{_INVALID_CHAR.sub('_', doc.name)[:55]}_{_digest(doc.name)}"


def namespace_of(doc: ToolDoc) -> str | None:
    """The namespace of a namespaced id (``"weather/get_forecast"`` -> ``weather``), else ``metadata["namespace"]``."""
    if doc.id != doc.name and doc.id.endswith("/" + doc.name):
        prefix = doc.id[: -len(doc.name) - 1]
        if _VALID.match(prefix):
            return prefix
        return _INVALID_CHAR.sub("_", prefix)[:_MAX]
    value = doc.metadata.get("namespace")
    return value if isinstance(value, str) and _VALID.match(value) else None


def _fit(name: str, salt: str) -> str:
    """``name`` within the APIs' 64 characters (cut, plus a hash of ``salt`` so cut names stay apart)."""
    return name if len(name) <= _MAX else f"{name[:55]}_{_digest(salt)}"


class WireNames:
    """Tool id <-> the name a model calls it by, fixed for the lifetime of one helper.

    Args:
        namespaced: tools with a namespace are loaded inside it (OpenAI's ``namespace`` tools), so
            a name need only be unique within its namespace and a call names both.
        reserved: names no tool may take (the helper's own search tool).
    """

    def __init__(self, *, namespaced: bool = False, reserved: Collection[str] = ()) -> None:
        self.namespaced = namespaced
        self.reserved = frozenset(reserved)
        self._key_of: dict[str, WireKey] = {}
        self._id_of: dict[WireKey, str] = {}
        self._lock = threading.Lock()

    def space_of(self, doc: ToolDoc) -> str | None:
        """The namespace ``doc`` is loaded in (None: at the top level)."""
        return namespace_of(doc) if self.namespaced else None

    def update(self, docs: Sequence[ToolDoc]) -> None:
        """Name every tool of ``docs`` not named yet; those named keep their names.

        ``docs`` is the whole knowledge base, so a name two of its tools share is spelt apart for
        both (neither looks like the only one), and a spelt-apart name never takes another tool's own.
        """
        with self._lock:
            fresh = [d for d in docs if d.id not in self._key_of]
            if not fresh:
                return
            own = Counter((self.space_of(d), function_name(d)) for d in docs)
            for doc in fresh:
                space, base = self.space_of(doc), function_name(doc)
                for name in self._candidates(doc, space, base, shared=own[(space, base)] > 1):
                    key = (space, name)
                    if key in self._id_of or (space is None and name in self.reserved):
                        continue
                    if name != base and key in own:
                        continue  # another tool's own name: it may still claim it
                    self._key_of[doc.id] = key
                    self._id_of[key] = doc.id
                    break

    @staticmethod
    def _candidates(doc: ToolDoc, space: str | None, base: str, *, shared: bool) -> Iterator[str]:
        if not shared:
            yield base
        prefix = namespace_of(doc)
        if space is None and prefix is not None:
            yield _fit(f"{prefix}_{base}", doc.id)
        tail = _digest(doc.id)
        yield f"{base[:55]}_{tail}"
        for n in range(2, 1_000_000):
            yield f"{base[:50]}_{tail}_{n}"

    def name_of(self, tool_id: str) -> WireKey:
        """(namespace, name) the tool ``tool_id`` is sent by; :meth:`update` named it."""
        try:
            return self._key_of[tool_id]
        except KeyError:
            raise ToolNotFoundError(f"no wire name was given to tool {tool_id!r}") from None

    def names_of(self, docs: Iterable[ToolDoc]) -> list[str]:
        """The wire names of ``docs`` (each named by :meth:`update`), in order."""
        return [self.name_of(d.id)[1] for d in docs]

    def tool_id(self, name: str, namespace: str | None = None) -> str:
        """The id of the tool the model called ``name`` (inside ``namespace``, when it was loaded in one).

        A call without a namespace whose name only namespaced tools have resolves when one tool has
        it; when several do, the call is refused naming them (never the first one found).
        """
        space = namespace if self.namespaced else None
        found = self._id_of.get((space, name))
        if found is not None:
            return found
        if self.namespaced and space is None:
            ids = sorted(t for (_, n), t in list(self._id_of.items()) if n == name)
            if len(ids) == 1:
                return ids[0]
            if ids:
                raise QueryError(
                    f"the model called {name!r} without a namespace, and tools of several namespaces have "
                    f"that name: {', '.join(map(repr, ids))}; the call must name its namespace"
                )
        where = f" in namespace {namespace!r}" if namespace else ""
        raise ToolNotFoundError(f"the model called {name!r}{where}, which no tool of the knowledge base is named")
