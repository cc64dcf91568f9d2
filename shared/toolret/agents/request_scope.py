"""A request's tool scope as an agent framework carries it: where it comes from, what of the agent's tools it keeps.

A gateway or multi-tenant agent serves users who may reach different tools: the servers their key
opens, read-only tools for a guest. The framework carries who the request is for in a per-run
context (LangChain's ``create_agent(..., context_schema=Ctx)``, a LangGraph runtime context); an
adapter reads the scope from that context on every call (:func:`request_scope`) and then

* runs every search inside :func:`toolret.scoped` (candidates drawn from the tools in scope,
  never a post-filter: :mod:`toolret.scope.tool_scope`);
* binds no tool outside the scope, whatever path chose the tools (:func:`keep_in_scope`);
* refuses a call to a tool outside the scope (:func:`refusal`: the model gets an error message,
  and the tool does not run).

Where the scope comes from (:data:`ScopeSource`): the name of the context's key or attribute
holding it (a :class:`~toolret.ToolScope` or a mapping of its fields), a function of the context
returning one, or a fixed scope. A context that lacks the key is a :class:`~toolret.ScopeError`:
a scope that was configured never silently becomes no scope. ``ToolScope()`` says "every tool".

Example:
    >>> request_scope("tool_scope", {"tool_scope": {"read_only": True}}).read_only
    True
    >>> request_scope(lambda ctx: None, {}) is None, request_scope(None, None) is None
    (True, True)
    >>> refusal("delete_file")
    "Tool 'delete_file' is not available."
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from toolret.documents.tool_doc import ToolDoc
from toolret.errors import ScopeError
from toolret.scope.tool_scope import ToolScope, Where, as_scope, current_scope, scope_mask, tool_in_scope

__all__ = [
    "ScopeSource",
    "checked_source",
    "in_current_scope",
    "keep_in_scope",
    "named_in_scope",
    "names_in_scope",
    "refusal",
    "request_scope",
    "tool_allowed",
]

T = TypeVar("T")

#: Where a per-request scope comes from: a context key/attribute, a function of the context, or a fixed scope.
ScopeSource = str | ToolScope | Mapping[str, Any] | Callable[[Any], Where | None]
_MISSING = object()


def checked_source(source: ScopeSource | None) -> ScopeSource | None:
    """``source`` as an adapter keeps it: a fixed mapping checked (and made a scope) at set-up time,
    so a malformed fixed scope fails when the agent is built, not on its first request."""
    return as_scope(source) if isinstance(source, Mapping) else source


def request_scope(source: ScopeSource | None, context: Any) -> ToolScope | None:
    """The scope of one request: ``source`` read from the run's ``context`` (None: no scope configured).

    ``context`` is a mapping or an object with attributes (a dataclass, a pydantic model).
    """
    if source is None:
        return None
    if isinstance(source, (ToolScope, Mapping)):
        return as_scope(source)
    if callable(source):
        made = source(context)
        return None if made is None else as_scope(made)
    if context is None:
        raise ScopeError(
            f"scope={source!r} reads the agent's runtime context, but this call has none: invoke the agent "
            f"with context=... holding {source!r} (ToolScope() for every tool)"
        )
    value: Any = context.get(source, _MISSING) if isinstance(context, Mapping) else getattr(context, source, _MISSING)
    if value is _MISSING or value is None:
        raise ScopeError(
            f"the runtime context ({type(context).__name__}) has no {source!r} for scope={source!r}; "
            "pass the user's ToolScope there (ToolScope() for every tool)"
        )
    return as_scope(value)


def names_in_scope(kb: Any, scope: ToolScope) -> set[str]:
    """Names of the tools of the knowledge base ``kb`` that are in ``scope`` (one cached mask:
    :func:`~toolret.scope.tool_scope.scope_mask`)."""
    snap = kb._writer.snapshot
    return {snap.docs[i].name for i in scope_mask(snap, scope).nonzero()[0]}


def tool_allowed(
    tool: Any, name: str, scope: ToolScope, kb: Any = None, to_doc: Callable[[Any], ToolDoc] | None = None
) -> bool:
    """Is the tool named ``name`` in ``scope``? Read from its indexed document when ``kb`` holds it,
    else from ``to_doc(tool)``; a tool that cannot be read cannot be shown to be in scope."""
    if kb is not None and name in kb:
        return tool_in_scope(kb.get(name), scope)
    if to_doc is None:
        return False
    try:
        return tool_in_scope(to_doc(tool), scope)
    except Exception:  # noqa: BLE001 - a tool that cannot be read cannot be shown to be in scope
        return False


def keep_in_scope(
    items: Iterable[T],
    scope: ToolScope | None,
    name_of: Callable[[T], str | None],
    to_doc: Callable[[Any], ToolDoc],
    kb: Any = None,
    keep: Sequence[str] = (),
) -> list[T]:
    """``items`` without the tools outside ``scope`` (None: all of them), in order.

    ``name_of`` names a framework tool (None: not a tool, e.g. a provider's tool dict, which carries no
    metadata and passes); ``keep``: names that always stay (the search tool, which searches within the
    scope). A tool ``kb`` holds is read from its document, any other through ``to_doc``.
    """
    if scope is None:
        return list(items)
    inside = names_in_scope(kb, scope) if kb is not None else set()
    out = []
    for item in items:
        name = name_of(item)
        if name is None or name in keep or name in inside:
            out.append(item)
        elif (kb is None or name not in kb) and tool_allowed(item, name, scope, None, to_doc):
            out.append(item)
    return out


def refusal(name: str) -> str:
    """What the model is told for a call to a tool outside the request's scope (the tool does not run):
    the tool's name only, never the scope's conditions."""
    return f"Tool {name!r} is not available."


def in_current_scope(kb: Any, tool_id: str, where: Where | None = None) -> bool:
    """May a search of ``kb`` with ``where=`` return ``tool_id``, inside the enclosing :func:`toolret.scoped`
    blocks? (An exact-name lookup keeps to the scope a search would.)"""
    ambient = current_scope()
    scope = (None if where is None else as_scope(where)) if ambient is None else ambient.both(where)
    return scope is None or tool_in_scope(kb.get(tool_id), scope)


def named_in_scope(kb: Any, query: str, where: Where | None = None) -> str | None:
    """The id of the tool of ``kb`` that ``query`` names exactly (an agent asking again for the tool
    its model calls), if a search with ``where=`` inside the enclosing :func:`toolret.scoped` blocks
    could return it; else None: a tool outside the scope is not found, even by its exact name."""
    key = query.strip()
    return key if key and key in kb and in_current_scope(kb, key, where) else None
