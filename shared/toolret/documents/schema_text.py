"""Readable text from a JSON (schema) response description.

API catalogues document a tool's output as a JSON schema. Indexed verbatim, its braces,
``"type"`` keys and ``x-`` extensions swamp both BM25 and the embedding model; what a
request can match is the names and descriptions of the fields the tool returns. This turns
the schema into that, e.g. ``results (array): title, release date, vote average``.

Example:
    >>> readable_response('{"type": "object", "properties": {"release_date": {"type": "string"},'
    ...                   ' "cast": {"type": "array", "items": {"properties": {"name": {}}}}}}')
    'Returns: release date (string); cast (array): name'
"""

from __future__ import annotations

import json
from typing import Any

from toolret.documents.text import humanize_name

__all__ = ["readable_response"]

_MAX_NAMES = 80
_MAX_CHARS = 2_000
_MAX_DEPTH = 4


def readable_response(text: str) -> str:
    """``text`` unchanged unless it is a JSON object; then its field names and descriptions."""
    stripped = text.strip()
    if not stripped.startswith("{"):
        return text
    try:
        data = json.loads(stripped)
    except (json.JSONDecodeError, RecursionError):
        return text
    if not isinstance(data, dict):
        return text
    descriptions: list[str] = []
    parts: list[str] = []
    seen: set[str] = set()
    _walk(data, 0, descriptions, parts, seen)
    out = " ".join(d for d in descriptions if d)
    if parts:
        out = (out + " " if out else "") + "Returns: " + "; ".join(parts)
    return out[:_MAX_CHARS] if out else text[:_MAX_CHARS]


def _schema_type(node: dict[str, Any]) -> str:
    kind = node.get("type")
    if isinstance(kind, list):
        return "|".join(str(k) for k in kind)
    return str(kind) if isinstance(kind, str) else ""


def _children(node: dict[str, Any]) -> dict[str, Any]:
    """The properties of an object schema, looking through items/allOf/oneOf/content wrappers."""
    props = node.get("properties")
    if isinstance(props, dict):
        return props
    for key in ("items", "schema", "additionalProperties"):
        inner = node.get(key)
        if isinstance(inner, dict):
            found = _children(inner)
            if found:
                return found
    for key in ("allOf", "oneOf", "anyOf"):
        merged: dict[str, Any] = {}
        options = node.get(key)
        for option in options if isinstance(options, list) else []:
            if isinstance(option, dict):
                merged.update(_children(option))
        if merged:
            return merged
    content = node.get("content")
    if isinstance(content, dict):
        for media in content.values():
            if isinstance(media, dict):
                found = _children(media)
                if found:
                    return found
    return {}


def _walk(node: dict[str, Any], depth: int, descriptions: list[str], parts: list[str], seen: set[str]) -> None:
    if depth == 0:
        desc = node.get("description")
        if isinstance(desc, str) and desc.strip():
            descriptions.append(desc.strip())
    if depth >= _MAX_DEPTH or len(seen) >= _MAX_NAMES:
        return
    for name, child in _children(node).items():
        if len(seen) >= _MAX_NAMES:
            return
        words = humanize_name(str(name))
        if not words or words in seen:
            continue
        seen.add(words)
        child = child if isinstance(child, dict) else {}
        kind = _schema_type(child)
        label = f"{words} ({kind})" if kind else words
        nested = _children(child)
        if nested and depth + 1 < _MAX_DEPTH:
            names = [humanize_name(str(n)) for n in nested][:15]
            label += ": " + ", ".join(n for n in names if n)
            for n in names:
                seen.add(n)
        parts.append(label)
