"""One bad tool degrades alone, for any framework: cut, name-only or unindexable, always named in a warning."""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace

import pytest

from toolret import InvalidToolError, ToolDoc
from toolret.sources.tolerant import MAX_INDEXED_DESCRIPTION, Conversion, degraded_doc, tolerant_docs


@dataclass(frozen=True)
class FrameworkTool:
    name: str
    description: str
    schema_ok: bool = True


def _to_doc(tool: FrameworkTool) -> ToolDoc:
    if not tool.schema_ok:
        raise TypeError("unsupported annotation")
    return ToolDoc(name=tool.name, description=tool.description, parameters=[{"name": "x", "type": "string"}])


CONVERSION = Conversion(
    _to_doc,
    name=lambda t: t.name,
    description=lambda t: t.description,
    is_tool=lambda obj: isinstance(obj, FrameworkTool),
    with_description=lambda t, text: replace(t, description=text),
    metadata=lambda t: {"framework": "demo"},
    kind="demo tools",
)


def test_an_oversized_description_is_cut_and_the_parameters_kept(caplog):
    huge = FrameworkTool("lookup", "Look up a term. " * 7_000)
    with caplog.at_level(logging.WARNING, logger="toolret"):
        doc = degraded_doc(huge, CONVERSION, max_doc_chars=100_000)
    assert doc is not None and len(doc.description) <= MAX_INDEXED_DESCRIPTION and doc.parameters[0].name == "x"
    assert "'lookup' cannot be indexed as it is" in caplog.text and "cut to the first" in caplog.text


def test_a_schema_that_does_not_convert_is_indexed_by_name_with_the_frameworks_metadata(caplog):
    with caplog.at_level(logging.WARNING, logger="toolret"):
        doc = degraded_doc(FrameworkTool("broken", "Does a thing.", schema_ok=False), CONVERSION, 100_000)
    assert doc is not None and doc.parameters == [] and doc.metadata == {"framework": "demo"}
    assert "by name and description only" in caplog.text and "unsupported annotation" in caplog.text


def test_a_tool_that_cannot_be_indexed_at_all_is_kept_aside_by_name(caplog):
    odd = FrameworkTool("x" * 1_001, "A name too long to index.", schema_ok=False)
    with caplog.at_level(logging.WARNING, logger="toolret"):
        docs, live, unindexed = tolerant_docs([odd, {"name": "plain", "description": "d"}], CONVERSION, 100_000)
    assert docs == [{"name": "plain", "description": "d"}] and live == {} and list(unindexed) == [odd.name]
    assert "names it exactly" in caplog.text


def test_two_tools_with_one_name_stay_an_error_naming_the_kind():
    with pytest.raises(InvalidToolError, match="two demo tools have this name"):
        tolerant_docs([FrameworkTool("same", "a"), FrameworkTool("same", "b")], CONVERSION, 100_000)
