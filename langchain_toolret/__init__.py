"""LangChain and LangGraph adapters for toolret (``pip install 'toolret[langchain]'``; docs/langchain.md).

:class:`ToolRetriever` (a ``BaseRetriever``), :class:`ToolSelectionMiddleware` (``create_agent``),
:func:`create_tool_retrieval_node` / :func:`create_model_node` / :func:`build_tool_retrieval_graph`
(LangGraph), :func:`create_tool_search_agent` (agentic search), :class:`ChatModelLLM`, :func:`tool_to_doc`.

Example::

    from langchain.agents import create_agent
    from langchain_toolret import ToolSelectionMiddleware

    agent = create_agent(model, tools=all_tools, middleware=[ToolSelectionMiddleware(k=5)])
"""

from __future__ import annotations

from langchain_toolret.agent import ToolSearchMiddleware, ToolSearchState, create_tool_search_agent
from langchain_toolret.graph import build_tool_retrieval_graph
from langchain_toolret.index import ToolIndex
from langchain_toolret.ingest import tool_to_doc
from langchain_toolret.llm import ChatModelLLM
from langchain_toolret.middleware import ToolSelectionMiddleware, ToolSelectionState
from langchain_toolret.nodes import (
    ToolRetrievalState,
    create_model_node,
    create_tool_retrieval_node,
)
from langchain_toolret.retriever import ToolRetriever
from langchain_toolret.search_tool import create_search_tool

__all__ = [
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
]
