"""What a search returns: the chosen tools and the explanation of how they were chosen."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ScoredTool", "SearchResult", "StagePath", "TraceStep"]

#: How a stage ran: ``offline`` deterministic code, ``llm`` a model call, ``fallback`` the
#: offline path after an LLM step failed or was unavailable, ``skipped`` not run.
StagePath = Literal["offline", "llm", "fallback", "skipped"]


class ScoredTool(BaseModel):
    """One retrieved tool with the evidence for its score."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    score: float
    field_scores: dict[str, float] = Field(default_factory=dict)
    penalty: float = 0.0
    subtask: str | None = None
    #: The best raw cosine between the query and any of the tool's fields: unlike ``score``
    #: (relative to this query's candidate pool), comparable across queries, so "does this
    #: request match any tool well at all?" can be asked of it.
    similarity: float = 0.0
    #: The part of ``score`` that is the embedder's anchor (``cosine_weight`` x the description's cosine
    #: minus the pool mean; docs/method.md section 4a). ``score - anchor`` is the field evidence in
    #: z-units, what ``k="auto"`` cuts on; 0 where a learned scorer or an LLM reranker set the score.
    anchor: float = 0.0
    #: The part of ``score`` the request's strength term moved (docs/method.md section 4a): the field
    #: evidence at this request's balance of words and meaning minus at the balance without it.
    strength_shift: float = 0.0
    #: The part of ``score`` the ranking's BM25 deviation floor moved (``fusion.lexical_sd_floor`` below
    #: ``fusion.evidence_sd_floor``; docs/method.md section 4a). ``score - anchor - strength_shift -
    #: floor_shift`` is the field evidence ``k="auto"`` cuts on.
    floor_shift: float = 0.0
    #: Set when the dependency stage (:mod:`toolret.search.dependencies`) brought this tool in: the
    #: id of the chosen tool whose identifier parameter it produces (``GET /search/movie`` for
    #: ``GET /movie/{movie_id}/credits``). ``k="auto"`` keeps such a tool with that tool.
    serves: str | None = None

    def evidence(self) -> dict[str, Any]:
        """The score and why, as the metadata an adapter puts on the document or node it returns
        (a LangChain ``Document``, a LlamaIndex node): score, per-field scores, penalty, sub-task, and the
        part of the score that is the embedder's own cosine (``anchor``)."""
        return {
            "score": self.score,
            "field_scores": dict(self.field_scores),
            "penalty": self.penalty,
            "subtask": self.subtask,
            "anchor": self.anchor,
            "strength_shift": self.strength_shift,
            "floor_shift": self.floor_shift,
        }


class TraceStep(BaseModel):
    """One stage of a search: what ran, how, and how long it took."""

    model_config = ConfigDict(frozen=True)

    stage: str
    path: StagePath
    ms: float
    note: str = ""


class SearchResult(BaseModel):
    """The tools chosen for a query, best first, with the trace of every stage."""

    model_config = ConfigDict(frozen=True)

    query: str
    tools: list[ScoredTool]
    trace: list[TraceStep] = Field(default_factory=list)
    plan: Any = None
    #: Tokens of the chosen tools' definitions, counted when a ``token_budget`` applied (the
    #: ``definitions`` trace step names the counter); None otherwise.
    tokens: int | None = None

    @property
    def ids(self) -> list[str]:
        return [t.id for t in self.tools]

    @property
    def total_ms(self) -> float:
        return sum(step.ms for step in self.trace)
