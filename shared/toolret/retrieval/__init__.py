"""One search: planning, candidate generation and MFTR scoring, fusion, reranking, reflection,
selection, and the tool-use memory with its fit.

Every name below is importable from this package (``from toolret.retrieval import ...``); each
module is loaded on first use (:mod:`toolret._exports`).
"""

from __future__ import annotations

from toolret._exports import lazy_exports

_EXPORTS = {
    "Bundle": "memory",
    "CandidateScore": "scoring",
    "Coverage": "reflection",
    "CoverageJudgment": "reflection",
    "CrossEncoderReranker": "rerank",
    "DEFAULT_COVERAGE_THRESHOLD": "reflection",
    "FEATURE_NAMES": "scoring",
    "FieldQueries": "planning",
    "FieldSignals": "scoring",
    "HistorySnapshot": "memory",
    "IRRELEVANT_BELOW": "rerank",
    "LLMCoverageJudge": "reflection",
    "LLMPlan": "llm_planning",
    "LLMReranker": "rerank",
    "ListwiseRanking": "rerank",
    "MAX_SUBTASKS": "planning",
    "MAX_VARIANTS": "llm_planning",
    "PlannedSubTask": "llm_planning",
    "PointwiseScores": "rerank",
    "QueryPlan": "planning",
    "Reranker": "rerank",
    "SearchState": "pipeline",
    "SpottedArgument": "arguments",
    "SubTask": "planning",
    "auto_cut": "selection",
    "budgeted_merge": "fusion",
    "card_line": "rerank",
    "choose_l2": "learn",
    "collect_query_features": "learn",
    "coverage_offline": "reflection",
    "fill_uncovered": "reflection",
    "finish_search": "pipeline",
    "fit_pairwise": "learn",
    "fit_weights": "learn",
    "judge_coverage": "reflection",
    "named_tools": "ranking",
    "offline_rewrite": "reflection",
    "pair_diffs": "learn",
    "param_satisfaction": "arguments",
    "parameter_penalty": "scoring",
    "plan_offline": "planning",
    "plan_with_llm": "llm_planning",
    "planner_messages": "llm_planning",
    "rank_query": "ranking",
    "recall_at": "learn",
    "reciprocal_rank_fusion": "fusion",
    "score_candidates": "scoring",
    "select_auto": "selection",
    "spot_arguments": "arguments",
    "stage_fuse": "pipeline",
    "stage_plan": "pipeline",
    "stage_reflect": "pipeline",
    "stage_rerank": "pipeline",
    "stage_retrieve": "pipeline",
    "subtask_budgets": "fusion",
    "top_n": "ranking",
    "validate_query": "pipeline",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
