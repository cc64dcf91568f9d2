"""The MCP search proxy: two tool definitions in front of thousands of tools.

An MCP client (Claude Desktop, an IDE, an agent) connected to the proxy sees exactly two
tools:

* ``search_tools(query, k)``: the ``k`` tools of the registry that best serve ``query``,
  each with its id (``"server/tool"``), a short description and its input schema;
* ``call_tool(name, arguments)``: calls a tool found that way, forwarded to the MCP server
  that owns it; the upstream result (content, structured content, error flag) comes back
  unchanged.

Behind it sit any number of MCP servers (stdio or streamable HTTP, kept in sync through
:class:`~toolret.sources.mcp.MCPHub`, change notices included) and/or an existing knowledge
base. Tools that come from a knowledge base and no server can be searched but not called.

Run it with ``toolret serve-mcp`` (see :func:`toolret.cli.main`) or build it in Python::

    server = build_proxy(servers=MCPServerSpec.from_config(json.load(open("mcp.json"))))
    server.run()                                    # stdio; or server.run("streamable-http")
"""

# No ``from __future__ import annotations``: the SDK reads the tools' type hints at
# registration, and CallToolResult is imported lazily inside build_proxy.
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from toolret.documents.tool_doc import ToolDoc
from toolret.errors import MissingDependencyError, ToolRetError
from toolret.sources.mcp import MCPHub, MCPServerSpec

__all__ = ["MAX_K", "build_proxy", "short_description", "tool_schema"]

#: Most tools one ``search_tools`` call returns.
MAX_K = 20
_INSTRUCTIONS = (
    "This server gives access to a large registry of tools through two tools. First call "
    "search_tools with a description of what you need; then call call_tool with the name of a "
    "tool it returned and arguments that follow that tool's input_schema."
)


def short_description(doc: ToolDoc, limit: int = 240) -> str:
    """The first sentence (or line) of a tool's description, at most ``limit`` characters."""
    text = " ".join(doc.description.split())
    for stop in (". ", "\n"):
        cut = text.find(stop)
        if 0 < cut < limit:
            return text[: cut + 1].strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def tool_schema(doc: ToolDoc) -> dict[str, Any]:
    """The JSON schema of a tool's arguments: the original one, else built from its parameters."""
    return doc.parameters_schema()


def build_proxy(
    *,
    servers: Sequence[MCPServerSpec] = (),
    kb: Any = None,
    config: Any = None,
    name: str = "toolret",
) -> Any:
    """An ``mcp`` MCPServer exposing ``search_tools`` and ``call_tool`` over ``servers`` and ``kb``.

    ``kb`` defaults to an in-memory knowledge base; pass a persistent one so a restart
    re-embeds only what changed upstream. ``config`` is the retrieval preset or config used
    by ``search_tools`` (default: the knowledge base's own). Upstream servers are connected
    when the proxy starts serving and disconnected when it stops.
    """
    try:
        from mcp import MCPError
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
        from mcp_types import CallToolResult, TextContent
    except ImportError:
        raise MissingDependencyError("mcp", extra="mcp", purpose="the MCP search proxy") from None
    from toolret.knowledge_base import ToolKnowledgeBase

    knowledge_base = kb if kb is not None else ToolKnowledgeBase()
    state: dict[str, MCPHub] = {}

    @asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        # Only prune servers' leftovers when servers are configured: a proxy over a bare
        # knowledge base must keep every tool it holds.
        async with MCPHub(servers, knowledge_base, prune=bool(servers)) as hub:
            if knowledge_base.path is not None:
                knowledge_base.save()
            state["hub"] = hub
            try:
                yield
            finally:
                state.pop("hub", None)

    server = MCPServer(name, instructions=_INSTRUCTIONS, lifespan=lifespan)

    def error(text: str) -> Any:
        return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)

    @server.tool()
    async def search_tools(query: str, k: int = 5) -> dict[str, Any]:
        """Find the tools that can do what the query describes. Returns up to k tools (at most 20),
        best first, each with its name (pass it to call_tool), a short description and the JSON
        schema of its arguments."""
        hub = state["hub"]
        try:
            result = await hub.kb.asearch(query, max(1, min(int(k), MAX_K)), config=config)
        except ToolRetError as exc:  # the reason goes back to the client (isError), not only to our stderr
            raise ToolError(f"{exc}. Describe the capability you need in a few words.") from exc
        tools = []
        for scored in result.tools:
            doc = hub.kb.get(scored.id)
            tools.append({"name": doc.id, "description": short_description(doc), "input_schema": tool_schema(doc)})
        return {"tools": tools}

    @server.tool()
    async def call_tool(name: str, arguments: dict[str, Any] | None = None) -> CallToolResult:
        """Call a tool found with search_tools: name is the tool's name exactly as search_tools
        returned it, arguments an object that follows its input_schema."""
        hub = state["hub"]
        try:
            return await hub.call_tool(name, arguments or {})
        except ToolRetError as exc:
            return error(f"{exc}. Call search_tools first and use a name it returns.")
        except MCPError as exc:  # the owning server refused the call
            return error(f"{name}: {exc}")

    return server
