"""The dev sets' folds: eval-only sets never train a model; the kinds of request are named."""

from __future__ import annotations

from pathlib import Path

from toolret.eval.folds import (
    DEV_SETS,
    EVAL_ONLY_SETS,
    FOLDS,
    NATURAL_SETS,
    REGISTRY_WORDS_SETS,
    TRAIN_FOLDS,
    TRAINABLE_FOLDS,
)


def test_every_benchmark_folder_is_a_dev_set(benchmarks: Path) -> None:
    folders = {p.name for p in benchmarks.iterdir() if (p / "tools.jsonl").is_file()}
    assert folders == set(DEV_SETS)


def test_no_eval_only_set_is_ever_trainable_and_the_shipped_recipe_is_within_the_trainable() -> None:
    trainable = {s for f in TRAINABLE_FOLDS for s in FOLDS[f]}
    assert not trainable & set(EVAL_ONLY_SETS)
    assert {"seal_dev", "slack_web", "mcp_catalog", "conala_pyfunc"} <= set(EVAL_ONLY_SETS)
    assert {"banking77", "hwu64", "snips", "tldr_cli"} <= trainable
    assert set(TRAIN_FOLDS) <= set(TRAINABLE_FOLDS)


def test_each_dev_set_is_of_one_kind_of_request() -> None:
    assert set(NATURAL_SETS) | set(REGISTRY_WORDS_SETS) == set(DEV_SETS)
    assert not set(NATURAL_SETS) & set(REGISTRY_WORDS_SETS)
    assert {"seal_dev", "bfcl", "toole_single"} <= set(REGISTRY_WORDS_SETS)
    assert {"slack_web", "mcp_catalog", "banking77", "hwu64", "conala_pyfunc"} <= set(NATURAL_SETS)
