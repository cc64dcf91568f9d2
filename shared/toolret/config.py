"""Retrieval configuration: one typed object with named presets.

Every knob of a search lives here, so a user changes behaviour by choosing a preset and
overriding a field, never by threading keyword arguments through the engine.

Example:
    >>> cfg = RetrievalConfig.preset("fast")
    >>> cfg.field_weights.description
    0.5
    >>> strict = cfg.with_(candidates_per_field=100, field_weights={"description": 0.4})
    >>> strict.candidates_per_field, strict.field_weights.description, strict.field_weights.parameters
    (100, 0.4, 0.1)
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from toolret.config_parts import DependencyConfig, LearnedWeights, PenaltyConfig
from toolret.documents.guards import DEFAULT_MAX_DOC_CHARS, DEFAULT_MAX_TOOLS
from toolret.documents.tool_doc import INDEX_FIELDS
from toolret.errors import ConfigError, QueryError
from toolret.llm.steps import LLMSteps

__all__ = [
    "PRESETS",
    "K",
    "DependencyConfig",
    "FieldWeights",
    "LearnedWeights",
    "PenaltyConfig",
    "PresetName",
    "RetrievalConfig",
    "validate_k",
]

PresetName = Literal["fast", "balanced", "full"]
PRESETS: tuple[PresetName, ...] = ("fast", "balanced", "full")
#: How many tools a search returns: a count, or ``"auto"`` for a precise set (RetrievalConfig.auto_*).
K: TypeAlias = int | Literal["auto"]
#: Weight of the derived profile field (offline: the description's first sentence and keywords
#: from the tool's and its parameters' names; with an LLM: function, tags, when to use).
PROFILE_WEIGHT = 0.1
#: The balanced preset's split gate (RetrievalConfig.split_gate): a sub-task must match its best tool at
#: least as well (raw cosine) as the whole request matches that tool. Ungated, the offline planner split
#: 37 % of ToolE-single requests and cost R@5 there (docs/method.md).
BALANCED_SPLIT_GATE = 0.0
#: Weight of the tool-use memory h(t) in [0, 1] in balanced and full. Scores are in standard deviations
#: over the candidate pool (a clear best tool sits 2-3 above the pool), so memory counts about as much as
#: a clearly better match (it was 0.5 when scores lay in [0, 1]).
MEMORY_WEIGHT = 2.0


class FieldWeights(BaseModel):
    """w_f of the MFTR score S = sum_f w_f * S_f + b - P.

    Defaults: chosen leaving one dev set out (``toolret bench --lodo``, docs/method.md) among
    the MFTR paper's heuristic weights (desc .35, params .25, response .15, examples .25)
    and a description-led profile, which every fold but one preferred.

    A tool that has nothing for a field (no examples, say) is scored on the fields it has:
    the weights are renormalised over its non-empty fields, so sparse documentation is not
    punished as if it were irrelevant.
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


class RetrievalConfig(BaseModel):
    """How a search runs. Use :meth:`preset` and override fields with :meth:`with_`.

    ``fast``: hybrid multi-field retrieval with MFTR scoring. ``balanced``: + the offline
    query planner, per-sub-task fusion, tool-use memory and fitted weights when the knowledge
    base has them, and a cross-encoder rerank when ``cross_encoder`` is set. ``full``: + the LLM
    planner (rewrite, sub-tasks, variants, field-aligned queries), LLM listwise reranking and
    self-reflection with the LLM coverage judge; without an LLM the planner and reranker run their
    offline paths, reflection is skipped, and the trace says so.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = "fast"
    field_weights: FieldWeights = Field(default_factory=FieldWeights)
    bias: float = 0.0
    fusion: Literal["heuristic", "learned"] = Field(
        default="heuristic",
        description="How words and meaning are weighed per request: 'heuristic' (the default) is the hand-set "
        "MFTR formula below (lexical_weight, evidence_slope, the floors, hubness_weight, cosine_weight); "
        "'learned' reads the kind of request from its candidates and the registry "
        "(toolret.scoring.learned_fusion, checked leaving one registry out, docs/method.md section 4c) and "
        "ignores those numbers. Opt-in until its engine-level bench and k='auto' re-check are done (issue 43).",
    )
    intent_without_arguments: bool = Field(
        default=False,
        description="Match every field but parameters against the request without its argument values (paths, "
        "URLs, e-mail addresses, quoted strings, file names, repository slugs, @mentions, stand-alone numbers; "
        "toolret.scoring.intent), by BM25 and by the embedder; the parameters field and the parameter-missing "
        "penalty still read the whole request. Off by default: on the dev sets it cost mean R@5 .004 "
        "(restbench_spotify -.022; docs/method.md section 3a).",
    )
    lexical_weight: float = Field(
        default=0.29,
        ge=0,
        le=1,
        description="Share of the lexical (BM25) signal within each field; the rest is dense.",
    )
    lexical_normalization: Literal["max", "bound"] = Field(
        default="bound",
        description="Divide a field's BM25 score by the best candidate's ('max') or by the query's "
        "achievable score ('bound', see LexicalIndex.upper_bound).",
    )
    normalization: Literal["bound", "minmax", "zscore"] = Field(
        default="zscore",
        description="How each field's BM25 and cosine are made comparable before they are mixed: 'bound' "
        "(BM25 / the query's achievable score, cosine clipped to [0, 1]), 'minmax' (each signal rescaled to "
        "[0, 1] over the query's candidate pool) or 'zscore' (standardised over the pool). See docs/method.md.",
    )
    lexical_floor: float = Field(
        default=0.0,
        ge=0,
        le=1,
        description="minmax: a field's BM25 is divided by max(best candidate, lexical_floor x the query's "
        "achievable score), so a pool where every lexical match is weak is not stretched to 1.",
    )
    lexical_sd_floor: float = Field(
        default=0.08,
        ge=0,
        le=1,
        description="zscore: a field's BM25 deviation over the pool is taken as at least this share of the "
        "query's achievable BM25 (the score of a tool matching every query word), so a field where almost "
        "every candidate scores 0 does not turn one matching word into ten standard deviations: a lexical "
        "z-score is at most 1 / lexical_sd_floor times the share of the query a tool matches, on 30 tools "
        "as on 30,000 (docs/method.md, section 4a).",
    )
    dense_sd_floor: float = Field(
        default=0.05,
        ge=0,
        le=1,
        description="zscore: the cosine deviation over the pool is taken as at least this (cosine units).",
    )
    min_field_pool: int = Field(
        default=5,
        ge=0,
        description="zscore: a field fewer candidates than this have (LLM-written questions of one tool) is "
        "standardised with the statistics of all the query's fields instead of its own.",
    )
    evidence_slope: float = Field(
        default=0.5,
        description="How far the lexical share follows the query's lexical evidence (rare registry words, "
        "identifiers, argument values; toolret.scoring.evidence): logit(beta_q) = logit(lexical_weight) + "
        "evidence_slope x evidence(q). 0 keeps lexical_weight for every query.",
    )
    hubness_weight: float = Field(
        default=-0.2,
        ge=-1,
        le=1,
        description="The description's cosine becomes cosine - hubness_weight x the tool's neighbourhood density "
        "in the registry (mean cosine to its 10 nearest other tools, copies above 0.95 excluded, computed at "
        "index time; "
        "toolret.index.hubness) before normalisation. Negative (the default, chosen leaving one dev set "
        "out) favours tools in dense regions of the registry; positive demotes hubs (CSLS); 0 turns it off.",
    )
    cosine_weight: float = Field(
        default=2.5,
        ge=0,
        description="The embedder's own cosine on its absolute scale: cosine_weight x (the description's raw "
        "cosine - its mean over the pool) is added to the fused z-scores, so the field evidence reorders tools "
        "the embedder sees as close but cannot overturn a wide cosine gap, on 30 tools as on 30,000 "
        "(docs/method.md, section 4a). 0 turns it off.",
    )
    candidates_per_field: int = Field(default=50, ge=1, le=10_000)
    name_match_boost: float = Field(default=0.2, ge=0)
    exact_name_boost: float = Field(
        default=3.0,
        ge=0,
        description="Added when the whole query is a tool's name or id (an agent asking for a tool by name, "
        "as LlamaIndex agents do): on the pool-relative scale, enough to put that tool first (2 x cosine_weight "
        "is added with it, the widest gap the embedder's anchor can open).",
    )
    penalty: PenaltyConfig = Field(default_factory=PenaltyConfig)
    planner: Literal["none", "offline", "llm"] = Field(
        default="none",
        description="Query planning: 'offline' splits multi-part requests into sub-tasks (balanced); "
        "'llm' asks the knowledge base's LLM (full), falling back to 'offline' without one.",
    )
    n_variants: int = Field(default=2, ge=0, le=3, description="Query variants per sub-task an LLM planner adds.")
    prf_docs: int = Field(
        default=0,
        ge=0,
        le=10,
        description="Pseudo-relevance feedback for the LLM planner: this many top BM25 tools of the raw query "
        "(name and first sentence) are shown to it, as data, so its variants use the registry's vocabulary "
        "(full: 3). The offline planner ignores it.",
    )
    llm_timeout: float = Field(default=10.0, gt=0, description="Seconds an LLM step may take before it falls back.")
    llm_budget_s: float = Field(
        default=30.0,
        ge=0,
        description="Seconds all LLM steps of one search may take together; once spent, later LLM steps run "
        "their offline path (trace: fallback). 0 keeps every search offline.",
    )
    llm_steps: LLMSteps = Field(
        default_factory=LLMSteps, description="Retries, a malformed answer, instructions (toolret.llm.steps)."
    )
    whole_query_budget: bool = Field(
        default=True,
        description="With sub-tasks, the whole request also gets a share of the k slots.",
    )
    split_gate: float | None = Field(
        default=None,
        ge=0,
        description="Balanced: a sub-task is a need of its own only when it matches its best tool (raw cosine) no "
        "worse, less this, than the whole request matches its own best tool; otherwise it is a fragment "
        '("I\'m moving to Japan."), as is a statement that asks nothing (planning.asks_for_something). With fewer '
        "than two sub-tasks left the request is ranked as one. Offline plans only; None keeps every split.",
    )
    split_clear: float = Field(
        default=2.5,
        ge=0,
        description="With split_gate: a sub-task whose best tool stands this many standard deviations above "
        'its candidate pool is kept however its cosine compares ("send an email to Bob about it").',
    )
    history_weight: float = Field(
        default=0.0,
        ge=0,
        description="Weight of the tool-use memory h(t) (toolret.memory.past_use); 0 ignores recorded bundles.",
    )
    history_neighbors: int = Field(default=10, ge=1, description="Past requests consulted per query.")
    use_learned: bool = Field(
        default=False, description="Score with the knowledge base's fitted weights when it has them."
    )
    reranker: Literal["none", "cross_encoder", "llm"] = Field(
        default="none",
        description="Post-retrieval rerank of the top candidates: 'cross_encoder' uses cross_encoder when set "
        "(else skipped); 'llm' asks the knowledge base's LLM (falling back to the cross-encoder, else none).",
    )
    cross_encoder: str | None = Field(
        default=None, description="A sentence-transformers CrossEncoder name or local path (no default model ships)."
    )
    rerank_mode: Literal["listwise", "pointwise"] = Field(default="listwise", description="How the LLM reranker asks.")
    rerank_top_n: int = Field(default=10, ge=1, le=200, description="Candidates the reranker reads.")
    rerank_weight: float = Field(
        default=1.0, ge=0, le=1, description="Cross-encoder share of the reranked score; the rest is MFTR."
    )
    drop_irrelevant: bool = Field(default=True, description="The LLM reranker may drop tools it marks irrelevant.")
    reflect_rounds: int = Field(
        default=0,
        ge=0,
        le=5,
        description="Self-reflection rounds: re-query sub-tasks no selected tool covers (0 turns it off).",
    )
    reflect_judge: Literal["offline", "llm"] = Field(
        default="offline", description="Who judges coverage: the score threshold, or the LLM (offline without one)."
    )
    coverage_threshold: float = Field(
        default=0.4, ge=0, le=1, description="Offline coverage: a sub-task is covered by a tool scoring at least this."
    )
    auto_margin: float = Field(
        default=1.0,
        ge=0,
        description="k='auto' keeps the request's tools scoring within this margin of its best (an outer bound; "
        "auto_ratio usually cuts first).",
    )
    auto_ratio: float | None = Field(
        default=0.26,
        ge=0,
        le=1,
        description="k='auto' keeps the request's tools whose field evidence (the score without the embedder's "
        "anchor: z-scores over the pool) is at least (1 - auto_ratio) x the best's (standing out at least 74 % as "
        "far as the best); None: the margin alone. Chosen by TRACC on the dev sets (docs/method.md section 10).",
    )
    auto_max_k: int = Field(default=5, ge=1, description="Most tools k='auto' returns.")
    auto_floor: Literal["calibrated"] | None = Field(
        default="calibrated",
        description="k='auto' returns no tools for a request no tool serves (a greeting, a general question): "
        "'calibrated' applies the embedding model's measured floor (toolret.search.relevance_floor; none for "
        "a model without one, said in the trace); None: never empty.",
    )
    dependencies: DependencyConfig = Field(
        default_factory=DependencyConfig,
        description="Add the producer of a chosen tool's unfilled identifier (search, then details); "
        "k='auto' keeps it with its consumer (docs/method.md section 10b).",
    )
    auto_subtask_margin: float | None = Field(
        default=1.0,
        ge=0,
        description="k='auto' adds each sub-task's best tool unless it scores more than this below the request's "
        "best tool (a fragment no tool answers well); None adds every sub-task's best tool.",
    )
    fields: tuple[str, ...] | None = Field(
        default=None,
        description="Index fields a search uses (None: all of toolret.documents.tool_doc.INDEX_FIELDS); "
        "switch fields off for ablations (`toolret eval --fields`).",
    )
    max_query_chars: int = Field(default=8_000, ge=16)
    max_k: int = Field(default=200, ge=1)
    max_tools: int = Field(
        default=DEFAULT_MAX_TOOLS,
        ge=1,
        description="Most tools a knowledge base holds (add/sync refuse more; docs/security.md).",
    )
    max_doc_chars: int = Field(
        default=DEFAULT_MAX_DOC_CHARS, ge=1_000, description="Largest tool document, in characters of its stored JSON."
    )

    def __init__(self, **data: object) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ())) or "config"
            raise ConfigError(f"RetrievalConfig.{where}: {first.get('msg', exc)}") from None

    @field_validator("name")
    @classmethod
    def _known_name(cls, value: str) -> str:
        return value.strip() or "custom"

    @field_validator("fields")
    @classmethod
    def _known_fields(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is None:
            return None
        unknown = [f for f in value if f not in INDEX_FIELDS]
        if unknown:
            raise ConfigError(
                f"unknown field(s) {', '.join(map(repr, unknown))}; choose from {', '.join(INDEX_FIELDS)}"
            )
        if not value:
            raise ConfigError("fields is empty: a search needs at least one field")
        return tuple(f for f in INDEX_FIELDS if f in value)

    def with_(self, **changes: Any) -> RetrievalConfig:
        """A copy with ``changes``, validated as the constructor validates.

        Unlike pydantic's ``model_copy(update=...)``, which accepts anything (a typo such as
        ``lexical_wieght`` would be silently ignored), an unknown name is a :class:`ConfigError`
        naming it and the nearest valid name, and every value is checked. A nested setting
        (``field_weights``, ``penalty``) may be given as a partial mapping: the fields named
        change, the others keep their values.

        >>> RetrievalConfig().with_(lexical_wieght=0.5)
        Traceback (most recent call last):
        ...
        toolret.errors.ConfigError: RetrievalConfig has no field 'lexical_wieght'; did you mean 'lexical_weight'?
        """
        data = self.model_dump()
        for key, value in changes.items():
            _check_name(key, type(self).model_fields, "RetrievalConfig has no field")
            nested = getattr(self, key)
            if isinstance(nested, BaseModel) and isinstance(value, Mapping):
                for inner in value:
                    _check_name(
                        inner,
                        type(nested).model_fields,
                        f"{type(nested).__name__} ({key}) has no field",
                        prefix=f"{key}.",
                    )
                value = {**nested.model_dump(), **value}
            data[key] = value.model_dump() if isinstance(value, BaseModel) else value
        return type(self)(**data)

    @property
    def active_fields(self) -> tuple[str, ...]:
        """The index fields this config searches (all unless ``fields`` narrows them)."""
        return self.fields if self.fields is not None else INDEX_FIELDS

    @classmethod
    def preset(cls, name: str) -> RetrievalConfig:
        """A named preset: ``fast``, ``balanced`` or ``full``."""
        if name not in PRESETS:
            raise ConfigError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}")
        if name == "fast":
            return cls(name=name)
        if name == "balanced":
            return cls(
                name=name,
                planner="offline",
                history_weight=MEMORY_WEIGHT,
                use_learned=True,
                reranker="cross_encoder",
                split_gate=BALANCED_SPLIT_GATE,
            )
        return cls(
            name=name,
            planner="llm",
            history_weight=MEMORY_WEIGHT,
            use_learned=True,
            split_gate=BALANCED_SPLIT_GATE,
            reranker="llm",
            reflect_rounds=2,
            reflect_judge="llm",
            prf_docs=3,
        )

    @classmethod
    def resolve(cls, value: RetrievalConfig | str | None, default: RetrievalConfig | None = None) -> RetrievalConfig:
        """Accept a config object, a preset name, or None (the default)."""
        if value is None:
            return default or cls.preset("fast")
        if isinstance(value, RetrievalConfig):
            return value
        if isinstance(value, str):
            return cls.preset(value)
        raise ConfigError(f"config must be a RetrievalConfig or a preset name, not {type(value).__name__}")

    @classmethod
    def for_llm(cls, value: RetrievalConfig | str | None, llm: Any) -> RetrievalConfig | str | None:
        """The adapters' default: ``value`` when given, else ``"full"`` when an LLM is given, else None.

        An agent that hands toolret a chat model expects it to be used (planning, reranking,
        coverage); without one the knowledge base's own config applies.

        >>> RetrievalConfig.for_llm(None, llm=object()), RetrievalConfig.for_llm("fast", llm=object())
        ('full', 'fast')
        """
        if value is not None:
            return value
        return "full" if llm is not None else None


def _check_name(name: str, known: Mapping[str, Any], what: str, *, prefix: str = "") -> None:
    if name in known:
        return
    near = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    hint = f"; did you mean {near[0]!r}?" if near else f"; valid names: {', '.join(known)}"
    raise ConfigError(f"{what} {prefix + name!r}{hint}")


def validate_k(k: Any, config: RetrievalConfig | None = None) -> K:
    """``k`` if it is a positive integer (at most ``config.max_k``) or ``"auto"``, else :class:`QueryError`.

    The one check of ``k`` for the engine, every adapter and the CLI (QueryError is a ValueError
    too). ``"auto"`` is one word in any case (``"AUTO"``, as ``toolret search -k AUTO`` takes it).

    >>> validate_k(5), validate_k("AUTO")
    (5, 'auto')
    >>> validate_k(0)
    Traceback (most recent call last):
    ...
    toolret.errors.QueryError: k must be a positive integer or 'auto', not 0
    """
    if isinstance(k, str) and k.strip().lower() == "auto":
        return "auto"
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise QueryError(f"k must be a positive integer or 'auto', not {k!r}")
    limit = config.max_k if config is not None else RetrievalConfig.model_fields["max_k"].default
    if k > limit:
        raise QueryError(f"k={k} exceeds max_k={limit} (RetrievalConfig.max_k)")
    return k
