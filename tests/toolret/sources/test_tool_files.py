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


def _openai_file(path: Path, *tools: tuple[str, str]) -> Path:
    path.write_text(
        json.dumps([{"type": "function", "function": {"name": n, "description": d}} for n, d in tools]),
        encoding="utf-8",
    )
    return path


def test_indexing_a_second_file_with_a_taken_id_stops_naming_the_tool_and_both_files(tmp_path: Path, embedder) -> None:
    from toolret import ToolConflictError, ToolKnowledgeBase
    from toolret.sources.tool_files import index_tool_file

    kb = ToolKnowledgeBase(embedder=embedder)
    first = _openai_file(tmp_path / "a.json", ("get_weather", "Weather for a city."), ("refund", "Refund a payment."))
    second = _openai_file(tmp_path / "b.json", ("get_weather", "Air quality index."), ("send_email", "Send an email."))
    report = index_tool_file(kb, first)
    assert (sorted(report.added), report.updated, report.unchanged, report.total) == (
        ["get_weather", "refund"],
        [],
        [],
        2,
    )
    with pytest.raises(ToolConflictError, match=r"'get_weather' \(from .*a\.json\)") as info:
        index_tool_file(kb, second)
    assert "b.json" in str(info.value) and info.value.tool == "get_weather"
    assert (len(kb), kb.get("get_weather").description) == (2, "Weather for a city.")  # nothing was written

    again = index_tool_file(kb, first)  # the same file again: its own tools, not a conflict
    assert (again.added, again.updated, sorted(again.unchanged)) == ([], [], ["get_weather", "refund"])
    _openai_file(first, ("get_weather", "Weather for a city."), ("refund", "Refund a card payment."))
    assert index_tool_file(kb, first).updated == ["refund"]


@pytest.mark.parametrize(
    ("on_conflict", "weather", "ids"),
    [
        ("keep", "Weather for a city.", ["get_weather", "send_email"]),
        ("replace", "Air quality index.", ["get_weather", "send_email"]),
        ("rename", "Weather for a city.", ["b/get_weather", "get_weather", "send_email"]),
    ],
)
def test_on_conflict_says_which_tool_wins(tmp_path: Path, embedder, on_conflict: str, weather: str, ids: list) -> None:
    from toolret import ToolKnowledgeBase
    from toolret.sources.tool_files import index_tool_file

    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add([{"type": "function", "function": {"name": "get_weather", "description": "Weather for a city."}}])
    second = _openai_file(tmp_path / "b.json", ("get_weather", "Air quality index."), ("send_email", "Send an email."))
    report = index_tool_file(kb, second, on_conflict=on_conflict)
    assert sorted(kb.ids) == ids and kb.get("get_weather").description == weather
    settled = {"keep": report.kept, "replace": report.replaced, "rename": report.renamed}[on_conflict]
    assert list(settled) == ["get_weather"]
    if on_conflict == "rename":
        assert settled["get_weather"] == "b/get_weather" and kb.get("b/get_weather").name == "get_weather"
    else:
        assert "no source file" in settled["get_weather"]  # the tool came from kb.add
    assert report.added == (["b/get_weather", "send_email"] if on_conflict == "rename" else ["send_email"])


def test_a_knowledge_base_from_before_sources_were_recorded_adopts_its_own_file(tmp_path: Path, embedder) -> None:
    from toolret import ToolConflictError, ToolKnowledgeBase
    from toolret.sources.tool_files import index_tool_file, load_tool_file

    path = _openai_file(tmp_path / "a.json", ("get_weather", "Weather for a city."), ("refund", "Refund a payment."))
    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add(load_tool_file(path)[0])  # as an older toolret index left it: the tools, no source stamped
    report = index_tool_file(kb, path)
    assert sorted(report.adopted) == ["get_weather", "refund"] and report.added == []
    assert {kb.get(t).metadata["source_file"] for t in kb.ids} == {str(path.resolve())}
    assert index_tool_file(kb, path).adopted == []  # stamped now: plain re-indexing from here on

    changed = ToolKnowledgeBase(embedder=embedder)
    changed.add(load_tool_file(path)[0])
    _openai_file(path, ("get_weather", "Air quality index."), ("refund", "Refund a payment."))
    with pytest.raises(ToolConflictError, match="get_weather"):  # not provably the file's: still asks
        index_tool_file(changed, path)


def test_a_tool_dropped_from_its_file_leaves_the_knowledge_base_and_nothing_else_does(tmp_path: Path, embedder) -> None:
    from toolret import ToolKnowledgeBase
    from toolret.sources.tool_files import index_tool_file

    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add([{"type": "function", "function": {"name": "ask_user", "description": "Ask the user."}}])
    other = _openai_file(tmp_path / "b.json", ("send_email", "Send an email."))
    index_tool_file(kb, other)
    path = _openai_file(tmp_path / "a.json", ("get_weather", "Weather for a city."), ("refund", "Refund a payment."))
    index_tool_file(kb, path)
    _openai_file(path, ("get_weather", "Weather for a city."))  # refund was deleted from the file
    report = index_tool_file(kb, path)
    assert report.removed == ["refund"] and report.unchanged == ["get_weather"] and report.total == 3
    assert sorted(kb.ids) == ["ask_user", "get_weather", "send_email"]  # kb.add's and the other file's stay
    assert "refund" not in kb.search("give the customer their money back", k=3).ids


def test_an_mcp_list_with_one_huge_description_keeps_every_tool(tmp_path: Path, caplog) -> None:
    tools = [
        {"name": "read_manual", "description": "Read the manual. " * 13_000, "inputSchema": {"type": "object"}},
        {"name": "list_files", "description": "List the files in a folder.", "inputSchema": {"type": "object"}},
    ]
    path = tmp_path / "tools.json"
    path.write_text(json.dumps({"tools": tools}), encoding="utf-8")
    with caplog.at_level("WARNING", logger="toolret"):
        docs, kind = load_tool_file(path)
    assert kind == "MCP tools/list result" and [d.name for d in docs] == ["read_manual", "list_files"]
    assert len(docs[0].description) <= 10_000 and "tool 'read_manual' cannot be indexed as it is" in caplog.text
