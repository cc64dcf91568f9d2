"""Arguments every LangChain entry point shares: ``config=`` (``preset=`` deprecated) and the
record a selection leaves in LangSmith / callbacks.

Example:
    >>> import warnings
    >>> config_argument("balanced", None, "ToolRetriever")
    'balanced'
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     config_argument(None, "fast", "ToolRetriever"), caught[0].category.__name__
    ('fast', 'DeprecationWarning')
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from langchain_core.runnables import RunnableLambda

from toolret import ConfigError, RetrievalConfig, SearchResult

__all__ = ["config_argument", "record_selection", "selection_record"]


def config_argument(
    config: RetrievalConfig | str | None, preset: RetrievalConfig | str | None, owner: str
) -> RetrievalConfig | str | None:
    """``config=``, or the deprecated ``preset=`` (a DeprecationWarning); both at once is an error."""
    if preset is None:
        return config
    warnings.warn(
        f"{owner}(preset=...) is deprecated; pass config=... (a preset name or RetrievalConfig)",
        DeprecationWarning,
        stacklevel=3,
    )
    if config is not None and config != preset:
        raise ConfigError(f"{owner}: pass config= only (preset= is its deprecated name)")
    return preset


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
