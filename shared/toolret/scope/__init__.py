"""Restriction: which tools a search may return. ``where=`` filters and the ``scoped`` context
(``tool_scope``), and the ids a scope allows in a snapshot (``allowed``). Inside the engine the
scope is passed explicitly; the context variable is the adapters' convenience at the edge.

Every name below is importable from this package (``from toolret.scope import ...``); each
module is loaded on first use (:mod:`toolret._exports`).
"""

from __future__ import annotations

from toolret._exports import lazy_exports

_EXPORTS = {
    "ToolScope": "tool_scope",
    "Where": "tool_scope",
    "current_scope": "tool_scope",
    "scoped": "tool_scope",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
