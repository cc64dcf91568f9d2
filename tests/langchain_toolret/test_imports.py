"""The public API of langchain_toolret is a contract: these names are what users import."""

from __future__ import annotations

import langchain_toolret

EXPECTED = {
    "ChatModelLLM",
    "ToolIndex",
    "ToolRetrievalState",
    "ToolRetriever",
    "ToolSearchMiddleware",
    "ToolSearchState",
    "ToolSelectionMiddleware",
    "ToolSelectionState",
    "build_tool_retrieval_graph",
    "create_tool_search_agent",
    "create_model_node",
    "create_search_tool",
    "create_tool_retrieval_node",
    "tool_to_doc",
}


def test_public_names_are_exactly_the_documented_ones():
    assert set(langchain_toolret.__all__) == EXPECTED
    for name in EXPECTED:
        assert hasattr(langchain_toolret, name), name


def test_the_engine_does_not_import_the_adapter():
    import subprocess
    import sys

    code = "import sys, toolret, toolret.knowledge_base; print('langchain_toolret' in sys.modules, 'langchain' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False"]
