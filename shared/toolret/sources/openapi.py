"""OpenAPI 3 ingestion: one :class:`~toolret.documents.tool_doc.ToolDoc` per operation of a spec.

API catalogues describe their tools as OpenAPI documents; an agent calls one operation at a
time, so each operation (``GET /movie/{movie_id}``) is one tool:

* ``name``: the ``operationId``, or ``"<METHOD> <path>"`` when there is none (the form
  RestBench's gold paths use); ``id`` is the name, prefixed by ``namespace/`` when given.
* ``description``: the operation's summary and description (one of them when the other is
  missing or the same).
* ``parameters``: path, query and header parameters (path-level ones merged with the
  operation's), then the properties of the request body (JSON first, else a form); each
  keeps its origin in ``x-in``. ``input_schema`` is that JSON-schema object.
* ``response``: the schema of the first 2xx response (as JSON, which the index reads as
  field names), or its description when it has no schema.
* ``metadata``: ``method``, ``path``, ``operation_id``, ``tags``, ``api`` (``info.title``),
  ``deprecated``.

Local ``$ref``s (``#/components/...``) are resolved. A reference met again inside itself (a
cycle) or deeper than ``max_ref_depth`` expansions is cut: replaced by a stub that keeps the
target's type, title and description, so recursive schemas stay finite and huge specs stay
small. References to other files are never fetched; they become stubs too.

Example:
    >>> spec = {"openapi": "3.0.0", "info": {"title": "Pets", "version": "1"},
    ...         "paths": {"/pets/{pet_id}": {"get": {
    ...             "operationId": "getPet", "summary": "Get a pet by id.", "tags": ["pets"],
    ...             "parameters": [{"name": "pet_id", "in": "path", "required": True,
    ...                             "schema": {"type": "integer"}}],
    ...             "responses": {"200": {"description": "The pet", "content": {"application/json": {
    ...                 "schema": {"$ref": "#/components/schemas/Pet"}}}}}}}},
    ...         "components": {"schemas": {"Pet": {"type": "object", "properties": {
    ...             "name": {"type": "string"}, "parent": {"$ref": "#/components/schemas/Pet"}}}}}}
    >>> [doc] = from_openapi(spec)
    >>> doc.name, doc.field_text("parameters"), doc.metadata["tags"]
    ('getPet', 'pet_id (integer, required)', ['pets'])
    >>> doc.field_text("response")
    'The pet Returns: name (string); parent (object)'
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from toolret.documents.guards import MAX_JSON_NODES, MAX_SCHEMA_NESTING, checked_doc, safe_label
from toolret.documents.tool_doc import MAX_FIELD_CHARS, ToolDoc
from toolret.errors import DatasetError, InvalidToolError, MissingDependencyError
from toolret.sources.ingest import params_from_schema

__all__ = ["HTTP_METHODS", "from_openapi", "load_openapi", "resolve_refs"]

#: The operation keys of an OpenAPI path item, in the order tools are emitted.
HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_PARAM_LOCATIONS = ("path", "query", "header")
_FORM_TYPES = ("multipart/form-data", "application/x-www-form-urlencoded")
_DROP_KEYS = ("example", "examples", "x-stainless-const", "x-oaiMeta")
#: Largest input schema kept per operation before ``$ref`` expansion is made shallower.
_MAX_SCHEMA_CHARS = 100_000
#: Most JSON values ``$ref`` resolution may produce for one operation (half of
#: toolret.documents.guards.MAX_JSON_NODES; a schema of _MAX_SCHEMA_CHARS holds far fewer): reference
#: fan-out and shared YAML anchors are exponential when expanded naively.
_MAX_NODES = MAX_JSON_NODES // 2


class _Budget:
    """How many more JSON values one operation's ``$ref`` resolution may produce."""

    def __init__(self, nodes: int = _MAX_NODES) -> None:
        self.left = nodes

    def spend(self, ref: str) -> None:
        self.left -= 1
        if self.left < 0:
            raise InvalidToolError(
                "<openapi>",
                safe_label(ref) or "schema",
                f"expands to more than {_MAX_NODES} JSON values (reference fan-out or shared YAML anchors)",
            )


# ================================================================== loading
def load_openapi(source: str | Path | dict[str, Any]) -> dict[str, Any]:
    """The spec as a dict, from a dict, a ``.json`` file or a ``.yaml``/``.yml`` file.

    Only local files are read (toolret never fetches a URL). Swagger 2.0 documents and
    anything without ``openapi: 3.x`` are refused with a message saying so.
    """
    if isinstance(source, dict):
        spec = source
        label = "<dict>"
    elif not isinstance(source, (str, Path)):
        raise InvalidToolError("<openapi>", "spec", f"expected a dict or a file path, got {type(source).__name__}")
    else:
        path = Path(source)
        label = str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise DatasetError(f"cannot read OpenAPI spec {path}: {exc}") from exc
        spec = _parse(text, path)
    if not isinstance(spec, dict):
        raise InvalidToolError(label, "spec", f"expected an OpenAPI object, got {type(spec).__name__}")
    version = str(spec.get("openapi", ""))
    if not version.startswith("3."):
        found = f"swagger {spec['swagger']!r}" if "swagger" in spec else f"openapi {version or '(missing)'!r}"
        raise InvalidToolError(_title(spec, label), "openapi", f"only OpenAPI 3.x is supported, found {found}")
    if not isinstance(spec.get("paths"), dict):
        raise InvalidToolError(_title(spec, label), "paths", "missing or not an object")
    return spec


def _parse(text: str, path: Path) -> Any:
    if path.suffix.lower() == ".json" or text.lstrip().startswith("{"):
        try:
            return json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise InvalidToolError(str(path), "spec", f"invalid JSON: {exc}") from None
    try:
        import yaml
    except ImportError:
        raise MissingDependencyError("PyYAML", purpose="reading YAML OpenAPI specs") from None
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml is ~10x faster on big specs
    try:
        return yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        raise InvalidToolError(str(path), "spec", f"invalid YAML: {exc}") from None


def _title(spec: dict[str, Any], default: str) -> str:
    info = spec.get("info")
    title = info.get("title") if isinstance(info, dict) else None
    return safe_label(title.strip()) if isinstance(title, str) and title.strip() else default


# ================================================================== $ref resolution
def _pointer(spec: dict[str, Any], ref: str) -> Any:
    node: Any = spec
    for raw in ref[2:].split("/") if ref != "#" else []:
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def _stub(target: Any, ref: str, why: str) -> dict[str, Any]:
    """What a cut reference becomes: the target's type, title and first description line."""
    out: dict[str, Any] = {}
    if isinstance(target, dict):
        for key in ("type", "title"):
            if isinstance(target.get(key), (str, list)):
                out[key] = target[key]
        desc = target.get("description")
        if isinstance(desc, str) and desc.strip():
            out["description"] = desc.strip().splitlines()[0][:200]
    out.setdefault("title", ref.rsplit("/", 1)[-1])
    out["x-ref"] = ref
    out["x-ref-cut"] = why
    return out


def resolve_refs(spec: dict[str, Any], node: Any, *, max_ref_depth: int = 3, budget: _Budget | None = None) -> Any:
    """A copy of ``node`` with local ``$ref``s replaced by their targets (cycles cut).

    ``max_ref_depth`` bounds how many references are expanded inside one another; deeper
    ones, cycles and non-local references become stubs (``x-ref``, ``x-ref-cut``). Example
    keys are dropped: they are data, not documentation. The result is bounded: more than
    ``toolret.documents.guards.MAX_JSON_NODES`` values (one ``budget`` may be shared by several calls) or
    nesting deeper than ``MAX_SCHEMA_NESTING`` raises :class:`~toolret.errors.InvalidToolError`.

    >>> spec = {"components": {"schemas": {"Node": {"type": "object", "properties": {
    ...     "child": {"$ref": "#/components/schemas/Node"}}}}}}
    >>> resolve_refs(spec, {"$ref": "#/components/schemas/Node"})["properties"]["child"]["x-ref-cut"]
    'cycle'
    """
    budget = budget or _Budget()

    def walk(value: Any, stack: tuple[str, ...], depth: int = 0) -> Any:
        budget.spend(stack[-1] if stack else "")
        if depth > MAX_SCHEMA_NESTING and isinstance(value, (list, dict)):
            raise InvalidToolError(
                "<openapi>",
                safe_label(stack[-1]) if stack else "schema",
                f"nested deeper than {MAX_SCHEMA_NESTING} levels",
            )
        if isinstance(value, list):
            return [walk(v, stack, depth + 1) for v in value]
        if not isinstance(value, dict):
            return value
        ref = value.get("$ref")
        if isinstance(ref, str):
            if not ref.startswith("#"):
                return _stub(None, ref, "external")
            target = _pointer(spec, ref)
            if target is None:
                return _stub(None, ref, "missing")
            if ref in stack:
                return _stub(target, ref, "cycle")
            if len(stack) >= max_ref_depth:
                return _stub(target, ref, "depth")
            resolved = walk(target, (*stack, ref), depth + 1)
            siblings = {k: walk(v, stack, depth + 1) for k, v in value.items() if k != "$ref" and k not in _DROP_KEYS}
            if isinstance(resolved, dict) and siblings:
                return {**resolved, **siblings}  # 3.1 allows description etc. beside $ref
            return resolved
        return {k: walk(v, stack, depth + 1) for k, v in value.items() if k not in _DROP_KEYS}

    return walk(node, ())


# ================================================================== operations
def _operations(spec: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any], list[Any]]]:
    for path, item in spec["paths"].items():
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("$ref"), str):
            item = _pointer(spec, item["$ref"])
            if not isinstance(item, dict):
                continue  # a path item $ref to nothing, or to a non-object
        shared = _list(item.get("parameters"))
        for method in HTTP_METHODS:
            op = item.get(method)
            if isinstance(op, dict):
                yield method, str(path), op, shared


def _list(value: Any) -> list[Any]:
    """``value`` when the spec gave a list there, else nothing (a malformed field is skipped, not iterated)."""
    return value if isinstance(value, list) else []


def _strings(value: Any) -> list[str]:
    """The strings of a list field (``tags``, ``required``); anything else in it is ignored."""
    return [v for v in _list(value) if isinstance(v, str)]


def _text(value: Any) -> str:
    """A text field, stripped; anything that is not a string counts as absent."""
    return value.strip() if isinstance(value, str) else ""


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _description(op: dict[str, Any]) -> str:
    summary, desc = _text(op.get("summary")), _text(op.get("description"))
    if summary and desc and summary != desc:
        return f"{summary}\n{desc}"
    return summary or desc


def _merge_all_of(schema: dict[str, Any]) -> dict[str, Any]:
    """Fold ``allOf`` parts into one object schema (properties and required lists merged)."""
    parts = schema.get("allOf")
    if not isinstance(parts, list):
        return schema
    merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
    props: dict[str, Any] = dict(_dict(merged.get("properties")))
    required: list[str] = _strings(merged.get("required"))
    for part in parts:
        if isinstance(part, dict):
            part = _merge_all_of(part)
            props.update(_dict(part.get("properties")))
            required += _strings(part.get("required"))
            for key in ("description", "type"):
                if key in part and key not in merged:
                    merged[key] = part[key]
    if props:
        merged["properties"] = props
        merged.setdefault("type", "object")
    if required:
        merged["required"] = list(dict.fromkeys(required))
    return merged


def _media_schema(content: Any, prefer_form: bool) -> dict[str, Any] | None:
    if not isinstance(content, dict):
        return None
    json_types = [m for m in content if "json" in str(m).lower()]
    form_types = [m for m in content if m in _FORM_TYPES]
    for media in (json_types + form_types) if not prefer_form else (form_types + json_types):
        body = content.get(media)
        if isinstance(body, dict) and isinstance(body.get("schema"), dict):
            return body["schema"]
    return None


def _input_schema(
    spec: dict[str, Any], op: dict[str, Any], shared: list[Any], depth: int, budget: _Budget | None = None
) -> dict[str, Any]:
    props: dict[str, Any] = {}
    required: list[str] = []
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for raw in [*shared, *_list(op.get("parameters"))]:
        param = resolve_refs(spec, raw, max_ref_depth=depth, budget=budget)
        if not isinstance(param, dict) or not isinstance(param.get("name"), str):
            continue
        merged[(param["name"], str(param.get("in", "")))] = param  # the operation's wins
    for (name, where), param in merged.items():
        if where not in _PARAM_LOCATIONS:
            continue
        prop = dict(param.get("schema") or {}) if isinstance(param.get("schema"), dict) else {}
        if isinstance(param.get("description"), str) and param["description"].strip():
            prop["description"] = param["description"].strip()
        prop["x-in"] = where
        props[name] = prop
        if param.get("required") in (True, "true") or where == "path":
            required.append(name)
    body = op.get("requestBody")
    if body is not None:
        body = resolve_refs(spec, body, max_ref_depth=depth, budget=budget)
        schema = _media_schema(body.get("content"), prefer_form=False) if isinstance(body, dict) else None
        if schema is not None:
            schema = _merge_all_of(schema)
            body_props = schema.get("properties")
            if isinstance(body_props, dict) and body_props:
                body_required = set(_strings(schema.get("required")))
                for name, prop in body_props.items():
                    key = name if name not in props else f"body.{name}"
                    props[key] = {**(prop if isinstance(prop, dict) else {}), "x-in": "body"}
                    if name in body_required:
                        required.append(key)
            else:
                props["body" if "body" not in props else "request_body"] = {**schema, "x-in": "body"}
                if isinstance(body, dict) and body.get("required") is True:
                    required.append("body")
    out: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        out["required"] = list(dict.fromkeys(required))
    return out


def _response(spec: dict[str, Any], op: dict[str, Any], depth: int, budget: _Budget | None = None) -> str:
    responses = op.get("responses")
    if not isinstance(responses, dict):
        return ""
    by_code = {str(c): r for c, r in responses.items()}  # YAML may give 200 (int) as a key
    codes = sorted((c for c in by_code if c.startswith("2")), key=lambda c: (c.upper() == "2XX", c))
    for code in codes:
        resp = resolve_refs(spec, by_code[code], max_ref_depth=depth, budget=budget)
        if not isinstance(resp, dict):
            continue
        schema = _media_schema(resp.get("content"), prefer_form=False)
        if schema is None and isinstance(resp.get("content"), dict):
            schema = next(
                (
                    m.get("schema")
                    for m in resp["content"].values()
                    if isinstance(m, dict) and isinstance(m.get("schema"), dict)
                ),
                None,
            )
        if schema is not None:
            desc = resp.get("description")
            if isinstance(desc, str) and desc.strip() and "description" not in schema:
                schema = {"description": desc.strip(), **schema}
            return json.dumps(schema, ensure_ascii=False, default=str)
        desc = resp.get("description")
        if isinstance(desc, str) and desc.strip():
            return desc.strip()
    return ""


def from_openapi(
    source: str | Path | dict[str, Any],
    *,
    namespace: str | None = None,
    max_ref_depth: int = 3,
    include_deprecated: bool = True,
) -> list[ToolDoc]:
    """One ToolDoc per operation of an OpenAPI 3 spec (a dict or a local JSON/YAML file).

    ``namespace`` prefixes every id (``"tmdb/GET /movie/{movie_id}"``) so several APIs can
    share one knowledge base; names stay as the spec writes them. ``max_ref_depth`` bounds
    ``$ref`` expansion (see :func:`resolve_refs`). Operations are emitted in spec order; a
    repeated ``operationId`` falls back to ``METHOD path`` for the later operation.
    """
    spec = load_openapi(source)
    api = _title(spec, "")
    docs: list[ToolDoc] = []
    seen: set[str] = set()
    for method, path, op, shared in _operations(spec):
        if op.get("deprecated") is True and not include_deprecated:
            continue
        op_id = op.get("operationId")
        fallback = f"{method.upper()} {path}"
        name = op_id.strip() if isinstance(op_id, str) and op_id.strip() else fallback
        if name in seen:
            name = fallback
        seen.add(name)
        tags = _strings(op.get("tags"))
        metadata: dict[str, Any] = {"method": method.upper(), "path": path, "tags": tags}
        if isinstance(op_id, str) and op_id.strip():
            metadata["operation_id"] = op_id.strip()
        if api:
            metadata["api"] = api
        if op.get("deprecated") is True:
            metadata["deprecated"] = True
        doc_id = f"{namespace}/{name}" if namespace else name
        docs.append(_operation_doc(spec, op, shared, doc_id, name, metadata, max_ref_depth, fallback))
    return docs


def _operation_doc(
    spec: dict[str, Any],
    op: dict[str, Any],
    shared: list[Any],
    doc_id: str,
    name: str,
    metadata: dict[str, Any],
    max_ref_depth: int,
    label: str,
) -> ToolDoc:
    """The ToolDoc of one operation; a schema too large to index is expanded less deeply."""
    for depth in range(max_ref_depth, -1, -1):
        try:
            budget = _Budget()  # one per operation: fan-out and alias bombs stay bounded
            schema = _input_schema(spec, op, shared, depth, budget)
            response = _response(spec, op, depth, budget)
            too_big = len(response) > MAX_FIELD_CHARS or len(json.dumps(schema, default=str)) > _MAX_SCHEMA_CHARS
            if too_big and depth > 0:
                continue
            params = params_from_schema(copy.deepcopy(schema), tool=name, field=f"paths.{metadata['path']}")
            params = [p.model_copy(update={"description": " ".join(p.description.split())}) for p in params]
            return checked_doc(
                ToolDoc(
                    id=doc_id,
                    name=name,
                    description=_description(op),
                    parameters=params,
                    response=response,  # over MAX_FIELD_CHARS: cut with a warning, as every source's
                    input_schema=schema,
                    metadata=metadata,
                )
            )
        except InvalidToolError as exc:
            if depth > 0 and ("nested deeper" in exc.problem or "more than" in exc.problem):
                continue
            tool = name if exc.tool == "<openapi>" else exc.tool
            raise InvalidToolError(
                safe_label(tool), safe_label(exc.field), f"{exc.problem} (operation {safe_label(label)})"
            ) from None
    raise AssertionError("unreachable: depth 0 always returns or raises")  # pragma: no cover
