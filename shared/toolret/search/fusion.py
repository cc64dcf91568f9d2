"""Post-retrieval fusion: many ranked lists (query variants, sub-tasks) into one.

* :func:`reciprocal_rank_fusion` merges lists that answer the same need (variants of one
  sub-task): score(t) = sum_lists w / (k_rrf + rank), so agreement across lists wins.
* :func:`budgeted_merge` merges lists that answer different needs (sub-tasks): each sub-task
  gets a share of the k slots (Toolshed's sub-top-k, shares summing to k), so a request in
  three parts gets tools for all three instead of k tools for the most lexical part.

Example:
    >>> reciprocal_rank_fusion([["a", "b"], ["b", "c"]])[0][0]
    'b'
    >>> budgeted_merge([["w1", "w2", "w3"], ["n1", "n2"]], k=3, head=["w1", "n1", "w2"])
    [('w1', 0), ('n1', 1), ('w2', 0)]
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["budgeted_merge", "reciprocal_rank_fusion", "subtask_budgets"]


def reciprocal_rank_fusion(
    lists: Sequence[Sequence[str]], *, k_rrf: int = 60, weights: Sequence[float] | None = None
) -> list[tuple[str, float]]:
    """RRF over ranked id lists, best first; ties keep first-seen order."""
    scores: dict[str, float] = {}
    for position, ranked in enumerate(lists):
        w = 1.0 if weights is None else weights[position]
        for rank, tool_id in enumerate(ranked, 1):
            scores[tool_id] = scores.get(tool_id, 0.0) + w / (k_rrf + rank)
    order = {tool_id: i for i, tool_id in enumerate(scores)}
    return sorted(scores.items(), key=lambda item: (-item[1], order[item[0]]))


def subtask_budgets(k: int, n: int) -> list[int]:
    """Split k slots over n sub-tasks as evenly as possible, earlier sub-tasks first."""
    if n <= 0:
        return []
    base, extra = divmod(k, n)
    return [base + (1 if i < extra else 0) for i in range(n)]


def budgeted_merge(
    subtask_lists: Sequence[Sequence[str]], *, k: int, head: Sequence[str] = ()
) -> list[tuple[str, int | None]]:
    """Pick k distinct ids: each sub-task's top share in round-robin order, then fill from ``head``.

    Returns ``(id, sub-task index)`` pairs; the index is None for ids that came from ``head``
    (the fused ranking of all lists) after every sub-task had its share.

    A list whose best id an earlier list already picked is served by that pick: it counts as its
    first share, and its second best waits for the next round, so every list's best comes before
    any list's second. "Convert 100 dollars, then the weather in Oslo" (the whole request's list
    and the currency list both led by the currency tool) keeps the weather tool second, where a
    top-2 cut finds it, not the currency list's second best.
    """
    budgets = subtask_budgets(k, len(subtask_lists))
    chosen: list[tuple[str, int | None]] = []
    taken: set[str] = set()
    cursors = [0] * len(subtask_lists)
    used = [0] * len(subtask_lists)
    progress = True
    while progress and len(chosen) < k:
        progress = False
        for i, ranked in enumerate(subtask_lists):
            if used[i] >= budgets[i] or len(chosen) >= k:
                continue
            if used[i] == 0 and ranked and ranked[0] in taken:
                used[i] = 1  # served by an earlier list's pick of its best
                progress = True
                continue
            while cursors[i] < len(ranked) and ranked[cursors[i]] in taken:
                cursors[i] += 1
            if cursors[i] < len(ranked):
                tool_id = ranked[cursors[i]]
                chosen.append((tool_id, i))
                taken.add(tool_id)
                used[i] += 1
                progress = True
    for tool_id in head:
        if len(chosen) >= k:
            break
        if tool_id not in taken:
            chosen.append((tool_id, None))
            taken.add(tool_id)
    return chosen
