"""LlamaIndex tools in and out of toolret's :class:`~toolret.documents.tool_doc.ToolDoc`.

:func:`tool_to_doc` splits ``metadata`` (``name``, ``description`` with the signature line and
``Args:``/``Returns:`` sections ``FunctionTool.from_defaults`` packs in, ``fn_schema``) into the MFTR
fields; :func:`tolerant_doc` degrades a tool that does not convert, per tool, the engine's way
(:mod:`toolret.sources.tolerant`); :func:`doc_to_tool` turns a tool known only as a schema into a
``FunctionTool`` (its arguments from :func:`toolret.documents.params_model.params_model`).

Example:
    >>> from llama_index.core.tools import FunctionTool
    >>> def get_weather(city: str) -> str:
    ...     '''Current weather for a city.
    ...
    ...     Args:
    ...         city: City name, e.g. "Paris".
    ...     '''
    ...     return "sunny"
    >>> doc = tool_to_doc(FunctionTool.from_defaults(fn=get_weather))
    >>> doc.description, doc.field_text("parameters")
    ('Current weather for a city.', 'city (string, required): City name, e.g. "Paris".')
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from llama_index.core.tools import BaseTool, FunctionTool, ToolMetadata

from toolret.config import RetrievalConfig
from toolret.documents.docstrings import parse_docstring, with_docstrings
from toolret.documents.params_model import params_model
from toolret.documents.tool_doc import ToolDoc
from toolret.errors import InvalidToolError
from toolret.search.token_budget import problem_text
from toolret.sources.ingest import params_from_schema
from toolret.sources.tolerant import Conversion, degraded_doc

__all__ = ["CONVERSION", "as_tool", "doc_to_tool", "tolerant_doc", "tool_name", "tool_to_doc"]

_UNNAMED = "<unnamed>"
DEFAULT_MAX_DOC_CHARS: int = RetrievalConfig.model_fields["max_doc_chars"].default


def as_tool(obj: Any) -> BaseTool:
    """``obj`` as a LlamaIndex tool: tools pass through, plain callables become ``FunctionTool``.

    Workflow agents accept bare functions in ``tools=``, so a tool registry may hold them too.
    """
    if isinstance(obj, BaseTool):
        return obj
    if callable(obj) and not isinstance(obj, type):
        return FunctionTool.from_defaults(fn=obj)
    label = getattr(obj, "name", None) or type(obj).__name__
    raise InvalidToolError(
        str(label),
        "tool",
        f"expected a LlamaIndex BaseTool (FunctionTool, QueryEngineTool...) or a callable, got {type(obj).__name__}",
    )


def tool_name(tool: Any) -> str:
    """The name an agent calls the tool by, which is also its id in the knowledge base."""
    name = getattr(getattr(tool, "metadata", None), "name", None)
    if not isinstance(name, str) or not name.strip():
        raise InvalidToolError(_UNNAMED, "metadata.name", "missing; every tool needs a name (ToolMetadata(name=...))")
    return name.strip()


def _strip_signature(name: str, text: str) -> str:
    """Drop the ``name(arg: type) -> type`` first line ``FunctionTool.from_defaults`` prepends."""
    first, _, rest = text.partition("\n")
    return rest if first.strip().startswith(f"{name}(") else text


def tool_to_doc(tool: Any) -> ToolDoc:
    """A LlamaIndex tool (or a callable, wrapped first) as a ToolDoc; ``id`` is the tool's name.

    The parameters are what the model is shown (``metadata.get_parameters_dict()``); argument
    sentences missing from the schema are taken from the docstring's ``Args:`` section. Bad
    metadata raises :class:`~toolret.errors.InvalidToolError` naming the tool and field.
    """
    tool = as_tool(tool)
    meta = getattr(tool, "metadata", None)
    if not isinstance(meta, ToolMetadata):
        raise InvalidToolError(_UNNAMED, "metadata", f"{type(tool).__name__} has no ToolMetadata")
    name = tool_name(tool)
    raw = meta.description
    if not isinstance(raw, str):
        raise InvalidToolError(name, "metadata.description", f"expected a string, got {type(raw).__name__}")
    try:
        schema = meta.get_parameters_dict()
        json.dumps(schema)
    except Exception as exc:  # noqa: BLE001 - pydantic reports an unrenderable schema with many types
        raise InvalidToolError(
            name, "metadata.fn_schema", f"cannot produce a JSON schema: {problem_text(exc)}"
        ) from None
    params = params_from_schema(schema, tool=name, field="metadata.fn_schema")
    doc = ToolDoc(
        name=name,
        description=raw,
        parameters=params,
        input_schema=schema,
        metadata={"llamaindex_type": type(tool).__name__},
    )
    return with_docstrings(doc, _strip_signature(name, raw))


def _prose(tool: BaseTool) -> str:
    """A tool's description without the signature line and docstring sections (a name-only document's)."""
    text = _strip_signature(str(tool.metadata.name).strip(), tool.metadata.description)
    return parse_docstring(text).description or text


#: How a LlamaIndex tool becomes a document, and its degraded form (:mod:`toolret.sources.tolerant`).
CONVERSION = Conversion(
    tool_to_doc,
    name=lambda tool: str(tool.metadata.name).strip(),
    description=_prose,
    is_tool=lambda obj: isinstance(obj, BaseTool),
    metadata=lambda tool: {"llamaindex_type": type(tool).__name__},
    kind="LlamaIndex tools",
)


def tolerant_doc(tool: BaseTool, max_doc_chars: int = DEFAULT_MAX_DOC_CHARS) -> ToolDoc:
    """:func:`tool_to_doc`, or for a tool that does not convert, its degraded form with a warning naming it
    (:mod:`toolret.sources.tolerant`): one tool never stops a registry from indexing. No usable name raises.
    """
    meta = getattr(as_tool(tool), "metadata", None)
    if not isinstance(meta, ToolMetadata) or not isinstance(meta.name, str) or not meta.name.strip():
        return tool_to_doc(tool)  # raises, naming the field
    doc = degraded_doc(tool, CONVERSION, max_doc_chars)
    return doc if doc is not None else tool_to_doc(tool)  # not indexable at all: its own error


def doc_to_tool(doc: ToolDoc, fn: Callable[..., Any] | None = None) -> FunctionTool:
    """A ToolDoc as a LlamaIndex ``FunctionTool`` named by the doc's ``id``, with its description and arguments.

    ``fn`` is the implementation; without one, calling the tool returns an error text saying
    it has none (retrieval and benchmarks need only the metadata). The description carries
    the response text when there is one, since a LlamaIndex tool has no separate field for it.
    """
    description = doc.description or doc.name
    if doc.response:
        description = f"{description}\n\nReturns:\n    {doc.response}"

    def _missing(**kwargs: Any) -> str:
        return f"tool {doc.id!r} has no implementation attached"

    metadata = ToolMetadata(name=doc.id, description=description, fn_schema=params_model(doc))
    return FunctionTool(fn=fn or _missing, metadata=metadata)
