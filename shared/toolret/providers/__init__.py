"""toolret as the search behind the platforms' own tool search: OpenAI's client-executed
``tool_search``, Anthropic's custom tool search (``tool_reference`` blocks), FastMCP's search
transforms. Each module builds the provider's wire items from a knowledge base's search; the
provider SDKs are optional (extras ``openai``, ``anthropic``, ``fastmcp``) and imported only by
the function that needs them.

Every name below is importable from this package (``from toolret.providers import ...``); each
module is loaded on first use (:mod:`toolret._exports`).
"""

from __future__ import annotations

from toolret._exports import lazy_exports

_EXPORTS = {
    "OpenAIToolSearch": "openai_tool_search",
    "TOOL_SEARCH_PARAMETERS": "openai_tool_search",
    "function_name": "wire_names",
    "loaded_tools": "openai_tool_search",
    "tool_search_output": "openai_tool_search",
    "AnthropicToolSearch": "anthropic_tool_search",
    "tool_reference_result": "anthropic_tool_search",
    "ToolretSearchTransform": "fastmcp_search",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
