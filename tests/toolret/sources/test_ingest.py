"""Ingestion of every source into ToolDocs, and the errors malformed tools raise."""

from __future__ import annotations

import functools
import json
import math
import os
from pathlib import Path
from typing import Any, Literal

import pytest

from tests.conftest import require_benchmarks
from toolret.documents.tool_doc import ToolDoc
from toolret.errors import DatasetError, InvalidToolError
from toolret.sources.ingest import (
    MAX_SCHEMA_NESTING,
    from_callable,
    from_module,
    from_openai,
    from_record,
    load_jsonl,
    to_tool_doc,
)

WEATHER_PARAMS = {
    "type": "object",
    "properties": {
        "location": {"type": "string", "description": "City name"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
    },
    "required": ["location"],
}


def _first_record(dataset: str) -> dict[str, Any]:
    path = require_benchmarks() / dataset / "tools.jsonl"
    with path.open(encoding="utf-8") as fh:
        return json.loads(fh.readline())


# ------------------------------------------------------------------ OpenAI-style dicts
def test_openai_tool_dict_becomes_tooldoc_with_params_and_schema() -> None:
    doc = from_openai(
        {
            "type": "function",
            "function": {"name": "get_weather", "description": "Current weather.", "parameters": WEATHER_PARAMS},
        }
    )
    assert (doc.id, doc.name, doc.description) == ("get_weather", "get_weather", "Current weather.")
    location, unit = doc.parameters
    assert (location.name, location.type, location.required, location.description) == (
        "location",
        "string",
        True,
        "City name",
    )
    assert (unit.required, unit.enum, unit.default) == (False, ["celsius", "fahrenheit"], "celsius")
    assert doc.input_schema == WEATHER_PARAMS
    assert doc.response == "" and doc.examples == []


def test_bare_function_dict_reads_response_and_examples() -> None:
    doc = from_openai(
        {
            "name": "get_weather",
            "description": "Current weather.",
            "parameters": WEATHER_PARAMS,
            "returns": {"type": "object"},
            "examples": ["get_weather('Paris')"],
        }
    )
    assert doc.response == '{"type": "object"}'
    assert doc.examples == ["get_weather('Paris')"]


def test_openai_extras_beside_function_are_read() -> None:
    doc = from_openai(
        {
            "type": "function",
            "response": "Temperature in C",
            "function": {"name": "get_weather", "parameters": WEATHER_PARAMS},
        }
    )
    assert doc.response == "Temperature in C"


def test_bare_json_schema_spec_takes_name_from_title() -> None:
    doc = from_openai(
        {
            "title": "search_flights",
            "description": "Find flights.",
            "type": "object",
            "properties": {"origin": {"type": "string"}, "date": {"type": "string"}},
            "required": ["origin"],
        }
    )
    assert doc.name == "search_flights" and doc.description == "Find flights."
    assert [(p.name, p.required) for p in doc.parameters] == [("origin", True), ("date", False)]
    assert doc.input_schema == {
        "type": "object",
        "required": ["origin"],
        "properties": {"origin": {"type": "string"}, "date": {"type": "string"}},
    }


def test_schema_type_variants_map_to_type_names() -> None:
    props = {
        "a": {"type": ["string", "null"]},
        "b": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "c": {"oneOf": [{"type": "string"}, {"type": "array"}]},
        "d": {"$ref": "#/$defs/Thing"},
        "e": {"description": "untyped"},
        "f": {"allOf": [{"type": "object"}]},
        "g": {"anyOf": [{"$ref": "#/$defs/X"}, {"type": "null"}]},
    }
    doc = from_openai({"name": "t", "parameters": {"type": "object", "properties": props}})
    assert {p.name: p.type for p in doc.parameters} == {
        "a": "string|null",
        "b": "integer|null",
        "c": "string|array",
        "d": "any",
        "e": "any",
        "f": "object",
        "g": "any",
    }


def test_missing_optional_fields_stay_empty() -> None:
    doc = from_openai({"name": "ping"})
    assert (doc.description, doc.parameters, doc.response, doc.examples, doc.input_schema) == ("", [], "", [], None)


# ------------------------------------------------------------------ callables
def _google(location: str, days: int = 3, detailed: bool | None = None) -> dict:
    """Forecast the weather.

    Args:
        location: City name.
        days: How many days ahead.

    Returns:
        A forecast per day.
    """
    return {}


def _numpy(values: list[float], mode: Literal["mean", "median"] = "mean") -> float:
    """Average a list.

    Parameters
    ----------
    values : list of float
        Numbers to average.
    mode : str
        Which average.

    Returns
    -------
    float
        The average.

    Examples
    --------
    >>> _numpy([1, 2])
    1.5
    """
    return 0.0


def _rest(path, width, *sizes, height=None, **options):  # type: ignore[no-untyped-def]
    """Resize an image.

    :param path: File to resize.
    :type path: str
    :param int width: Target width.
    :returns: The new file path.
    """


def test_callable_with_google_docstring() -> None:
    doc = from_callable(_google)
    assert doc.name == "_google" and doc.description == "Forecast the weather."
    assert [(p.name, p.type, p.required, p.description, p.default) for p in doc.parameters] == [
        ("location", "string", True, "City name.", None),
        ("days", "integer", False, "How many days ahead.", 3),
        ("detailed", "boolean|null", False, "", None),
    ]
    assert doc.response == "A forecast per day."
    assert doc.metadata["module"] == __name__
    assert doc.input_schema == {
        "type": "object",
        "required": ["location"],
        "properties": {
            "location": {"type": "string", "description": "City name."},
            "days": {"type": "integer", "description": "How many days ahead.", "default": 3},
            "detailed": {"type": ["boolean", "null"], "default": None},
        },
    }


def test_callable_with_numpy_docstring_and_literal_enum() -> None:
    doc = from_callable(_numpy)
    values, mode = doc.parameters
    assert (values.type, values.description) == ("array", "Numbers to average.")
    assert (mode.type, mode.enum, mode.default) == ("string", ["mean", "median"], "mean")
    assert doc.response == "The average." and doc.examples == ["_numpy([1, 2])"]


def test_callable_with_rest_docstring_uses_docstring_types_and_skips_varargs() -> None:
    doc = from_callable(_rest)
    assert [(p.name, p.type, p.required) for p in doc.parameters] == [
        ("path", "string", True),
        ("width", "integer", True),
        ("height", "any", False),
    ]
    assert doc.parameters[0].description == "File to resize."
    assert doc.metadata["varargs"] == "sizes" and doc.metadata["varkw"] == "options"
    assert doc.response == "The new file path."


def test_callable_name_override_and_method_skips_self() -> None:
    class Greeter:
        def greet(self, who: str) -> str:
            """Say hello."""
            return who

    doc = from_callable(Greeter().greet, name="greeter.greet")
    assert doc.name == "greeter.greet" and [p.name for p in doc.parameters] == ["who"]


def test_callable_non_json_default_is_dropped() -> None:
    def f(when: object = object(), pair: tuple = (1, 2), ratio: float = float("nan")) -> None:
        """F."""

    when, pair, ratio = from_callable(f).parameters
    assert (when.required, when.default) == (False, None)
    assert pair.default == [1, 2] and ratio.default is None


def test_callable_union_and_container_hints() -> None:
    def f(a: int | str, b: dict[str, int], c: set[int], d: bytes) -> None:
        """F."""

    assert [p.type for p in from_callable(f).parameters] == ["integer|string", "object", "array", "any"]


def test_partial_takes_the_wrapped_function_name() -> None:
    assert from_callable(functools.partial(_google, "Paris")).name == "_google"


def test_builtin_with_text_signature() -> None:
    doc = from_callable(math.factorial)
    assert doc.name == "factorial" and doc.metadata["module"] == "math"
    assert [(p.name, p.required) for p in doc.parameters] == [("n", True)]
    assert doc.description.startswith("Find n!.")


def test_builtin_without_signature_falls_back_to_docstring_first_line() -> None:
    doc = from_callable(math.log)
    assert [(p.name, p.required) for p in doc.parameters] == [("x", True), ("base", False)]
    assert doc.description.startswith("Return the logarithm of x")


def test_builtin_argument_clinic_docs_become_param_descriptions() -> None:
    doc = from_callable(os.stat)
    assert next(p for p in doc.parameters if p.name == "path").description.startswith("Path to be examined")


def test_module_functions_are_prefixed_and_classes_skipped() -> None:
    docs = {d.name: d for d in from_module(math)}
    assert "math.factorial" in docs and "math.sqrt" in docs
    assert all(not name.split(".")[-1].startswith("_") for name in docs)
    assert len({d.id for d in docs.values()}) == len(docs)
    import json as json_module

    names = {d.name for d in from_module(json_module)}
    assert "json.dumps" in names and "json.JSONDecoder" not in names


def test_module_prefix_can_be_a_string_or_off() -> None:
    assert "os.path.join" in {d.name for d in from_module(os.path, prefix="os.path")}
    assert "join" in {d.name for d in from_module(os.path, prefix=False)}


# ------------------------------------------------------------------ benchmark records and files
def test_bfcl_record_from_real_line() -> None:
    record = _first_record("bfcl")
    doc = from_record(record)
    assert doc.id == record["id"] and doc.name == record["name"]
    assert doc.description == record["description"]
    assert [p.name for p in doc.parameters] == list(record["parameters"]["properties"])
    assert {p.name for p in doc.required_params} == set(record["parameters"].get("required", []))
    assert doc.metadata["source"] == record["source"] and doc.input_schema == record["parameters"]


def test_restbench_tmdb_record_keeps_response_and_source() -> None:
    record = _first_record("restbench_tmdb")
    doc = to_tool_doc(record)
    assert doc.id == record["id"] and doc.response == record["response"].strip()
    assert doc.metadata == {"source": record["source"]}
    assert [p.name for p in doc.parameters] == list(record["parameters"]["properties"])


def test_record_without_parameters_has_none() -> None:
    doc = from_record(
        {
            "id": "t",
            "name": "timeport",
            "description": "Time travel.",
            "parameters": None,
            "response": None,
            "examples": [],
            "category": "games",
            "source": "x.json",
        }
    )
    assert doc.parameters == [] and doc.input_schema is None
    assert doc.metadata == {"category": "games", "source": "x.json"}


def test_load_jsonl_reads_mixed_formats_and_skips_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "tools.jsonl"
    lines = [
        json.dumps(
            {
                "id": "a#1",
                "name": "a",
                "description": "A.",
                "parameters": None,
                "response": None,
                "examples": [],
                "category": None,
                "source": "s",
            }
        ),
        "",
        json.dumps({"type": "function", "function": {"name": "b", "parameters": WEATHER_PARAMS}}),
        json.dumps({"name": "c", "description": "C."}),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert [d.id for d in load_jsonl(path)] == ["a#1", "b", "c"]


def test_load_jsonl_invalid_json_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "tools.jsonl"
    path.write_text('{"name": "ok"}\n{"name": \n', encoding="utf-8")
    with pytest.raises(InvalidToolError) as info:
        load_jsonl(path)
    assert (info.value.tool, info.value.field) == (f"{path}:2", "line")


def test_load_jsonl_bad_tool_keeps_name_and_reports_line(tmp_path: Path) -> None:
    path = tmp_path / "tools.jsonl"
    path.write_text('{"name": "ok"}\n{"name": "bad", "parameters": []}\n{"description": "no name"}\n')
    with pytest.raises(InvalidToolError) as info:
        load_jsonl(path)
    assert (info.value.tool, info.value.field) == ("bad", "parameters")
    assert "line 2" in str(info.value)
    path.write_text('{"description": "no name"}\n')
    with pytest.raises(InvalidToolError) as info:
        load_jsonl(path)
    assert (info.value.tool, info.value.field) == (f"{path}:1", "name")


def test_load_jsonl_rejects_duplicate_ids_and_non_objects(tmp_path: Path) -> None:
    path = tmp_path / "tools.jsonl"
    path.write_text('{"name": "a"}\n{"name": "a"}\n')
    with pytest.raises(InvalidToolError) as info:
        load_jsonl(path)
    assert (info.value.tool, info.value.field) == ("a", "id")
    path.write_text("[1, 2]\n")
    with pytest.raises(InvalidToolError) as info:
        load_jsonl(path)
    assert (info.value.tool, info.value.field) == (f"{path}:1", "line")


def test_load_jsonl_missing_file_raises_dataset_error(tmp_path: Path) -> None:
    with pytest.raises(DatasetError):
        load_jsonl(tmp_path / "nope.jsonl")


# ------------------------------------------------------------------ dispatch
def test_to_tool_doc_dispatches_by_kind() -> None:
    doc = ToolDoc(name="x")
    assert to_tool_doc(doc) is doc
    assert to_tool_doc({"id": "r", "name": "r", "source": "s"}).metadata == {"source": "s"}
    assert to_tool_doc({"id": "r", "name": "named"}).id == "named"  # no source/category: an OpenAI dict
    assert to_tool_doc(math.factorial).name == "factorial"


def test_to_tool_doc_rejects_unknown_objects() -> None:
    with pytest.raises(InvalidToolError) as info:
        to_tool_doc(42)
    assert (info.value.tool, info.value.field) == ("<unnamed>", "tool")


# ------------------------------------------------------------------ malformed input
def _props(**props: Any) -> dict[str, Any]:
    return {"name": "f", "parameters": {"type": "object", "properties": props}}


@pytest.mark.parametrize(
    ("spec", "tool", "field"),
    [
        ({"description": "no name"}, "<unnamed>", "name"),
        ({"name": 3}, "<unnamed>", "name"),
        ({"name": "  "}, "<unnamed>", "name"),
        ({"name": "f", "description": 5}, "f", "description"),
        ({"name": "f", "parameters": []}, "f", "parameters"),
        ({"name": "f", "parameters": {"properties": []}}, "f", "parameters.properties"),
        (_props(location="string"), "f", "parameters.properties.location"),
        (_props(location={"type": 5}), "f", "parameters.properties.location.type"),
        (_props(location={"type": "string", "description": ["x"]}), "f", "parameters.properties.location.description"),
        (_props(unit={"enum": "celsius"}), "f", "parameters.properties.unit.enum"),
        (_props(unit={"anyOf": {"type": "string"}}), "f", "parameters.properties.unit.anyOf"),
        (_props(unit={"oneOf": ["string"]}), "f", "parameters.properties.unit.oneOf[0]"),
        ({"name": "f", "parameters": {"properties": {}, "required": "a"}}, "f", "parameters.required"),
        ({"name": "f", "parameters": {"properties": {}, "required": ["a", 1]}}, "f", "parameters.required[1]"),
        ({"name": "f", "examples": "call f"}, "f", "examples"),
        ({"name": "f", "examples": ["ok", 2]}, "f", "examples[1]"),
        ({"name": "f", "response": 5}, "f", "response"),
        ({"type": "function", "function": "f"}, "<unnamed>", "function"),
        (
            {"type": "function", "function": {"name": "g", "parameters": {"properties": {"x": 1}}}},
            "g",
            "function.parameters.properties.x",
        ),
        ({"type": "function", "function": {"description": "no name"}}, "<unnamed>", "function.name"),
        ({"type": "web_search"}, "<unnamed>", "type"),
        ({"title": "s", "type": "object", "properties": {"q": None}}, "s", "properties.q"),
    ],
)
def test_malformed_dict_raises_invalid_tool_error_naming_tool_and_field(spec: Any, tool: str, field: str) -> None:
    with pytest.raises(InvalidToolError) as info:
        to_tool_doc(spec)
    assert (info.value.tool, info.value.field) == (tool, field)


def test_deeply_nested_schema_is_rejected() -> None:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(MAX_SCHEMA_NESTING):
        schema = {"type": "object", "properties": {"inner": schema}}
    with pytest.raises(InvalidToolError) as info:
        from_openai({"name": "deep", "parameters": schema})
    assert info.value.tool == "deep" and info.value.field.startswith("parameters.properties.inner")


def test_cyclic_schema_is_rejected_not_recursed_forever() -> None:
    prop: dict[str, Any] = {"type": "object"}
    prop["properties"] = {"self": prop}
    with pytest.raises(InvalidToolError) as info:
        from_openai({"name": "loop", "parameters": {"properties": {"p": prop}}})
    assert info.value.tool == "loop"


def test_record_with_missing_id_or_name() -> None:
    with pytest.raises(InvalidToolError) as info:
        from_record({"name": "n", "source": "s"})
    assert (info.value.tool, info.value.field) == ("n", "id")
    with pytest.raises(InvalidToolError) as info:
        from_record({"id": "r1", "source": "s"})
    assert (info.value.tool, info.value.field) == ("r1", "name")


def test_from_callable_rejects_non_callables_and_blank_names() -> None:
    with pytest.raises(InvalidToolError) as info:
        from_callable("not a function")  # type: ignore[arg-type]
    assert info.value.field == "callable"
    with pytest.raises(InvalidToolError) as info:
        from_callable(math.sqrt, name=" ")
    assert (info.value.tool, info.value.field) == ("sqrt", "name")


# ------------------------------------------------------------------ issue 16: schema shapes
@pytest.mark.parametrize("kind", ["array", "string", ["array", "null"]])
def test_parameters_that_are_not_an_object_schema_are_refused(kind: Any) -> None:
    with pytest.raises(InvalidToolError, match="must be a JSON-schema object") as info:
        from_openai({"name": "list_ids", "parameters": {"type": kind, "items": {"type": "string"}}})
    assert (info.value.tool, info.value.field) == ("list_ids", "parameters.type")
    with pytest.raises(InvalidToolError) as info:
        from_openai({"type": "function", "function": {"name": "g", "parameters": {"type": kind}}})
    assert (info.value.tool, info.value.field) == ("g", "function.parameters.type")


def test_object_parameters_with_or_without_type_are_accepted() -> None:
    assert [
        p.name
        for p in from_openai(
            {"name": "f", "parameters": {"type": ["object", "null"], "properties": {"a": {"type": "string"}}}}
        ).parameters
    ] == ["a"]
    assert from_openai({"name": "f", "parameters": {"properties": {}}}).parameters == []


def test_an_unknown_property_type_warns_naming_tool_and_field_and_keeps_the_tool(
    caplog: pytest.LogCaptureFixture,
) -> None:
    spec = {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "strin"},
                "days": {"anyOf": [{"type": "integr"}, {"type": "null"}]},
                "unit": {"type": "string"},
            },
        },
    }
    with caplog.at_level("WARNING", logger="toolret"):
        doc = from_openai(spec)
    assert [p.type for p in doc.parameters] == ["strin", "integr|null", "string"]
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any("get_weather" in m and "parameters.properties.city.type" in m and "'strin'" in m for m in warned)
    assert any("parameters.properties.days.anyOf[0].type" in m for m in warned)
    assert not any("unit" in m for m in warned)


# ------------------------------------------------------------------ framework converters (entry points)
def test_the_shipped_adapters_register_their_converters_as_entry_points() -> None:
    from toolret.sources import ingest

    found = {name: entry.value for name, entry in ingest._converters().items()}
    assert found["langchain"] == "langchain_toolret.ingest:tool_to_doc [langchain]"
    assert found["llama_index"] == "llamaindex_toolret.ingest:tool_to_doc [llamaindex]"


class _AcmeTool:
    """A tool object of a framework toolret does not ship an adapter for."""

    __module__ = "acme_agents.tools"
    name = "launch_rocket"

    def __call__(self) -> None:  # callable, so only the registered converter keeps it from from_callable
        return None


def _acme_to_doc(tool: _AcmeTool) -> ToolDoc:
    return ToolDoc(name=tool.name, description="Launch a rocket.", metadata={"framework": "acme"})


def test_a_third_party_adapter_plugs_in_through_the_entry_point_group(monkeypatch) -> None:
    import importlib.metadata

    from toolret.sources import ingest

    entry = importlib.metadata.EntryPoint(
        name="acme_agents", value=f"{__name__}:_acme_to_doc", group=ingest.CONVERTER_GROUP
    )
    shipped = ingest._converters()
    monkeypatch.setattr(ingest, "_converters", lambda: {**shipped, "acme_agents": entry})
    doc = to_tool_doc(_AcmeTool())
    assert (doc.name, doc.metadata["framework"]) == ("launch_rocket", "acme")


def test_a_registered_converter_whose_adapter_is_not_installed_names_the_extra(monkeypatch) -> None:
    import importlib.metadata

    from toolret.sources import ingest

    entry = importlib.metadata.EntryPoint(
        name="acme_agents", value="acme_toolret_missing.ingest:tool_to_doc [acme]", group=ingest.CONVERTER_GROUP
    )
    monkeypatch.setattr(ingest, "_converters", lambda: {"acme_agents": entry})
    with pytest.raises(
        InvalidToolError, match=r"pip install 'toolret\[acme\]'.*acme_toolret_missing\.ingest\.tool_to_doc"
    ):
        to_tool_doc(_AcmeTool())


def test_a_callable_with_a_huge_docstring_is_cut_with_a_warning_naming_it(caplog) -> None:
    def read_manual(page: int) -> str:
        return ""

    read_manual.__doc__ = "Read a page of the manual. " * 8_000  # 216,000 characters
    with caplog.at_level("WARNING", logger="toolret"):
        doc = from_callable(read_manual)
    assert doc.name == "read_manual" and doc.parameters[0].name == "page"
    assert len(doc.description) <= 50_000 and "tool 'read_manual' cannot be indexed as it is" in caplog.text
