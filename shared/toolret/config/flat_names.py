"""The flat names of RetrievalConfig before its settings were grouped (toolret 0.1, issue 44).

``RetrievalConfig(lexical_weight=0.35)``, ``config.with_(auto_ratio=None)`` and a config dumped
before the grouping name settings that now live in a group (``fusion.lexical_weight``,
``auto_k.ratio``). They are routed to their group here, in one table, so that such code keeps
working and nothing is silently dropped; reading them back (``config.lexical_weight``) is not
supported: the attribute is ``config.fusion.lexical_weight``. (A knowledge base saves only its
preset's name, so no file on disk holds them.)

Five knobs were removed because nothing shipped used them (``bias``, ``whole_query_budget``,
``lexical_normalization``, ``lexical_floor``, and the ``normalization`` modes "bound" and "minmax";
the evaluation keeps those formulas for its records, ``toolret.eval.lodo``). A value that equals
the behaviour that remains is accepted and dropped (a config dumped before); any other is a
:class:`ConfigError` naming the knob.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolret.errors import ConfigError

__all__ = ["FLAT_NAMES", "REMOVED", "route_flat_names"]

#: flat name -> (group, name in the group)
FLAT_NAMES: dict[str, tuple[str, str]] = {
    **{
        name: ("fusion", name)
        for name in (
            "lexical_weight",
            "lexical_sd_floor",
            "evidence_sd_floor",
            "dense_sd_floor",
            "min_field_pool",
            "evidence_slope",
            "strength_slope",
            "strength_center",
            "hubness_weight",
            "cosine_weight",
            "name_match_boost",
            "exact_name_boost",
        )
    },
    **{name: ("planning", name) for name in ("n_variants", "prf_docs", "split_gate", "split_clear")},
    "rerank_mode": ("rerank", "mode"),
    "rerank_top_n": ("rerank", "top_n"),
    "rerank_weight": ("rerank", "weight"),
    "drop_irrelevant": ("rerank", "drop_irrelevant"),
    "reflect_rounds": ("reflection", "rounds"),
    "reflect_judge": ("reflection", "judge"),
    "coverage_threshold": ("reflection", "coverage_threshold"),
    "auto_margin": ("auto_k", "margin"),
    "auto_ratio": ("auto_k", "ratio"),
    "auto_max_k": ("auto_k", "max_k"),
    "auto_floor": ("auto_k", "floor"),
    "auto_subtask_margin": ("auto_k", "subtask_margin"),
    **{name: ("memory", name) for name in ("history_weight", "history_neighbors", "use_learned")},
}

#: removed knob -> the values that mean what remains (a saved knowledge base wrote them all)
REMOVED: dict[str, tuple[Any, ...]] = {
    "bias": (0, 0.0),
    "whole_query_budget": (True,),
    "normalization": ("zscore",),
    "lexical_normalization": ("bound", "max"),  # read only by the removed "bound" normalisation
    "lexical_floor": (),  # read only by the removed "minmax" normalisation: any value
}


def route_flat_names(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` with every flat name moved into its group, and removed knobs checked and dropped.

    A group given both as a mapping and through flat names is merged (the flat name wins, as the
    later, more specific setting); ``fusion="learned"`` is ``fusion={"method": "learned"}``.

    >>> route_flat_names({"lexical_weight": 0.35, "auto_ratio": None, "fusion": "learned"})
    {'fusion': {'method': 'learned', 'lexical_weight': 0.35}, 'auto_k': {'ratio': None}}
    """
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key in REMOVED:
            allowed = REMOVED[key]
            if allowed and value not in allowed:
                raise ConfigError(
                    f"RetrievalConfig.{key} was removed (nothing shipped used it); only {allowed[0]!r}, what "
                    f"remains, is accepted, not {value!r}"
                )
            continue
        if key == "fusion" and isinstance(value, str):
            value = {"method": value}
        if key in FLAT_NAMES:
            continue
        out[key] = dict(value) if isinstance(value, Mapping) else value
    for key, value in data.items():
        if key in FLAT_NAMES:
            group, name = FLAT_NAMES[key]
            current = out.get(group, {})
            if not isinstance(current, Mapping):  # a group given as a model object
                current = current.model_dump()
            out[group] = {**current, name: value}
    return out
