"""A ToolDoc's parameters as a pydantic model (toolret.documents.params_model)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from toolret import ToolDoc, ToolParam
from toolret.documents.params_model import params_model


def test_the_model_keeps_names_types_defaults_enums_and_required():
    doc = ToolDoc(
        name="book table",
        parameters=[
            ToolParam(name="city", type="string", required=True, description="City name."),
            ToolParam(name="people", type="integer", default=2),
            ToolParam(name="class", type="string", enum=["a", "b"]),  # a keyword: an alias behind param_2
        ],
    )
    model = params_model(doc)
    schema = model.model_json_schema(by_alias=True)
    assert schema["required"] == ["city"] and set(schema["properties"]) == {"city", "people", "class"}
    assert schema["properties"]["class"]["enum"] == ["a", "b"]
    made = model.model_validate({"city": "Oslo", "class": "a"})
    assert made.city == "Oslo" and made.people == 2 and made.param_2 == "a"  # type: ignore[attr-defined]
    with pytest.raises(ValidationError):
        model.model_validate({"people": 3})
