"""One search, stage by stage, over a knowledge-base snapshot.

Stages (each recorded in the trace with its path and milliseconds):
``embed_query`` -> ``candidates`` (per-field BM25 and dense top-N, plus tools named in the
query) -> ``mftr`` (multi-field scores and parameter penalty on candidates only) ->
``select`` (top k).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import TypeVar

import numpy as np

from toolret.arguments import spot_arguments
from toolret.config import RetrievalConfig
from toolret.documents import FIELDS
from toolret.embedding import Embedder
from toolret.errors import QueryError
from toolret.lexical import analyze
from toolret.results import ScoredTool, SearchResult, TraceStep
from toolret.fusion import budgeted_merge, reciprocal_rank_fusion
from toolret.planning import QueryPlan, plan_offline
from toolret.scoring import CandidateScore, FieldSignals, score_candidates
from toolret.snapshot import Snapshot
from toolret.text import tokenize

__all__ = ["run_search", "validate_query"]

T = TypeVar("T")
_QUERY_WORDS = re.compile(r"[\w.]+", re.UNICODE)


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


def _top_n(scores: np.ndarray, mask: np.ndarray, n: int) -> np.ndarray:
    valid = np.flatnonzero(mask & (scores > 0))
    if len(valid) <= n:
        return valid
    part = np.argpartition(-scores[valid], n - 1)[:n]
    return valid[part]


def _named_tools(snap: Snapshot, query: str) -> set[int]:
    """Tools whose exact name (or its words, for multi-word names) appears in the query."""
    if not snap.names:
        return set()
    lowered = query.lower()
    hits: set[int] = set()
    raw_tokens = _QUERY_WORDS.findall(lowered)
    for token in raw_tokens:
        hits.update(snap.names.get(token.strip("."), ()))
    words = tokenize(lowered, drop_stopwords=False)
    for size in range(2, 6):
        for start in range(0, len(words) - size + 1):
            hits.update(snap.names.get(" ".join(words[start : start + size]), ()))
    if lowered.strip() in snap.names:
        hits.update(snap.names[lowered.strip()])
    return hits


def _rank(snap: Snapshot, qvec: np.ndarray, text: str, config: RetrievalConfig) -> tuple[list[CandidateScore], int, int]:
    """MFTR ranking of one query text: (ranked candidates, candidate count, argument count)."""
    tokens = analyze(text)
    n = config.candidates_per_field
    lex_all = {f: snap.lexical[f].scores(tokens) for f in FIELDS}
    dense_all = {f: snap.vectors[f] @ qvec for f in FIELDS}
    named = _named_tools(snap, text)
    pool: set[int] = set(named)
    for f in FIELDS:
        mask = snap.present[f]
        pool.update(_top_n(lex_all[f], mask, n).tolist())
        pool.update(_top_n(dense_all[f] + 1.0, mask, n).tolist())
    cands = np.array(sorted(pool), dtype=np.int64)
    args = spot_arguments(text)
    signals = FieldSignals(
        candidates=cands,
        lexical={f: lex_all[f][cands] for f in FIELDS},
        lexical_bound={f: snap.lexical[f].upper_bound(tokens) for f in FIELDS},
        dense={f: dense_all[f][cands] for f in FIELDS},
        present={f: snap.present[f][cands] for f in FIELDS},
    )
    query_words = set(tokenize(text, drop_stopwords=False))
    ranked = score_candidates(signals, snap.docs, config, args=args, query_words=query_words, name_matches=named)
    return ranked, len(cands), len(args)


def _scored(snap: Snapshot, cand: CandidateScore, subtask: str | None = None) -> ScoredTool:
    doc = snap.docs[cand.index]
    return ScoredTool(
        id=doc.id, name=doc.name, score=round(cand.score, 6),
        field_scores=cand.field_scores, penalty=cand.penalty, subtask=subtask,
    )


def run_search(
    snap: Snapshot, embedder: Embedder, query: str, k: int, config: RetrievalConfig
) -> SearchResult:
    """Search one snapshot; the caller has validated ``query`` and ``k``.

    Without a planner: one MFTR ranking of the query. With the offline planner and a
    request that splits into sub-tasks: one ranking for the whole request and one per
    sub-task, merged with a per-sub-task share of the k slots (:mod:`toolret.fusion`).
    """
    trace: list[TraceStep] = []
    if len(snap) == 0:
        trace.append(TraceStep(stage="candidates", path="skipped", ms=0.0, note="knowledge base is empty"))
        return SearchResult(query=query, tools=[], trace=trace)

    plan: QueryPlan | None = None
    texts = [query]
    if config.planner == "offline":
        plan = _timed(trace, "plan", lambda: plan_offline(query))
        trace[-1] = trace[-1].model_copy(update={"note": f"{len(plan.subtasks)} sub-task(s)"})
        if len(plan.subtasks) > 1:
            texts += [sub.text for sub in plan.subtasks]

    qvecs = _timed(trace, "embed_query", lambda: embedder.embed(texts), note=embedder.name)
    start = time.perf_counter()
    rankings = [_rank(snap, qvecs[i], text, config) for i, text in enumerate(texts)]
    elapsed = (time.perf_counter() - start) * 1000
    n_cands = max(r[1] for r in rankings)
    n_args = rankings[0][2]
    trace.append(TraceStep(stage="candidates", path="offline", ms=elapsed / 2, note=f"{n_cands} of {len(snap)} tools"))
    trace.append(TraceStep(stage="mftr", path="offline", ms=elapsed / 2, note=f"{n_args} argument value(s) spotted"))

    if len(rankings) == 1:
        tools = _timed(trace, "select", lambda: [_scored(snap, c) for c in rankings[0][0][:k]], note=f"top {k}")
        return SearchResult(query=query, tools=tools, trace=trace, plan=plan)

    def fuse() -> list[ScoredTool]:
        assert plan is not None
        depth = max(k, 20)
        by_list = [{c.index: c for c in r[0][:depth]} for r in rankings]
        lists = [[snap.docs[c.index].id for c in r[0][:depth]] for r in rankings]
        head = [tool_id for tool_id, _ in reciprocal_rank_fusion(lists)]
        picked = budgeted_merge(lists if config.whole_query_budget else lists[1:], k=k, head=head)
        offset = 0 if config.whole_query_budget else 1
        out: list[ScoredTool] = []
        for tool_id, source in picked:
            index = snap.index_of[tool_id]
            if source is None:
                cand = next(lst[index] for lst in by_list if index in lst)
                out.append(_scored(snap, cand))
                continue
            list_no = source + offset
            subtask = plan.subtasks[list_no - 1].text if list_no > 0 else None
            out.append(_scored(snap, by_list[list_no][index], subtask))
        return out

    tools = _timed(trace, "fuse", fuse, note=f"budgets over {len(rankings) - (0 if config.whole_query_budget else 1)} list(s)")
    return SearchResult(query=query, tools=tools, trace=trace, plan=plan)
