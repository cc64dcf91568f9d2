"""An agent's tools as documents, one bad tool at a time: degrade per tool, never for the set.

An agent's tool list is whatever its authors wrote: a tool may carry a 100,000-character
description, or a schema the converter cannot read. Raising for the whole list would switch
selection off for every other tool (the selector would fall back to binding everything), so
each tool is converted on its own and a tool that fails is degraded, with a warning naming it:

1. its description is cut to :data:`MAX_INDEXED_DESCRIPTION` characters (the head is what
   retrieval reads anyway);
2. if it still fails, it is indexed by name and (cut) description only, without parameters;
3. if even that fails (an invalid name), it is not indexed: the adapters offer it only when a
   request names it exactly (:meth:`langchain_toolret.index.ToolIndex.live`).

Two tools with one name stay an error: the model could not tell them apart.

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

import logging
from collections.abc import Iterable
from typing import Any

from langchain_core.tools import BaseTool

from langchain_toolret.ingest import tool_to_doc
from toolret.documents.guards import checked_doc, safe_label
from toolret.documents.tool_doc import ToolDoc
from toolret.errors import InvalidToolError

__all__ = ["MAX_INDEXED_DESCRIPTION", "tolerant_docs"]

logger = logging.getLogger("toolret")

#: Characters of a description kept when the whole one cannot be indexed.
MAX_INDEXED_DESCRIPTION = 10_000


def _doc_or_error(make: Any, max_doc_chars: int) -> ToolDoc | InvalidToolError:
    try:
        return checked_doc(make(), max_doc_chars=max_doc_chars)
    except InvalidToolError as exc:
        return exc
    except Exception as exc:  # noqa: BLE001 - any conversion failure degrades this tool only
        return InvalidToolError("?", "tool", f"{type(exc).__name__}: {exc}")


def degraded_doc(tool: BaseTool, max_doc_chars: int) -> ToolDoc | None:
    """The best document ``tool`` allows (see the module doc), warning with its name; None when
    the tool cannot be indexed at all."""
    label = safe_label(str(getattr(tool, "name", "") or "<unnamed>"))
    first = _doc_or_error(lambda: tool_to_doc(tool), max_doc_chars)
    if isinstance(first, ToolDoc):
        return first
    description = (tool.description or "")[:MAX_INDEXED_DESCRIPTION]
    attempts = (
        (
            f"with its description cut to the first {len(description)} characters",
            lambda: tool_to_doc(tool.model_copy(update={"description": description})),
        ),
        (
            "by name and description only (no parameters)",
            lambda: ToolDoc(name=tool.name, description=description, metadata={"framework": "langchain"}),
        ),
    )
    for how, make in attempts:
        doc = _doc_or_error(make, max_doc_chars)
        if isinstance(doc, ToolDoc):
            logger.warning("tool %r cannot be indexed as it is (%s); indexed %s", label, first.problem, how)
            return doc
    logger.warning(
        "tool %r cannot be indexed (%s); it is offered only when a request names it exactly", label, first.problem
    )
    return None


def tolerant_docs(
    tools: Iterable[Any], max_doc_chars: int
) -> tuple[list[Any], dict[str, BaseTool], dict[str, BaseTool]]:
    """Documents for ``tools`` (other entries pass through for generic ingestion), the id → tool
    map of the indexed ones, and the name → tool map of those that could not be indexed."""
    out: list[Any] = []
    live: dict[str, BaseTool] = {}
    unindexed: dict[str, BaseTool] = {}
    for obj in tools:
        if not isinstance(obj, BaseTool):
            out.append(obj)
            continue
        if obj.name in live or obj.name in unindexed:
            raise InvalidToolError(obj.name, "name", "two LangChain tools have this name; tool names must be unique")
        doc = degraded_doc(obj, max_doc_chars)
        if doc is None:
            unindexed[obj.name] = obj
            continue
        live[doc.id] = obj
        out.append(doc)
    return out, live, unindexed
