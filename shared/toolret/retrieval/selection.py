"""Choosing a precise tool set instead of a fixed k (post-retrieval).

An agent handed five tools when it needs two pays for three definitions and risks calling
the wrong one. ``k="auto"`` keeps the tools that score close to the best one: MFTR scores
share one scale across queries (field scores lie in [0, 1]), so a fixed margin below the top
score is a calibrated threshold. With sub-tasks, each sub-task's tools are cut on their own,
so every part of a request keeps at least its best tool -- unless that best tool scores far
below the request's best (``subtask_margin``): the offline planner also splits single-need
requests ("I'm moving to Japan. Can you help me out?"), and such fragments match nothing well.

Example:
    >>> auto_cut([0.62, 0.60, 0.41, 0.40], margin=0.08, max_k=5)
    2
"""

from __future__ import annotations

from collections.abc import Sequence

from toolret.results import ScoredTool

__all__ = ["auto_cut", "select_auto"]


def auto_cut(scores: Sequence[float], *, margin: float, max_k: int, min_k: int = 1) -> int:
    """How many of the (descending) ``scores`` lie within ``margin`` of the best, in [min_k, max_k]."""
    if not scores:
        return 0
    top = scores[0]
    n = sum(1 for s in scores[:max_k] if s >= top - margin)
    return max(min(min_k, len(scores)), min(n, max_k))


def select_auto(
    tools: Sequence[ScoredTool], *, margin: float, max_k: int, subtask_margin: float | None = None
) -> list[ScoredTool]:
    """Cut a ranked list per group of sub-task, keeping order.

    Each sub-task keeps its best tool and those within ``margin`` of it; tools chosen for the
    request as a whole (``subtask=None``) form a group of their own. Measured on toole_multi
    (balanced): dropping that whole-request group unless within margin of the overall best
    lowered TRACC from 0.369 to 0.357, so it stays.

    With ``subtask_margin``, a sub-task whose best tool scores more than that below the best
    tool of the request is left out (a fragment no tool answers well). Measured (balanced,
    500-query samples) at 0.16 = 2 x the default margin: TRACC toole_single 0.354 -> 0.418,
    toole_multi 0.351 -> 0.368, set recall 0.660 -> 0.656 and 0.663 -> 0.636; at 0.08 TRACC
    rose further (0.439 / 0.372) but toole_multi's set recall fell to 0.584.
    """
    groups: dict[str | None, list[ScoredTool]] = {}
    for tool in tools:
        groups.setdefault(tool.subtask, []).append(tool)
    best = max((t.score for t in tools), default=0.0)
    keep: set[str] = set()
    for members in groups.values():
        ordered = sorted(members, key=lambda t: -t.score)
        n = auto_cut([t.score for t in ordered], margin=margin, max_k=max_k)
        far_below = subtask_margin is not None and ordered[0].score < best - subtask_margin
        if members[0].subtask is not None and far_below:
            continue
        keep.update(t.id for t in ordered[:n])
    return [t for t in tools if t.id in keep][:max_k]
