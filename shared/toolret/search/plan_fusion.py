"""The planning side of a search: the plan, the rankings it asks for, and their fusion.

Kept apart from the stage functions (:mod:`toolret.search.stages`): :func:`plan_query` runs
the offline or LLM planner per ``config.planner``, :func:`plan_jobs` lists the rankings a plan
needs (the whole request, then each sub-task's variants), and :func:`fuse_rankings` merges them
(reciprocal rank fusion per sub-task, the split gate, per-sub-task budgets;
:mod:`toolret.search.fusion`).
"""

from __future__ import annotations

import time

import numpy as np

from toolret.config import RetrievalConfig
from toolret.documents.docstrings import docstring_summary
from toolret.index.snapshot import Snapshot
from toolret.results import ScoredTool, TraceStep
from toolret.scoring.candidates import Ranking
from toolret.scoring.ranked_candidates import CandidateScore
from toolret.search.fusion import budgeted_merge, reciprocal_rank_fusion
from toolret.search.planning import FieldQueries, QueryPlan, asks_for_something, plan_offline
from toolret.search.state import SearchState, _Job

__all__ = ["field_texts", "fuse_rankings", "plan_jobs", "plan_query", "scored"]


def scored(
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
        serves=serves,
    )


# MFTR field-aligned sub-queries: which planner field is matched against which tool field.
_FIELD_OF = {"tool_description": "description", "intent": "examples", "expected_output": "response"}


def plan_query(state: SearchState) -> QueryPlan | None:
    query, config, llm, trace = state.query, state.config, state.llm, state.trace
    if config.planner == "none":
        return None
    timeout = state.llm_timeout()
    if config.planner == "llm" and llm is not None and timeout is not None:
        from toolret.search.llm_planning import plan_with_llm

        feedback = _feedback_docs(state.snap, query, config.planning.prf_docs)
        plan, step = state.spend_llm(
            lambda: plan_with_llm(
                query,
                llm,
                history=state.conversation or None,
                feedback_docs=feedback or None,
                n_variants=config.planning.n_variants,
                timeout=timeout,
                steps=config.llm_steps,
            )
        )
        extra = [
            f"{n} {what}"
            for n, what in ((len(state.conversation), "history turn(s)"), (len(feedback), "feedback doc(s)"))
            if n
        ]
        if extra:
            step = step.model_copy(update={"note": "; ".join([step.note, *extra]) if step.note else "; ".join(extra)})
        trace.append(step)
        return plan
    start = time.perf_counter()
    plan = plan_offline(query)
    ms = (time.perf_counter() - start) * 1000
    if config.planner == "llm":
        why = "no LLM configured" if llm is None else state.budget_note()
        trace.append(
            TraceStep(
                stage="plan", path="fallback", ms=ms, note=f"{why}: offline planner, {len(plan.subtasks)} sub-task(s)"
            )
        )
    else:
        trace.append(TraceStep(stage="plan", path="offline", ms=ms, note=f"{len(plan.subtasks)} sub-task(s)"))
    return plan


def _feedback_docs(snap: Snapshot, query: str, n: int) -> list[str]:
    """Pseudo-relevance feedback: the ``n`` best BM25 tools of the raw query, as
    ``name: first sentence`` lines the LLM planner reads (as data) for the registry's vocabulary."""
    if n <= 0 or len(snap) == 0:
        return []
    scores = snap.lexical["description"].scores(query)
    best = [int(i) for i in np.argsort(-scores, kind="stable")[:n] if scores[i] > 0]
    return [f"{snap.docs[i].name}: {docstring_summary(snap.docs[i].description)}" for i in best]


def plan_jobs(query: str, plan: QueryPlan | None) -> list[_Job]:
    if plan is None:
        return [_Job(None, query)]
    whole = plan.rewritten if plan.path == "llm" and plan.rewritten else query
    jobs = [_Job(None, whole)]
    if len(plan.subtasks) < 2 and plan.path != "llm":
        return jobs
    for i, sub in enumerate(plan.subtasks):
        for variant in dict.fromkeys(sub.variants or [sub.text]):
            jobs.append(_Job(i, variant, sub.fields if variant == sub.text else None))
    return jobs


def field_texts(fields: FieldQueries | None) -> dict[str, str]:
    if fields is None:
        return {}
    out = {target: getattr(fields, source) for source, target in _FIELD_OF.items() if getattr(fields, source)}
    if fields.extracted_args:
        out["parameters"] = "; ".join(fields.extracted_args)
    return out


def fuse_rankings(
    snap: Snapshot,
    plan: QueryPlan,
    jobs: list[_Job],
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
                or ranked[0][0].score >= config.planning.split_clear
            )
        ]
        if len(kept) < 2:  # not a multi-part request after all: the whole request's own ranking
            return [scored(snap, c) for c in groups[None][0][:k]], {}
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
        group: [scored(snap, best[n][snap.index_of[t]]) for t in lists[n]]
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
            out.append(scored(snap, cand))
            continue
        position = source
        group = order[position]
        subtask = plan.subtasks[group].text if group is not None else None
        out.append(scored(snap, best[position][index], subtask))
    return out, own
