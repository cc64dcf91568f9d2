"""What the adapters share: one agent's tools over a knowledge base (``agent_tools``), its bound sets
and remembered tools (``working_set``), cache-stable tool lists (``stable_tools``), fixed tools and
the fallback (``fixed_tools``), a request's scope from an agent's run context (``request_scope``),
an adapter's selection options and trace record (``adapter_options``, ``selector_options``), what a
tool-search tool tells the model (``search_tool_text``) and condensed copies (``condensing``).

The search never imports this package; the adapters (``langchain_toolret``,
``llamaindex_toolret``) and the provider helpers do.

Every name below is importable from this package (``from toolret.agents import ...``); each
module is loaded on first use (:mod:`toolret._exports`).
"""

from __future__ import annotations

from toolret._exports import lazy_exports

_EXPORTS = {
    "AgentTools": "agent_tools",
    "CondensedCopies": "condensing",
    "RecentTools": "working_set",
    "Selection": "adapter_options",
    "StableTools": "stable_tools",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
