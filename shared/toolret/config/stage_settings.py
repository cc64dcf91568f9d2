"""The settings of the search's stages after scoring, each a group of :class:`RetrievalConfig`:
planning, reranking, reflection, ``k="auto"``, producers of identifiers, and the tool-use memory.

A user picks a stage by the top-level switch (``planner``, ``reranker``) and a preset; these groups
hold the numbers behind it, most of them fitted leaving one dev registry out (docs/method.md, and
docs/decisions/2026-11-27-config-constants.md for why each has its value).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["AutoKConfig", "DependencyConfig", "MemoryConfig", "PlanningConfig", "ReflectionConfig", "RerankConfig"]


class PlanningConfig(BaseModel):
    """The query planner's numbers (``toolret.search.planning``, ``llm_planning``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    n_variants: int = Field(default=2, ge=0, le=3, description="Query variants per sub-task an LLM planner adds.")
    prf_docs: int = Field(
        default=0,
        ge=0,
        le=10,
        description="The LLM planner is shown this many top BM25 tools of the raw query, as data, so its "
        "variants use the registry's vocabulary (full: 3). The offline planner ignores it.",
    )
    split_gate: float | None = Field(
        default=None,
        ge=0,
        description="A sub-task is a need of its own only when it matches its best tool (raw cosine) no worse, "
        "less this, than the whole request matches its own; otherwise it is a fragment. With fewer than two "
        "sub-tasks left the request is ranked as one. Offline plans only; None keeps every split.",
    )
    split_clear: float = Field(
        default=2.5,
        ge=0,
        description="With split_gate: a sub-task whose best tool stands this many standard deviations above its "
        "pool is kept however its cosine compares.",
    )


class RerankConfig(BaseModel):
    """The reranker's numbers (``toolret.search.rerank``); which reranker runs is ``RetrievalConfig.reranker``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: Literal["listwise", "pointwise"] = Field(default="listwise", description="How the LLM reranker asks.")
    top_n: int = Field(default=10, ge=1, le=200, description="Candidates the reranker reads.")
    weight: float = Field(default=1.0, ge=0, le=1, description="Cross-encoder share of the reranked score.")
    drop_irrelevant: bool = Field(default=True, description="The LLM reranker may drop tools it marks irrelevant.")


class ReflectionConfig(BaseModel):
    """Self-reflection (``toolret.search.reflection``): re-query sub-tasks no selected tool covers."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rounds: int = Field(default=0, ge=0, le=5, description="Reflection rounds (0 turns it off).")
    judge: Literal["offline", "llm"] = Field(
        default="offline", description="Who judges coverage: the score threshold, or the LLM (offline without one)."
    )
    coverage_threshold: float = Field(
        default=0.4, ge=0, le=1, description="Offline coverage: a sub-task is covered by a tool scoring at least this."
    )


class AutoKConfig(BaseModel):
    """``k="auto"``: a precise set instead of a count (``toolret.search.auto_k``, ``relevance_floor``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    margin: float = Field(
        default=1.0, ge=0, description="Keep tools scoring within this of the best (an outer bound; ratio cuts first)."
    )
    ratio: float | None = Field(
        default=0.26,
        ge=0,
        le=1,
        description="Keep tools whose field evidence (the score without the embedder's anchor) is at least "
        "(1 - ratio) x the best's; None: the margin alone.",
    )
    max_k: int = Field(default=5, ge=1, description="Most tools k='auto' returns.")
    floor: Literal["calibrated"] | None = Field(
        default="calibrated",
        description="Return no tools for a request no tool serves: 'calibrated' applies the embedding model's "
        "measured floor (none for a model without one, said in the trace); None: never empty.",
    )
    subtask_margin: float | None = Field(
        default=1.0,
        ge=0,
        description="Add each sub-task's best tool unless it scores more than this below the request's best; "
        "None adds every sub-task's best tool.",
    )


class DependencyConfig(BaseModel):
    """The dependency stage (:mod:`toolret.search.dependencies`): add the producer of a chosen
    tool's identifier that the query cannot fill (``GET /search/movie`` for ``/movie/{movie_id}/credits``).

    Among the top ``depth`` tools, each required identifier the query does not carry brings in its
    best producer by the query's own score, if that score is at least ``min_score`` (pool standard
    deviations; None: any), placed right ``after`` (or ``before``) its consumer; at most ``max_added``
    tools per search, never more than k in all. ``path_only``: only identifiers that are REST path
    parameters (``{movie_id}``), which a request can never fill itself.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = True
    depth: int = Field(default=5, ge=1, le=50)
    min_score: float | None = None
    max_added: int = Field(default=2, ge=1, le=10)
    placement: Literal["before", "after"] = "after"
    path_only: bool = True


class MemoryConfig(BaseModel):
    """The tool-use memory (``toolret.memory``): recorded bundles as a signal, and fitted weights."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    history_weight: float = Field(
        default=0.0, ge=0, description="Weight of the memory h(t) (toolret.memory.past_use); 0 ignores it."
    )
    history_neighbors: int = Field(default=10, ge=1, description="Past requests consulted per query.")
    use_learned: bool = Field(
        default=False, description="Score with the knowledge base's fitted weights when it has them."
    )
