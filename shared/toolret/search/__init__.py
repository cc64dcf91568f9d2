"""One search, stage by stage: the request (``search``: ``Search``, ``SearchRequest``, the stage order),
the stages (``stages``) over their typed state (``state``), and what they call: long queries
(``query_text``), the language step, planning (offline and LLM), fusion, reranking, reflection,
producers (``dependencies``), ``k="auto"`` (``auto_k``, ``relevance_floor``), the conversation
and its follow-ups, and the token budget of the definitions handed out (``token_budget``).

Candidate generation and the MFTR formula are :mod:`toolret.scoring`'s; restriction is
:mod:`toolret.scope`'s; the tool-use memory is :mod:`toolret.memory`'s.

Every name below is importable from this package (``from toolret.search import ...``); each
module is loaded on first use (:mod:`toolret._exports`).
"""

from __future__ import annotations

from toolret._exports import lazy_exports

_EXPORTS = {
    "BLOB_MIN_CHARS": "query_text",
    "CONTEXT_TURNS": "conversation",
    "Coverage": "reflection",
    "CoverageJudgment": "reflection",
    "CrossEncoderCache": "rerank",
    "CrossEncoderReranker": "rerank",
    "DEFAULT_COVERAGE_THRESHOLD": "reflection",
    "Definition": "token_budget",
    "FOLLOW_UP_MIN_SIMILARITY": "follow_up",
    "FieldQueries": "planning",
    "IRRELEVANT_BELOW": "rerank",
    "LLMCoverageJudge": "reflection",
    "LLMPlan": "llm_planning",
    "LLMReranker": "rerank",
    "LOG_MIN_CHARS": "query_text",
    "ListwiseRanking": "rerank",
    "MAX_SUBTASKS": "planning",
    "MAX_TURNS": "conversation",
    "MAX_VARIANTS": "llm_planning",
    "PlannedSubTask": "llm_planning",
    "PointwiseScores": "rerank",
    "QueryPlan": "planning",
    "QueryText": "query_text",
    "RankingJob": "planning",
    "Reranker": "rerank",
    "Search": "search",
    "SearchOptions": "search",
    "SearchRequest": "search",
    "SearchState": "state",
    "StageName": "search",
    "SubTask": "planning",
    "add_context": "follow_up",
    "as_chat_history": "conversation",
    "auto_cut": "auto_k",
    "begin": "search",
    "budgeted_merge": "fusion",
    "card_line": "rerank",
    "checked_query": "search",
    "context_query": "conversation",
    "coverage_offline": "reflection",
    "english_only": "language",
    "field_texts": "planning",
    "fill_uncovered": "reflection",
    "finish_search": "stages",
    "fit_definitions": "token_budget",
    "follow_up_reason": "follow_up",
    "fuse_rankings": "fusion",
    "informative_query": "query_text",
    "judge_coverage": "reflection",
    "language_step": "language",
    "needs_context": "follow_up",
    "offline_rewrite": "reflection",
    "plan_jobs": "planning",
    "plan_offline": "planning",
    "plan_query": "stages",
    "plan_with_llm": "llm_planning",
    "planner_messages": "llm_planning",
    "query_language": "language",
    "reciprocal_rank_fusion": "fusion",
    "refers_back": "follow_up",
    "scored_tool": "fusion",
    "select_auto": "auto_k",
    "stage_fuse": "stages",
    "stage_plan": "stages",
    "stage_reflect": "stages",
    "stage_requery": "stages",
    "stage_rerank": "stages",
    "stage_retrieve": "stages",
    "subtask_budgets": "fusion",
    "validate_budget": "token_budget",
    "with_context": "follow_up",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
