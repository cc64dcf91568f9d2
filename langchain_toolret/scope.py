"""A per-request tool scope for LangChain agents, read from the runtime context.

``create_agent(..., context_schema=Ctx)`` carries who the request is for; the middleware
(``ToolSelectionMiddleware(scope="tool_scope")``) and the LangGraph nodes
(``create_tool_retrieval_node(..., scope="tool_scope")``) read the scope from that context on every
call. The rules (where the scope comes from, every search inside it, the ``search_tools`` tool's
included, no tool outside it bound on any path, a call outside it refused) are the engine's
(:mod:`toolret.agents.request_scope`); this module applies them to LangChain tools and runtimes.

Example::

    @dataclass
    class Ctx:
        tool_scope: ToolScope

    agent = create_agent(model, tools, context_schema=Ctx,
                         middleware=[ToolSelectionMiddleware(k=5, scope="tool_scope")])
    agent.invoke({"messages": [...]}, context=Ctx(tool_scope=ToolScope(read_only=True)))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.tools import BaseTool

from langchain_toolret.ingest import name_of, tool_to_doc
from toolret import ToolScope
from toolret.agents.request_scope import ScopeSource, keep_in_scope, request_scope, tool_allowed

__all__ = ["ScopeSource", "in_scope", "scope_of", "tools_in_scope"]


def scope_of(source: ScopeSource | None, runtime: Any) -> ToolScope | None:
    """The scope of one request: ``source`` read from ``runtime.context`` (None: no scope configured;
    :func:`toolret.agents.request_scope.request_scope`)."""
    return request_scope(source, getattr(runtime, "context", None))


def in_scope(tool: BaseTool, scope: ToolScope, index: Any = None) -> bool:
    """Is ``tool`` in ``scope``? Read from its indexed document when ``index`` holds it, else converted."""
    return tool_allowed(tool, tool.name, scope, getattr(index, "kb", None), tool_to_doc)


def tools_in_scope(
    tools: Sequence[Any], scope: ToolScope | None, index: Any = None, keep: Sequence[str] = ()
) -> list[Any]:
    """``tools`` without the LangChain tools outside ``scope`` (``keep``: names that always stay, e.g. the
    search tool, which searches within the scope). Provider tool dicts pass: they carry no metadata."""
    return keep_in_scope(tools, scope, name_of, tool_to_doc, getattr(index, "kb", None), keep)
