"""Retrieval configuration: one typed object with named presets.

Every knob of a search lives here, so a user changes behaviour by choosing a preset and
overriding a setting, never by threading keyword arguments through the engine. The top level of
:class:`RetrievalConfig` is what a user sets; the numbers behind each stage are groups:
``fusion`` and ``penalty`` (:mod:`toolret.config.scoring_settings`), ``planning``, ``rerank``,
``reflection``, ``auto_k``, ``dependencies`` and ``memory`` (:mod:`toolret.config.stage_settings`).
The flat names of 0.1 still construct a config (:mod:`toolret.config.flat_names`).

Example:
    >>> cfg = RetrievalConfig.preset("fast")
    >>> cfg.field_weights.description
    0.5
    >>> strict = cfg.with_(candidates_per_field=100, field_weights={"description": 0.4})
    >>> strict.candidates_per_field, strict.field_weights.description, strict.field_weights.parameters
    (100, 0.4, 0.1)
"""

from __future__ import annotations

from toolret.config.retrieval_config import (
    BALANCED_SPLIT_GATE,
    MEMORY_WEIGHT,
    PRESETS,
    K,
    PresetName,
    RetrievalConfig,
    validate_k,
)
from toolret.config.scoring_settings import PROFILE_WEIGHT, FieldWeights, FusionConfig, LearnedWeights, PenaltyConfig
from toolret.config.stage_settings import (
    AutoKConfig,
    DependencyConfig,
    MemoryConfig,
    PlanningConfig,
    ReflectionConfig,
    RerankConfig,
)

__all__ = [
    "AutoKConfig",
    "BALANCED_SPLIT_GATE",
    "DependencyConfig",
    "FieldWeights",
    "FusionConfig",
    "K",
    "LearnedWeights",
    "MEMORY_WEIGHT",
    "MemoryConfig",
    "PRESETS",
    "PROFILE_WEIGHT",
    "PenaltyConfig",
    "PlanningConfig",
    "PresetName",
    "ReflectionConfig",
    "RerankConfig",
    "RetrievalConfig",
    "validate_k",
]
