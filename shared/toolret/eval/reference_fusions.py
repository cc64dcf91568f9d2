"""The two fusions every default is measured against (issue 43's two-sided rule, docs/method.md §4b).

* ``fusion-ec3e34e``: the hand-set formula as it shipped when issue 43 was filed (issue 35's
  cosine anchor, lexical_sd_floor .08, hubness -.2, parameters weight .1) — better on requests in
  the user's own words;
* ``fusion-eefafaa``: the formula before issues 34-35 (lexical_weight .35, lexical_sd_floor .02,
  hubness -.4, parameters weight .25, no anchor) — better on requests in the registry's words.

Both read the whole request in every field, as they did (``intent_without_arguments`` off).
``toolret bench`` scores both beside the presets; ``fast`` and ``balanced`` must reach the better of
the two at R@5 minus .01 on every dev set and on the union (:func:`toolret.eval.union.guard_rows`).

Example:
    >>> reference_config("fusion-eefafaa").fusion.lexical_sd_floor
    0.02
"""

from __future__ import annotations

from typing import Any

from toolret.config import RetrievalConfig
from toolret.errors import ConfigError

__all__ = ["REFERENCE_FUSIONS", "reference_config"]

#: Label -> the fast preset's overrides that give that fusion.
REFERENCE_FUSIONS: dict[str, dict[str, Any]] = {
    "fusion-ec3e34e": {
        "fusion": {
            "method": "heuristic",
            "lexical_weight": 0.29,
            "lexical_sd_floor": 0.08,
            "cosine_weight": 2.5,
            "strength_slope": 0.0,
        },
        "intent_without_arguments": False,
    },
    "fusion-eefafaa": {
        "fusion": {
            "method": "heuristic",
            "lexical_weight": 0.35,
            "lexical_sd_floor": 0.02,
            "evidence_sd_floor": 0.02,
            "hubness_weight": -0.4,
            "cosine_weight": 0.0,
            "strength_slope": 0.0,
        },
        "intent_without_arguments": False,
        "field_weights": {"parameters": 0.25},
    },
}


def reference_config(label: str) -> RetrievalConfig:
    """The fast preset with ``label``'s fusion (a key of :data:`REFERENCE_FUSIONS`)."""
    if label not in REFERENCE_FUSIONS:
        raise ConfigError(f"unknown reference fusion {label!r}; choose one of {', '.join(REFERENCE_FUSIONS)}")
    return RetrievalConfig.preset("fast").with_(**REFERENCE_FUSIONS[label])
