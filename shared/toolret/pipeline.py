"""One search, stage by stage, over a knowledge-base snapshot.

Stages (each recorded in the trace with its path and milliseconds):

``plan`` (balanced/full: offline or LLM query planning) -> ``embed_query`` (one batched call
for every text the plan needs) -> ``candidates`` + ``mftr`` (per query text:
:func:`toolret.ranking.rank_query`) -> ``fuse`` (variants of a sub-task by reciprocal rank
fusion, then sub-tasks by per-sub-task budgets) or ``select`` (a single query: its top k).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from toolret.config import RetrievalConfig
from toolret.embedding import Embedder
from toolret.errors import QueryError
from toolret.fusion import budgeted_merge, reciprocal_rank_fusion
from toolret.history import HistorySnapshot
from toolret.planning import FieldQueries, QueryPlan, plan_offline
from toolret.ranking import rank_query
from toolret.results import ScoredTool, SearchResult, TraceStep
from toolret.scoring import CandidateScore
from toolret.snapshot import Snapshot

__all__ = ["run_search", "validate_query"]

T = TypeVar("T")


def validate_query(query: object, k: int | str, config: RetrievalConfig) -> str:
    if not isinstance(query, str):
        raise QueryError(f"query must be a string, not {type(query).__name__}")
    text = query.strip()
    if not text:
        raise QueryError("query is empty")
    if len(text) > config.max_query_chars:
        raise QueryError(
            f"query is {len(text)} characters long; the limit is {config.max_query_chars} "
            "(RetrievalConfig.max_query_chars)"
        )
    if k == "auto":
        return text
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise QueryError(f"k must be a positive integer or 'auto', not {k!r}")
    if k > config.max_k:
        raise QueryError(f"k={k} exceeds max_k={config.max_k} (RetrievalConfig.max_k)")
    return text


def _timed(trace: list[TraceStep], stage: str, fn: Callable[[], T], note: str = "") -> T:
    start = time.perf_counter()
    out = fn()
    trace.append(TraceStep(stage=stage, path="offline", ms=(time.perf_counter() - start) * 1000, note=note))
    return out


@dataclass(frozen=True)
class _Job:
    """One ranking to run: for the whole request (``subtask=None``) or one sub-task."""

    subtask: int | None
    text: str
    fields: FieldQueries | None = None


# MFTR field-aligned sub-queries: which planner field is matched against which tool field.
_FIELD_OF = {"tool_description": "description", "intent": "examples", "expected_output": "response"}


def _plan(query: str, config: RetrievalConfig, llm: Any, trace: list[TraceStep]) -> QueryPlan | None:
    if config.planner == "none":
        return None
    if config.planner == "llm" and llm is not None:
        from toolret.llm_planning import plan_with_llm

        plan, step = plan_with_llm(query, llm, n_variants=config.n_variants, timeout=config.llm_timeout)
        trace.append(step)
        return plan
    start = time.perf_counter()
    plan = plan_offline(query)
    ms = (time.perf_counter() - start) * 1000
    if config.planner == "llm":
        trace.append(TraceStep(stage="plan", path="fallback", ms=ms,
                               note=f"no LLM configured: offline planner, {len(plan.subtasks)} sub-task(s)"))
    else:
        trace.append(TraceStep(stage="plan", path="offline", ms=ms, note=f"{len(plan.subtasks)} sub-task(s)"))
    return plan


def _jobs(query: str, plan: QueryPlan | None) -> list[_Job]:
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


def _field_texts(fields: FieldQueries | None) -> dict[str, str]:
    if fields is None:
        return {}
    out = {target: getattr(fields, source) for source, target in _FIELD_OF.items() if getattr(fields, source)}
    if fields.extracted_args:
        out["parameters"] = "; ".join(fields.extracted_args)
    return out


def _scored(snap: Snapshot, cand: CandidateScore, subtask: str | None = None) -> ScoredTool:
    doc = snap.docs[cand.index]
    return ScoredTool(
        id=doc.id, name=doc.name, score=round(cand.score, 6),
        field_scores=cand.field_scores, penalty=cand.penalty, subtask=subtask,
    )


def _history_for(
    snap: Snapshot, memory: HistorySnapshot | None, qvec: Any, config: RetrievalConfig
) -> dict[int, float] | None:
    if memory is None or not len(memory) or config.history_weight <= 0:
        return None
    scores = memory.tool_scores(qvec, m=config.history_neighbors)
    return {snap.index_of[t]: s for t, s in scores.items() if t in snap.index_of} or None


def run_search(
    snap: Snapshot,
    embedder: Embedder,
    query: str,
    k: int,
    config: RetrievalConfig,
    *,
    llm: Any = None,
    history: HistorySnapshot | None = None,
) -> SearchResult:
    """Search one snapshot; the caller has validated ``query`` and ``k``.

    Without a planner: one MFTR ranking of the query. With a plan of several sub-tasks (or
    any LLM plan): one ranking for the whole request and one per sub-task variant; variants
    are fused by RRF and sub-tasks merged with a share of the k slots each (:mod:`toolret.fusion`).
    """
    trace: list[TraceStep] = []
    if len(snap) == 0:
        trace.append(TraceStep(stage="candidates", path="skipped", ms=0.0, note="knowledge base is empty"))
        return SearchResult(query=query, tools=[], trace=trace)

    plan = _plan(query, config, llm, trace)
    jobs = _jobs(query, plan)
    field_texts = [_field_texts(job.fields) for job in jobs]
    texts = list(dict.fromkeys([job.text for job in jobs] + [t for ft in field_texts for t in ft.values()]))
    vectors = _timed(trace, "embed_query", lambda: embedder.embed(texts), note=f"{len(texts)} text(s), {embedder.name}")
    vec_of = {text: vectors[i] for i, text in enumerate(texts)}

    start = time.perf_counter()
    rankings = [
        rank_query(snap, job.text, vec_of[job.text], config,
                   {f: (t, vec_of[t]) for f, t in ft.items()} or None,
                   _history_for(snap, history, vec_of[job.text], config))
        for job, ft in zip(jobs, field_texts)
    ]
    elapsed = (time.perf_counter() - start) * 1000
    trace.append(TraceStep(stage="candidates", path="offline", ms=elapsed / 2,
                           note=f"{max(r[1] for r in rankings)} of {len(snap)} tools, {len(jobs)} ranking(s)"))
    trace.append(TraceStep(stage="mftr", path="offline", ms=elapsed / 2,
                           note=f"{rankings[0][2]} argument value(s) spotted"))

    if len(rankings) == 1:
        tools = _timed(trace, "select", lambda: [_scored(snap, c) for c in rankings[0][0][:k]], note=f"top {k}")
        return SearchResult(query=query, tools=tools, trace=trace, plan=plan)
    assert plan is not None
    tools = _timed(trace, "fuse", lambda: _fuse(snap, plan, jobs, rankings, k, config))
    return SearchResult(query=query, tools=tools, trace=trace, plan=plan)


def _fuse(
    snap: Snapshot,
    plan: QueryPlan,
    jobs: list[_Job],
    rankings: list[tuple[list[CandidateScore], int, int]],
    k: int,
    config: RetrievalConfig,
) -> list[ScoredTool]:
    """RRF over each sub-task's variants, then per-sub-task budgets over the fused lists."""
    depth = max(k, 20)
    groups: dict[int | None, list[list[CandidateScore]]] = {}
    for job, ranking in zip(jobs, rankings):
        groups.setdefault(job.subtask, []).append(ranking[0][:depth])
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
    head = [tool_id for tool_id, _ in reciprocal_rank_fusion(lists)]
    first = 0 if config.whole_query_budget else 1
    picked = budgeted_merge(lists[first:], k=k, head=head)
    out: list[ScoredTool] = []
    for tool_id, source in picked:
        index = snap.index_of[tool_id]
        if source is None:
            cand = max((b[index] for b in best if index in b), key=lambda c: c.score)
            out.append(_scored(snap, cand))
            continue
        position = source + first
        group = order[position]
        subtask = plan.subtasks[group].text if group is not None else None
        out.append(_scored(snap, best[position][index], subtask))
    return out
