"""An agent's tools as documents, one bad tool at a time: degrade per tool, never for the set.

An agent's tool list is whatever its authors wrote: a tool may carry a 100,000-character
description, or a schema the converter cannot read. Raising for the whole list would switch
selection off for every other tool (the selector would fall back to binding everything), so
each tool is converted on its own and a tool that fails is degraded, with a warning naming it:

1. its description is cut to :data:`MAX_INDEXED_DESCRIPTION` characters (the head is what
   retrieval reads anyway), when the framework can copy a tool with another description;
2. if it still fails, it is indexed by name and (cut) description only, without parameters;
3. if even that fails (an invalid name), it is not indexed: the adapters offer it only when a
   request names it exactly (:meth:`toolret.agents.agent_tools.AgentTools.live`).

Two tools with one name stay an error: the model could not tell them apart. Both adapters
convert through here (``langchain_toolret.tool_docs``, ``llamaindex_toolret.ingest``); a
:class:`Conversion` says how their framework's tool becomes a document.

Example:
    >>> def to_doc(tool: dict) -> ToolDoc:
    ...     if tool["schema"] is None:
    ...         raise TypeError("unsupported annotation")
    ...     return ToolDoc(name=tool["name"], description=tool["text"])
    >>> conversion = Conversion(to_doc, name=lambda t: t["name"], description=lambda t: t["text"],
    ...                         is_tool=lambda t: isinstance(t, dict))
    >>> docs, live, unindexed = tolerant_docs([{"name": "lookup", "text": "Look up.", "schema": None}],
    ...                                       conversion, max_doc_chars=500_000)
    >>> docs[0].name, docs[0].parameters, list(live), unindexed
    ('lookup', [], ['lookup'], {})
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from toolret.documents.guards import checked_doc, safe_label
from toolret.documents.tool_doc import MAX_INDEXED_TEXT, ToolDoc
from toolret.errors import InvalidToolError

__all__ = ["MAX_INDEXED_DESCRIPTION", "Conversion", "degraded_doc", "tolerant_docs"]

logger = logging.getLogger("toolret")

#: Characters of a description kept when the whole one cannot be indexed (the rule every source follows).
MAX_INDEXED_DESCRIPTION = MAX_INDEXED_TEXT


@dataclass(frozen=True)
class Conversion:
    """How one framework's tool becomes a :class:`ToolDoc`, and the parts its degraded forms need.

    ``to_doc`` converts a tool as it is (raising names the problem); ``name`` and
    ``description`` read it; ``with_description`` (optional) copies it with another description,
    for step 1; ``metadata`` is what a name-only document records (its framework); ``is_tool``
    tells the framework's tools from other entries (callables, dicts), which pass through for the
    engine's own ingestion.
    """

    to_doc: Callable[[Any], ToolDoc]
    name: Callable[[Any], str]
    description: Callable[[Any], str]
    is_tool: Callable[[Any], bool]
    with_description: Callable[[Any, str], Any] | None = None
    metadata: Callable[[Any], dict[str, Any]] = lambda tool: {}
    #: What the duplicate-name error calls the tools ("LangChain tools").
    kind: str = "tools"


def _doc_or_error(make: Callable[[], ToolDoc], max_doc_chars: int) -> ToolDoc | InvalidToolError:
    try:
        return checked_doc(make(), max_doc_chars=max_doc_chars)
    except InvalidToolError as exc:
        return exc
    except Exception as exc:  # noqa: BLE001 - any conversion failure degrades this tool only
        return InvalidToolError("?", "tool", f"{type(exc).__name__}: {exc}")


def degraded_doc(tool: Any, conversion: Conversion, max_doc_chars: int) -> ToolDoc | None:
    """The best document ``tool`` allows (see the module doc), warning with its name; None when
    the tool cannot be indexed at all."""
    label = safe_label(str(_safe(conversion.name, tool) or "<unnamed>"))
    first = _doc_or_error(lambda: conversion.to_doc(tool), max_doc_chars)
    if isinstance(first, ToolDoc):
        return first
    description = str(_safe(conversion.description, tool) or "")[:MAX_INDEXED_DESCRIPTION]
    attempts: list[tuple[str, Callable[[], ToolDoc]]] = []
    copy = conversion.with_description
    if copy is not None:
        attempts.append(
            (
                f"with its description cut to the first {len(description)} characters",
                lambda: conversion.to_doc(copy(tool, description)),
            )
        )
    attempts.append(
        (
            "by name and description only (no parameters)",
            lambda: ToolDoc(name=conversion.name(tool), description=description, metadata=conversion.metadata(tool)),
        )
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


def _safe(read: Callable[[Any], Any], tool: Any) -> Any:
    try:
        return read(tool)
    except Exception:  # noqa: BLE001 - a tool too broken to read is labelled, not raised
        return None


def tolerant_docs(
    tools: Iterable[Any], conversion: Conversion, max_doc_chars: int
) -> tuple[list[Any], dict[str, Any], dict[str, Any]]:
    """Documents for ``tools`` (entries that are not the framework's tools pass through for the
    engine's ingestion), the id → tool map of the indexed ones, and the name → tool map of those
    that could not be indexed."""
    out: list[Any] = []
    live: dict[str, Any] = {}
    unindexed: dict[str, Any] = {}
    for obj in tools:
        if not conversion.is_tool(obj):
            out.append(obj)
            continue
        name = conversion.name(obj)
        if name in live or name in unindexed:
            raise InvalidToolError(name, "name", f"two {conversion.kind} have this name; tool names must be unique")
        doc = degraded_doc(obj, conversion, max_doc_chars)
        if doc is None:
            unindexed[name] = obj
            continue
        live[doc.id] = obj
        out.append(doc)
    return out, live, unindexed
