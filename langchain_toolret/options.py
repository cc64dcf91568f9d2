"""What a selection leaves in LangSmith / callbacks, shared by every LangChain entry point."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.runnables import RunnableLambda

from toolret import SearchResult

__all__ = ["record_selection", "selection_record"]


def selection_record(query: str | None, result: SearchResult | None, tools: Sequence[str]) -> dict[str, Any]:
    """What a selection shows in LangSmith / callbacks: the query, the chosen tools, their scores
    and the engine's trace steps."""
    scores = {t.name: round(t.score, 4) for t in result.tools} if result is not None else {}
    trace = [step.model_dump() for step in result.trace] if result is not None else []
    return {"query": query, "tools": list(tools), "scores": scores, "trace": trace}


def record_selection(name: str, query: str | None, result: SearchResult | None, tools: Sequence[str]) -> None:
    """Leave a selection in LangSmith / callbacks: a child run of the current run named ``name``
    whose outputs are :func:`selection_record` (used by the LangGraph nodes, whose own outputs
    are state updates)."""
    record = selection_record(query, result, tools)
    child: RunnableLambda[dict[str, Any], dict[str, Any]] = RunnableLambda(lambda _: record, name=name)
    child.invoke({"query": query})
