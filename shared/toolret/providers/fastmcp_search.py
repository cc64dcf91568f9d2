"""A FastMCP search transform whose search is toolret's: a drop-in for ``BM25SearchTransform``.

FastMCP (3.1+) collapses a server's tool list into two synthetic tools with a search transform:
``search_tools(query)`` finds tools, ``call_tool(name, arguments)`` runs one. Its stock searches
are regex and BM25 over one concatenated text. :class:`ToolretSearchTransform` keeps the same
contract (same constructor options, same two tools, same ``list_tools``-format results, the
same auth-filtered catalog: a tool the caller may not see is never searched) and ranks with
toolret's per-field lexical + dense scoring.

The catalog is indexed into an in-memory knowledge base on the first search and kept in step by
difference (``kb.sync``: a changed catalog re-embeds only the tools that changed); each search is
restricted to the tools visible to that request (``allowed_ids``), so per-session visibility and
auth transforms hold. ``toolret serve-mcp`` (a proxy in front of other MCP servers) is unchanged.

Example::

    from fastmcp import FastMCP
    from toolret.providers import ToolretSearchTransform

    mcp = FastMCP("Server")
    ...  # @mcp.tool functions
    mcp.add_transform(ToolretSearchTransform(max_results=5))
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable, Sequence
from typing import Annotated, Any

from toolret.config import RetrievalConfig
from toolret.documents.tool_doc import ToolDoc
from toolret.errors import MissingDependencyError, ToolNotFoundError
from toolret.scope.tool_scope import Where, as_scope, tool_in_scope
from toolret.sources.mcp import from_mcp_tool

try:
    from fastmcp.server.context import Context
    from fastmcp.server.transforms.search.base import BaseSearchTransform, SearchResultSerializer
    from fastmcp.tools.base import Tool
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise MissingDependencyError("fastmcp", extra="fastmcp", purpose="ToolretSearchTransform") from exc

__all__ = ["ToolretSearchTransform", "tool_doc"]


def tool_doc(tool: Tool) -> ToolDoc:
    """A FastMCP tool as a ToolDoc, through its MCP definition (``list_tools`` format): id = its name;
    its FastMCP tags become ``metadata["tags"]`` (what a ``where={"tags": ...}`` scope reads)."""
    doc = from_mcp_tool(tool.to_mcp_tool().model_dump(mode="json", by_alias=True, exclude_none=True))
    tags = sorted(str(t) for t in (getattr(tool, "tags", None) or ()))
    return doc.model_copy(update={"metadata": {**doc.metadata, "tags": tags}}) if tags else doc


class ToolretSearchTransform(BaseSearchTransform):
    """FastMCP search transform ranking with toolret (drop-in for ``BM25SearchTransform``).

    Args:
        max_results: most tools one search returns.
        always_visible / search_tool_name / call_tool_name / search_result_serializer: as FastMCP's.
        config: toolret's retrieval preset (default ``"fast"``: no LLM step inside a server call).
        embedder: the embedding model (default: toolret's packaged one; offline).
        knowledge_base: a prebuilt :class:`~toolret.ToolKnowledgeBase` to search instead of indexing
            the catalog (it must hold every catalog tool by name: a search over one that lacks some
            is a ToolNotFoundError naming them, never a quietly shorter catalog).
        where: a scope every search keeps to (:class:`~toolret.ToolScope`: tags, ``read_only``,
            ``destructive`` from the tools' annotations...): a tool outside it is never returned.
    """

    def __init__(
        self,
        *,
        max_results: int = 5,
        always_visible: list[str] | None = None,
        search_tool_name: str = "search_tools",
        call_tool_name: str = "call_tool",
        search_result_serializer: SearchResultSerializer | None = None,
        config: RetrievalConfig | str = "fast",
        embedder: Any = None,
        knowledge_base: Any = None,
        where: Where | None = None,
    ) -> None:
        super().__init__(
            max_results=max_results,
            always_visible=always_visible,
            search_tool_name=search_tool_name,
            call_tool_name=call_tool_name,
            search_result_serializer=search_result_serializer,
        )
        self._config = config
        self._embedder = embedder
        self._kb = knowledge_base
        self._own = knowledge_base is None
        self._where = None if where is None else as_scope(where)  # a malformed scope fails here, not per search
        self._hash: str | None = None
        self._lock = threading.Lock()

    @property
    def knowledge_base(self) -> Any:
        """The knowledge base searched (None until the first search indexes the catalog)."""
        return self._kb

    def _make_search_tool(self) -> Tool:
        transform = self

        async def search_tools(
            query: Annotated[str, "Natural language query to search for tools"],
            ctx: Context = None,  # type: ignore[assignment]
        ) -> str | list[dict[str, Any]]:
            """Search for tools using natural language.

            Returns matching tool definitions ranked by relevance,
            in the same format as list_tools.
            """
            hidden = await transform._get_visible_tools(ctx)
            results = await transform._search(hidden, query)
            return await transform._render_results(results)

        return Tool.from_function(fn=search_tools, name=self._search_tool_name)

    async def get_tool_catalog(self, ctx: Context, *, run_middleware: bool = True) -> Sequence[Tool]:
        """FastMCP's auth-filtered catalog, cut to ``where``: what ``search_tools`` searches and what
        ``call_tool`` may run (a tool outside the scope is neither found nor callable through the proxy)."""
        tools = await super().get_tool_catalog(ctx, run_middleware=run_middleware)
        if self._where is None:
            return tools
        return [t for t in tools if tool_in_scope(tool_doc(t), self._where)]

    def _indexed(self, docs: list[ToolDoc]) -> Any:
        """The knowledge base, holding ``docs`` (synced by difference when the catalog changed)."""
        from toolret.knowledge_base import ToolKnowledgeBase

        with self._lock:
            if self._kb is None:
                self._kb = ToolKnowledgeBase(embedder=self._embedder, config=self._config)
            if self._own:
                key = "\n".join(sorted(d.content_hash for d in docs))
                if key != self._hash:
                    self._kb.sync(docs, progress=False)
                    self._hash = key
            return self._kb

    def _run_search(self, tools: Sequence[Tool], query: str) -> list[Tool]:
        if not tools or not query.strip():
            return []
        by_name = {t.name: t for t in tools}
        kb = self._indexed([tool_doc(t) for t in by_name.values()])
        if not self._own:
            _check_holds(kb, by_name)
        result = kb.search(query, self._max_results, allowed_ids=list(by_name), where=self._where)
        return [by_name[t.id] for t in result.tools if t.id in by_name]

    async def _search(self, tools: Sequence[Tool], query: str) -> Sequence[Tool]:
        """Rank the visible ``tools`` for ``query`` (indexing and search off the event loop)."""
        return await asyncio.to_thread(self._run_search, tools, query)


def _check_holds(kb: Any, names: Iterable[str]) -> None:
    """A ``knowledge_base=`` given to the transform must hold every catalog tool: one it lacks could
    never be found, so the server would quietly offer fewer tools than it has."""
    missing = sorted(n for n in names if n not in kb)
    if missing:
        shown = ", ".join(map(repr, missing[:10])) + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
        raise ToolNotFoundError(
            f"the knowledge base given as ToolretSearchTransform(knowledge_base=...) lacks {len(missing)} of the "
            f"server's tools: {shown}. Add them to it (kb.add / kb.sync, ids = the tools' names), or leave "
            "knowledge_base= out and the transform indexes the catalog itself"
        )
