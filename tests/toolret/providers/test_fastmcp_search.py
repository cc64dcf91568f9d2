"""ToolretSearchTransform on a real FastMCP server, through FastMCP's in-memory client, beside its BM25 transform."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from fastmcp import Client, FastMCP
from fastmcp.server.transforms.search import BM25SearchTransform
from fastmcp.tools.base import Tool
from mcp.types import Tool as MCPTool

from toolret.providers import ToolretSearchTransform

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "fastmcp_search.py"


def _server(transform, embedder=None) -> FastMCP:
    mcp = FastMCP("assistant")

    @mcp.tool(annotations={"readOnlyHint": True}, tags={"weather"})
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        return f"sunny in {city}"

    @mcp.tool(annotations={"readOnlyHint": True})
    def convert_currency(amount: float, to: str) -> str:
        """Convert an amount of money into another currency."""
        return f"{amount} {to}"

    @mcp.tool(annotations={"destructiveHint": True})
    def delete_file(path: str) -> str:
        """Delete a file permanently."""
        return f"deleted {path}"

    @mcp.tool
    def send_email(to: str, body: str) -> str:
        """Send an email message to a recipient."""
        return "sent"

    mcp.add_transform(transform)
    return mcp


@pytest.fixture
def transform(embedder):
    return ToolretSearchTransform(max_results=2, embedder=embedder)


async def test_the_server_lists_the_same_two_tools_as_with_bm25(transform):
    async with Client(_server(BM25SearchTransform(max_results=2))) as client:
        stock = [t.name for t in await client.list_tools()]
    async with Client(_server(transform)) as client:
        ours = await client.list_tools()
    assert [t.name for t in ours] == stock == ["search_tools", "call_tool"]


async def test_search_returns_list_tools_format_ranked_by_toolret(transform):
    async with Client(_server(transform)) as client:
        found = await client.call_tool("search_tools", {"query": "is it raining in Paris?"})
        listed = await client.call_tool("search_tools", {"query": "send a message to bob"})
    assert found.data[0]["name"] == "get_weather" and len(found.data) <= 2
    MCPTool.model_validate(found.data[0])  # the same shape as list_tools
    assert listed.data[0]["name"] == "send_email"


async def test_bm25_finds_nothing_where_toolret_finds_the_tool(transform):
    query = "is it raining in Paris?"  # no word in common with the weather tool's text
    async with Client(_server(BM25SearchTransform(max_results=2))) as client:
        assert (await client.call_tool("search_tools", {"query": query})).data == []
    async with Client(_server(transform)) as client:
        assert (await client.call_tool("search_tools", {"query": query})).data[0]["name"] == "get_weather"


async def test_call_tool_runs_a_found_tool(transform):
    async with Client(_server(transform)) as client:
        result = await client.call_tool("call_tool", {"name": "get_weather", "arguments": {"city": "Oslo"}})
    assert result.data == "sunny in Oslo"


async def test_a_changed_catalog_is_synced_by_difference(transform):
    server = _server(transform)
    async with Client(server) as client:
        await client.call_tool("search_tools", {"query": "weather"})
        embedded = transform.knowledge_base.embedder.texts_embedded

        @server.tool
        def book_flight(origin: str, destination: str) -> str:
            """Book a flight between two airports."""
            return "booked"

        found = await client.call_tool("search_tools", {"query": "fly from Paris to Rome"})
    assert found.data[0]["name"] == "book_flight"
    assert 0 < transform.knowledge_base.embedder.texts_embedded - embedded < 10  # the new tool only


async def test_a_scope_keeps_tools_out_of_search_and_out_of_call_tool(embedder):
    server = _server(ToolretSearchTransform(max_results=4, embedder=embedder, where={"read_only": True}))
    async with Client(server) as client:
        found = await client.call_tool("search_tools", {"query": "delete the file a.txt"})
        refused = await client.call_tool(
            "call_tool", {"name": "delete_file", "arguments": {"path": "a.txt"}}, raise_on_error=False
        )
    assert {t["name"] for t in found.data} <= {"get_weather", "convert_currency"}
    assert refused.is_error


async def test_fastmcp_tags_are_scope_tags(embedder):
    server = _server(ToolretSearchTransform(max_results=4, embedder=embedder, where={"tags": ["weather"]}))
    async with Client(server) as client:
        found = await client.call_tool("search_tools", {"query": "send an email"})
    assert [t["name"] for t in found.data] == ["get_weather"]


def test_the_tool_doc_keeps_the_mcp_definition():
    from toolret.providers.fastmcp_search import tool_doc

    def ping(host: str) -> str:
        """Check that a host answers."""
        return "pong"

    doc = tool_doc(Tool.from_function(fn=ping, tags={"net"}))
    assert (doc.id, doc.field_text("parameters"), doc.metadata["tags"]) == ("ping", "host (string, required)", ["net"])


def test_the_example_runs(capsys):
    spec = importlib.util.spec_from_file_location("fastmcp_search_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    import asyncio

    asyncio.run(module.main())
    out = capsys.readouterr().out
    assert "search_tools('is it raining in Paris?') -> []" in out
    assert "search_tools('is it raining in Paris?') -> ['get_weather'" in out
    assert "call_tool('delete_file') -> error: True" in out


async def test_a_knowledge_base_lacking_catalog_tools_is_an_error_naming_the_option_and_the_tools(make_kb):
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        return f"sunny in {city}"

    kb = make_kb([get_weather])  # the server also has convert_currency, delete_file and send_email
    async with Client(_server(ToolretSearchTransform(max_results=2, knowledge_base=kb))) as client:
        result = await client.call_tool("search_tools", {"query": "send an email"}, raise_on_error=False)
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert "knowledge_base=" in text and "allowed_ids" not in text
    assert all(name in text for name in ("convert_currency", "delete_file", "send_email"))
