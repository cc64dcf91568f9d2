"""Tool files recognised by content: JSON lines, OpenAI tool lists, MCP tools/list results, OpenAPI 3."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolret import InvalidToolError
from toolret.sources.tool_files import load_tool_file

OPENAI_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather forecast for a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "refund_payment",
            "description": "Refund a card payment to a customer.",
            "parameters": {"type": "object", "properties": {"payment_id": {"type": "string"}}},
        },
    },
]
MCP_TOOLS = {
    "tools": [
        {
            "name": "get_weather",
            "description": "Current weather forecast for a city.",
            "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
        {
            "name": "refund_payment",
            "description": "Refund a card payment to a customer.",
            "inputSchema": {"type": "object", "properties": {"payment_id": {"type": "string"}}},
        },
    ]
}
OPENAPI_YAML = """\
openapi: 3.0.0
info: {title: Payments, version: "1"}
paths:
  /weather/{city}:
    get:
      operationId: get_weather
      summary: Current weather forecast for a city.
      parameters: [{name: city, in: path, required: true, schema: {type: string}}]
  /payments/{payment_id}/refund:
    post:
      operationId: refund_payment
      summary: Refund a card payment to a customer.
      parameters: [{name: payment_id, in: path, required: true, schema: {type: string}}]
"""


@pytest.mark.parametrize(
    ("name", "text", "kind"),
    [
        ("tools.json", json.dumps(OPENAI_TOOLS), "OpenAI tool list"),
        ("tools_list.json", json.dumps(MCP_TOOLS), "MCP tools/list result"),
        ("rpc.json", json.dumps({"jsonrpc": "2.0", "id": 1, "result": MCP_TOOLS}), "MCP tools/list result"),
        ("api.yaml", OPENAPI_YAML, "OpenAPI 3 spec"),
        (
            "api.txt",
            json.dumps(
                {
                    "openapi": "3.0.0",
                    "info": {"title": "P", "version": "1"},
                    "paths": {
                        "/w": {"get": {"operationId": "get_weather", "summary": "Weather."}},
                        "/r": {"post": {"operationId": "refund_payment", "summary": "Refund."}},
                    },
                }
            ),
            "OpenAPI 3 spec",
        ),
        ("tools.jsonl", "".join(json.dumps(t) + "\n" for t in OPENAI_TOOLS), "JSON lines"),
    ],
)
def test_tool_files_are_detected_by_content(tmp_path: Path, name: str, text: str, kind: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    docs, detected = load_tool_file(path)
    assert detected == kind
    assert sorted(d.name for d in docs) == ["get_weather", "refund_payment"]


def test_an_unrecognised_or_inconsistent_tool_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.yaml"
    path.write_text("shopping: [eggs, milk]\n", encoding="utf-8")
    with pytest.raises(InvalidToolError, match="OpenAI tool list.*MCP tools/list.*OpenAPI 3"):
        load_tool_file(path)
    path.write_text(json.dumps([OPENAI_TOOLS[0], OPENAI_TOOLS[0]]), encoding="utf-8")
    with pytest.raises(InvalidToolError, match=r"duplicate.*\[0\].*\[1\]"):
        load_tool_file(path)


def test_a_one_line_jsonl_file_and_a_bad_item_are_reported_by_position(tmp_path: Path) -> None:
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps({"name": "get_weather", "description": "Weather."}) + "\n", encoding="utf-8")
    assert load_tool_file(path)[1] == "JSON lines"
    path.write_text(
        json.dumps([OPENAI_TOOLS[0], {"type": "function", "function": {"name": "g", "parameters": {"type": "array"}}}]),
        encoding="utf-8",
    )
    with pytest.raises(InvalidToolError, match=r"item \[1\]") as info:
        load_tool_file(path)
    assert (info.value.tool, info.value.field) == ("g", "function.parameters.type")


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        # a pretty-printed JSON document with a stray comma on line 3 (not JSON lines)
        (
            "tools.json",
            '{\n  "tools": [\n    {"name": "a",, "description": "b"}\n  ]\n}\n',
            r"JSON at line 3, column 18",
        ),
        (
            "list.json",
            '[\n  {"type": "function",\n   "function": {"name": "x" "description": "y"}}\n]\n',
            r"line 3, column 29",
        ),
        (
            "api.yaml",
            OPENAPI_YAML.replace("      summary: Refund", "     summary: Refund"),
            r"YAML at line 12, column 6",
        ),
        ("tools.jsonl", '{"name": "a"}\n{"name": "c", "description": }\n', r"JSON at line 2, column 30"),
    ],
)
def test_a_parse_error_names_the_file_line_and_column(tmp_path: Path, name: str, text: str, where: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InvalidToolError, match=where) as info:
        load_tool_file(path)
    assert str(path) in str(info.value)
