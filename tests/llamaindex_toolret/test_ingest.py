"""LlamaIndex tools -> ToolDoc fields, and ToolDoc -> LlamaIndex tools."""

from __future__ import annotations

import pytest
from llama_index.core.query_engine import CustomQueryEngine
from llama_index.core.tools import FunctionTool, QueryEngineTool, ToolMetadata

from llamaindex_toolret import as_tool, doc_to_tool, tool_to_doc
from tests.llamaindex_toolret.conftest import get_weather
from toolret import InvalidToolError
from toolret.eval.datasets import load_dataset


class EchoEngine(CustomQueryEngine):
    def custom_query(self, query_str: str) -> str:
        return query_str


def test_function_tool_docstring_is_split_into_fields():
    def lookup_order(order_id: str, verbose: bool = False) -> dict:
        """Look up an order in the shop database.

        Args:
            order_id: The order number printed on the receipt.
            verbose: Include line items.

        Returns:
            The order status and delivery date.
        """
        return {}

    doc = tool_to_doc(FunctionTool.from_defaults(fn=lookup_order))
    assert doc.id == doc.name == "lookup_order"
    assert doc.description == "Look up an order in the shop database."  # no signature line, no Args block
    assert [(p.name, p.type, p.required) for p in doc.parameters] == [
        ("order_id", "string", True),
        ("verbose", "boolean", False),
    ]
    assert doc.parameters[0].description == "The order number printed on the receipt."
    assert doc.response == "The order status and delivery date."
    assert doc.input_schema["required"] == ["order_id"]


def test_renamed_function_tool_keeps_its_given_name_and_description():
    tool = FunctionTool.from_defaults(fn=get_weather, name="weather_now", description="Weather right now.")
    doc = tool_to_doc(tool)
    assert (doc.name, doc.description) == ("weather_now", "Weather right now.")
    assert [p.name for p in doc.parameters] == ["city", "unit"]


def test_query_engine_tool_gets_the_default_input_parameter():
    tool = QueryEngineTool.from_defaults(EchoEngine(), name="paris_guide", description="Answers questions about Paris.")
    doc = tool_to_doc(tool)
    assert doc.name == "paris_guide"
    assert doc.description == "Answers questions about Paris."
    assert [(p.name, p.required) for p in doc.parameters] == [("input", True)]
    assert doc.metadata["llamaindex_type"] == "QueryEngineTool"


def test_async_function_tool_and_plain_callables_are_accepted():
    async def fetch_page(url: str) -> str:
        """Download a web page."""
        return url

    assert tool_to_doc(FunctionTool.from_defaults(async_fn=fetch_page)).description == "Download a web page."
    wrapped = as_tool(get_weather)
    assert isinstance(wrapped, FunctionTool) and wrapped.metadata.name == "get_weather"
    assert tool_to_doc(get_weather).field_text("parameters").startswith("city (string, required)")


def test_tool_without_a_name_is_an_error_naming_the_field():
    tool = FunctionTool(fn=get_weather, metadata=ToolMetadata(name=None, description="x"))
    with pytest.raises(InvalidToolError) as err:
        tool_to_doc(tool)
    assert err.value.field == "metadata.name"


def test_non_tools_are_refused_with_the_type_named():
    with pytest.raises(InvalidToolError, match="int"):
        as_tool(42)


def test_doc_to_tool_round_trips_bfcl_tool_schemas(benchmarks):
    # BFCL has odd parameter names (leading underscores, keywords, names shadowing pydantic's).
    every = load_dataset(benchmarks / "bfcl").tool_docs()
    docs = [
        d
        for i, d in enumerate(every)
        if i % 10 == 0
        or any(not p.name.isidentifier() for p in d.parameters)
        or any(p.name.startswith("_") or p.name in ("json", "copy", "schema", "dict") for p in d.parameters)
    ]
    for doc in docs:
        back = tool_to_doc(doc_to_tool(doc))
        assert back.id == doc.id
        assert [(p.name, p.required) for p in back.parameters] == [(p.name, p.required) for p in doc.parameters], doc.id
    odd = [p.name for d in docs for p in d.parameters if not p.name.isidentifier() or p.name.startswith("_")]
    assert odd, "expected BFCL to exercise non-identifier parameter names"


def test_doc_to_tool_keeps_response_and_calls_the_given_function():
    doc = tool_to_doc(get_weather).model_copy(update={"response": "Temperature and sky."})
    tool = doc_to_tool(doc, fn=get_weather)
    assert tool_to_doc(tool).response == "Temperature and sky."
    assert "Paris" in tool.call(city="Paris").content
    assert "no implementation" in doc_to_tool(doc).call(city="Paris").content
