"""One search, stage by stage, over a knowledge-base snapshot.

Stages (each recorded in the trace with its path and milliseconds), each a public function over
one mutable :class:`SearchState` so that a caller can drive them itself (the LangGraph subgraph
of :mod:`langchain_toolret` does, through :class:`toolret.search.search.Search`, which holds the
stage order) and get exactly what ``ToolKnowledgeBase.search`` gets:

:func:`stage_plan` (balanced/full: offline or LLM query planning) -> :func:`stage_retrieve`
(``embed_query``: one batched call for every text the plan needs; ``candidates`` + ``mftr`` per
query text, :func:`toolret.scoring.candidates.rank_tools`) -> :func:`stage_fuse` (variants of a sub-task by
reciprocal rank fusion, then sub-tasks by per-sub-task budgets; or ``select``: a single query's
top list) -> :func:`stage_rerank` (cross-encoder or LLM, :mod:`toolret.search.rerank`) ->
:func:`stage_reflect` (is every sub-task covered? if not, :func:`stage_requery` searches the
uncovered ones again, :mod:`toolret.search.reflection`; at most ``reflection.rounds`` rounds) ->
:func:`finish_search` (the top k, or ``k="auto"``'s precise set; then, with a ``token_budget`` or
the caller's ``definition``, :func:`toolret.search.token_budget.fit_definitions`).

Example:
    >>> from toolret import ToolKnowledgeBase
    >>> kb = ToolKnowledgeBase.from_tools([{"name": "get_weather", "description": "Weather for a city"}])
    >>> state = kb.begin_search("weather in Paris", k=1, config="balanced").state
    >>> stage_plan(state); stage_retrieve(state); stage_fuse(state); stage_rerank(state)
    >>> while stage_reflect(state):
    ...     stage_requery(state)
    >>> finish_search(state).ids
    ['get_weather']
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from toolret.config import RetrievalConfig
from toolret.documents.docstrings import docstring_summary
from toolret.index.framework_embedding import embed_queries
from toolret.index.snapshot import Snapshot
from toolret.memory.past_use import HistorySnapshot
from toolret.results import ScoredTool, SearchResult, StagePath, TraceStep
from toolret.scoring.candidates import Ranking, query_fields, rank_tools, ranking_inputs
from toolret.search.auto_k import select_auto
from toolret.search.dependencies import keep_producers, resolve_dependencies
from toolret.search.fusion import fuse_rankings, scored_tool
from toolret.search.language import language_step
from toolret.search.planning import QueryPlan, SubTask, field_texts, plan_jobs, plan_offline
from toolret.search.relevance_floor import apply_floor, floor_for
from toolret.search.state import SearchState
from toolret.search.token_budget import fit_definitions, stored_definition

if TYPE_CHECKING:  # the reranker and reflection load only when a preset runs them (cold start)
    from toolret.search.reflection import Coverage

__all__ = [
    "SearchState",
    "finish_search",
    "stage_fuse",
    "stage_plan",
    "stage_reflect",
    "stage_requery",
    "stage_rerank",
    "stage_retrieve",
]

T = TypeVar("T")


def _timed(trace: list[TraceStep], stage: str, fn: Callable[[], T], note: str = "") -> T:
    start = time.perf_counter()
    out = fn()
    trace.append(TraceStep(stage=stage, path="offline", ms=(time.perf_counter() - start) * 1000, note=note))
    return out


def _history_for(
    snap: Snapshot, memory: HistorySnapshot | None, qvec: Any, config: RetrievalConfig
) -> dict[int, float] | None:
    if memory is None or not len(memory) or config.memory.history_weight <= 0:
        return None
    scores = memory.tool_scores(qvec, m=config.memory.history_neighbors)
    return {snap.index_of[t]: s for t, s in scores.items() if t in snap.index_of} or None


def stage_plan(state: SearchState) -> None:
    """Plan the query (none, offline or LLM per ``config.planner``) and list the rankings to run."""
    if len(state.snap) == 0:
        return
    step = language_step(state.query, state.embedder.name)  # a non-English query is said, not hidden
    if step is not None:
        state.trace.append(step)
    state.plan = plan_query(state)
    state.jobs = plan_jobs(state.query, state.plan)


def plan_query(state: SearchState) -> QueryPlan | None:
    """The plan per ``config.planner``: none, the offline planner, or the LLM's (offline without one)."""
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


def stage_retrieve(state: SearchState) -> None:
    """Rank every planned query text: one batched embedding, then candidates and MFTR per text."""
    snap, config = state.snap, state.config
    if len(snap) == 0:
        state.trace.append(TraceStep(stage="candidates", path="skipped", ms=0.0, note="knowledge base is empty"))
        return
    if not state.jobs:
        state.jobs = plan_jobs(state.query, state.plan)
    texts_of = [query_fields(config, job.text, field_texts(job.fields)) for job in state.jobs]
    texts = list(dict.fromkeys([job.text for job in state.jobs] + [t for ft in texts_of for t in ft.values()]))
    vectors = _timed(
        state.trace,
        "embed_query",
        lambda: embed_queries(state.embedder, texts, snap.dim),
        note=f"{len(texts)} text(s), {state.embedder.name}",
    )
    vec_of = {text: vectors[i] for i, text in enumerate(texts)}
    state.query_vector = vec_of.get(state.query, state.query_vector)  # k="auto"'s floor reads it again
    timings: dict[str, float] = {}  # each stage's own measured time, summed over the rankings
    state.rankings = []
    whole_strength: float | None = None  # a sub-task is part of its request: it weighs words as the whole does
    for job, ft in zip(state.jobs, texts_of):
        start = time.perf_counter()
        history = _history_for(snap, state.memory, vec_of[job.text], config)  # part of the candidate pool
        timings["candidates"] = timings.get("candidates", 0.0) + (time.perf_counter() - start) * 1000
        fields = {f: (t, vec_of[t]) for f, t in ft.items()} or None
        state.rankings.append(
            rank_tools(
                snap,
                job.text,
                vec_of[job.text],
                config,
                fields,
                history,
                timings,
                allowed=state.allowed,
                learned=state.learned,
                strength=whole_strength if job.subtask is not None else None,
            )
        )
        if job.subtask is None and whole_strength is None:
            whole_strength = state.rankings[-1].strength
    state.trace.append(
        TraceStep(
            stage="candidates",
            path="offline",
            ms=timings.get("candidates", 0.0),
            note=f"{max(r.n_candidates for r in state.rankings)} of {len(snap)} tools, {len(state.jobs)} ranking(s)",
        )
    )
    state.trace.append(
        TraceStep(
            stage="mftr",
            path="offline",
            ms=timings.get("mftr", 0.0),
            note=_mftr_note(state.rankings[0]),
        )
    )


def _mftr_note(ranking: Ranking) -> str:
    """The trace's word on the request's argument values, and the words matched without them (docs/method.md §3a)."""
    note = f"{ranking.n_args} argument value(s) spotted"
    if ranking.words is not None:
        shown = ranking.words if len(ranking.words) <= 80 else ranking.words[:79] + "…"
        note += f"; words matched without the values: {shown!r}"
    return note


def stage_fuse(state: SearchState) -> None:
    """Turn the rankings into one list of ``state.depth`` tools (``select`` for a single ranking)."""
    if not state.rankings:
        return
    depth, snap = state.depth, state.snap
    if len(state.rankings) == 1:
        state.tools = _timed(
            state.trace,
            "select",
            lambda: [scored_tool(snap, c) for c in state.rankings[0].candidates[:depth]],
            note=f"top {depth}",
        )
        return
    assert state.plan is not None
    plan, jobs, rankings = state.plan, state.jobs, state.rankings
    state.tools, state.subtask_lists = _timed(
        state.trace, "fuse", lambda: fuse_rankings(snap, plan, jobs, rankings, depth, state.config)
    )
    if not state.subtask_lists and len(plan.subtasks) > 1:
        # The split gate found fragments, not needs: the request is searched (and reflected on) as one.
        state.plan = plan.model_copy(update={"subtasks": [SubTask(text=plan.rewritten or state.query)]})
        step = state.trace[-1]
        state.trace[-1] = step.model_copy(update={"note": f"split gated: {len(plan.subtasks)} part(s) ranked as one"})


def stage_rerank(state: SearchState) -> None:
    """Rerank the head of the list per ``config.reranker``; the selection is then cut to k."""
    config = state.config
    if config.reranker == "none":
        state.tools = state.tools[: state.k]
        return
    from toolret.search.rerank import LLMReranker  # here: loaded only by presets that rerank

    reranker: Any = None
    why = ""
    timeout = state.llm_timeout()
    if config.reranker == "llm" and state.llm is not None and timeout is not None:
        reranker = LLMReranker(
            state.llm,
            top_n=config.rerank.top_n,
            mode=config.rerank.mode,
            drop_irrelevant=config.rerank.drop_irrelevant,
            steps=config.llm_steps,
        )
    else:
        reranker = state.cross_encoder
        if config.reranker == "llm":
            why = (
                ("no LLM configured" if state.llm is None else state.budget_note())
                + ": "
                + ("cross-encoder instead" if reranker is not None else "MFTR order kept")
            )
        elif reranker is None:
            why = "no cross-encoder configured (RetrievalConfig.cross_encoder): MFTR order kept"
    if reranker is None:
        path: StagePath = "fallback" if config.reranker == "llm" else "skipped"
        state.trace.append(TraceStep(stage="rerank", path=path, ms=0.0, note=why))
        state.tools = state.tools[: state.k]
        return
    docs = {t.id: state.snap.docs[state.snap.index_of[t.id]] for t in state.tools if t.id in state.snap.index_of}
    if isinstance(reranker, LLMReranker):
        assert timeout is not None  # an LLM reranker is only chosen while LLM budget is left
        llm_timeout = timeout
        tools, step = state.spend_llm(lambda: reranker.rerank(state.query, state.tools, docs, timeout=llm_timeout))
    else:
        tools, step = reranker.rerank(state.query, state.tools, docs, timeout=config.llm_timeout)
    if why:
        step = step.model_copy(update={"path": "fallback", "note": f"{why}; {step.note}"})
    state.trace.append(step)
    known = state.snap.index_of
    state.tools = [t for t in tools if t.id in known][: state.k]


def stage_reflect(state: SearchState) -> bool:
    """Judge sub-task coverage; True when :func:`stage_requery` must search the uncovered sub-tasks
    again (``state.pending``; at most ``reflection.rounds`` rounds)."""
    config, plan = state.config, state.plan
    if config.reflection.rounds < 1 or plan is None or not plan.subtasks or not state.tools:
        return False
    if config.reflection.judge == "llm" and state.llm is None:
        # Offline coverage judging gained nothing left one registry out (docs/decisions/
        # 2026-11-26-stage-ablation.md), so without its LLM the judge is skipped, and says so.
        note = "no LLM configured: reflection skipped (offline coverage judging measured no gain)"
        state.trace.append(TraceStep(stage="reflect", path="skipped", ms=0.0, note=note))
        return False
    if state.reflect_round >= config.reflection.rounds:
        return False
    from toolret.search.reflection import LLMCoverageJudge, judge_coverage  # only presets that reflect

    state.reflect_round += 1
    start = time.perf_counter()
    judge = None
    note = ""
    timeout = state.llm_timeout()
    if config.reflection.judge == "llm":
        if state.llm is not None and timeout is not None:
            docs = {t.id: state.snap.docs[state.snap.index_of[t.id]] for t in state.tools}
            judge = partial(LLMCoverageJudge(state.llm, steps=config.llm_steps).judge, docs=docs, timeout=timeout)
        else:
            note = f"; {'no LLM configured' if state.llm is None else state.budget_note()}: offline coverage"

    def run_judge() -> tuple[Coverage, StagePath, str]:
        return judge_coverage(plan, state.tools, judge=judge, threshold=config.reflection.coverage_threshold)

    coverage, path, extra = state.spend_llm(run_judge) if judge is not None else run_judge()
    if note:
        path = "fallback"
    state.pending = coverage if coverage.uncovered else None
    state.trace.append(
        TraceStep(
            stage="reflect",
            path=path,
            ms=(time.perf_counter() - start) * 1000,
            note=f"round {state.reflect_round}: {len(coverage.uncovered)} of {len(plan.subtasks)} sub-task(s) "
            f"uncovered{extra}{note}",
        )
    )
    return state.pending is not None


def stage_requery(state: SearchState) -> None:
    """Search again for the sub-tasks reflection found uncovered, and place what they find."""
    from toolret.search.reflection import fill_uncovered, offline_rewrite

    assert state.plan is not None and state.pending is not None
    start = time.perf_counter()
    for index in state.pending.uncovered:
        # Offline, the re-query of a sub-task is its own wording: its fused ranking is already at
        # hand, so reflection reads further down it instead of searching again.
        if index not in state.pending.rewrites and index in state.subtask_lists:
            state.requery_cache.setdefault(offline_rewrite(state.plan.subtasks[index].text), state.subtask_lists[index])
    added, failed = fill_uncovered(
        state.plan,
        state.tools,
        state.pending,
        search_fn=partial(_plain_search, state),
        k=state.k,
        cache=state.requery_cache,
    )
    n = len(state.pending.uncovered)
    state.pending = None
    state.trace.append(
        TraceStep(
            stage="requery",
            path="offline",
            ms=(time.perf_counter() - start) * 1000,
            note=f"round {state.reflect_round}: {n} sub-task(s) re-queried, added {len(added)}"
            + (f" ({', '.join(added)})" if added else "")
            + failed,
        )
    )


def _plain_search(state: SearchState, text: str, n: int) -> list[ScoredTool]:
    """One unplanned MFTR ranking of ``text``: the re-query of an uncovered sub-task."""
    ((qvec, fields),) = ranking_inputs(state.embedder, state.config, [text], state.snap.dim)
    history = _history_for(state.snap, state.memory, qvec, state.config)
    ranking = rank_tools(
        state.snap, text, qvec, state.config, fields, history, allowed=state.allowed, learned=state.learned
    )
    return [scored_tool(state.snap, c) for c in ranking.candidates[:n]]


def finish_search(state: SearchState) -> SearchResult:
    """The result: the top k tools, or with ``auto`` the precise set of :func:`toolret.search.auto_k.select_auto`."""
    tools = state.tools[: state.k]
    if state.config.dependencies.enabled and tools and state.rankings and state.snap.dependencies:
        # Only registries with identifier parameters and their producers get the stage (and its step).
        tools, step = resolve_dependencies(
            state.snap, state.query, tools, state.rankings[0].candidates, state.k, state.config.dependencies
        )
        state.trace.append(step)
    if state.auto:
        start = time.perf_counter()
        chosen = select_auto(
            tools,
            margin=state.config.auto_k.margin,
            max_k=state.config.auto_k.max_k,
            subtask_margin=state.config.auto_k.subtask_margin,
            ratio=state.config.auto_k.ratio,
        )
        chosen = keep_producers(chosen, tools, state.config.auto_k.max_k)
        state.trace.append(
            TraceStep(
                stage="auto_k",
                path="offline",
                ms=(time.perf_counter() - start) * 1000,
                note=f"kept {len(chosen)} of {len(tools)} (ratio {state.config.auto_k.ratio}, margin {state.config.auto_k.margin})",
            )
        )
        floor = floor_for(state.config, state.embedder.name)
        tools, step = apply_floor(
            chosen,
            floor,
            query=state.query,
            snap=state.snap,
            embedder=state.embedder,
            qvec=state.query_vector,
            requested=state.config.auto_k.floor is not None,
        )
        state.trace.append(step)
    result = SearchResult(query=state.query, tools=tools, trace=list(state.trace), plan=state.plan)
    if state.token_budget is None and state.definition is None:
        return result
    return fit_definitions(result, state.definition or stored_definition(state.snap), state.token_budget)
