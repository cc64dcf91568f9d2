"""One bad tool degrades alone: cut, name-only or name-reachable, always with a warning naming it."""

from __future__ import annotations

import logging

import pytest
from langchain_core.tools import StructuredTool

from langchain_toolret.tool_docs import MAX_INDEXED_DESCRIPTION, tolerant_docs
from toolret import InvalidToolError

from .registry50 import make_tool


def _lookup(term: str) -> str:
    return term


def test_an_oversized_description_is_cut_with_a_warning_naming_the_tool(caplog):
    huge = StructuredTool.from_function(_lookup, name="huge_tool", description="Look up a term. " * 7_000)
    assert len(huge.description) > 100_000
    with caplog.at_level(logging.WARNING, logger="toolret"):
        docs, live, unindexed = tolerant_docs([make_tool("ok_tool", "Fine."), huge], 500_000)
    assert [d.name for d in docs] == ["ok_tool", "huge_tool"] and list(live) == ["ok_tool", "huge_tool"]
    assert len(docs[1].description) <= MAX_INDEXED_DESCRIPTION and docs[1].parameters[0].name == "term"
    assert not unindexed and "'huge_tool'" in caplog.text and "cut to the first" in caplog.text


def test_a_schema_that_does_not_convert_is_indexed_by_name(caplog):
    class Broken(StructuredTool):
        @property
        def tool_call_schema(self):  # what a hand-written tool with a bad schema does
            raise TypeError("unsupported annotation")

    broken = Broken(
        name="broken_tool",
        description="Does a broken thing.",
        func=_lookup,
        args_schema=make_tool("x", "y").args_schema,
    )
    with caplog.at_level(logging.WARNING, logger="toolret"):
        docs, live, _ = tolerant_docs([broken], 500_000)
    assert docs[0].name == "broken_tool" and docs[0].parameters == [] and list(live) == ["broken_tool"]
    assert "'broken_tool'" in caplog.text and "by name and description only" in caplog.text


def test_a_tool_that_cannot_be_indexed_at_all_is_kept_by_name(caplog):
    odd = make_tool("x" * 1_001, "A tool whose name is too long to index.")
    with caplog.at_level(logging.WARNING, logger="toolret"):
        docs, live, unindexed = tolerant_docs([odd], 500_000)
    assert docs == [] and live == {} and list(unindexed) == [odd.name]
    assert "names it exactly" in caplog.text


def test_two_tools_with_one_name_stay_an_error():
    with pytest.raises(InvalidToolError, match="tool names must be unique"):
        tolerant_docs([make_tool("same", "a"), make_tool("same", "b")], 500_000)
