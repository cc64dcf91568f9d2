"""The adapter's public API is a contract, and its docstring examples run."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import llamaindex_toolret

EXPECTED = {
    "LlamaIndexLLM",
    "ToolNodeMapping",
    "ToolObjectIndex",
    "ToolObjectRetriever",
    "ToolRetriever",
    "ToolretEmbedding",
    "as_tool",
    "doc_to_tool",
    "embedder_from_llamaindex",
    "tool_to_doc",
}


def test_public_names_are_exactly_the_documented_ones():
    assert set(llamaindex_toolret.__all__) == EXPECTED
    for name in EXPECTED:
        assert hasattr(llamaindex_toolret, name), name


def test_retriever_types_are_llamaindex_types():
    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.objects import ObjectRetriever

    assert issubclass(llamaindex_toolret.ToolObjectRetriever, ObjectRetriever)
    assert issubclass(llamaindex_toolret.ToolRetriever, BaseRetriever)


MODULES = sorted(
    name for _, name, _ in pkgutil.walk_packages(llamaindex_toolret.__path__, prefix="llamaindex_toolret.")
)


@pytest.mark.parametrize("module_name", MODULES)
def test_docstring_examples_run(module_name):
    result = doctest.testmod(importlib.import_module(module_name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {module_name}"
