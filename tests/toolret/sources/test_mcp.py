"""MCP ingestion: static tools/list results, and live servers over stdio and streamable HTTP.

The live tests start the real MCP server in fixtures/mcp_tools_server.py (the ``mcp``
SDK's MCPServer, 19 tools per flavour) and change its tool list at run time.
"""

from __future__ import annotations

import sys
from pathlib import Path

import mcp_types
import pytest

from toolret import ConfigError, InvalidToolError, ToolKnowledgeBase, ToolNotFoundError
from toolret.documents.tool_doc import INDEX_FIELDS
from toolret.sources.mcp import (
    MCPHub,
    MCPServerSpec,
    MCPSource,
    from_mcp_tool,
    from_tools_list,
    split_tool_id,
)

SERVER = Path(__file__).parents[1] / "fixtures" / "mcp_tools_server.py"
N_TOOLS = 19  # per flavour: 14 own tools, convert, about, three admin tools


def stdio_spec(name: str, flavour: str = "calc", mode: str = "auto") -> MCPServerSpec:
    return MCPServerSpec(name=name, command=sys.executable, args=[str(SERVER), flavour], mode=mode)


# ------------------------------------------------------------------ static
def test_sdk_tool_becomes_a_namespaced_tooldoc():
    tool = mcp_types.Tool(
        name="get_forecast",
        title="Forecast",
        description="Weather forecast for a city.",
        input_schema={
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City name"}, "days": {"type": "integer"}},
            "required": ["city"],
        },
        output_schema={"type": "object", "properties": {"temperature_max": {"type": "number"}}},
        annotations=mcp_types.ToolAnnotations(read_only_hint=True),
    )
    doc = from_mcp_tool(tool, server="weather")
    assert doc.id == "weather/get_forecast" and doc.name == "get_forecast"
    assert doc.field_text("parameters") == "city (string, required): City name\ndays (integer, optional)"
    assert doc.field_text("response") == "Returns: temperature max (number)"
    assert doc.metadata == {"mcp_server": "weather", "title": "Forecast", "annotations": {"readOnlyHint": True}}
    assert doc.input_schema["required"] == ["city"]
    assert split_tool_id(doc.id) == ("weather", "get_forecast")


def test_tools_list_json_without_server_keeps_plain_names():
    docs = from_tools_list(
        {
            "tools": [
                {"name": "a", "inputSchema": {"type": "object"}},
                {"name": "b", "title": "Bee", "inputSchema": {"type": "object"}},
            ]
        }
    )
    assert [d.id for d in docs] == ["a", "b"]
    assert docs[1].description == "Bee"  # title stands in for a missing description


def test_bad_mcp_tools_are_refused_with_the_field():
    with pytest.raises(InvalidToolError, match="name"):
        from_mcp_tool({"description": "nameless"})
    with pytest.raises(InvalidToolError, match="inputSchema.properties.x"):
        from_mcp_tool({"name": "t", "inputSchema": {"type": "object", "properties": {"x": 3}}})
    with pytest.raises(ConfigError, match="server name"):
        from_mcp_tool({"name": "t"}, server="has/slash")
    with pytest.raises(ToolNotFoundError):
        split_tool_id("no_server_part")


def test_server_specs_from_a_client_configuration():
    specs = MCPServerSpec.from_config(
        {
            "mcpServers": {
                "files": {"command": "npx", "args": ["-y", "server-filesystem", "."], "env": {"A": "1"}},
                "remote": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer x"}},
            }
        }
    )
    assert [(s.name, s.command, s.url) for s in specs] == [
        ("files", "npx", None),
        ("remote", None, "http://127.0.0.1:9/mcp"),
    ]
    with pytest.raises(ConfigError, match="exactly one of"):
        MCPServerSpec.from_config({"mcpServers": {"both": {"command": "x", "url": "http://y"}}})


# ------------------------------------------------------------------ live, stdio
@pytest.mark.slow
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_live_server_is_indexed_and_list_changed_syncs_only_what_changed(embedder, mode):
    # auto negotiates 2026-07-28 (subscriptions/listen); legacy is the 2025 handshake
    # (notifications/tools/list_changed), what most deployed servers speak.
    kb = ToolKnowledgeBase(embedder=embedder)
    try:
        async with MCPSource(stdio_spec("calc", mode=mode), kb) as source:
            assert source._client.protocol_version == ("2026-07-28" if mode == "auto" else "2025-11-25")
            assert source.sync_count == 1 and len(kb) == N_TOOLS
            assert all(i.startswith("calc/") for i in kb.ids)
            top = [t.id for t in kb.search("average of a list of numbers", k=3).tools]
            assert "calc/mean" in top

            before = embedder.texts_embedded
            await source.call_tool("reword_tool", {"name": "mean", "description": "Mean of numbers, skipping gaps."})
            report = await source.wait_for_sync(2)
            assert (report.added, report.updated, report.removed) == ([], ["calc/mean"], [])
            fields = sum(1 for f in INDEX_FIELDS if kb.get("calc/mean").field_text(f))
            assert embedder.texts_embedded - before == fields  # one tool re-embedded, not 19
            assert kb.get("calc/mean").description == "Mean of numbers, skipping gaps."

            await source.call_tool("retire_tool", {"name": "factorial"})
            assert (await source.wait_for_sync(3)).removed == ["calc/factorial"]
            await source.call_tool("install_pack", {"pack": "finance"})
            report = await source.wait_for_sync(4)
            assert sorted(report.added) == ["calc/compound_interest", "calc/loan_payment", "calc/vat_inclusive"]
            assert kb.search("monthly mortgage payment", k=1).tools[0].id == "calc/loan_payment"
    finally:
        kb.close()


@pytest.mark.slow
async def test_hub_namespaces_servers_and_routes_calls(embedder):
    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add([{"name": "local_only", "description": "A tool from elsewhere."}])
    try:
        async with MCPHub([stdio_spec("calc", "calc"), stdio_spec("text", "text")], kb) as hub:
            assert len(kb) == 2 * N_TOOLS + 1
            assert {"calc/convert", "text/convert", "local_only"} <= set(kb.ids)
            result = await hub.call_tool("calc/convert", {"value": 2, "factor": 3})
            assert result.structured_content == {"result": 6.0}
            result = await hub.call_tool("text/convert", {"text": "hi"})
            assert result.structured_content == {"result": "6869"}
            hits = [t.id for t in (await hub.search("what day of the week is a date", k=3)).tools]
            assert "text/weekday_of" in hits
            with pytest.raises(ToolNotFoundError, match="no tool 'calc/nope'"):
                await hub.call_tool("calc/nope", {})
            with pytest.raises(ToolNotFoundError, match="can be searched, not called"):
                await hub.call_tool("local_only", {})
        # A later run without the text server prunes its tools, keeps the rest.
        async with MCPHub([stdio_spec("calc", "calc")], kb, watch=False):
            assert not any(i.startswith("text/") for i in kb.ids)
            assert "local_only" in kb and "calc/add" in kb
    finally:
        kb.close()


# ------------------------------------------------------------------ live, streamable HTTP


@pytest.mark.slow
async def test_streamable_http_server_is_indexed_and_watched(embedder, http_server):
    kb = ToolKnowledgeBase(embedder=embedder)
    try:
        async with MCPSource(MCPServerSpec(name="remote", url=http_server), kb) as source:
            assert len(kb) == N_TOOLS and "remote/celsius_to_fahrenheit" in kb
            result = await source.call_tool("celsius_to_fahrenheit", {"celsius": 100})
            assert result.structured_content == {"result": 212.0}
            await source.call_tool("install_pack", {"pack": "finance"})
            assert len((await source.wait_for_sync(2)).added) == 3
    finally:
        kb.close()
