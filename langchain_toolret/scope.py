"""A per-request tool scope for LangChain agents, read from the runtime context.

A gateway or multi-tenant agent serves users who may reach different tools: the servers their key
opens, read-only tools for a guest. ``create_agent(..., context_schema=Ctx)`` carries who the
request is for; the middleware (``ToolSelectionMiddleware(scope="tool_scope")``) and the LangGraph
nodes (``create_tool_retrieval_node(..., scope="tool_scope")``) read the scope from that context on
every call and

* run every search inside :func:`toolret.scoped` (candidates drawn from the tools in scope, never
  a post-filter), the ``search_tools`` tool's searches included;
* bind no tool outside the scope, whatever path chose the tools (the pinned selection, the
  fallback on a failure, ``always_include``);
* refuse a call to a tool outside the scope (a model that names a tool it was never offered gets
  an error message, and the tool does not run).

``scope`` is the name of the context's key or attribute holding the scope (a
:class:`~toolret.ToolScope` or a mapping of its fields), a function of the context returning one,
or a fixed scope. A context that lacks the key is a :class:`~toolret.ScopeError`: a scope that was
configured never silently becomes no scope. ``ToolScope()`` says "every tool" explicitly.

Example::

    @dataclass
    class Ctx:
        tool_scope: ToolScope

    agent = create_agent(model, tools, context_schema=Ctx,
                         middleware=[ToolSelectionMiddleware(k=5, scope="tool_scope")])
    agent.invoke({"messages": [...]}, context=Ctx(tool_scope=ToolScope(read_only=True)))
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.tools import BaseTool

from langchain_toolret.ingest import tool_to_doc
from toolret import ScopeError, ToolScope
from toolret.retrieval.scope import Where, as_scope, scope_mask, tool_in_scope

__all__ = ["ScopeSource", "in_scope", "scope_of", "tools_in_scope"]

#: Where a per-request scope comes from: a context key/attribute, a function of the context, or a fixed scope.
ScopeSource = str | ToolScope | Mapping[str, Any] | Callable[[Any], Where | None]
_MISSING = object()


def scope_of(source: ScopeSource | None, runtime: Any) -> ToolScope | None:
    """The scope of one request: ``source`` read from ``runtime.context`` (None: no scope configured)."""
    if source is None:
        return None
    if isinstance(source, (ToolScope, Mapping)):
        return as_scope(source)
    context = getattr(runtime, "context", None)
    value: Any
    if callable(source):
        made = source(context)
        return None if made is None else as_scope(made)
    if context is None:
        raise ScopeError(
            f"scope={source!r} reads the agent's runtime context, but this call has none: invoke the agent "
            f"with context=... holding {source!r} (ToolScope() for every tool)"
        )
    value = context.get(source, _MISSING) if isinstance(context, Mapping) else getattr(context, source, _MISSING)
    if value is _MISSING or value is None:
        raise ScopeError(
            f"the runtime context ({type(context).__name__}) has no {source!r} for scope={source!r}; "
            "pass the user's ToolScope there (ToolScope() for every tool)"
        )
    return as_scope(value)


def in_scope(tool: BaseTool, scope: ToolScope, index: Any = None) -> bool:
    """Is ``tool`` in ``scope``? Read from its indexed document when ``index`` holds it, else converted."""
    kb = getattr(index, "kb", None)
    if kb is not None and tool.name in kb:
        return tool_in_scope(kb.get(tool.name), scope)
    try:
        return tool_in_scope(tool_to_doc(tool), scope)
    except Exception:  # noqa: BLE001 - a tool that cannot be read cannot be shown to be in scope
        return False


def tools_in_scope(
    tools: Sequence[Any], scope: ToolScope | None, index: Any = None, keep: Sequence[str] = ()
) -> list[Any]:
    """``tools`` without the LangChain tools outside ``scope`` (``keep``: names that always stay, e.g. the
    search tool, which searches within the scope). Provider tool dicts pass: they carry no metadata."""
    if scope is None:
        return list(tools)
    kb = getattr(index, "kb", None)
    inside: set[str] = set()
    if kb is not None:
        snap = kb._writer.snapshot
        inside = {snap.docs[i].name for i in scope_mask(snap, scope).nonzero()[0]}
    out = []
    for tool in tools:
        if not isinstance(tool, BaseTool) or tool.name in keep or tool.name in inside:
            out.append(tool)
        elif kb is None or tool.name not in kb:
            if in_scope(tool, scope):
                out.append(tool)
    return out
