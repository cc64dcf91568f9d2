"""LangChain tools become ToolDocs from the schema the model sees."""

from __future__ import annotations

import json
from typing import Annotated

import pytest
from langchain_core.tools import BaseTool, InjectedToolCallId, StructuredTool, tool
from langgraph.prebuilt import InjectedState
from pydantic import BaseModel, Field

from langchain_toolret.ingest import (
    definitions_chars,
    openai_definition,
    tool_to_doc,
    tools_to_docs,
)
from toolret import InvalidToolError
from toolret.sources.ingest import to_tool_doc


def test_injected_arguments_are_not_indexed():
    @tool
    def lookup(
        order_id: str, state: Annotated[dict, InjectedState], call_id: Annotated[str, InjectedToolCallId]
    ) -> str:
        """Look up an order by id."""
        return order_id

    doc = tool_to_doc(lookup)
    assert [p.name for p in doc.parameters] == ["order_id"]
    assert set(doc.input_schema["properties"]) == {"order_id"}


def test_docstring_sections_become_param_descriptions_and_response():
    @tool
    def get_weather(city: str, days: int = 1) -> str:
        """Weather forecast for a city.

        Args:
            city: City name, e.g. "Paris".
            days: How many days ahead.

        Returns:
            Temperature and sky for each day.
        """
        return "sunny"

    doc = tool_to_doc(get_weather)
    assert doc.description == "Weather forecast for a city."
    params = {p.name: p for p in doc.parameters}
    assert params["city"].description == 'City name, e.g. "Paris".' and params["city"].required
    assert params["days"].description == "How many days ahead." and not params["days"].required
    assert doc.response == "Temperature and sky for each day."


def test_parse_docstring_tools_keep_schema_descriptions_and_read_returns_from_the_function():
    @tool(parse_docstring=True)
    def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: First addend.
            b: Second addend.

        Returns:
            The sum.
        """
        return a + b

    doc = tool_to_doc(add)
    assert doc.description == "Add two integers."
    assert [p.description for p in doc.parameters] == ["First addend.", "Second addend."]
    assert doc.response == "The sum."


def test_pydantic_args_schema_and_subclassed_tool():
    class Query(BaseModel):
        sql: str = Field(description="A read-only SQL statement.")
        limit: int = Field(default=100, description="Row limit.")

    class RunSQL(BaseTool):
        name: str = "run_sql"
        description: str = "Run a SQL query against the warehouse."
        args_schema: type[BaseModel] = Query

        def _run(self, sql: str, limit: int = 100) -> str:
            return sql

    doc = tool_to_doc(RunSQL())
    assert doc.id == doc.name == "run_sql"
    assert doc.field_text("parameters") == (
        "sql (string, required): A read-only SQL statement.\nlimit (integer, optional): Row limit."
    )
    assert doc.metadata == {"framework": "langchain", "class": "RunSQL"}


def test_structured_tool_from_function_is_ingested():
    def multiply(x: float, y: float) -> float:
        return x * y

    st = StructuredTool.from_function(multiply, description="Multiply two numbers.")
    doc = tool_to_doc(st)
    assert (doc.name, doc.description) == ("multiply", "Multiply two numbers.")
    assert openai_definition(st)["function"]["parameters"] == doc.input_schema


def test_duplicate_tool_names_are_rejected_naming_the_tool():
    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    with pytest.raises(InvalidToolError, match="ping"):
        tools_to_docs([ping, ping])


def test_non_tools_pass_through_and_non_basetools_are_refused():
    def plain(x: int) -> int:
        """A plain callable."""
        return x

    docs, live = tools_to_docs([plain, {"name": "f", "description": "d"}])
    assert docs[0] is plain and live == {}
    with pytest.raises(InvalidToolError, match="expected a LangChain BaseTool"):
        tool_to_doc(plain)  # type: ignore[arg-type]


def test_generic_ingestion_converts_langchain_tools_through_this_adapter(tools):
    """The engine recognises a LangChain tool and converts it here (issue 16), lazily imported."""
    assert to_tool_doc(tools[0]) == tool_to_doc(tools[0])


def test_definition_chars_count_what_bind_tools_sends(tools):
    assert definitions_chars(tools[:2]) == sum(len(json.dumps(openai_definition(t))) for t in tools[:2])
    assert definitions_chars([]) == 0
