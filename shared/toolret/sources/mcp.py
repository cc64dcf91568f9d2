"""MCP ingestion: tools from ``tools/list`` results and from live MCP servers.

Static: :func:`from_mcp_tool` and :func:`from_tools_list` turn what a server lists (name,
title, description, ``inputSchema``, ``outputSchema``, annotations) into ToolDocs.

Live: :class:`MCPSource` connects to one server through the ``mcp`` SDK (stdio or
streamable HTTP), lists its tools, syncs them into a knowledge base and, whenever the server
says its tools changed, lists them again and syncs by difference (only changed tools are
re-embedded). :class:`MCPHub` does this for several servers sharing one knowledge base and
forwards ``call_tool`` to the server that owns the tool.

Tool ids are namespaced by server: ``"<server>/<tool>"``. MCP tool names may use letters,
digits, ``_``, ``-`` and ``.``, so the ``/`` is unambiguous, and two servers may both have a
``search`` tool. Change notices arrive as ``notifications/tools/list_changed`` on
handshake-era connections (2025 protocol) and through a ``subscriptions/listen`` stream on
2026-07-28 connections; both are handled.

Example (a static ``tools/list`` result)::

    >>> docs = from_tools_list({"tools": [{"name": "get_forecast", "description": "Weather forecast.",
    ...     "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}},
    ...                     "required": ["city"]},
    ...     "annotations": {"readOnlyHint": True}}]}, server="weather")
    >>> docs[0].id, docs[0].field_text("parameters"), docs[0].metadata["annotations"]
    ('weather/get_forecast', 'city (string, required)', {'readOnlyHint': True})
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator
from typing_extensions import Self

from toolret.documents.guards import checked_doc, plain_json
from toolret.documents.tool_doc import ToolDoc
from toolret.errors import (
    ConfigError,
    InvalidToolError,
    MissingDependencyError,
    ToolNotFoundError,
)
from toolret.sources.ingest import params_from_schema

__all__ = [
    "SEPARATOR",
    "MCPHub",
    "MCPServerSpec",
    "MCPSource",
    "from_mcp_tool",
    "from_tools_list",
    "split_tool_id",
    "tool_id",
]

logger = logging.getLogger("toolret")

#: Joins a server name and a tool name into a tool id.
SEPARATOR = "/"
_SERVER_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")


def tool_id(server: str, name: str) -> str:
    """The id of tool ``name`` of ``server``: ``"server/name"``."""
    return f"{server}{SEPARATOR}{name}"


def split_tool_id(tool: str) -> tuple[str, str]:
    """``"server/name"`` -> ``("server", "name")``; raises ToolNotFoundError without a server part."""
    server, sep, name = tool.partition(SEPARATOR)
    if not sep or not server or not name:
        raise ToolNotFoundError(f"{tool!r} is not a namespaced MCP tool id ('server{SEPARATOR}tool')")
    return server, name


# ================================================================== static ingestion
def _wire(tool: Any) -> dict[str, Any]:
    """A tool as its ``tools/list`` JSON (camelCase keys), from an SDK model or a dict."""
    if isinstance(tool, Mapping):
        return dict(tool)
    dump = getattr(tool, "model_dump", None)
    if callable(dump):
        return dump(mode="json", by_alias=True, exclude_none=True)
    raise InvalidToolError("<unnamed>", "tool", f"expected an MCP Tool or a dict, got {type(tool).__name__}")


def from_mcp_tool(tool: Any, *, server: str | None = None) -> ToolDoc:
    """A ToolDoc from one MCP tool (an ``mcp.types.Tool`` or its ``tools/list`` dict).

    ``inputSchema`` gives the parameters (kept verbatim as ``input_schema``), ``outputSchema``
    the response; ``title``, ``annotations`` and the server name go into ``metadata``. With
    ``server``, the id is ``"server/name"`` and the name stays the tool's own.
    """
    spec = _wire(tool)
    name = spec.get("name")
    if not isinstance(name, str) or not name.strip():
        raise InvalidToolError("<unnamed>", "name", "an MCP tool needs a non-empty name")
    name = name.strip()
    if server is not None and not _SERVER_NAME.match(server):
        raise ConfigError(f"MCP server name {server!r} must be 1-64 letters, digits, '_', '-' or '.'")
    schema = spec.get("inputSchema", spec.get("input_schema"))
    output = spec.get("outputSchema", spec.get("output_schema"))
    description = spec.get("description") or ""
    if not isinstance(description, str):
        raise InvalidToolError(name, "description", f"expected a string, got {type(description).__name__}")
    metadata: dict[str, Any] = {}
    if server is not None:
        metadata["mcp_server"] = server
    for key in ("title", "annotations"):
        if spec.get(key):
            metadata[key] = spec[key]
    if output is not None and not isinstance(output, dict):
        raise InvalidToolError(name, "outputSchema", f"expected a JSON-schema object, got {type(output).__name__}")
    # plain_json: storable JSON (NaN -> null), cycles and alias bombs refused (toolret.documents.guards)
    output = plain_json(output, tool=name, field="outputSchema")
    return checked_doc(
        ToolDoc(
            id=tool_id(server, name) if server is not None else name,
            name=name,
            description=description or str(metadata.get("title", "")),
            parameters=params_from_schema(schema, tool=name, field="inputSchema"),
            response=json.dumps(output, ensure_ascii=False) if output else "",
            input_schema=plain_json(schema, tool=name, field="inputSchema") if schema is not None else None,
            metadata=plain_json(metadata, tool=name, field="metadata"),
        )
    )


def from_tools_list(result: Any, *, server: str | None = None) -> list[ToolDoc]:
    """ToolDocs from a ``tools/list`` result: an ``mcp.types.ListToolsResult``, its JSON
    (``{"tools": [...]}``) or a plain list of tools."""
    if isinstance(result, Mapping):
        tools = result.get("tools")
    elif isinstance(result, Sequence) and not isinstance(result, str):
        tools = result
    else:
        tools = getattr(result, "tools", None)
    if not isinstance(tools, Sequence) or isinstance(tools, str):
        raise InvalidToolError("<tools/list>", "tools", "expected a tools/list result with a list of tools")
    return [from_mcp_tool(t, server=server) for t in tools]


# ================================================================== how to reach a server
class MCPServerSpec(BaseModel):
    """How to reach one MCP server: a command (stdio) or a URL (streamable HTTP).

    The shape is the one MCP clients use in their configuration files; see
    :meth:`from_config`.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="Namespace of the server's tools in the knowledge base.")
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] | None = None
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] | None = None
    mode: str = Field(default="auto", description="'auto' negotiates the protocol; 'legacy' forces the 2025 handshake.")

    @model_validator(mode="after")
    def _check(self) -> MCPServerSpec:
        if not _SERVER_NAME.match(self.name):
            raise ValueError(f"server name {self.name!r} must be 1-64 letters, digits, '_', '-' or '.'")
        if (self.command is None) == (self.url is None):
            raise ValueError(f"server {self.name!r} needs exactly one of 'command' (stdio) or 'url' (HTTP)")
        return self

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> list[MCPServerSpec]:
        """Servers from ``{"mcpServers": {name: {"command", "args", "env"} | {"url", "headers"}}}``
        (the format of Claude Desktop and most MCP clients); a bare ``{name: {...}}`` works too."""
        servers = config.get("mcpServers", config)
        if not isinstance(servers, Mapping):
            raise ConfigError("an MCP configuration needs an 'mcpServers' object")
        out = []
        for name, entry in servers.items():
            if not isinstance(entry, Mapping):
                raise ConfigError(f"MCP server {name!r}: expected an object with 'command' or 'url'")
            keys = {k: v for k, v in entry.items() if k in cls.model_fields and k != "name"}
            try:
                out.append(cls(name=name, **keys))
            except ValueError as exc:
                raise ConfigError(f"MCP server {name!r}: {exc}") from None
        return out

    def client(self) -> Any:
        """An ``mcp.Client`` for this server (not yet connected)."""
        try:
            from mcp import Client, StdioServerParameters
        except ImportError:
            raise MissingDependencyError("mcp", extra="mcp", purpose="MCP servers") from None
        if self.command is not None:
            target: Any = StdioServerParameters(command=self.command, args=list(self.args), env=self.env, cwd=self.cwd)
        elif self.headers:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            target = streamable_http_client(str(self.url), http_client=httpx2.AsyncClient(headers=self.headers))
        else:
            target = self.url
        # No response cache: after a change notice the listing must come from the server.
        return Client(target, cache=None, mode=self.mode)


# ================================================================== one live server
class MCPSource:
    """One live MCP server whose tools are kept in a knowledge base.

    ``async with MCPSource(spec, kb) as source:`` connects, lists every tool (all pages) and
    syncs them under the ``"<name>/"`` prefix; with ``watch=True`` (the default) it re-lists
    and syncs whenever the server announces a change, until the block ends. Tools of other
    sources in the same knowledge base are never touched.
    """

    def __init__(self, spec: MCPServerSpec, kb: Any, *, watch: bool = True) -> None:
        self.spec = spec
        self.kb = kb
        self.watch = watch
        #: Completed syncs (the first one included); see :meth:`wait_for_sync`.
        self.sync_count = 0
        self.last_report: Any = None
        self.tools: list[ToolDoc] = []
        self._client: Any = None
        self._stack: AsyncExitStack | None = None
        self._dirty: Any = None
        self._synced: Any = None

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def prefix(self) -> str:
        return f"{self.spec.name}{SEPARATOR}"

    async def __aenter__(self) -> Self:
        import anyio

        self._dirty = anyio.Event()
        self._synced = anyio.Event()
        stack = AsyncExitStack()
        await stack.__aenter__()
        try:
            client = self.spec.client()
            client.message_handler = self._on_message
            self._client = await stack.enter_async_context(client)
            await self.refresh()
            if self.watch:
                group = await stack.enter_async_context(anyio.create_task_group())
                stack.callback(group.cancel_scope.cancel)  # runs first on exit: stop watching
                group.start_soon(self._apply_changes)
                if self._client.protocol_version in _modern_versions():
                    await group.start(self._listen)
        except BaseException:
            await stack.aclose()
            raise
        self._stack = stack
        return self

    async def __aexit__(self, *exc: Any) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.__aexit__(*exc)
        self._client = None

    async def _on_message(self, message: Any) -> None:
        import mcp_types

        if isinstance(message, mcp_types.ToolListChangedNotification):
            self._dirty.set()
        elif isinstance(message, Exception):
            logger.warning("MCP server %r: %s", self.name, message)

    async def _listen(self, *, task_status: Any) -> None:
        """2026-07-28 connections deliver change notices only on a ``subscriptions/listen`` stream."""
        async with self._client.listen(tools_list_changed=True) as sub:
            task_status.started()
            async for _event in sub:
                self._dirty.set()

    async def _apply_changes(self) -> None:
        import anyio

        while True:
            await self._dirty.wait()
            self._dirty = anyio.Event()  # notices arriving during the sync trigger one more
            try:
                await self.refresh()
            except Exception as exc:  # noqa: BLE001 - a failed re-list must not end the watch
                logger.warning("MCP server %r: re-listing tools failed: %s", self.name, exc)

    async def list_tools(self) -> list[ToolDoc]:
        """Every tool the server lists now (following pagination), as namespaced ToolDocs."""
        if self._client is None:
            raise ConfigError(f"MCP source {self.name!r} is not connected; use 'async with'")
        tools: list[Any] = []
        cursor: str | None = None
        for _ in range(1000):
            page = await self._client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        return from_tools_list(tools, server=self.name)

    async def refresh(self) -> Any:
        """List the server's tools and sync them into the knowledge base (returns the SyncReport)."""
        import anyio

        docs = await self.list_tools()
        report = await anyio.to_thread.run_sync(lambda: self.kb.sync(docs, prefix=self.prefix))
        self.tools = docs
        self.last_report = report
        self.sync_count += 1
        done, self._synced = self._synced, anyio.Event()
        done.set()
        logger.info(
            "MCP server %r: %d tools (%d added, %d updated, %d removed)",
            self.name,
            len(docs),
            len(report.added),
            len(report.updated),
            len(report.removed),
        )
        return report

    async def wait_for_sync(self, count: int, timeout: float = 30.0) -> Any:
        """Wait until ``sync_count >= count`` (e.g. ``source.sync_count + 1`` before a change)."""
        import anyio

        with anyio.fail_after(timeout):
            while self.sync_count < count:
                await self._synced.wait()
        return self.last_report

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> Any:
        """Call the server's tool ``name`` (its own name, not the namespaced id)."""
        if self._client is None:
            raise ConfigError(f"MCP source {self.name!r} is not connected; use 'async with'")
        return await self._client.call_tool(name, dict(arguments or {}))


def _modern_versions() -> tuple[str, ...]:
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    return tuple(MODERN_PROTOCOL_VERSIONS)


# ================================================================== several servers
class MCPHub:
    """Several live MCP servers in one knowledge base, searched together.

    ``async with MCPHub(specs, kb) as hub:`` connects every server (see :class:`MCPSource`),
    removes (with ``prune``) tools of servers that are no longer configured (a persistent
    knowledge base may hold them from an earlier run), then serves :meth:`search` and
    :meth:`call_tool`. Tools that came from elsewhere (no ``mcp_server`` metadata) are kept.
    """

    def __init__(
        self, servers: Sequence[MCPServerSpec], kb: Any = None, *, watch: bool = True, prune: bool = True
    ) -> None:
        names = [s.name for s in servers]
        if len(set(names)) != len(names):
            raise ConfigError(f"MCP server names must be unique, got {names}")
        if kb is None:
            from toolret.knowledge_base import ToolKnowledgeBase

            kb = ToolKnowledgeBase()
        self.kb = kb
        self.sources = {s.name: MCPSource(s, kb, watch=watch) for s in servers}
        self.prune = prune
        self._stack: AsyncExitStack | None = None

    async def __aenter__(self) -> Self:
        import anyio

        stack = AsyncExitStack()
        await stack.__aenter__()
        try:
            for source in self.sources.values():
                await stack.enter_async_context(source)
            stale = [
                d.id
                for d in self.kb.docs()
                if self.prune and d.metadata.get("mcp_server") and d.metadata["mcp_server"] not in self.sources
            ]
            if stale:
                await anyio.to_thread.run_sync(self.kb.remove, stale)
        except BaseException:
            await stack.aclose()
            raise
        self._stack = stack
        return self

    async def __aexit__(self, *exc: Any) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.__aexit__(*exc)

    async def search(self, query: str, k: int = 5, **kwargs: Any) -> Any:
        """:meth:`ToolKnowledgeBase.asearch` over every server's tools."""
        return await self.kb.asearch(query, k, **kwargs)

    def owner(self, tool: str) -> tuple[MCPSource, str]:
        """The source serving ``tool`` (a namespaced id) and the tool's own name."""
        if tool not in self.kb:
            raise ToolNotFoundError(f"no tool {tool!r} in the registry")
        server, sep, name = tool.partition(SEPARATOR)
        source = self.sources.get(server) if sep else None
        if source is None:
            raise ToolNotFoundError(
                f"tool {tool!r} is in the registry but no connected MCP server serves it "
                f"(servers: {', '.join(sorted(self.sources)) or 'none'}); it can be searched, not called"
            )
        return source, name

    async def call_tool(self, tool: str, arguments: Mapping[str, Any] | None = None) -> Any:
        """Forward a call to the server that owns ``tool`` (``"server/name"``)."""
        source, name = self.owner(tool)
        return await source.call_tool(name, arguments)
