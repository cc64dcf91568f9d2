"""A FastMCP server whose tool list is a search: toolret's transform beside FastMCP's BM25 one.

With a search transform a server lists two tools, ``search_tools`` and ``call_tool``; the client
finds tools by describing what it needs. ``ToolretSearchTransform`` is a drop-in for FastMCP's
``BM25SearchTransform``: same tools in, same two tools and result format out, toolret's ranking.
A request that shares no word with the tool's text ("is it raining in Paris?" for a weather tool)
is where BM25 finds nothing and toolret finds the tool.

Runs in process (FastMCP's in-memory client), offline. Run: ``python examples/fastmcp_search.py``.
"""

from __future__ import annotations

import asyncio
import logging

from fastmcp import Client, FastMCP
from fastmcp.server.transforms.search import BM25SearchTransform

from toolret.providers import ToolretSearchTransform


def build_server(transform: object) -> FastMCP:
    mcp = FastMCP("assistant")

    @mcp.tool(annotations={"readOnlyHint": True})
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        return f"Sunny, 21 C in {city}"

    @mcp.tool(annotations={"readOnlyHint": True})
    def convert_currency(amount: float, to: str) -> str:
        """Convert an amount of money into another currency."""
        return f"{amount * 0.92:.2f} {to}"

    @mcp.tool(annotations={"destructiveHint": True})
    def delete_file(path: str) -> str:
        """Delete a file permanently."""
        return f"deleted {path}"

    @mcp.tool
    def send_email(to: str, body: str) -> str:
        """Send an email message to a recipient."""
        return "sent"

    mcp.add_transform(transform)  # type: ignore[arg-type]
    return mcp


async def ask(server: FastMCP, query: str) -> list[str]:
    async with Client(server) as client:
        listed = [t.name for t in await client.list_tools()]
        found = await client.call_tool("search_tools", {"query": query})
        names = [t["name"] for t in found.data]
        print(f"  lists {listed}; search_tools({query!r}) -> {names}")
        return names


async def main() -> None:
    query = "is it raining in Paris?"
    print("FastMCP BM25SearchTransform:")
    await ask(build_server(BM25SearchTransform(max_results=2)), query)
    print("toolret ToolretSearchTransform:")
    server = build_server(ToolretSearchTransform(max_results=2))
    names = await ask(server, query)
    async with Client(server) as client:
        result = await client.call_tool("call_tool", {"name": names[0], "arguments": {"city": "Paris"}})
        print(f"  call_tool({names[0]!r}) -> {result.data!r}")
    print("toolret, scoped to read-only tools (delete_file is neither found nor callable):")
    scoped = build_server(ToolretSearchTransform(max_results=3, where={"read_only": True}))
    await ask(scoped, "delete the file a.txt")
    logging.getLogger("fastmcp").setLevel(logging.CRITICAL)  # the refusal below is expected: no traceback
    async with Client(scoped) as client:
        refused = await client.call_tool(
            "call_tool", {"name": "delete_file", "arguments": {"path": "a.txt"}}, raise_on_error=False
        )
        print(f"  call_tool('delete_file') -> error: {refused.is_error}")


if __name__ == "__main__":
    asyncio.run(main())
