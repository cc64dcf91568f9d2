"""The state of one search, which every pipeline stage reads and extends.

Kept apart from the stages (:mod:`toolret.search.stages`) so that :class:`~toolret.search.search.Search`, the stages and
the LangGraph subgraph share one definition of what a search carries between stages.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from toolret.config import LearnedWeights, RetrievalConfig
from toolret.index.embedding import Embedder
from toolret.index.snapshot import Snapshot
from toolret.llm.protocol import ChatMessage
from toolret.memory.past_use import HistorySnapshot
from toolret.results import ScoredTool, TraceStep
from toolret.scoring.candidates import Ranking
from toolret.search.planning import QueryPlan, RankingJob

if TYPE_CHECKING:  # reflection loads only when a preset reflects (cold start)
    from toolret.search.reflection import Coverage

__all__ = ["SearchState"]

T = TypeVar("T")


@dataclass
class SearchState:
    """Everything one search has produced so far; the stage functions read and extend it.

    ``ToolKnowledgeBase.begin_search`` builds it (validating the query, resolving the config) inside
    a :class:`~toolret.search.search.Search`. ``k`` is the number of tools to return; with ``auto=True`` it is the most that
    ``k="auto"`` may keep. ``tools`` holds the current selection, best first.
    """

    snap: Snapshot
    embedder: Embedder
    query: str
    k: int
    config: RetrievalConfig
    llm: Any = None
    #: The knowledge base's tool-use memory (recorded bundles), read when ``history_weight`` > 0.
    memory: HistorySnapshot | None = None
    cross_encoder: Any = None
    auto: bool = False
    trace: list[TraceStep] = field(default_factory=list)
    plan: QueryPlan | None = None
    jobs: list[RankingJob] = field(default_factory=list)
    rankings: list[Ranking] = field(default_factory=list)
    tools: list[ScoredTool] = field(default_factory=list)
    reflect_round: int = 0
    pending: Coverage | None = None
    requery_cache: dict[str, list[ScoredTool]] = field(default_factory=dict)
    #: Each sub-task's own fused ranking (by sub-task index), kept for reflection's re-queries.
    subtask_lists: dict[int, list[ScoredTool]] = field(default_factory=dict)
    #: Earlier chat turns (``search(..., conversation=...)``), read by the LLM planner.
    conversation: list[ChatMessage] = field(default_factory=list)
    #: Seconds the LLM steps of this search have taken so far (bounded by ``config.llm_budget_s``).
    llm_spent_s: float = 0.0
    #: Tokens the chosen tools' definitions may take (None: no budget; :mod:`toolret.search.token_budget`).
    token_budget: int | None = None
    #: How the caller binds a chosen tool (None: the stored OpenAI definition, checked only under a budget).
    definition: Callable[[ScoredTool], Any] | None = None
    #: The tools this search may return, a boolean per snapshot row (None: every tool); see ``allowed_ids``.
    allowed: np.ndarray | None = None
    #: The request's own query vector once retrieval embedded it (``k="auto"``'s floor reads it).
    query_vector: np.ndarray | None = None
    #: The knowledge base's fitted scorer (``kb.fit``), used when the config's ``use_learned`` is set.
    #: Fitted state, so it travels with the search and never sits in the user's RetrievalConfig.
    learned: LearnedWeights | None = None

    def llm_timeout(self) -> float | None:
        """Seconds the next LLM step may take: ``llm_timeout`` capped by what is left of
        ``llm_budget_s``; None once the budget is spent (the step then runs its offline path)."""
        left = self.config.llm_budget_s - self.llm_spent_s
        return min(self.config.llm_timeout, left) if left > 0 else None

    def spend_llm(self, step: Callable[[], T]) -> T:
        """Run one LLM step and charge its time to the search's LLM budget."""
        start = time.perf_counter()
        try:
            return step()
        finally:
            self.llm_spent_s += time.perf_counter() - start

    def budget_note(self) -> str:
        return f"LLM budget spent ({self.llm_spent_s:.2f}s of llm_budget_s={self.config.llm_budget_s:g}s)"

    @property
    def depth(self) -> int:
        """How many tools fusion keeps: k, or more when a reranker will read further down."""
        return max(self.k, self.config.rerank.top_n) if self.config.reranker != "none" else self.k
