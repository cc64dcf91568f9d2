"""The scorer's settings: field weights, how words and meaning are fused, the parameter-missing
penalty, and a knowledge base's fitted scorer.

The numbers in :class:`FusionConfig` are fitted, not chosen: each was picked leaving one dev
registry out (``toolret bench --lodo``); why each has its value is in docs/method.md §4 and
docs/decisions/2026-11-27-config-constants.md. A user sets the method; the rest is for studies.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["FieldWeights", "FusionConfig", "LearnedWeights", "PROFILE_WEIGHT", "PenaltyConfig"]

#: Weight of the derived profile field (offline: the description's first sentence and keywords
#: from the tool's and its parameters' names; with an LLM: function, tags, when to use).
PROFILE_WEIGHT = 0.1


class FieldWeights(BaseModel):
    """w_f of the MFTR score S = sum_f w_f * S_f - P.

    A tool that has nothing for a field (no examples, say) is scored on the fields it has: the
    weights are renormalised over its non-empty fields, so sparse documentation is not punished
    as if it were irrelevant.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    description: float = Field(default=0.5, ge=0)
    parameters: float = Field(default=0.1, ge=0)
    response: float = Field(default=0.1, ge=0)
    examples: float = Field(default=0.15, ge=0)
    # Derived fields (toolret.index.expansion): the profile (function, tags, when to use), the
    # hypothetical questions a tool answers, and its key topics.
    profile: float = Field(default=PROFILE_WEIGHT, ge=0)
    questions: float = Field(default=0.15, ge=0)
    topics: float = Field(default=0.05, ge=0)

    def as_dict(self) -> dict[str, float]:
        return self.model_dump()


class FusionConfig(BaseModel):
    """How each field's BM25 and cosine are made comparable and mixed (``toolret.scoring.mftr``).

    Per field, both signals are standardised over the query's candidate pool (z-scores, with the
    deviation floors below), then mixed with the lexical share beta_q, where
    logit(beta_q) = logit(lexical_weight) + evidence_slope x evidence(q)
    + strength_slope x (strength(q) - strength_center), strength(q) being the best BM25 any tool's
    description reaches for the request, not standardised, in units of log(N + 1) for N tools
    (``toolret.scoring.mftr.lexical_strength``). The embedder's own cosine
    is added on its absolute scale (cosine_weight), and a tool named by the request gets the name
    boosts. ``method="learned"`` replaces the mix by the shipped learned fusion
    (``toolret.scoring.learned_fusion``) and ignores these numbers.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    method: Literal["heuristic", "learned"] = Field(
        default="heuristic",
        description="'heuristic': the hand-set formula with the numbers below; 'learned': the kind of request "
        "read from its candidates and the registry (opt-in, docs/method.md §4c).",
    )
    lexical_weight: float = Field(
        default=0.25, ge=0, le=1, description="Share of BM25 within each field, at neutral evidence and strength."
    )
    lexical_sd_floor: float = Field(
        default=0.02,
        ge=0,
        le=1,
        description="In the ranking, a field's BM25 deviation over the pool is at least this share of the "
        "query's achievable BM25 (docs/method.md §4a).",
    )
    evidence_sd_floor: float = Field(
        default=0.08,
        ge=0,
        le=1,
        description="The same floor for the field evidence that decides how many tools stand out (k='auto', "
        "balanced's split_clear, the rerankers): at 0.08 one matching word among zeros is not ten standard "
        "deviations. The ranking's own floor, lexical_sd_floor, may be lower: it orders tools, this counts them.",
    )
    dense_sd_floor: float = Field(
        default=0.05, ge=0, le=1, description="The cosine deviation over the pool is at least this (cosine units)."
    )
    min_field_pool: int = Field(
        default=5,
        ge=0,
        description="A field with fewer candidates than this is standardised with all the query's fields.",
    )
    evidence_slope: float = Field(
        default=0.5,
        description="How far the lexical share follows the query's lexical evidence "
        "(toolret.scoring.evidence); 0 keeps lexical_weight for every query.",
    )
    strength_slope: float = Field(
        default=3.5,
        ge=0,
        description="How far the lexical share follows the strength of the request's best word match: the top "
        "BM25 of the description field in units of log(N + 1), unstandardised (about how many words of full "
        "rarity a tool shares with the request); 0 turns it off.",
    )
    strength_center: float = Field(default=1.0, ge=0, description="The strength at which the strength term is neutral.")
    hubness_weight: float = Field(
        default=-0.2,
        ge=-1,
        le=1,
        description="The description's cosine becomes cosine - hubness_weight x the tool's neighbourhood "
        "density (toolret.index.hubness); negative favours tools in dense regions, 0 turns it off.",
    )
    cosine_weight: float = Field(
        default=5.0,
        ge=0,
        description="The embedder's own cosine, on its absolute scale, added to the fused z-scores; 0 turns it off.",
    )
    name_match_boost: float = Field(default=0.2, ge=0, description="Added when the request names the tool.")
    exact_name_boost: float = Field(
        default=3.0,
        ge=0,
        description="Added when the whole request is a tool's name or id (an agent asking for a tool by name).",
    )


class PenaltyConfig(BaseModel):
    """The parameter-missing penalty P = scale * sum_p sigmoid(alpha (tau - s_p)) * w_p (MFTR).

    ``s_p`` in [0, 1] says how well the query can fill parameter p; ``w_p`` is ``w_required``
    or ``w_optional``. ``scale`` maps the sum into the range of the field scores (standard
    deviations over the candidate pool by default); P is 0 when the query carries no argument
    values at all.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = True
    alpha: float = Field(default=15.0, gt=0)
    tau: float = Field(default=0.5, ge=0, le=1)
    w_required: float = Field(default=1.0, ge=0)
    w_optional: float = Field(default=0.3, ge=0)
    #: 0.1: ties 0.05 on the dev sets' mean (leave-one-dataset-out), with a better worst set.
    scale: float = Field(default=0.1, ge=0)


class LearnedWeights(BaseModel):
    """A linear scorer fitted by ``ToolKnowledgeBase.fit`` (pairwise logistic loss, toolret.memory.learn)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    features: list[str]
    coef: list[float]
    n_queries: int = 0
    n_pairs: int = 0
    loss_before: float = 0.0
    loss_after: float = 0.0
    #: Regularisation chosen on the held-out fifth of the fit queries; None = the hand-set
    #: formula was kept because no fitted scorer beat it there.
    l2: float | None = None
    n_validation: int = 0
    validation_recall: float = 0.0
    validation_recall_default: float = 0.0
