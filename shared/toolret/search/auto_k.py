"""Choosing a precise tool set instead of a fixed k (post-retrieval).

An agent handed five tools when it needs two pays for three definitions and risks calling
the wrong one. ``k="auto"`` keeps the tools that score close to the best one. Scores are
z-scores over the query's candidate pool, so the best tool's score says how far it stands out;
a tool is kept when it stands out at least ``1 - ratio`` as far as the best (``ratio`` 0.3: 70 %)
and lies within ``margin`` of it. The ratio adapts to the query: a clear winner (3 sd above the
pool) keeps only rivals that are clear too, a flat pool keeps its near-ties. What is compared is
each tool's evidence, ``score - anchor - strength_shift - floor_shift``: the embedder's anchor
(docs/method.md section 4a) is in cosine units, not z-units, the strength term changes the balance
of words and meaning per request, and the ranking's lower BM25 floor lets many thinly spread shared
words count, so all three order the tools but do not decide how many stand out.

With sub-tasks (``balanced``'s plans), the tools chosen for the request as a whole form one group
cut that way, and each sub-task adds its best tool -- one tool per part of the request, the count
the planner expects -- unless that best tool scores more than ``subtask_margin`` below the
request's best (the offline planner also splits single-need requests, "I'm moving to Japan. Can
you help me out?", and such fragments match nothing well).

Example:
    >>> auto_cut([3.0, 2.4, 1.9, 1.8], margin=1.0, ratio=0.3, max_k=5)
    2
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from toolret.results import ScoredTool

__all__ = ["NOT_EVIDENCE", "auto_cut", "field_evidence", "select_auto"]

#: The parts of a score that are not field evidence in z-units: the embedder's anchor (cosine units)
#: and what the request's strength term moved (docs/method.md section 4a). They order the tools;
#: the cut, ``split_clear`` and a reranker that rescales or reorders scores treat them alike.
NOT_EVIDENCE = ("anchor", "strength_shift", "floor_shift")


class _Scored(Protocol):
    @property
    def score(self) -> float: ...
    @property
    def anchor(self) -> float: ...
    @property
    def strength_shift(self) -> float: ...
    @property
    def floor_shift(self) -> float: ...


def auto_cut(scores: Sequence[float], *, margin: float, max_k: int, min_k: int = 1, ratio: float | None = None) -> int:
    """How many of the (descending) ``scores`` to keep, in [min_k, max_k].

    A score is kept when it lies within ``margin`` of the best and, with ``ratio``, is at least
    ``(1 - ratio)`` times the best (a best score at or below 0 keeps only itself and its ties).
    """
    if not scores:
        return 0
    floor = _floor(scores[0], margin=margin, ratio=ratio)
    n = sum(1 for s in scores[:max_k] if s >= floor)
    return max(min(min_k, len(scores)), min(n, max_k))


def _floor(top: float, *, margin: float, ratio: float | None) -> float:
    """The least score kept: within ``margin`` of ``top`` and, with ``ratio``, at least ``(1 - ratio)``
    times it (a ``top`` at or below 0 keeps only its ties)."""
    floor = top - margin
    if ratio is not None:
        floor = max(floor, top * (1.0 - ratio) if top > 0 else top)
    return floor


def select_auto(
    tools: Sequence[ScoredTool],
    *,
    margin: float,
    max_k: int,
    subtask_margin: float | None = None,
    ratio: float | None = None,
) -> list[ScoredTool]:
    """Cut a ranked list: the whole request's group by :func:`auto_cut`, each sub-task its best tool.

    Tools chosen for the request as a whole (``subtask=None``) are cut by ``margin`` and
    ``ratio``; each sub-task contributes its best tool, unless (``subtask_margin``) it scores more
    than that below the request's best tool. A list without a whole-request group (a plan of
    sub-tasks only) cuts its best sub-task's group like the whole request's. Order is kept.

    Measured (balanced, 500-query samples; TRACC / recall of the set), the previous rule (every
    group within 1.0 of its best, sub-task gate 2.0) against this one (ratio 0.3, a sub-task's
    best only, gate 1.0), both chosen leaving one dev set out: toole_single 0.461 / 0.696 ->
    0.477 / 0.632, toole_multi 0.369 / 0.625 -> 0.403 / 0.557, restbench_tmdb 0.256 / 0.441 ->
    0.259 / 0.375, restbench_spotify 0.414 / 0.596 -> 0.415 / 0.547, apibench 0.101 / 0.280 ->
    0.113 / 0.264 (docs/decisions/2026-11-23-auto-k-ratio.md).
    """
    if not tools:
        return []
    groups: dict[str | None, list[ScoredTool]] = {}
    for tool in tools:
        groups.setdefault(tool.subtask, []).append(tool)
    best = max(field_evidence(t) for t in tools)
    spread = None if None in groups else max(groups, key=lambda g: max(t.score for t in groups[g]))
    keep: set[str] = set()
    for group, members in groups.items():
        ordered = sorted(members, key=lambda t: -t.score)[:max_k]
        if group is None or group == spread:
            keep.update(t.id for t in _cut_on_evidence(ordered, margin=margin, ratio=ratio))
        elif subtask_margin is None or field_evidence(ordered[0]) >= best - subtask_margin:
            keep.add(ordered[0].id)
    return [t for t in tools if t.id in keep][:max_k]


def field_evidence(tool: _Scored) -> float:
    """A scored tool's (or candidate's) field evidence in z-units: its score without the parts in
    :data:`NOT_EVIDENCE`, the scale ``ratio``, ``margin`` and ``split_clear`` speak of."""
    return tool.score - sum(getattr(tool, part) for part in NOT_EVIDENCE)


def _cut_on_evidence(ordered: Sequence[ScoredTool], *, margin: float, ratio: float | None) -> list[ScoredTool]:
    """The first tool and, in rank order, every other whose evidence passes :func:`auto_cut`'s test
    against the best evidence among them. Without anchors (evidence = score, descending) this is
    exactly :func:`auto_cut`'s prefix; with them, the anchor orders the tools and the evidence
    decides how many stand out, so adding the cosine term does not change what "stands out" means."""
    evidence = [field_evidence(t) for t in ordered]
    floor = _floor(max(evidence), margin=margin, ratio=ratio)
    return [t for i, t in enumerate(ordered) if i == 0 or evidence[i] >= floor]
