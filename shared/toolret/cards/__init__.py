"""Condensed tool cards: what the agent reads about a tool, in fewer tokens.

Every name below is importable from this package (``from toolret.cards import ...``); each
module is loaded on first use (:mod:`toolret._exports`).
"""

from __future__ import annotations

from toolret._exports import lazy_exports

_EXPORTS = {
    "CondensedCard": "card_type",
    "ExampleCall": "card_type",
    "LLMCardWriter": "card",
    "agent_description": "card",
    "card_problems": "card_type",
    "offline_card": "offline",
    "tokens": "card_type",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
