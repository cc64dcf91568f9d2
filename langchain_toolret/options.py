"""What a selection leaves in LangSmith / callbacks, shared by every LangChain entry point
(:func:`toolret.agents.adapter_options.selection_record`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.runnables import RunnableLambda

from toolret import SearchResult
from toolret.agents.adapter_options import selection_record

__all__ = ["record_selection", "selection_record"]


def record_selection(name: str, query: str | None, result: SearchResult | None, tools: Sequence[str]) -> None:
    """Leave a selection in LangSmith / callbacks: a child run of the current run named ``name``
    whose outputs are :func:`selection_record` (used by the LangGraph nodes, whose own outputs
    are state updates)."""
    record = selection_record(query, result, tools)
    child: RunnableLambda[dict[str, Any], dict[str, Any]] = RunnableLambda(lambda _: record, name=name)
    child.invoke({"query": query})
