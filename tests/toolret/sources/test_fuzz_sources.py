"""Fuzzed OpenAPI fragments and MCP ``tools/list`` results: valid ToolDocs or InvalidToolError, fast.

OpenAPI specs are fuzzed around what makes ``$ref`` resolution dangerous: reference cycles
(direct, mutual, through ``#``), missing and external targets, references to non-objects,
reference fan-out (every property of a schema pointing at the next one: exponential when
expanded naively), alias bombs (one Python object shared at every level, as YAML anchors
produce), nesting past the recursion limit, and hostile values in every slot.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from toolret.documents.tool_doc import ToolDoc
from toolret.errors import InvalidToolError
from toolret.sources.mcp import from_mcp_tool, from_tools_list
from toolret.sources.openapi import from_openapi

from ..fuzz_strategies import (
    FUZZ,
    check,
    json_like,
    pathological,
    scalars,
    schemas,
    small_text,
    text,
)

_REFS = [
    "#/components/schemas/A",
    "#/components/schemas/B",
    "#/components/schemas/Missing",
    "#",
    "#/paths",
    "#/components/schemas/A/properties/next",
    "#/components/parameters/P",
    "#/components/requestBodies/R",
    "#/components/responses/OK",
    "other.yaml#/X",
    "http://evil.example/schema.json",
    "#/components/schemas/a~1b",
    "#/info/title",
    "#/components/schemas/L0",
]
_ref = st.builds(lambda r: {"$ref": r}, st.sampled_from(_REFS))
_schema_or_ref = st.one_of(_ref, schemas(), json_like)


def _fanout(width: int, levels: int) -> dict[str, Any]:
    """Schemas L0..Ln whose every property references the next level: width**levels when expanded."""
    comps = {
        f"L{i}": {
            "type": "object",
            "properties": {f"p{j}": {"$ref": f"#/components/schemas/L{i + 1}"} for j in range(width)},
        }
        for i in range(levels)
    }
    comps[f"L{levels}"] = {"type": "string"}
    return comps


def _alias_bomb(width: int, levels: int) -> dict[str, Any]:
    """One object shared ``width`` times at each of ``levels`` levels (a YAML billion-laughs)."""
    node: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        node = {"type": "object", "properties": {f"p{j}": node for j in range(width)}}
    return node


_parameter = st.fixed_dictionaries(
    {"name": st.one_of(small_text, scalars), "in": st.sampled_from(["path", "query", "header", "cookie", 1])},
    optional={"schema": _schema_or_ref, "required": scalars, "description": st.one_of(text, scalars)},
)
_media = st.dictionaries(
    st.sampled_from(["application/json", "multipart/form-data", "text/plain", "application/x-www-form-urlencoded"]),
    st.fixed_dictionaries({}, optional={"schema": _schema_or_ref}),
    max_size=2,
)
_body = st.fixed_dictionaries({}, optional={"required": scalars, "content": st.one_of(_media, scalars)})
_response = st.fixed_dictionaries({}, optional={"description": st.one_of(text, scalars), "content": _media})
_responses = st.dictionaries(
    st.one_of(st.sampled_from(["200", "201", "2XX", "default", "404"]), st.sampled_from([200, 204])),
    st.one_of(_ref, _response),
    max_size=3,
)
operations = st.fixed_dictionaries(
    {},
    optional={
        "operationId": st.one_of(st.sampled_from(["op", "op", "getThing", ""]), small_text, scalars),
        "summary": st.one_of(text, scalars),
        "description": st.one_of(text, scalars),
        "tags": st.one_of(st.lists(st.one_of(small_text, scalars), max_size=3), scalars),
        "deprecated": st.one_of(st.booleans(), scalars),
        "parameters": st.one_of(st.lists(st.one_of(_ref, _parameter), max_size=4), scalars),
        "requestBody": st.one_of(_ref, _body, scalars),
        "responses": st.one_of(_responses, scalars),
    },
)


@st.composite
def openapi_specs(draw: st.DrawFn) -> Any:
    components = {
        "schemas": {
            "A": {
                "type": "object",
                "properties": {"next": {"$ref": "#/components/schemas/B"}, "self": {"$ref": "#/components/schemas/A"}},
            },
            "B": {"allOf": [{"$ref": "#/components/schemas/A"}, draw(_schema_or_ref)]},
            "a/b": draw(_schema_or_ref),
            **draw(st.dictionaries(small_text, _schema_or_ref, max_size=3)),
        },
        "parameters": {"P": {"name": "p", "in": "query", "schema": {"$ref": "#/components/parameters/P"}}},
        "requestBodies": {"R": {"content": {"application/json": {"schema": draw(_schema_or_ref)}}}},
        "responses": {"OK": {"$ref": "#/components/responses/OK"}},
    }
    kind = draw(st.integers(0, 9))
    if kind == 0:
        components["schemas"].update(_fanout(draw(st.integers(2, 200)), draw(st.integers(1, 6))))
    elif kind == 1:
        components["schemas"]["L0"] = _alias_bomb(draw(st.integers(2, 12)), draw(st.integers(1, 12)))
    elif kind == 2:
        components["schemas"]["L0"] = draw(pathological)
    paths = draw(
        st.dictionaries(
            st.one_of(st.sampled_from(["/pets/{id}", "/pets", "/"]), small_text),
            st.one_of(
                st.dictionaries(
                    st.sampled_from(["get", "post", "put", "delete", "parameters", "$ref", "summary"]),
                    st.one_of(operations, st.lists(_ref, max_size=2), scalars),
                    max_size=4,
                ),
                _ref,
                scalars,
            ),
            max_size=3,
        )
    )
    if kind < 3:
        body = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/L0"}}}}
        paths["/bomb"] = {
            "post": {"operationId": "bomb", "requestBody": body, "responses": {"200": {"description": "ok", **body}}}
        }
    spec: dict[str, Any] = {
        "openapi": draw(st.one_of(st.sampled_from(["3.0.0", "3.1.0"]), scalars)),
        "info": draw(st.one_of(st.fixed_dictionaries({"title": st.one_of(small_text, scalars)}), scalars)),
        "paths": paths,
        "components": components if draw(st.integers(0, 4)) else draw(json_like),
    }
    return spec if draw(st.integers(0, 19)) else draw(json_like.filter(lambda v: not isinstance(v, str)))  # str: a path


@FUZZ
@given(openapi_specs(), st.one_of(st.none(), st.sampled_from(["api", "tmdb"])))
@example(
    {"openapi": "3.0.0", "info": {"title": "t"}, "paths": {"/a": {"$ref": "#/info/title"}}}, None
)  # found by fuzzing
@example({"openapi": "\ud800", "paths": {}}, None)  # found by fuzzing: the error message must be printable
@example(
    {"openapi": "3.0.0", "info": {"title": ""}, "paths": {"/pets/{id}": {"get": {"tags": 1}}}, "components": None}, None
)  # found by `make fuzz` (2,000 examples): a non-list field was iterated
@example(
    {
        "openapi": "3.0.0",
        "paths": {
            "/a": {
                "post": {
                    "parameters": {"name": "q"},
                    "requestBody": {
                        "content": {
                            "application/json": {
                                "schema": {
                                    "allOf": [{"properties": 3, "required": 7}],
                                    "properties": "x",
                                    "required": [["a"]],
                                }
                            }
                        }
                    },
                    "responses": {2.5: {"description": "ok"}, 200: {"description": "fine"}},
                }
            }
        },
    },
    "api",
)
def test_fuzzed_openapi_specs(spec: Any, namespace: str | None) -> None:
    docs = check(lambda: from_openapi(spec, namespace=namespace))
    if isinstance(docs, list):
        assert all(isinstance(d, ToolDoc) for d in docs)
        assert len({d.id for d in docs}) == len(docs), "operation ids must be unique within a spec"


def test_ref_fanout_and_alias_bombs_stay_bounded() -> None:
    """The two exponential shapes, at sizes that would take minutes or memory unbounded."""
    for comps, schema in ((_fanout(120, 5), {"$ref": "#/components/schemas/L0"}), ({}, _alias_bomb(12, 12))):
        body = {"content": {"application/json": {"schema": schema}}}
        spec = {
            "openapi": "3.0.0",
            "info": {"title": "bomb"},
            "components": {"schemas": comps},
            "paths": {
                "/x": {
                    "post": {
                        "operationId": "bomb",
                        "requestBody": body,
                        "responses": {"200": {"description": "ok", **body}},
                    }
                }
            },
        }
        result = check(lambda spec=spec: from_openapi(spec))
        if isinstance(result, InvalidToolError):
            assert result.tool == "bomb"


# ------------------------------------------------------------------ MCP tools/list
_mcp_tool = st.fixed_dictionaries(
    {},
    optional={
        "name": st.one_of(st.sampled_from(["search", "search", "get_forecast", ""]), small_text, scalars),
        "title": st.one_of(small_text, scalars),
        "description": st.one_of(text, scalars),
        "inputSchema": st.one_of(schemas(), scalars, pathological),
        "outputSchema": st.one_of(schemas(), scalars, pathological),
        "annotations": st.one_of(
            st.fixed_dictionaries({}, optional={"readOnlyHint": scalars, "title": scalars}),
            json_like,
            st.just({"x": math.nan}),
        ),
    },
)


@FUZZ
@given(
    st.one_of(
        st.fixed_dictionaries({"tools": st.one_of(st.lists(st.one_of(_mcp_tool, json_like), max_size=4), scalars)}),
        st.lists(_mcp_tool, max_size=3),
        json_like,
    ),
    st.one_of(st.none(), st.just("weather")),
)
def test_fuzzed_mcp_tool_lists(result: Any, server: str | None) -> None:
    check(lambda: from_tools_list(result, server=server))


@FUZZ
@given(_mcp_tool)
@example({"name": "search", "outputSchema": {"properties": {"0": {"anyOf": 1}}}})  # found by fuzzing
@example({"name": "search", "title": "\ud800"})  # found by fuzzing
def test_fuzzed_mcp_tools(tool: dict[str, Any]) -> None:
    check(lambda: from_mcp_tool(tool, server="srv"))
