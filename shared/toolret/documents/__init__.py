"""Tool documents: the ToolDoc model, text normalisation, schema text, docstrings and input guards.

Every name below is importable from this package (``from toolret.documents import ...``); each
module is loaded on first use (:mod:`toolret._exports`).
"""

from __future__ import annotations

from toolret._exports import lazy_exports

_EXPORTS = {
    "DEFAULT_MAX_DOC_CHARS": "guards",
    "DEFAULT_MAX_TOOLS": "guards",
    "DependencyIndex": "identifiers",
    "ESTIMATE": "tokens",
    "EXPANSION_FIELDS": "tool_doc",
    "FIELDS": "tool_doc",
    "FieldName": "tool_doc",
    "INDEX_FIELDS": "tool_doc",
    "IdentifierNeed": "identifiers",
    "MAX_DOCSTRING_CHARS": "docstrings",
    "MAX_JSON_NODES": "guards",
    "MAX_SCHEMA_NESTING": "guards",
    "ParsedDocstring": "docstrings",
    "ToolDoc": "tool_doc",
    "ToolExpansion": "tool_doc",
    "TokenCounter": "tokens",
    "ToolParam": "tool_doc",
    "check_doc_size": "guards",
    "check_shape": "guards",
    "checked_doc": "guards",
    "clean_query": "guards",
    "docstring_summary": "docstrings",
    "doctest_snippets": "docstrings",
    "first_sentence": "text",
    "humanize_name": "text",
    "identifier_needs": "identifiers",
    "parse_docstring": "docstrings",
    "path_params": "identifiers",
    "plain_json": "guards",
    "readable_response": "schema_text",
    "safe_label": "guards",
    "split_identifier": "text",
    "stem_tokens": "text",
    "token_counter": "tokens",
    "tokenize": "text",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
