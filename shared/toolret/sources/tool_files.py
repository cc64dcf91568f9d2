"""A tool file in any of the shapes registries are exported in, recognised by its content.

``toolret index FILE`` takes whatever a user has at hand, without a format flag:

* JSON lines: benchmark records, OpenAI tool dicts or bare functions, one a line
  (:func:`toolret.sources.ingest.load_jsonl`);
* an OpenAI tool list, ``[{"type": "function", "function": {...}}, ...]`` (what is sent as
  ``tools=`` to a chat completion);
* an MCP ``tools/list`` result, ``{"tools": [...]}``, or the JSON-RPC response holding it
  (``{"jsonrpc": "2.0", "result": {"tools": [...]}}``);
* an OpenAPI 3 spec, JSON or YAML (one tool per operation, :mod:`toolret.sources.openapi`).

The file name's extension is not trusted: ``tools.json`` may hold JSON lines and a spec may be
saved as ``.txt``. Anything else is an :class:`~toolret.errors.InvalidToolError` listing the
formats understood.

Example:
    >>> import json, tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> path = folder / "tools.json"
    >>> _ = path.write_text(json.dumps([{"type": "function", "function": {"name": "get_weather"}}]))
    >>> docs, kind = load_tool_file(path)
    >>> [d.id for d in docs], kind
    (['get_weather'], 'OpenAI tool list')
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toolret.documents.tool_doc import ToolDoc
from toolret.errors import DatasetError, InvalidToolError

__all__ = ["FORMATS", "load_tool_file"]

#: The formats :func:`load_tool_file` recognises, as it names them.
FORMATS = ("JSON lines", "OpenAI tool list", "MCP tools/list result", "OpenAPI 3 spec")


def load_tool_file(path: str | Path) -> tuple[list[ToolDoc], str]:
    """The tools in ``path`` and the name of the format they were read as (one of :data:`FORMATS`)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8").lstrip("\ufeff")
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"cannot read tool file {path}: {exc}") from exc
    try:
        data: Any = json.loads(text)
    except (ValueError, RecursionError) as exc:
        start = text.lstrip()[:1]
        if start == "{" and _first_line_is_json(text):  # several JSON objects: JSON lines
            return _jsonl(path), FORMATS[0]
        data = _yaml(text, path, json_error=exc if start in "{[" else None)
    if isinstance(data, list):
        return _openai_list(data, path), FORMATS[1]
    if isinstance(data, dict):
        if "openapi" in data or "swagger" in data:
            from toolret.sources.openapi import from_openapi

            return from_openapi(data), FORMATS[3]
        tools = _tools_list(data)
        if tools is not None:
            from toolret.sources.mcp import from_tools_list

            return _unique(from_tools_list(tools), path), FORMATS[2]
        if text.lstrip().startswith("{"):  # a one-line JSON lines file
            return _jsonl(path), FORMATS[0]
    raise InvalidToolError(
        str(path), "file", "not a tool file: expected " + ", ".join(FORMATS[:-1]) + f" or {FORMATS[-1]} (JSON or YAML)"
    )


def _jsonl(path: Path) -> list[ToolDoc]:
    from toolret.sources.ingest import load_jsonl

    return load_jsonl(path)


def _first_line_is_json(text: str) -> bool:
    """Whether the first non-blank line is a JSON value by itself: JSON lines, not one broken document."""
    line = next((line for line in text.splitlines() if line.strip()), "")
    try:
        json.loads(line)
    except (ValueError, RecursionError):
        return False
    return True


def _yaml(text: str, path: Path, json_error: Exception | None = None) -> Any:
    """The YAML document in ``text`` (an OpenAPI spec is often YAML).

    A text that is neither JSON nor YAML is an :class:`InvalidToolError` giving the line and
    column of the error: JSON's for a text that starts like JSON (``json_error``), else YAML's.
    """
    try:
        import yaml
    except ImportError:  # pragma: no cover - PyYAML comes with the OpenAPI support
        yaml = None
    if yaml is not None:
        try:
            return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except yaml.YAMLError as exc:
            if json_error is None:
                mark = getattr(exc, "problem_mark", None)
                where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
                problem = getattr(exc, "problem", None) or str(exc)
                raise InvalidToolError(str(path), "file", f"invalid YAML{where}: {problem}") from None
    if isinstance(json_error, json.JSONDecodeError):
        where = f"at line {json_error.lineno}, column {json_error.colno}: {json_error.msg}"
        raise InvalidToolError(str(path), "file", f"invalid JSON {where}") from None
    if json_error is not None:
        raise InvalidToolError(str(path), "file", f"invalid JSON: {json_error}") from None
    return None


def _tools_list(data: dict[str, Any]) -> Any:
    """The ``tools/list`` result in ``data`` (bare, or inside a JSON-RPC response), else None."""
    if isinstance(data.get("tools"), list):
        return data
    result = data.get("result")
    if isinstance(result, dict) and isinstance(result.get("tools"), list):
        return result
    return None


def _openai_list(items: list[Any], path: Path) -> list[ToolDoc]:
    from toolret.sources.ingest import to_tool_doc

    docs: list[ToolDoc] = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise InvalidToolError(f"{path}[{i}]", "tool", f"expected a tool object, got {type(item).__name__}")
        try:
            docs.append(to_tool_doc(item))
        except InvalidToolError as exc:
            raise InvalidToolError(exc.tool, exc.field, f"{exc.problem} ({path}, item [{i}])") from None
    return _unique(docs, path)


def _unique(docs: list[ToolDoc], path: Path) -> list[ToolDoc]:
    first: dict[str, int] = {}
    for i, doc in enumerate(docs):
        if doc.id in first:
            raise InvalidToolError(doc.id, "id", f"duplicate id ({path}, items [{first[doc.id]}] and [{i}])")
        first[doc.id] = i
    return docs
