"""``where=``: a search scoped by tool metadata (source, namespace, tags, MCP annotations).

A gateway serves many users from one registry, and each may reach only some of it: the servers
their key opens, the read-only tools, a team's namespace. ``kb.search(query, where=...)`` takes a
:class:`ToolScope` (or a mapping of its fields) and turns it into a boolean per tool, exactly like
``allowed_ids`` (:mod:`toolret.scope.allowed`): candidates per field are drawn from the tools
in scope only, so ``k`` tools in scope come back and ``k="auto"`` is decided among them. A post-filter
would return a short list whenever out-of-scope tools rank higher, and would let them shape the cut.

What each condition reads (a tool carries what its source recorded; :mod:`toolret.sources`):

* ``sources``: ``metadata["mcp_server"]`` (MCP), ``["server"]``, ``["source"]`` (benchmark
  records), ``["source_file"]`` (``toolret index``), ``["api"]`` (OpenAPI title);
* ``namespaces``: the prefix of a namespaced id (``"weather/get_forecast"`` -> ``weather``, the
  OpenAPI ``namespace=``), or ``metadata["namespace"]``;
* ``tags``: ``metadata["tags"]`` (OpenAPI operation tags, LangChain tool tags);
* ``read_only`` / ``destructive``: the MCP annotations ``readOnlyHint`` / ``destructiveHint`` with
  the MCP specification's defaults (not read-only; destructive unless read-only or
  ``destructiveHint: false``), so a tool that declares nothing never passes ``read_only=True``
  or ``destructive=False``: a scope is never wider than what the tools declare;
* ``metadata``: exact values of any other metadata key.

Conditions combine with AND; the values of one condition with OR. A field left out does not
restrict; an empty list matches no tool (``ToolScope()`` is everything, said explicitly). A field
*given* as ``None`` is a :class:`ScopeError`: ``{"tags": user.tags}`` with no tags recorded must not
open every tool. A scope that matches no tool returns no tools: never all of them.

Example:
    >>> from toolret import ToolDoc, ToolKnowledgeBase
    >>> kb = ToolKnowledgeBase()
    >>> _ = kb.add([
    ...     ToolDoc(id="files/read_file", name="read_file", description="Read a file.",
    ...             metadata={"mcp_server": "files", "annotations": {"readOnlyHint": True}}),
    ...     ToolDoc(id="files/delete_file", name="delete_file", description="Delete a file.",
    ...             metadata={"mcp_server": "files", "annotations": {"destructiveHint": True}}),
    ... ])
    >>> kb.search("remove the file notes.txt", k=2, where={"read_only": True}).ids
    ['files/read_file']
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import PydanticCustomError

from toolret.documents.tool_doc import ToolDoc
from toolret.errors import ScopeError
from toolret.index.snapshot import Snapshot
from toolret.results import TraceStep
from toolret.scope.allowed import allowed_mask, allowed_trace

__all__ = [
    "SOURCE_KEYS",
    "ToolScope",
    "Where",
    "as_scope",
    "check_in_restriction",
    "current_scope",
    "restriction",
    "scope_mask",
    "scoped",
    "scope_trace",
    "tool_in_scope",
]

#: The metadata keys a tool's source is read from, in the order sources write them.
SOURCE_KEYS = ("mcp_server", "server", "source", "source_file", "api")


def _strings(value: Any) -> Any:
    """A lone string is a one-item list (``sources="files"``); anything else goes to validation."""
    return [value] if isinstance(value, str) else value


class ToolScope(BaseModel):
    """Which tools a search may return, by their metadata (see the module doc for what each reads).

    Field names or their aliases (``source``/``server``, ``namespace``, ``tag``, MCP's
    ``readOnlyHint``/``destructiveHint``) are accepted; an unknown key, a value of the wrong type
    or a field given as ``None`` is a :class:`ScopeError` naming it, so a misspelt or unset
    condition never widens a scope. Leave a field out for no restriction on it.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    sources: list[str] | None = Field(
        default=None, validation_alias=AliasChoices("sources", "source", "servers", "server")
    )
    namespaces: list[str] | None = Field(default=None, validation_alias=AliasChoices("namespaces", "namespace"))
    tags: list[str] | None = Field(default=None, validation_alias=AliasChoices("tags", "tag"))
    read_only: bool | None = Field(default=None, validation_alias=AliasChoices("read_only", "readOnlyHint"))
    destructive: bool | None = Field(default=None, validation_alias=AliasChoices("destructive", "destructiveHint"))
    metadata: dict[str, Any] | None = None

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise _scope_error(exc) from None

    @field_validator("*", mode="before")
    @classmethod
    def _not_none(cls, value: Any) -> Any:
        # A field given as None reads as "unset" to pydantic, which would drop the restriction:
        # a user whose tags were never recorded ({"tags": user.tags}) would reach every tool.
        if value is None:
            raise PydanticCustomError(
                "scope_none",
                "None is not a condition: leave the field out for no restriction on it, or give an empty "
                "list for no tool",
            )
        return value

    @field_validator("sources", "namespaces", "tags", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return _strings(value)

    def is_everything(self) -> bool:
        """True when no condition is set (every tool is in scope)."""
        return all(v is None for v in self.model_dump().values())

    def both(self, other: Where | None) -> ToolScope:
        """The scope of the tools in both ``self`` and ``other`` (a service's scope and a user's).

        Lists keep their common values, flags and metadata must agree; conditions that cannot both
        hold give a scope no tool fits (``namespaces=[]``), never a wider one.
        """
        if other is None:
            return self
        other = as_scope(other)
        merged: dict[str, Any] = {}
        for name in ("sources", "namespaces", "tags"):
            a, b = getattr(self, name), getattr(other, name)
            merged[name] = b if a is None else a if b is None else [v for v in a if v in b]
        impossible = False
        for name in ("read_only", "destructive"):
            a, b = getattr(self, name), getattr(other, name)
            impossible |= a is not None and b is not None and a != b
            merged[name] = a if b is None else b
        meta = dict(self.metadata or {})
        for key, value in (other.metadata or {}).items():
            impossible |= key in meta and meta[key] != value
            meta[key] = value
        merged["metadata"] = meta or None
        if impossible:
            merged["namespaces"] = []
        return ToolScope(**{k: v for k, v in merged.items() if v is not None})

    def describe(self) -> str:
        """The conditions as one line, for the trace (values only: never a tool's name)."""
        parts = [f"{k}={v}" for k, v in self.model_dump(exclude_none=True).items()]
        return ", ".join(parts) or "every tool"


#: What ``where=`` takes: a :class:`ToolScope` or a mapping of its fields.
Where = ToolScope | Mapping[str, Any]


def as_scope(where: Where) -> ToolScope:
    """``where`` as a :class:`ToolScope`; a malformed one is a :class:`ScopeError` naming the field."""
    if isinstance(where, ToolScope):
        return where
    if not isinstance(where, Mapping):
        raise ScopeError(f"where= takes a ToolScope or a mapping of its fields, not {type(where).__name__}")
    try:
        return ToolScope.model_validate(dict(where))
    except ValidationError as exc:
        raise _scope_error(exc) from None


def _scope_error(exc: ValidationError) -> ScopeError:
    first = exc.errors()[0]
    field = ".".join(str(p) for p in first.get("loc", ())) or "where"
    return ScopeError(f"where= field {field!r}: {first.get('msg', exc)}")


def _namespaces(doc: ToolDoc) -> set[str]:
    out = set()
    if doc.id != doc.name and doc.id.endswith("/" + doc.name):
        out.add(doc.id[: -len(doc.name) - 1])
    if isinstance(ns := doc.metadata.get("namespace"), str):
        out.add(ns)
    return out


def _annotations(doc: ToolDoc) -> Mapping[str, Any]:
    value = doc.metadata.get("annotations")
    return value if isinstance(value, Mapping) else {}


def tool_in_scope(doc: ToolDoc, scope: ToolScope) -> bool:
    """Does ``doc`` satisfy every condition of ``scope``?"""
    meta = doc.metadata
    if scope.sources is not None and not {str(meta[k]) for k in SOURCE_KEYS if meta.get(k) is not None} & set(
        scope.sources
    ):
        return False
    if scope.namespaces is not None and not _namespaces(doc) & set(scope.namespaces):
        return False
    if scope.tags is not None:
        tags = meta.get("tags")
        have = {tags} if isinstance(tags, str) else {str(t) for t in tags} if isinstance(tags, (list, tuple)) else set()
        if not have & set(scope.tags):
            return False
    notes = _annotations(doc)
    read_only = notes.get("readOnlyHint") is True
    if scope.read_only is not None and read_only != scope.read_only:
        return False
    # MCP: destructiveHint defaults to true and is meaningful only when the tool is not read-only.
    destructive = not read_only and notes.get("destructiveHint") is not False
    if scope.destructive is not None and destructive != scope.destructive:
        return False
    return not scope.metadata or all(k in meta and meta[k] == v for k, v in scope.metadata.items())


_CACHE_LOCK = threading.Lock()
#: Per snapshot (by identity, dropped with it), the masks of the scopes searched recently.
_CACHE: dict[int, tuple[weakref.ref[Snapshot], dict[str, np.ndarray]]] = {}
_CACHE_SCOPES = 64


def scope_mask(snap: Snapshot, where: Where) -> np.ndarray:
    """A boolean per snapshot row, True for the tools in scope (cached per snapshot and scope).

    One pass over the snapshot's documents the first time a scope is searched; later searches of
    the same scope on the same snapshot reuse the mask (a gateway repeats a user's scope).
    """
    scope = as_scope(where)
    key = scope.model_dump_json()
    with _CACHE_LOCK:
        entry = _CACHE.get(id(snap))
        if entry is not None and entry[0]() is snap and key in entry[1]:
            return entry[1][key]
    mask = np.fromiter((tool_in_scope(d, scope) for d in snap.docs), dtype=bool, count=len(snap))
    mask.setflags(write=False)
    with _CACHE_LOCK:
        entry = _CACHE.get(id(snap))
        if entry is None or entry[0]() is not snap:
            for stale in [k for k, (ref, _) in _CACHE.items() if ref() is None]:
                del _CACHE[stale]
            entry = _CACHE[id(snap)] = (weakref.ref(snap), {})
        if len(entry[1]) >= _CACHE_SCOPES:
            entry[1].pop(next(iter(entry[1])))
        entry[1][key] = mask
    return mask


def scope_trace(scope: ToolScope, mask: np.ndarray) -> TraceStep:
    """The trace step that says a search was scoped: the conditions and how many tools they keep."""
    note = f"{int(mask.sum())} of {len(mask)} tools in scope ({scope.describe()})"
    if not mask.any():
        note += ": no tool matches, so none is returned"
    return TraceStep(stage="scope", path="offline", ms=0.0, note=note)


_AMBIENT: ContextVar[ToolScope | None] = ContextVar("toolret_scope", default=None)


@contextmanager
def scoped(where: Where | None) -> Iterator[ToolScope | None]:
    """Every search started inside the block (this thread or task, and the tasks and worker threads it
    starts) keeps to ``where`` as well as to its own ``where=``.

    How a per-request scope reaches searches an agent framework starts on the request's behalf
    (an agent's retriever, a search tool the model calls): the adapter, or your code, wraps the
    request in ``with scoped(user_scope):``. Scopes nest by narrowing (:meth:`ToolScope.both`);
    ``None`` adds nothing. A block never widens what an enclosing one allows.

    >>> with scoped({"read_only": True}):
    ...     with scoped({"source": "files"}):
    ...         current_scope()
    ToolScope(sources=['files'], namespaces=None, tags=None, read_only=True, destructive=None, metadata=None)
    """
    outer = _AMBIENT.get()
    inner = outer if where is None else (as_scope(where) if outer is None else outer.both(where))
    token = _AMBIENT.set(inner)
    try:
        yield inner
    finally:
        _AMBIENT.reset(token)


def current_scope() -> ToolScope | None:
    """The scope of the enclosing :func:`scoped` blocks (None outside any)."""
    return _AMBIENT.get()


def restriction(
    snap: Snapshot,
    allowed_ids: Collection[str] | None,
    where: Where | None,
    enclosing: ToolScope | None = None,
) -> tuple[np.ndarray | None, list[TraceStep]]:
    """The boolean per tool a search may return (``allowed_ids`` AND ``where`` AND ``enclosing``;
    None: every tool), and the trace steps that say so.

    ``enclosing`` is the scope of the caller's :func:`scoped` block, which the edge that took the
    call reads (:func:`current_scope`: ``ToolKnowledgeBase.begin_search``, the provider helpers) and
    passes here: the engine never reads the context variable itself.
    """
    allowed = None if allowed_ids is None else allowed_mask(snap, allowed_ids)
    steps = allowed_trace(allowed)
    if enclosing is not None:
        where = enclosing.both(where)
    if where is None:
        return allowed, steps
    scope = as_scope(where)
    mask = scope_mask(snap, scope)
    steps.append(scope_trace(scope, mask))
    return (mask if allowed is None else allowed & mask), steps


def check_in_restriction(
    snap: Snapshot,
    tool_id: str,
    allowed_ids: Collection[str] | None,
    where: Where | None,
    enclosing: ToolScope | None = None,
) -> None:
    """Raise :class:`ScopeError` naming ``tool_id`` when a search under this restriction could not return it.

    For executors: a model that calls a tool it was never offered (hallucinated, or injected by a
    tool's output) must not reach a tool outside the user's scope.
    """
    mask, _ = restriction(snap, allowed_ids, where, enclosing)
    if mask is not None and not mask[snap.index_of[tool_id]]:
        raise ScopeError(f"tool {tool_id!r} is outside this search's scope; it was not offered and is not run")
