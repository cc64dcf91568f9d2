"""Where tools come from: OpenAI/JSON-schema functions, Python callables, OpenAPI 3, MCP servers, the stdlib registry.

Every name below is importable from this package (``from toolret.sources import ...``); each
module is loaded on first use (:mod:`toolret._exports`).
"""

from __future__ import annotations

from toolret._exports import lazy_exports

_EXPORTS = {
    "FORMATS": "tool_files",
    "HTTP_METHODS": "openapi",
    "MAX_K": "mcp_proxy",
    "MAX_SCHEMA_NESTING": "ingest",
    "MCPHub": "mcp",
    "MCPServerSpec": "mcp",
    "MCPSource": "mcp",
    "SEPARATOR": "mcp",
    "STDLIB_MODULES": "stdlib_registry",
    "build_proxy": "mcp_proxy",
    "from_callable": "callables",
    "from_mcp_tool": "mcp",
    "from_module": "callables",
    "from_openai": "ingest",
    "from_openapi": "openapi",
    "from_record": "ingest",
    "from_tools_list": "mcp",
    "load_jsonl": "ingest",
    "load_openapi": "openapi",
    "load_tool_file": "tool_files",
    "params_from_schema": "ingest",
    "resolve_refs": "openapi",
    "short_description": "mcp_proxy",
    "split_tool_id": "mcp",
    "stdlib_tools": "stdlib_registry",
    "to_tool_doc": "ingest",
    "tool_id": "mcp",
    "tool_schema": "mcp_proxy",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
