"""``allowed_ids``: a search restricted to some of the knowledge base's tools.

An agent that shares a knowledge base with others has only some of its tools. Searching
everything and dropping the others afterwards returns fewer than ``k`` of the agent's own tools
whenever others rank higher, and lets tools the agent cannot call decide ``k="auto"``'s cut.
Instead the search carries a boolean per tool (:attr:`SearchState.allowed
<toolret.search.state.SearchState.allowed>`): candidates per field are drawn from the
allowed tools only (:func:`toolret.scoring.candidates.rank_tools`,
:func:`toolret.index.dense.dense_search`), so every later stage sees nothing else.

Example:
    >>> from toolret import ToolDoc, ToolKnowledgeBase
    >>> kb = ToolKnowledgeBase()
    >>> kb.add([ToolDoc(name="get_weather", description="Weather for a city."),
    ...         ToolDoc(name="get_forecast", description="Weather forecast for a city.")])
    ['get_weather', 'get_forecast']
    >>> kb.search("weather in Oslo", k=2, allowed_ids=["get_forecast"]).ids
    ['get_forecast']
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from toolret.errors import ToolNotFoundError
from toolret.index.snapshot import Snapshot
from toolret.results import TraceStep

__all__ = ["allowed_mask", "allowed_trace"]


def allowed_mask(snap: Snapshot, ids: Collection[str]) -> np.ndarray:
    """A boolean per snapshot row, True for ``ids``; an id the snapshot lacks is an error naming it."""
    if isinstance(ids, str):
        ids = [ids]
    missing = sorted(i for i in ids if i not in snap.index_of)
    if missing:
        shown = ", ".join(repr(i) for i in missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise ToolNotFoundError(f"allowed_ids names tools the knowledge base does not hold: {shown}")
    mask = np.zeros(len(snap), dtype=bool)
    mask[[snap.index_of[i] for i in ids]] = True
    return mask


def allowed_trace(mask: np.ndarray | None) -> list[TraceStep]:
    """The trace step that says a search was restricted, and to how many tools (none when it was not)."""
    if mask is None:
        return []
    return [TraceStep(stage="allowed", path="offline", ms=0.0, note=f"{int(mask.sum())} of {len(mask)} tools allowed")]
