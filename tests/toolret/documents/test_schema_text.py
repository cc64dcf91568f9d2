"""JSON-schema responses become readable field lists; other text is left alone."""

from __future__ import annotations

import json

from toolret import ToolDoc
from toolret.documents.schema_text import readable_response


def test_plain_text_response_is_unchanged():
    assert readable_response("A list of movies.") == "A list of movies."
    assert readable_response("{not json") == "{not json"


def test_openapi_response_lists_field_names_through_wrappers():
    schema = {
        "description": "OK",
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "properties": {
                        "page": {"type": "integer"},
                        "results": {
                            "type": "array",
                            "items": {"allOf": [{"properties": {"poster_path": {}, "vote_average": {}}}]},
                        },
                    },
                }
            }
        },
    }
    text = readable_response(json.dumps(schema))
    assert text == "OK Returns: page (integer); results (array): poster path, vote average"


def test_deep_or_huge_schemas_stay_bounded():
    node: dict = {"type": "string"}
    for i in range(200):
        node = {"type": "object", "properties": {f"level_{i}": node}}
    assert len(readable_response(json.dumps(node))) < 2_000
    wide = {"type": "object", "properties": {f"field_{i}": {"type": "string"} for i in range(5_000)}}
    assert len(readable_response(json.dumps(wide))) <= 2_000


def test_tool_doc_indexes_the_readable_form_but_keeps_the_raw_response():
    raw = json.dumps({"type": "object", "properties": {"temperature": {"type": "number"}}})
    doc = ToolDoc(name="weather", response=raw)
    assert doc.response == raw
    assert doc.field_text("response") == "Returns: temperature (number)"
