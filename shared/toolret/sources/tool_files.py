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
formats understood; a syntax error gives the line and column.

:func:`index_tool_file` indexes a file into a knowledge base and never replaces a tool silently:
each tool records its file (``metadata["source_file"]``), so re-indexing the same file updates
its tools (and removes those it no longer holds), while a tool whose id another source holds stops with a
:class:`~toolret.errors.ToolConflictError` naming both, unless ``on_conflict`` says what to do.

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
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from toolret.documents.tool_doc import ToolDoc
from toolret.errors import ConfigError, DatasetError, InvalidToolError, ToolConflictError
from toolret.sources.on_conflict import ON_CONFLICT

__all__ = ["FORMATS", "ON_CONFLICT", "SOURCE_KEY", "FileIndexReport", "index_tool_file", "load_tool_file"]

#: The formats :func:`load_tool_file` recognises, as it names them.
FORMATS = ("JSON lines", "OpenAI tool list", "MCP tools/list result", "OpenAPI 3 spec")
#: The metadata key that records the tool file (absolute path) a tool was indexed from.
SOURCE_KEY = "source_file"
#: How a tool indexed without a file is named in messages.
NO_SOURCE = "no source file (added with ToolKnowledgeBase.add, or by a toolret index that did not record it)"


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


# ---------------------------------------------------------------------------- indexing a file
class FileIndexReport(BaseModel):
    """What :func:`index_tool_file` did, by tool id (``toolret index`` prints it)."""

    model_config = ConfigDict(frozen=True)

    kind: str
    source: str
    added: list[str]
    updated: list[str]
    unchanged: list[str]
    #: id -> the source whose tool the file's tool replaced (``on_conflict="replace"``).
    replaced: dict[str, str]
    #: id -> the source whose tool was kept instead of the file's (``on_conflict="keep"``).
    kept: dict[str, str]
    #: the file's id -> the id it was indexed under (``on_conflict="rename"``).
    renamed: dict[str, str]
    #: Tools indexed with no source (a knowledge base from before sources were recorded) that are
    #: exactly the file's: now stamped as this file's, without ``on_conflict``.
    adopted: list[str] = []
    #: Tools indexed from this file earlier that it no longer holds: removed from the knowledge base.
    removed: list[str] = []
    total: int


def index_tool_file(kb: Any, path: str | Path, *, on_conflict: str = "error", progress: bool = True) -> FileIndexReport:
    """Index the tools of ``path`` into the knowledge base ``kb``, each stamped with its source file.

    A tool whose id ``kb`` holds from the same file is updated (or left unchanged), and one the
    file no longer holds is removed; one whose id comes from another file, or from ``kb.add``, is
    a conflict settled by ``on_conflict``
    (:data:`ON_CONFLICT`); ``"error"`` raises :class:`~toolret.errors.ToolConflictError` before
    anything is written.
    """
    if on_conflict not in ON_CONFLICT:
        raise ConfigError(f"on_conflict must be one of {', '.join(ON_CONFLICT)}; got {on_conflict!r}")
    docs, kind = load_tool_file(path)
    source = str(Path(path).resolve())
    planned, replaced, kept, renamed, adopted = _settle(docs, source, kb, on_conflict, Path(path))
    before = {d.id: kb.get(d.id).content_hash for d in planned if d.id in kb}
    # The file is its tools' source of truth: one it no longer holds must not stay on offer.
    written = {d.id for d in planned}
    gone = [d.id for d in kb.docs() if d.metadata.get(SOURCE_KEY) == source and d.id not in written]
    kb.add(planned, progress=progress, upsert=True)
    if gone:
        kb.remove(gone)
    changed = {d.id for d in planned if d.id in before and kb.get(d.id).content_hash != before[d.id]}
    return FileIndexReport(
        kind=kind,
        source=source,
        added=[d.id for d in planned if d.id not in before],
        updated=[d.id for d in planned if d.id in changed],
        unchanged=[d.id for d in planned if d.id in before and d.id not in changed],
        replaced=replaced,
        kept=kept,
        renamed=renamed,
        adopted=adopted,
        removed=gone,
        total=len(kb),
    )


def _settle(
    docs: list[ToolDoc], source: str, kb: Any, on_conflict: str, path: Path
) -> tuple[list[ToolDoc], dict[str, str], dict[str, str], dict[str, str], list[str]]:
    """The file's tools to write (stamped with ``source``), the conflicts settled on the way, and
    the source-less tools adopted as this file's."""

    adopted: list[str] = []

    def holder(tool_id: str, doc: ToolDoc | None = None) -> str | None:
        """The source of the indexed tool ``tool_id`` when it is not this file, else None.

        A tool indexed with no source that is exactly ``doc`` (a knowledge base built before
        sources were recorded, re-indexed from its file) is adopted: the same tool, not a clash.
        """
        if tool_id not in kb:
            return None
        stored = kb.get(tool_id)
        held = stored.metadata.get(SOURCE_KEY)
        if held is None and doc is not None and stored.source_hash == doc.source_hash:
            adopted.append(tool_id)
            return None
        return None if held == source else str(held or NO_SOURCE)

    planned: list[ToolDoc] = []
    replaced: dict[str, str] = {}
    kept: dict[str, str] = {}
    renamed: dict[str, str] = {}
    clashes: list[tuple[str, str]] = []
    for doc in docs:
        tool_id, other = doc.id, holder(doc.id, doc)
        if other is not None:
            if on_conflict == "error":
                clashes.append((doc.id, other))
                continue
            if on_conflict == "keep":
                kept[doc.id] = other
                continue
            if on_conflict == "replace":
                replaced[doc.id] = other
            else:  # rename: namespaced by the file, as MCP tools are by their server
                tool_id = f"{_namespace(path)}/{doc.id}"
                if (taken := holder(tool_id)) is not None:
                    clashes.append((tool_id, taken))
                    continue
                renamed[doc.id] = tool_id
        planned.append(doc.model_copy(update={"id": tool_id, "metadata": {**doc.metadata, SOURCE_KEY: source}}))
    if clashes:
        raise _conflict(clashes, path, on_conflict)
    _unique(planned, path)
    return planned, replaced, kept, renamed, adopted


def _conflict(clashes: list[tuple[str, str]], path: Path, on_conflict: str) -> ToolConflictError:
    tool, other = clashes[0]
    listed = "; ".join(f"{t!r} (from {s})" for t, s in clashes[:5]) + (" ..." if len(clashes) > 5 else "")
    count = f"{len(clashes)} tool{'s' if len(clashes) != 1 else ''}"
    hint = (
        "the renamed id is taken too; rename the file or choose replace or keep"
        if on_conflict == "rename"
        else "choose on_conflict='replace' (this file's tool wins), 'keep' (the indexed one stays) or "
        "'rename' (indexed as '<file stem>/<id>'): toolret index --on-conflict replace|keep|rename"
    )
    problem = f"{path} holds {count} already indexed from another source: {listed}; nothing was indexed; {hint}"
    return ToolConflictError(tool, other, str(path), problem)


def _namespace(path: Path) -> str:
    """The file's stem as an id prefix: letters, digits, '_', '-' and '.' only."""
    return re.sub(r"[^A-Za-z0-9_.\-]+", "_", path.stem).strip("_") or "file"
