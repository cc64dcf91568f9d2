"""Field ablation (Tool-DE's one-out study): how much each indexed field contributes.

Fields are switched off at search time (``RetrievalConfig.fields``), so one knowledge base
serves every row: "all" uses every index field, "-f" every field but ``f``.

Example:
    >>> one_out_configs(RetrievalConfig.preset("fast"), ["description", "profile"])[1][0]
    '-description'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolret.config import RetrievalConfig
from toolret.documents.tool_doc import INDEX_FIELDS
from toolret.eval.datasets import Dataset
from toolret.eval.runner import EvalReport, evaluate

__all__ = ["OFFLINE_FIELDS", "ConfigView", "one_out_configs", "run_ablation"]

#: The fields an offline index has (no LLM): the MFTR fields and the offline profile.
OFFLINE_FIELDS: tuple[str, ...] = ("description", "parameters", "response", "examples", "profile")


class ConfigView:
    """A knowledge base searched with one config, as the eval harness's retriever."""

    def __init__(self, kb: Any, config: RetrievalConfig, name: str) -> None:
        self.kb, self.config, self.name = kb, config, name

    def search(self, query: str, k: int | str = 5) -> Any:
        return self.kb.search(query, k=k, config=self.config)


def one_out_configs(base: RetrievalConfig, fields: Sequence[str]) -> list[tuple[str, RetrievalConfig]]:
    """("all", base over ``fields``) then ("-f", base without f) for each f."""

    def with_fields(kept: Sequence[str]) -> RetrievalConfig:
        return RetrievalConfig(**{**base.model_dump(), "fields": tuple(kept)})

    rows = [("all", with_fields(fields))]
    rows += [(f"-{f}", with_fields([g for g in fields if g != f])) for f in fields]
    return rows


def run_ablation(
    kb: Any,
    dataset: Dataset,
    *,
    base: RetrievalConfig,
    fields: Sequence[str] = OFFLINE_FIELDS,
    limit: int | None = None,
    name_level: bool = False,
) -> list[tuple[str, EvalReport]]:
    """Evaluate ``base`` with all ``fields`` and with each one left out, on one knowledge base."""
    unknown = [f for f in fields if f not in INDEX_FIELDS]
    if unknown:
        raise ValueError(f"unknown field(s): {unknown}")
    return [
        (
            label,
            evaluate(
                ConfigView(kb, cfg, label),
                dataset,
                ks=(1, 5, 10),
                limit=limit,
                name_level=name_level,
                method=label,
                curve_k=0,
            ),
        )
        for label, cfg in one_out_configs(base, fields)
    ]
