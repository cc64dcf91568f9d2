"""The MCP search proxy end to end: the ``mcp`` client talks to ``toolret serve-mcp``, which
talks to real MCP servers (fixtures/mcp_tools_server.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from toolret import ToolDoc, ToolKnowledgeBase, ToolParam
from toolret.cli import main
from toolret.sources.mcp import MCPServerSpec
from toolret.sources.mcp_proxy import build_proxy, short_description, tool_schema

SERVER = Path(__file__).parents[1] / "fixtures" / "mcp_tools_server.py"


def test_short_description_and_schema_from_parameters():
    doc = ToolDoc(
        name="f",
        description="Does one thing. Then explains\nat length.",
        parameters=[
            ToolParam(name="x", type="integer", required=True, description="An x."),
            ToolParam(name="y", type="string|null"),
        ],
    )
    assert short_description(doc) == "Does one thing."
    assert tool_schema(doc) == {
        "type": "object",
        "required": ["x"],
        "properties": {"x": {"type": "integer", "description": "An x."}, "y": {"type": ["string", "null"]}},
    }


def test_serve_mcp_needs_something_to_serve(capsys):
    assert main(["serve-mcp"]) == 2
    assert "nothing to serve" in capsys.readouterr().err
    assert main(["serve-mcp", "--server", "no-equals-sign"]) == 2
    assert "NAME=COMMAND" in capsys.readouterr().err


def _texts(result) -> str:
    return " ".join(block.text for block in result.content if getattr(block, "text", None))


@pytest.mark.slow
async def test_any_mcp_client_gets_search_and_call_over_two_servers(tmp_path):
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"text": {"command": sys.executable, "args": [str(SERVER), "text"]}}}))
    proxy = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "toolret.cli",
            "serve-mcp",
            "--config",
            str(config),
            "--server",
            f"calc={sys.executable} {SERVER} calc",
            "--kb",
            str(tmp_path / "proxy.kb"),
        ],
        env={"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"},
    )
    async with Client(proxy, read_timeout_seconds=120) as client:
        listed = await client.list_tools()
        assert sorted(t.name for t in listed.tools) == ["call_tool", "search_tools"]

        found = await client.call_tool("search_tools", {"query": "convert 100 degrees celsius to fahrenheit", "k": 3})
        tools = found.structured_content["tools"]
        assert len(tools) == 3
        best = tools[0]
        assert best["name"] == "calc/celsius_to_fahrenheit"
        assert best["description"] == "Convert a temperature from degrees Celsius to degrees Fahrenheit."
        assert best["input_schema"]["required"] == ["celsius"]

        result = await client.call_tool("call_tool", {"name": best["name"], "arguments": {"celsius": 100}})
        assert not result.is_error and result.structured_content == {"result": 212.0}
        # Same tool name on two servers: the namespace picks the owner.
        result = await client.call_tool("call_tool", {"name": "text/convert", "arguments": {"text": "hi"}})
        assert result.structured_content == {"result": "6869"}

        result = await client.call_tool("call_tool", {"name": "calc/does_not_exist", "arguments": {}})
        assert result.is_error and "search_tools" in _texts(result)
        result = await client.call_tool("call_tool", {"name": "calc/square_root", "arguments": {"wrong": 1}})
        assert result.is_error  # the upstream server's own validation error comes back

        # An upstream change reaches search_tools: the proxy re-lists on list_changed.
        await client.call_tool("call_tool", {"name": "calc/install_pack", "arguments": {"pack": "finance"}})
        with anyio.fail_after(60):
            while True:
                found = await client.call_tool("search_tools", {"query": "monthly payment of a mortgage", "k": 3})
                if "calc/loan_payment" in [t["name"] for t in found.structured_content["tools"]]:
                    break
                await anyio.sleep(0.5)
    # The persistent knowledge base keeps the servers' tools for the next start.
    kb = ToolKnowledgeBase.load(tmp_path / "proxy.kb")
    assert "calc/loan_payment" in kb and "text/convert" in kb


@pytest.mark.slow
async def test_proxy_over_a_knowledge_base_searches_but_cannot_call_unowned_tools(embedder):
    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add(
        [
            {
                "name": "get_weather",
                "description": "Current weather for a city.",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
            {"name": "send_email", "description": "Send an e-mail to a recipient."},
        ]
    )
    proxy = build_proxy(kb=kb)
    async with Client(proxy) as client:  # in process: the same server object, no subprocess
        found = await client.call_tool("search_tools", {"query": "is it raining in Paris", "k": 1})
        assert found.structured_content["tools"][0]["name"] == "get_weather"
        assert found.structured_content["tools"][0]["input_schema"]["properties"] == {"city": {"type": "string"}}
        result = await client.call_tool("call_tool", {"name": "get_weather", "arguments": {"city": "Paris"}})
        assert result.is_error and "can be searched, not called" in _texts(result)
    assert len(kb) == 2  # a proxy without servers prunes nothing


@pytest.mark.slow
async def test_proxy_forwards_to_a_streamable_http_server(embedder, http_server):  # noqa: F811
    kb = ToolKnowledgeBase(embedder=embedder)
    proxy = build_proxy(servers=[MCPServerSpec(name="remote", url=http_server)], kb=kb)
    async with Client(proxy) as client:
        found = await client.call_tool("search_tools", {"query": "greatest common divisor of two numbers", "k": 2})
        assert found.structured_content["tools"][0]["name"] == "remote/gcd"
        result = await client.call_tool("call_tool", {"name": "remote/gcd", "arguments": {"a": 12, "b": 18}})
        assert result.structured_content == {"result": 6}


@pytest.mark.slow
async def test_a_bad_search_comes_back_to_the_client_as_a_readable_tool_error(embedder):
    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add([{"name": "get_weather", "description": "Current weather for a city."}])
    async with Client(build_proxy(kb=kb)) as client:
        empty = await client.call_tool("search_tools", {"query": "", "k": 3})
        assert empty.is_error and "query is empty" in _texts(empty)
        blank = await client.call_tool("search_tools", {"query": "   ", "k": 3})
        assert blank.is_error and "query is empty" in _texts(blank)
        fine = await client.call_tool("search_tools", {"query": "weather in Oslo", "k": 3})
        assert not fine.is_error and fine.structured_content["tools"][0]["name"] == "get_weather"
