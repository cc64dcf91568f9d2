"""A pydantic model mirroring a ToolDoc's parameters: a tool known only as a schema, made callable.

A registry tool known only as data (an OpenAI tool dict, a benchmark record) has no function
and no argument class; a framework that wants one (LlamaIndex's ``fn_schema``) gets this model.
Each parameter keeps its model-facing name as the field's alias, its JSON type, default,
description and enum; a name that is no legal, unshadowed Python identifier gets a plain
attribute name (``param_0``) behind its alias.

Example:
    >>> from toolret.documents.tool_doc import ToolDoc, ToolParam
    >>> model = params_model(ToolDoc(name="get_weather", parameters=[ToolParam(name="city", type="string",
    ...                                                                     required=True)]))
    >>> model.model_json_schema()["required"], model(city="Oslo").city
    (['city'], 'Oslo')
"""

from __future__ import annotations

import keyword
from typing import Any

from pydantic import BaseModel, Field, create_model

from toolret.documents.tool_doc import ToolDoc

__all__ = ["params_model"]

_JSON_TO_PY: dict[str, Any] = {
    "string": str, "integer": int, "number": float, "boolean": bool, "array": list, "object": dict,
}  # fmt: skip


def _field_type(prop: dict[str, Any]) -> Any:
    kind = prop.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        kind = kinds[0] if len(kinds) == 1 else None
    return _JSON_TO_PY.get(kind, Any) if isinstance(kind, str) else Any


def _plain_identifier(name: str) -> bool:
    return (
        name.isidentifier()
        and not keyword.iskeyword(name)
        and not name.startswith("_")
        and not hasattr(BaseModel, name)
    )


def params_model(doc: ToolDoc) -> type[BaseModel]:
    """A pydantic model of ``doc``'s parameters (aliases are the parameter names)."""
    props = (doc.input_schema or {}).get("properties") or {}
    fields: dict[str, Any] = {}
    for index, param in enumerate(doc.parameters):
        prop = props.get(param.name) if isinstance(props.get(param.name), dict) else {}
        annotation = _field_type(prop) if prop else _JSON_TO_PY.get(param.type, Any)
        extra: dict[str, Any] | None = {"enum": param.enum} if param.enum else None
        default = ... if param.required else param.default
        # The model-facing name is the alias; the attribute must be a legal, unshadowed identifier.
        attr = param.name if _plain_identifier(param.name) else f"param_{index}"
        fields[attr] = (
            annotation,
            Field(default, alias=param.name, description=param.description or None, json_schema_extra=extra),
        )
    model_name = "".join(ch if ch.isalnum() else "_" for ch in doc.id)[:60] or "Params"
    return create_model(model_name, **fields)
