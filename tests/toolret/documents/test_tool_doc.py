"""ToolDoc basics: ids, validation errors, per-field text and the content hash."""

from __future__ import annotations

import pytest

from toolret.documents.tool_doc import FIELDS, ToolDoc, ToolParam
from toolret.errors import InvalidToolError


def _weather(**overrides: object) -> ToolDoc:
    fields: dict[str, object] = {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": [
            ToolParam(name="location", type="string", required=True, description="City name"),
            ToolParam(name="unit", type="string", enum=["celsius", "fahrenheit"]),
        ],
        "response": "Temperature and conditions.",
        "examples": ["get_weather('Paris')", "  ", ""],
    }
    fields.update(overrides)
    return ToolDoc(**fields)  # type: ignore[arg-type]


def test_id_defaults_to_name() -> None:
    assert ToolDoc(name="get_weather").id == "get_weather"
    assert ToolDoc(id="weather#v2", name="get_weather").id == "weather#v2"


def test_duplicate_param_names_raise_naming_tool_and_field() -> None:
    with pytest.raises(InvalidToolError) as info:
        ToolDoc(name="t", parameters=[ToolParam(name="a"), ToolParam(name="a", type="string")])
    assert (info.value.tool, info.value.field) == ("t", "parameters")
    assert "'a'" in info.value.problem


def test_empty_name_raises_naming_the_field() -> None:
    with pytest.raises(InvalidToolError) as info:
        ToolDoc(id="x7", name="   ")
    assert (info.value.tool, info.value.field) == ("x7", "name")


def test_field_text_description_leads_with_humanized_name() -> None:
    assert _weather().field_text("description") == "get weather: Current weather for a city."


def test_field_text_parameters_one_line_per_param() -> None:
    assert _weather().field_text("parameters") == (
        "location (string, required): City name\nunit (string, optional, one of: celsius, fahrenheit)"
    )


def test_field_text_response_and_examples() -> None:
    doc = _weather()
    assert doc.field_text("response") == "Temperature and conditions."
    assert doc.field_text("examples") == "get_weather('Paris')"  # blank examples are dropped


def test_empty_fields_stay_empty() -> None:
    doc = ToolDoc(name="ping")
    assert [doc.field_text(f) for f in FIELDS] == ["ping", "", "", ""]
    assert doc.card() == "ping:"


def test_unknown_field_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        _weather().field_text("name")  # type: ignore[arg-type]


def test_content_hash_changes_with_description_only_when_content_changes() -> None:
    assert _weather().content_hash == _weather().content_hash
    assert _weather().content_hash != _weather(description="Weather forecast.").content_hash


def test_tooldoc_is_frozen() -> None:
    with pytest.raises(Exception):  # noqa: B017
        _weather().name = "other"  # type: ignore[misc]


def test_an_over_long_description_is_cut_with_a_warning_naming_the_tool(caplog: pytest.LogCaptureFixture) -> None:
    from toolret.documents.tool_doc import MAX_INDEXED_TEXT

    with caplog.at_level("WARNING", logger="toolret"):
        doc = ToolDoc(name="get_manual", description="The manual. " * 18_000, response="r" * 120_000)
    assert len(doc.description) <= MAX_INDEXED_TEXT and len(doc.response) <= MAX_INDEXED_TEXT
    assert doc.description.startswith("The manual.")
    assert "tool 'get_manual' cannot be indexed as it is (its description is 216,000 characters" in caplog.text
    assert "its response is 120,000 characters" in caplog.text
    assert ToolDoc.model_validate_json(doc.model_dump_json()) == doc  # the cut form is what reloads


def test_strict_text_limits_refuse_an_over_long_text_naming_the_tool() -> None:
    from toolret.documents.tool_doc import strict_text_limits

    with strict_text_limits(), pytest.raises(InvalidToolError) as info:
        ToolDoc(name="get_manual", description="x" * 100_001)
    assert info.value.tool == "get_manual" and info.value.field == "description"
    assert "100,001 characters" in info.value.problem
    assert len(ToolDoc(name="get_manual", description="x" * 100_001).description) == 10_000  # outside: cut
