"""The tool-use memory: past bundles as a ranking signal (``past_use``), the recorded bundles and
fitted weights of a knowledge base (``usage_log``), and the fit itself (``learn``).

Every name below is importable from this package (``from toolret.memory import ...``); each
module is loaded on first use (:mod:`toolret._exports`).
"""

from __future__ import annotations

from toolret._exports import lazy_exports

_EXPORTS = {
    "Bundle": "past_use",
    "HistorySnapshot": "past_use",
    "UsageLog": "usage_log",
    "choose_l2": "learn",
    "collect_query_features": "learn",
    "fit_pairwise": "learn",
    "fit_weights": "learn",
    "pair_diffs": "learn",
    "recall_at": "learn",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
