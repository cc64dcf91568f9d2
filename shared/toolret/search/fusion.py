"""Post-retrieval fusion: many ranked lists (query variants, sub-tasks) into one.

* :func:`fuse_rankings` is the fuse stage's work: RRF over each sub-task's variants, the split
  gate, then per-sub-task budgets over the fused lists; :func:`scored_tool` turns a scored
  candidate into the result's entry.

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

from toolret.config import RetrievalConfig
from toolret.index.snapshot import Snapshot
from toolret.results import ScoredTool
from toolret.scoring.candidates import Ranking
from toolret.scoring.ranked_candidates import CandidateScore
from toolret.search.auto_k import field_evidence
from toolret.search.planning import QueryPlan, RankingJob, asks_for_something

__all__ = ["budgeted_merge", "fuse_rankings", "reciprocal_rank_fusion", "scored_tool", "subtask_budgets"]


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


def scored_tool(
    snap: Snapshot, cand: CandidateScore, subtask: str | None = None, *, serves: str | None = None
) -> ScoredTool:
    """The result entry of one scored candidate (``serves``: the consumer a dependency producer was added for)."""
    doc = snap.docs[cand.index]
    return ScoredTool(
        id=doc.id,
        name=doc.name,
        score=round(cand.score, 6),
        field_scores=cand.field_scores,
        penalty=cand.penalty,
        subtask=subtask,
        similarity=round(cand.cosine, 6),
        anchor=round(cand.anchor, 6),
        strength_shift=round(cand.strength_shift, 6),
        floor_shift=round(cand.floor_shift, 6),
        serves=serves,
    )


def fuse_rankings(
    snap: Snapshot,
    plan: QueryPlan,
    jobs: list[RankingJob],
    rankings: list[Ranking],
    k: int,
    config: RetrievalConfig,
) -> tuple[list[ScoredTool], dict[int, list[ScoredTool]]]:
    """RRF over each sub-task's variants, then per-sub-task budgets over the fused lists.

    Returns the merged list and each sub-task's own fused list (reflection re-reads those).
    """
    depth = max(k, 20)
    groups: dict[int | None, list[list[CandidateScore]]] = {}
    for job, ranking in zip(jobs, rankings):
        groups.setdefault(job.subtask, []).append(ranking.candidates[:depth])
    if config.planning.split_gate is not None and plan.path != "llm" and None in groups:
        whole = max((c.cosine for c in groups[None][0][:1]), default=0.0)
        kept = [
            g
            for g, ranked in groups.items()
            if g is not None
            and ranked[0]
            and asks_for_something(plan.subtasks[g].text)
            and (
                ranked[0][0].cosine >= whole - config.planning.split_gate
                or field_evidence(ranked[0][0]) >= config.planning.split_clear
            )
        ]
        if len(kept) < 2:  # not a multi-part request after all: the whole request's own ranking
            return [scored_tool(snap, c) for c in groups[None][0][:k]], {}
        groups = {g: groups[g] for g in [None, *kept]}
    order: list[int | None] = [None, *sorted(g for g in groups if g is not None)]
    lists: list[list[str]] = []
    best: list[dict[int, CandidateScore]] = []
    for group in order:
        ranked_lists = groups[group]
        fused = reciprocal_rank_fusion([[snap.docs[c.index].id for c in r] for r in ranked_lists])
        lists.append([tool_id for tool_id, _ in fused][:depth])
        top: dict[int, CandidateScore] = {}
        for ranked in ranked_lists:
            for cand in ranked:
                if cand.index not in top or cand.score > top[cand.index].score:
                    top[cand.index] = cand
        best.append(top)
    own = {
        group: [scored_tool(snap, best[n][snap.index_of[t]]) for t in lists[n]]
        for n, group in enumerate(order)
        if group is not None
    }
    head = [tool_id for tool_id, _ in reciprocal_rank_fusion(lists)]
    merge_order = list(range(len(order)))  # the whole request has a share of the k slots too
    if plan.path == "llm":
        # An LLM's sub-tasks are the request's stated needs: each has its first tool before the whole
        # request has its share, so a top k no larger than the sub-tasks still covers every one.
        merge_order = merge_order[1:] + merge_order[:1]
    picked = [
        (tool_id, None if source is None else merge_order[source])
        for tool_id, source in budgeted_merge([lists[n] for n in merge_order], k=k, head=head)
    ]
    out: list[ScoredTool] = []
    for tool_id, source in picked:
        index = snap.index_of[tool_id]
        if source is None:
            cand = max((b[index] for b in best if index in b), key=lambda c: c.score)
            out.append(scored_tool(snap, cand))
            continue
        position = source
        group = order[position]
        subtask = plan.subtasks[group].text if group is not None else None
        out.append(scored_tool(snap, best[position][index], subtask))
    return out, own
