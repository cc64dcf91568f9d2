"""Training pairs carry the document exactly as the knowledge base indexes it."""

from __future__ import annotations

import pytest

from toolret.documents.tool_doc import ToolDoc
from toolret.errors import DatasetError
from toolret.training.pairs import balance, pairs_from_bundles


def test_the_document_is_the_indexed_description_field(make_kb) -> None:
    doc = ToolDoc(id="w", name="getWeatherForecast", description="Forecast for a city.")
    kb = make_kb([doc])
    indexed = kb.get("w").field_text("description")
    (pair,) = pairs_from_bundles("demo", {"w": doc}, [("rain tomorrow?", ["w"])])
    assert pair.document == indexed == "get weather forecast: Forecast for a city."


def test_every_tool_of_a_request_is_relevant_to_each_of_its_pairs() -> None:
    tools = {i: ToolDoc(id=i, name=i, description=f"tool {i}") for i in ("a", "b")}
    pairs = pairs_from_bundles("r", tools, [("do a then b", ["a", "b"])])
    assert [p.tool_id for p in pairs] == ["a", "b"]
    assert all(p.relevant == {"a", "b"} for p in pairs)


def test_an_unknown_tool_id_is_an_error_naming_it() -> None:
    with pytest.raises(DatasetError, match="'ghost'"):
        pairs_from_bundles("r", {}, [("anything", ["ghost"])])


def test_balance_caps_each_registry_reproducibly() -> None:
    tools = {f"t{i}": ToolDoc(id=f"t{i}", name=f"t{i}", description="x") for i in range(50)}
    big = pairs_from_bundles("big", tools, [(f"q{i}", [f"t{i}"]) for i in range(50)])
    small = pairs_from_bundles("small", tools, [(f"s{i}", [f"t{i}"]) for i in range(5)])
    capped = balance(big + small, cap=10, seed=3)
    assert sum(p.registry == "big" for p in capped) == 10
    assert sum(p.registry == "small" for p in capped) == 5
    assert capped == balance(big + small, cap=10, seed=3)
