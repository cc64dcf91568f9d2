"""Ingestion: every kind of tool definition turned into a :class:`~toolret.documents.tool_doc.ToolDoc`.

A registry mixes OpenAI tool dicts, bare JSON-schema specs, Python callables and benchmark
records; retrieval needs them all in the same MFTR fields. Ingestion copies what the source
says and invents nothing (a tool without a response description gets an empty ``response``).
Malformed input raises :class:`~toolret.errors.InvalidToolError` naming the tool and the
field path, so one bad entry among thousands is easy to find.

Example:
    >>> doc = from_openai({"type": "function", "function": {
    ...     "name": "get_weather", "description": "Current weather for a city.",
    ...     "parameters": {"type": "object", "required": ["location"],
    ...                    "properties": {"location": {"type": "string",
    ...                                                "description": "City name"}}}}})
    >>> doc.field_text("parameters")
    'location (string, required): City name'
"""

from __future__ import annotations

import functools
import importlib.metadata
import json
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from toolret.documents.guards import (
    MAX_SCHEMA_NESTING,
    check_shape,
    checked_doc,
    plain_json,
    safe_label,
)
from toolret.documents.tool_doc import ToolDoc, ToolParam
from toolret.errors import DatasetError, InvalidToolError
from toolret.sources.callables import from_callable, from_module

__all__ = [
    "MAX_SCHEMA_NESTING",
    "from_callable",
    "from_module",
    "from_openai",
    "from_record",
    "load_jsonl",
    "params_from_schema",
    "to_tool_doc",
    "tool_list",
]

logger = logging.getLogger("toolret")

_UNNAMED = "<unnamed>"
_EXTRA_KEYS = ("response", "returns", "examples")
#: Packages whose tool objects need an adapter rather than generic ingestion: those with a
#: converter registered under the ``toolret.converters`` entry-point group (the adapters shipped
#: with toolret register theirs in pyproject.toml), and MCP, converted in the engine.
_MCP = "mcp"
#: The entry-point group an adapter registers its ``tool object -> ToolDoc`` converter in, named
#: by the framework's top-level package (``langchain``, ``llama_index``).
CONVERTER_GROUP = "toolret.converters"
#: JSON-schema type names (plus "any", what toolret writes for a $ref or a missing type).
JSON_SCHEMA_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object", "null", "any"})


# ================================================================== JSON schema -> params
def params_from_schema(schema: Any, *, tool: str, field: str = "parameters") -> list[ToolParam]:
    """The top-level arguments of a JSON-schema ``object`` (``None`` means no parameters).

    Types: the schema ``type`` (a list joined with ``|``), ``anyOf``/``oneOf`` alternatives
    joined with ``|``, and ``"any"`` for ``$ref`` or no type (references are not resolved).

    >>> schema = {"properties": {"q": {"type": ["string", "null"]}}}
    >>> [p.text() for p in params_from_schema(schema, tool="search")]
    ['q (string|null, optional)']
    """
    if schema is None:
        return []
    if not isinstance(schema, dict):
        raise InvalidToolError(tool, field or "schema", f"expected a JSON-schema object, got {type(schema).__name__}")
    schema = plain_json(schema, tool=tool, field=field)
    _check_object_type(schema.get("type"), tool, field)
    props = schema.get("properties")
    props = {} if props is None else props
    if not isinstance(props, dict):
        raise InvalidToolError(tool, _join(field, "properties"), f"expected an object, got {type(props).__name__}")
    required = _string_list(schema.get("required"), tool, _join(field, "required"))
    params: list[ToolParam] = []
    for name, prop in props.items():
        if not isinstance(name, str) or not name.strip():
            raise InvalidToolError(tool, _join(field, "properties"), f"property name {name!r} is empty or not a string")
        path = _join(field, f"properties.{name}")
        if not isinstance(prop, dict):
            raise InvalidToolError(tool, path, f"expected a JSON-schema object, got {type(prop).__name__}")
        enum_values = prop.get("enum")
        if enum_values is not None and not isinstance(enum_values, list):
            raise InvalidToolError(tool, f"{path}.enum", f"expected a list, got {type(enum_values).__name__}")
        try:
            params.append(
                ToolParam(
                    name=name,
                    type=_schema_type(prop, tool, path),
                    required=name in required or prop.get("required") is True,
                    description=_text(prop.get("description"), tool, f"{path}.description"),
                    enum=enum_values,
                    default=prop.get("default"),
                )
            )
        except ValidationError as exc:
            raise InvalidToolError(tool, path, str(exc.errors()[0].get("msg", exc))) from None
    return params


def _check_object_type(kind: Any, tool: str, field: str) -> None:
    """A tool's arguments are named: its parameters schema is an object (or says no type)."""
    if kind is None or kind == "object" or (isinstance(kind, list) and "object" in kind):
        return
    raise InvalidToolError(
        tool,
        _join(field, "type"),
        f'a tool\'s parameters must be a JSON-schema object ({{"type": "object", '
        f'"properties": {{...}}}}), got type {kind!r:.80}; wrap the value in a named property',
    )


def _warn_unknown_types(names: list[str], tool: str, path: str) -> None:
    """Degrade per tool, never silently: a misspelt type keeps the tool (indexed as written), with a warning."""
    unknown = [n for n in names if n not in JSON_SCHEMA_TYPES]
    if unknown:
        logger.warning(
            "tool %r, field %r: unknown JSON-schema type %s (expected one of %s); the tool is kept and "
            "the type indexed as written: fix the schema",
            tool,
            f"{path}.type",
            ", ".join(map(repr, unknown)),
            ", ".join(sorted(JSON_SCHEMA_TYPES - {"any"})),
        )


def _schema_type(schema: dict[str, Any], tool: str, path: str) -> str:
    if "$ref" in schema:
        return "any"
    kind = schema.get("type")
    if isinstance(kind, str) and kind.strip():
        _warn_unknown_types([kind.strip()], tool, path)
        return kind.strip()
    if isinstance(kind, list) and kind and all(isinstance(k, str) and k.strip() for k in kind):
        kinds = list(dict.fromkeys(k.strip() for k in kind))
        _warn_unknown_types(kinds, tool, path)
        return "|".join(kinds)
    if kind is not None:
        raise InvalidToolError(tool, f"{path}.type", f"expected a type name or a list of them, got {kind!r:.80}")
    for key in ("anyOf", "oneOf", "allOf"):
        alternatives = schema.get(key)
        if alternatives is None:
            continue
        if not isinstance(alternatives, list):
            raise InvalidToolError(tool, f"{path}.{key}", f"expected a list, got {type(alternatives).__name__}")
        names: list[str] = []
        for i, alt in enumerate(alternatives):
            if not isinstance(alt, dict):
                raise InvalidToolError(tool, f"{path}.{key}[{i}]", "expected a JSON-schema object")
            names.extend(_schema_type(alt, tool, f"{path}.{key}[{i}]").split("|"))
        if key == "allOf" and len(alternatives) != 1:
            return "any"  # an intersection has no single type name
        unique = list(dict.fromkeys(names))
        return "any" if not unique or "any" in unique else "|".join(unique)
    return "any"


def _join(field: str, rest: str) -> str:
    return f"{field}.{rest}" if field else rest


# ================================================================== field checks
def _text(value: Any, tool: str, field: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidToolError(tool, field, f"expected a string, got {type(value).__name__}")
    return value


def _name(value: Any, tool: str, field: str) -> str:
    tool = safe_label(tool)
    if value is None:
        raise InvalidToolError(tool, field, "missing; every tool needs a name")
    if not isinstance(value, str) or not value.strip():
        raise InvalidToolError(tool, field, f"expected a non-empty string, got {value!r:.80}")
    return value.strip()


def _string_list(value: Any, tool: str, field: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidToolError(tool, field, f"expected a list of strings, got {type(value).__name__}")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise InvalidToolError(tool, f"{field}[{i}]", f"expected a string, got {type(item).__name__}")
    return value


def _response(value: Any, tool: str, field: str) -> str:
    if value is None or isinstance(value, str):
        return value or ""
    if isinstance(value, (dict, list)):
        try:
            return json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError) as exc:
            raise InvalidToolError(tool, field, f"not JSON-serializable: {exc}") from None
    raise InvalidToolError(tool, field, f"expected a string or an object, got {type(value).__name__}")


def _label(spec: dict[str, Any], *keys: str) -> str:
    for key in keys:
        value = spec.get(key)
        if isinstance(value, str) and value.strip():
            return safe_label(value.strip())
    return _UNNAMED


# ================================================================== dict sources
def from_openai(spec: dict[str, Any]) -> ToolDoc:
    """A tool from an OpenAI tool dict, a bare function dict, or a bare JSON-schema spec.

    Accepted shapes: ``{"type": "function", "function": {name, description, parameters}}``,
    ``{name, description, parameters}`` and ``{"title": name, "type": "object",
    "properties": ...}``. Optional ``response``/``returns`` (string or object) and
    ``examples`` (list of strings) are read too. The parameters schema is kept verbatim in
    ``input_schema``; error fields are paths in the given dict (``function.parameters...``).
    """
    if not isinstance(spec, dict):
        raise InvalidToolError(_UNNAMED, "tool", f"expected a dict, got {type(spec).__name__}")
    kind = spec.get("type")
    if "function" in spec:
        fn = spec["function"]
        label = _label(fn, "name") if isinstance(fn, dict) else _UNNAMED
        if kind not in (None, "function"):
            raise InvalidToolError(label, "type", f"unsupported tool type {kind!r}; only 'function' tools")
        if not isinstance(fn, dict):
            raise InvalidToolError(label, "function", f"expected an object, got {type(fn).__name__}")
        outer = {k: spec[k] for k in _EXTRA_KEYS if k in spec and k not in fn}
        name = _name(fn.get("name"), label, "function.name")
        return _build(
            name, fn, fn.get("parameters"), prefix="function.", schema_field="function.parameters", outer=outer
        )
    if kind == "object" or ("properties" in spec and "parameters" not in spec):
        label = _label(spec, "title", "name")
        name = _name(spec.get("title", spec.get("name")), label, "title")
        schema = {k: v for k, v in spec.items() if k not in ("title", "name", "description", *_EXTRA_KEYS)}
        return _build(name, spec, schema, prefix="", schema_field="")
    if kind not in (None, "function"):
        raise InvalidToolError(_label(spec, "name"), "type", f"unsupported tool type {kind!r}; only 'function' tools")
    name = _name(spec.get("name"), _label(spec, "name"), "name")
    return _build(name, spec, spec.get("parameters"), prefix="", schema_field="parameters")


def from_record(record: dict[str, Any]) -> ToolDoc:
    """A tool from a benchmark ``tools.jsonl`` record (see ``benchmarks/FORMAT.md``).

    ``id`` becomes the ToolDoc id; ``category`` and ``source`` (when not null) go into
    ``metadata``.
    """
    if not isinstance(record, dict):
        raise InvalidToolError(_UNNAMED, "record", f"expected a dict, got {type(record).__name__}")
    doc_id = _name(record.get("id"), _label(record, "name", "id"), "id")
    name = _name(record.get("name"), doc_id, "name")
    metadata = {key: record[key] for key in ("category", "source") if record.get(key) is not None}
    for key, value in metadata.items():
        metadata[key] = plain_json(value, tool=name, field=key)
    return _build(
        name, record, record.get("parameters"), prefix="", schema_field="parameters", doc_id=doc_id, metadata=metadata
    )


def _build(
    name: str,
    spec: dict[str, Any],
    schema: Any,
    *,
    prefix: str,
    schema_field: str,
    outer: dict[str, Any] | None = None,
    doc_id: str = "",
    metadata: dict[str, Any] | None = None,
) -> ToolDoc:
    """The shared tail of every dict source: check each field, then make the ToolDoc.

    ``outer`` holds ``response``/``examples`` found beside (not inside) an OpenAI ``function``.
    """

    def pick(key: str) -> tuple[Any, str]:
        if key in spec:
            return spec[key], f"{prefix}{key}"
        return (outer or {}).get(key), key

    label = safe_label(name)
    response, response_field = pick("response")
    if response is None:
        response, response_field = pick("returns")
    examples, examples_field = pick("examples")
    params = params_from_schema(schema, tool=label, field=schema_field)
    if isinstance(response, (dict, list)):
        check_shape(response, tool=label, field=response_field)
    return checked_doc(
        ToolDoc(
            id=doc_id,
            name=name,
            description=_text(spec.get("description"), label, f"{prefix}description"),
            parameters=params,
            response=_response(response, label, response_field),
            examples=_string_list(examples, label, examples_field),
            input_schema=None if schema is None else plain_json(schema, tool=label, field=schema_field or "schema"),
            metadata=metadata or {},
        )
    )


# ================================================================== files and dispatch
def load_jsonl(path: str | Path) -> list[ToolDoc]:
    """Every tool of a JSON-lines file (benchmark records, OpenAI tool dicts or bare functions).

    An unreadable line raises InvalidToolError with tool ``"<path>:<line>"``; a bad tool keeps
    its name as ``tool`` and gets the file and line in the message. Blank lines are skipped;
    a repeated id is an error. A missing file raises :class:`~toolret.errors.DatasetError`.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DatasetError(f"cannot read tool file {path}: {exc}") from exc
    docs: list[ToolDoc] = []
    first_line: dict[str, int] = {}
    for lineno, line_bytes in enumerate(raw.splitlines(), start=1):
        label = f"{path}:{lineno}"
        try:
            line = line_bytes.decode("utf-8").lstrip("\ufeff")
        except UnicodeDecodeError as exc:
            raise InvalidToolError(label, "line", f"not UTF-8: {exc}") from None
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError) as exc:
            where = f" at line {lineno}, column {exc.colno}: {exc.msg}" if isinstance(exc, json.JSONDecodeError) else ""
            raise InvalidToolError(label, "line", f"invalid JSON{where or f': {exc}'}") from None
        if not isinstance(obj, dict):
            raise InvalidToolError(label, "line", f"expected a JSON object, got {type(obj).__name__}")
        try:
            doc = to_tool_doc(obj)
        except InvalidToolError as exc:
            tool = exc.tool if exc.tool != _UNNAMED else label
            raise InvalidToolError(tool, exc.field, f"{exc.problem} ({path}, line {lineno})") from None
        if doc.id in first_line:
            raise InvalidToolError(doc.id, "id", f"duplicate id ({path}, lines {first_line[doc.id]} and {lineno})")
        first_line[doc.id] = lineno
        docs.append(doc)
    return docs


def tool_list(tools: Any) -> Iterable[Any]:
    """``tools`` as ``add``/``sync``/``bind`` read them: one tool (a ToolDoc, a dict, a callable,
    a framework tool) is a list of one, as ``allowed_ids="x"`` is one id; any other iterable is
    read as it is. A framework tool is a pydantic model, and iterating one yields its fields: a
    single tool must not be mistaken for a list. A string is an error: it is no tool (and an id
    is removed with ``kb.remove``).

    >>> def ping(host: str) -> bool: ...
    >>> tool_list(ping) == [ping], tool_list([ping]) == [ping]
    (True, True)
    """
    if isinstance(tools, (str, bytes)):
        raise InvalidToolError(
            safe_label(str(tools)),
            "tools",
            "a string is not a tool; pass a tool or a list of tools (ToolDocs, dicts, callables, framework tools)",
        )
    if isinstance(tools, (ToolDoc, dict)) or callable(tools) or _framework_of(tools) is not None:
        return [tools]
    if not isinstance(tools, Iterable):
        return [tools]  # to_tool_doc names what it cannot ingest
    return tools


def to_tool_doc(obj: Any) -> ToolDoc:
    """Whatever a user hands to the knowledge base, as a ToolDoc.

    ToolDoc → itself; dict → :func:`from_record` when it has ``id`` and ``source`` or
    ``category``, else :func:`from_openai`; callable → :func:`from_callable`. LangChain and
    LlamaIndex tools (recognised by the package of a class they derive from, no import needed)
    are converted by the ``tool_to_doc`` their adapter registers (entry-point group
    ``toolret.converters``), imported on first use; without the
    adapter installed, and for MCP tool objects, an InvalidToolError names the function to use.
    """
    if isinstance(obj, ToolDoc):
        return checked_doc(obj)
    if isinstance(obj, dict):
        if "id" in obj and ("source" in obj or "category" in obj):
            return from_record(obj)
        return from_openai(obj)
    framework = _framework_of(obj)
    if framework is not None:
        return _from_framework(obj, framework)
    if callable(obj):
        return from_callable(obj)
    raise InvalidToolError(
        _label_of(obj),
        "tool",
        f"cannot ingest a {type(obj).__name__}; pass a ToolDoc, a dict (OpenAI tool or benchmark record) or a "
        "callable, or a list of them",
    )


@functools.cache
def _converters() -> dict[str, importlib.metadata.EntryPoint]:
    """Framework package name -> its registered converter, read once from the installed metadata
    (scanning it costs about a millisecond; every callable a user indexes asks)."""
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=CONVERTER_GROUP)}


def _framework_of(obj: Any) -> str | None:
    """The agent framework ``obj``'s class (or a base class) comes from, by package name; None for others."""
    frameworks = [*_converters(), _MCP]
    for cls in type(obj).__mro__:
        package = (getattr(cls, "__module__", "") or "").split(".", 1)[0]
        if package.endswith("toolret"):
            continue
        for framework in frameworks:
            if package == framework or package.startswith(framework + "_"):
                return framework
    return None


def _label_of(obj: Any) -> str:
    label = (
        getattr(obj, "name", None)
        or getattr(getattr(obj, "metadata", None), "name", None)
        or getattr(obj, "__name__", None)
    )
    return safe_label(label) if isinstance(label, str) and label.strip() else _UNNAMED


def _from_framework(obj: Any, framework: str) -> ToolDoc:
    label = _label_of(obj)
    entry = _converters().get(framework)
    if entry is None:
        raise InvalidToolError(
            label,
            "tool",
            f"{type(obj).__name__} objects are converted by toolret.sources.mcp.from_mcp_tool, not by generic ingestion"
            if framework == _MCP
            else f"{type(obj).__name__} is a {framework} tool and no converter is registered for it "
            f"(entry-point group {CONVERTER_GROUP!r}); reinstall toolret",
        )
    try:
        convert = entry.load()
    except ImportError:
        extra = entry.extras[0] if entry.extras else framework
        function = f"{entry.module}.{entry.attr}"
        raise InvalidToolError(
            label,
            "tool",
            f"{type(obj).__name__} is a {framework} tool: install its adapter "
            f"(pip install 'toolret[{extra}]') so {function} converts it, or pass {function}(tool) yourself",
        ) from None
    return checked_doc(convert(obj))
