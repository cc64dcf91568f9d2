"""Input guards: the limits toolret enforces and the last check every tool document passes.

A tool selector sits on an agent's hot path, so hostile or broken input must end in a clear
error, never in a crash deep inside a model, a hang, or memory exhaustion. The defaults below
are documented in ``docs/security.md``; the knowledge-base limits are
:class:`~toolret.config.RetrievalConfig` fields (``max_tools``, ``max_doc_chars``,
``max_query_chars``) so they are changed like any other setting.

* :func:`plain_json` turns a schema or metadata value into the plain JSON the knowledge base
  stores: NaN and infinities become ``null`` (JSON has neither), tuples lists, keys strings;
  Python objects, cycles and text that is not valid Unicode are refused by path.
* :func:`checked_doc` gives a document in exactly the form it reloads from storage, or an
  :class:`~toolret.errors.InvalidToolError` naming the field that cannot be stored, and
  enforces the document size limit.
* :func:`clean_query` makes a query safe to embed (a lone surrogate would crash the tokenizer).

Example:
    >>> plain_json({"default": float("nan"), 1: (2, 3)}, tool="t", field="parameters")
    {'default': None, '1': [2, 3]}
    >>> checked_doc(ToolDoc(name="t", description="bad \\ud800 text"))
    Traceback (most recent call last):
    ...
    toolret.errors.InvalidToolError: tool 't', field 'description': text is not valid Unicode (lone surrogate '\\ud800' at position 4); decode the source as UTF-8, e.g. bytes.decode('utf-8', errors='replace')
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from toolret.documents.docstrings import MAX_DOCSTRING_CHARS
from toolret.documents.tool_doc import MAX_FIELD_CHARS, ToolDoc, cut_long_texts
from toolret.errors import InvalidToolError

__all__ = [
    "DEFAULT_MAX_DOC_CHARS",
    "DEFAULT_MAX_TOOLS",
    "MAX_DOCSTRING_CHARS",
    "MAX_JSON_NODES",
    "MAX_SCHEMA_NESTING",
    "check_doc_size",
    "check_shape",
    "checked_doc",
    "clean_query",
    "plain_json",
    "plain_metadata",
    "safe_label",
]

#: Most tools one knowledge base holds (``RetrievalConfig.max_tools``): far above the
#: hundreds of thousands toolret is built for, low enough that a runaway generator stops
#: with an error before the embedding matrices (about 6 KB a tool) exhaust memory.
DEFAULT_MAX_TOOLS = 1_000_000
#: Largest tool document, as the characters of its stored JSON (``RetrievalConfig.max_doc_chars``).
DEFAULT_MAX_DOC_CHARS = 500_000
#: Deepest JSON nesting (objects and arrays; about half as many nested schemas) accepted in a
#: schema or metadata value. Deeper input is a generator bug or a cycle, not documentation.
MAX_SCHEMA_NESTING = 64
#: Most objects, arrays and values in one schema or metadata value. Bounds the work on shared
#: sub-objects (YAML anchors make a few kilobytes of text expand to billions of nodes).
MAX_JSON_NODES = 100_000

_SURROGATE = re.compile(r"[\ud800-\udfff]")


def safe_label(text: str, limit: int = 200) -> str:
    """``text`` printable in any UTF-8 log (lone surrogates escaped), cut to ``limit`` characters."""
    return text[:limit].encode("utf-8", "backslashreplace").decode("utf-8")


def _surrogate_problem(text: str) -> str:
    match = _SURROGATE.search(text)
    assert match is not None
    return (
        f"text is not valid Unicode (lone surrogate {match.group()!r} at position {match.start()}); "
        "decode the source as UTF-8, e.g. bytes.decode('utf-8', errors='replace')"
    )


def _bad_text_path(value: Any, path: str) -> tuple[str, str] | None:
    """The path and text of the first string (key or value) in ``value`` that is not valid Unicode."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        node, where = stack.pop()
        if isinstance(node, str):
            if _SURROGATE.search(node):
                return where, node
        elif isinstance(node, dict):
            for key, item in node.items():
                if isinstance(key, str) and _SURROGATE.search(key):
                    return where, key
                stack.append((item, f"{where}.{key}" if where else str(key)))
        elif isinstance(node, (list, tuple)):
            stack.extend((item, f"{where}[{i}]") for i, item in enumerate(node))
    return None


def check_shape(value: Any, *, tool: str, field: str) -> None:
    """Refuse a value nested deeper than :data:`MAX_SCHEMA_NESTING` (cycles included) or with
    more than :data:`MAX_JSON_NODES` nodes, naming the path where the limit was crossed."""
    stack: list[tuple[Any, int, str]] = [(value, 1, field)]
    nodes = 0
    while stack:
        node, depth, path = stack.pop()
        nodes += 1
        if nodes > MAX_JSON_NODES:
            raise InvalidToolError(
                safe_label(tool),
                path or "schema",
                f"more than {MAX_JSON_NODES} JSON values (shared or repeated sub-objects?)",
            )
        if not isinstance(node, (dict, list, tuple)):
            continue
        if depth > MAX_SCHEMA_NESTING:
            raise InvalidToolError(
                safe_label(tool), path or "schema", f"nested deeper than {MAX_SCHEMA_NESTING} levels (a cycle?)"
            )
        if isinstance(node, dict):
            stack.extend((item, depth + 1, f"{path}.{key}" if path else str(key)) for key, item in node.items())
        else:
            stack.extend((item, depth + 1, f"{path}[{i}]") for i, item in enumerate(node))


def plain_json(value: Any, *, tool: str, field: str) -> Any:
    """``value`` as plain, storable JSON; :class:`InvalidToolError` naming ``field`` when it cannot be.

    Shape limits first (:func:`check_shape`), so cycles and alias bombs fail fast.
    """
    check_shape(value, tool=tool, field=field)
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=True)
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidToolError(safe_label(tool), field, f"not JSON-serializable: {exc}") from None
    if _SURROGATE.search(text):
        where, bad = _bad_text_path(value, field) or (field, text)
        raise InvalidToolError(safe_label(tool), where, _surrogate_problem(bad))
    return json.loads(text, parse_constant=lambda _constant: None)


def plain_metadata(
    base: dict[str, Any], tags: Iterable[Any] | None, extra: Mapping[Any, Any] | None, *, tool: str
) -> dict[str, Any]:
    """What a scope (``where=``) reads of a framework tool: ``base`` (what the adapter records), the tool's
    ``tags`` as strings, and the plain-JSON entries of its own ``extra`` metadata that ``base`` does not set
    (MCP tools loaded by a framework carry their ``annotations`` there). An entry that is not plain JSON is
    left out with no error: it was never meant for toolret.

    >>> plain_metadata({"framework": "demo"}, ["fs"], {"annotations": {"readOnlyHint": True}, "client": object()}, tool="t")
    {'framework': 'demo', 'tags': ['fs'], 'annotations': {'readOnlyHint': True}}
    """
    meta = dict(base)
    if tags:
        meta["tags"] = [str(t) for t in tags]
    for key, value in (extra or {}).items():
        if isinstance(key, str) and key not in meta:
            try:
                meta[key] = plain_json(value, tool=tool, field=f"metadata.{key}")
            except InvalidToolError:
                continue
    return meta


def checked_doc(doc: ToolDoc, *, max_doc_chars: int | None = None) -> ToolDoc:
    """``doc`` exactly as the knowledge base will store and reload it.

    A document that does not survive the JSON round trip unchanged (NaN defaults, integer
    keys…) is replaced by its reloaded form, so the indexed and the stored tool are one and the
    same. A parameter text over ``MAX_FIELD_CHARS`` is cut as a description is
    (:func:`~toolret.documents.tool_doc.cut_long_texts`). Text that is not valid Unicode, or a
    document over ``max_doc_chars`` characters of JSON, raises :class:`InvalidToolError` naming the tool and the field.
    """
    try:
        dumped = doc.model_dump_json()
    except PydanticSerializationError:
        where, bad = _bad_text_path(doc.model_dump(), "") or ("tool", "")
        raise InvalidToolError(safe_label(doc.name), where or "tool", _surrogate_problem(bad)) from None
    if len(dumped) > MAX_FIELD_CHARS:  # only then can one text be over the limit
        cut = cut_long_texts(doc)
        if cut is not doc:
            doc, dumped = cut, cut.model_dump_json()
    if max_doc_chars is not None and len(dumped) > max_doc_chars:
        _too_big(doc, len(dumped), max_doc_chars)
    try:
        again = ToolDoc.model_validate_json(dumped)
    except (InvalidToolError, ValidationError) as exc:  # pragma: no cover - a dump always reloads
        raise InvalidToolError(safe_label(doc.name), "tool", f"does not reload from its stored form: {exc}") from None
    return doc if again == doc else again


def _too_big(doc: ToolDoc, size: int, limit: int) -> None:
    sizes = {
        key: len(json.dumps(value, ensure_ascii=False, default=str))
        for key, value in doc.model_dump(mode="json").items()
    }
    biggest = max(sizes, key=sizes.__getitem__)
    raise InvalidToolError(
        safe_label(doc.name),
        biggest,
        f"the tool document is {size} characters of JSON (limit {limit}, RetrievalConfig.max_doc_chars); "
        f"its largest field {biggest!r} has {sizes[biggest]}: shorten it or raise the limit",
    )


def check_doc_size(doc: ToolDoc, max_doc_chars: int) -> ToolDoc:
    """``doc`` unchanged, or :class:`InvalidToolError` naming its largest field when its stored
    JSON is over ``max_doc_chars`` characters (``doc`` must already be a :func:`checked_doc`)."""
    size = len(doc.model_dump_json())
    if size > max_doc_chars:
        _too_big(doc, size, max_doc_chars)
    return doc


def clean_query(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD, so every tokenizer and model accepts it.

    >>> clean_query("weather \\ud800 in Paris")
    'weather \\ufffd in Paris'
    """
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text
