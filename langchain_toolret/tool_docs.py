"""LangChain tools as documents, one bad tool at a time: the engine's rule
(:mod:`toolret.sources.tolerant`) with LangChain's converter, so one tool with a 100,000-character
description or a schema that does not convert is cut, or indexed by name, with a warning naming
it, and never switches selection off for the others.

Example:
    >>> from langchain_core.tools import StructuredTool
    >>> def lookup(term: str) -> str:
    ...     return term
    >>> huge = StructuredTool.from_function(lookup, name="lookup", description="Look up a term. " * 8_000)
    >>> docs, live, unindexed = tolerant_docs([huge], max_doc_chars=500_000)
    >>> docs[0].name, len(docs[0].description) <= MAX_INDEXED_DESCRIPTION, list(live), unindexed
    ('lookup', True, ['lookup'], {})
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from langchain_core.tools import BaseTool

from langchain_toolret.ingest import tool_to_doc
from toolret.sources import tolerant
from toolret.sources.tolerant import MAX_INDEXED_DESCRIPTION

__all__ = ["CONVERSION", "MAX_INDEXED_DESCRIPTION", "tolerant_docs"]

#: How a LangChain tool becomes a document, and its degraded forms.
CONVERSION = tolerant.Conversion(
    tool_to_doc,
    name=lambda tool: tool.name,
    description=lambda tool: tool.description or "",
    is_tool=lambda obj: isinstance(obj, BaseTool),
    with_description=lambda tool, text: tool.model_copy(update={"description": text}),
    metadata=lambda tool: {"framework": "langchain"},
    kind="LangChain tools",
)


def tolerant_docs(
    tools: Iterable[Any], max_doc_chars: int
) -> tuple[list[Any], dict[str, BaseTool], dict[str, BaseTool]]:
    """Documents for ``tools``, the id → tool map of the indexed ones and the name → tool map of
    those that could not be indexed (:func:`toolret.sources.tolerant.tolerant_docs`)."""
    return tolerant.tolerant_docs(tools, CONVERSION, max_doc_chars)
