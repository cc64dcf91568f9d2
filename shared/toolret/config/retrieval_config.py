"""RetrievalConfig: how a search runs, with its named presets, and ``validate_k``.

The top level holds what a user sets (the preset's stages, which fields, the LLM's time, the
limits); the numbers behind each stage are groups of their own (``fusion``, ``penalty``,
``planning``, ``rerank``, ``reflection``, ``auto_k``, ``dependencies``, ``memory``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from toolret.config.flat_names import FLAT_NAMES, REMOVED, route_flat_names
from toolret.config.scoring_settings import FieldWeights, FusionConfig, PenaltyConfig
from toolret.config.stage_settings import (
    AutoKConfig,
    DependencyConfig,
    MemoryConfig,
    PlanningConfig,
    ReflectionConfig,
    RerankConfig,
)
from toolret.documents.guards import DEFAULT_MAX_DOC_CHARS, DEFAULT_MAX_TOOLS
from toolret.documents.tool_doc import INDEX_FIELDS
from toolret.errors import ConfigError, QueryError
from toolret.llm.steps import LLMSteps

__all__ = ["BALANCED_SPLIT_GATE", "K", "MEMORY_WEIGHT", "PRESETS", "PresetName", "RetrievalConfig", "validate_k"]

PresetName = Literal["fast", "balanced", "full"]
PRESETS: tuple[PresetName, ...] = ("fast", "balanced", "full")
#: How many tools a search returns: a count, or ``"auto"`` for a precise set (RetrievalConfig.auto_k).
K: TypeAlias = int | Literal["auto"]
#: The balanced preset's split gate (PlanningConfig.split_gate): a sub-task must match its best tool at
#: least as well (raw cosine) as the whole request matches that tool.
BALANCED_SPLIT_GATE = 0.0
#: Weight of the tool-use memory h(t) in [0, 1] in balanced and full. Scores are in standard deviations
#: over the candidate pool, so memory counts about as much as a clearly better match.
MEMORY_WEIGHT = 2.0


class RetrievalConfig(BaseModel):
    """How a search runs. Use :meth:`preset` and override settings with :meth:`with_`.

    ``fast``: hybrid multi-field retrieval with MFTR scoring. ``balanced``: + the offline
    query planner, per-sub-task fusion, tool-use memory and fitted weights when the knowledge
    base has them, and a cross-encoder rerank when ``cross_encoder`` is set. ``full``: + the LLM
    planner (rewrite, sub-tasks, variants, field-aligned queries), LLM listwise reranking and
    self-reflection with the LLM coverage judge; without an LLM the planner and reranker run their
    offline paths, reflection is skipped, and the trace says so.

    >>> cfg = RetrievalConfig.preset("fast")
    >>> cfg.field_weights.description, cfg.fusion.method
    (0.5, 'heuristic')
    >>> strict = cfg.with_(candidates_per_field=100, field_weights={"description": 0.4}, auto_k={"max_k": 3})
    >>> strict.candidates_per_field, strict.field_weights.description, strict.auto_k.max_k
    (100, 0.4, 3)
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = "fast"
    field_weights: FieldWeights = Field(default_factory=FieldWeights)
    fusion: FusionConfig = Field(
        default_factory=FusionConfig, description="How words and meaning are weighed (toolret.scoring.mftr)."
    )
    intent_without_arguments: Literal["off", "words", "all"] = Field(
        default="words",
        description="Where a request's argument values (paths, URLs, e-mail addresses, quoted strings, file names, "
        "slugs, @mentions, numbers; toolret.scoring.intent) count as intent: 'words' (the default) matches every "
        "field but parameters by BM25 against the request without them, while the embedder reads the whole "
        "request; 'all' also embeds the request without them for those fields; 'off' reads the whole request "
        "everywhere. The parameters field and the parameter-missing penalty always read the whole request "
        "(docs/method.md §3a). True and False, as earlier versions took, mean 'all' and 'off'.",
    )

    @field_validator("intent_without_arguments", mode="before")
    @classmethod
    def _intent_mode_of_a_bool(cls, value: object) -> object:
        """Earlier versions took a bool: True embedded and matched the request without its values, False neither."""
        if isinstance(value, bool):
            return "all" if value else "off"
        return value

    candidates_per_field: int = Field(
        default=50, ge=1, le=10_000, description="Candidates each field's BM25 and dense search bring."
    )
    penalty: PenaltyConfig = Field(default_factory=PenaltyConfig, description="The parameter-missing penalty.")
    planner: Literal["none", "offline", "llm"] = Field(
        default="none",
        description="Query planning: 'offline' splits multi-part requests into sub-tasks (balanced); "
        "'llm' asks the knowledge base's LLM (full), falling back to 'offline' without one.",
    )
    planning: PlanningConfig = Field(default_factory=PlanningConfig, description="The planner's numbers.")
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
    reranker: Literal["none", "cross_encoder", "llm"] = Field(
        default="none",
        description="Post-retrieval rerank of the top candidates: 'cross_encoder' uses cross_encoder when set "
        "(else skipped); 'llm' asks the knowledge base's LLM (falling back to the cross-encoder, else none).",
    )
    cross_encoder: str | None = Field(
        default=None, description="A sentence-transformers CrossEncoder name or local path (no default model ships)."
    )
    rerank: RerankConfig = Field(default_factory=RerankConfig, description="The reranker's numbers.")
    reflection: ReflectionConfig = Field(default_factory=ReflectionConfig, description="Self-reflection.")
    auto_k: AutoKConfig = Field(default_factory=AutoKConfig, description="How k='auto' chooses its set.")
    dependencies: DependencyConfig = Field(
        default_factory=DependencyConfig,
        description="Add the producer of a chosen tool's unfilled identifier (search, then details); "
        "k='auto' keeps it with its consumer (docs/method.md section 10b).",
    )
    memory: MemoryConfig = Field(default_factory=MemoryConfig, description="The tool-use memory.")
    fields: tuple[str, ...] | None = Field(
        default=None,
        description="Index fields a search uses (None: all of toolret.documents.tool_doc.INDEX_FIELDS); "
        "switch fields off for ablations (`toolret eval --fields`).",
    )
    max_query_chars: int = Field(default=8_000, ge=16, description="Longest request read, in characters.")
    max_k: int = Field(default=200, ge=1, description="Largest k a search accepts.")
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
            if isinstance(raised := first.get("ctx", {}).get("error"), ConfigError) and not first.get("loc"):
                raise raised from None  # the whole config's check (a removed knob): its own words
            where = ".".join(str(p) for p in first.get("loc", ())) or "config"
            raise ConfigError(f"RetrievalConfig.{where}: {first.get('msg', exc)}") from None

    @model_validator(mode="before")
    @classmethod
    def _flat_names(cls, data: Any) -> Any:
        """Settings given by their flat 0.1 names go to their group (:mod:`toolret.config.flat_names`)."""
        return route_flat_names(data) if isinstance(data, Mapping) else data

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
        naming it and the nearest valid name, and every value is checked. A group
        (``fusion``, ``auto_k``, ``field_weights``, ...) may be given as a partial mapping: the
        settings named change, the others keep their values.

        >>> RetrievalConfig().with_(fusion={"lexical_wieght": 0.5})
        Traceback (most recent call last):
        ...
        toolret.errors.ConfigError: FusionConfig (fusion) has no field 'fusion.lexical_wieght'; did you mean 'lexical_weight'?
        """
        data = self.model_dump()
        for key in changes:
            if key not in FLAT_NAMES and key not in REMOVED:
                _check_name(key, {**type(self).model_fields, **FLAT_NAMES}, "RetrievalConfig has no field")
        for key, value in route_flat_names(changes).items():
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

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> RetrievalConfig:
        """pydantic's copy, except that an ``update`` is validated as :meth:`with_` validates it.

        pydantic's own ``model_copy(update=...)`` stores any key unchecked, so a flat 0.1 name or a
        typo would leave the setting unchanged without a word.
        """
        if update:
            return self.with_(**update)
        return super().model_copy(deep=deep)

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
        memory = MemoryConfig(history_weight=MEMORY_WEIGHT, use_learned=True)
        if name == "balanced":
            return cls(
                name=name,
                planner="offline",
                planning=PlanningConfig(split_gate=BALANCED_SPLIT_GATE),
                memory=memory,
                reranker="cross_encoder",
            )
        return cls(
            name=name,
            planner="llm",
            planning=PlanningConfig(split_gate=BALANCED_SPLIT_GATE, prf_docs=3),
            memory=memory,
            reranker="llm",
            reflection=ReflectionConfig(rounds=2, judge="llm"),
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
    import difflib  # here: only a misspelt name pays its import

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
