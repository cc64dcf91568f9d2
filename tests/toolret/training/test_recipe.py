"""The recipe's two stages on a few dozen real pairs: stage 2 continues stage 1, folds share stage 1."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path

import pytest

from toolret.eval.datasets import load_dataset
from toolret.training.pairs import TrainingPair, pairs_from_bundles
from toolret.training.recipe import FIRST_STAGE_SETS, first_stage_folder, train_recipe
from toolret.training.trainer import TrainConfig, base_identity, base_model_dir

pytestmark = pytest.mark.slow

CONFIG = TrainConfig(batch_size=8, save_every=2)


@pytest.fixture(scope="module")
def pairs_for(benchmarks: Path):  # type: ignore[no-untyped-def]
    """A few pairs per dev set named: ToolE stands for stage 1's registries, hwu64 for an intent set."""
    built: dict[str, list[TrainingPair]] = {}
    for name, registry in (("toole_single", "toole"), ("hwu64", "hwu64")):
        ds = load_dataset(benchmarks / name, split="train")
        queries = random.Random(0).sample(ds.queries, 24)
        tools = {d.id: d for d in ds.tool_docs()}
        built[name] = pairs_from_bundles(registry, tools, [(q.query, q.relevant) for q in queries])

    def build(sets: Sequence[str], _folder: Path) -> list[TrainingPair]:
        return [p for name in sets for p in built.get(name, [])]

    return build


def test_stage_two_trains_every_set_from_stage_ones_weights(pairs_for, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run = train_recipe(["toole_single", "hwu64"], CONFIG, tmp_path, pairs_for=pairs_for)
    assert run.finished and len(run.stages) == 2
    assert run.pairs_per_stage == [{"toole": 24}, {"hwu64": 24, "toole": 24}]
    first, second = (Path(r.model_dir) for r in run.stages)
    assert first == tmp_path / "stage1" / "model" and second == tmp_path / "stage2" / "model"
    # Stage 2's checkpoint names stage 1's weights (by content) as its start, not the stock model.
    state = json.loads((tmp_path / "stage2" / "checkpoint" / "state.json").read_text())
    stage2_pairs = pairs_for(["toole_single", "hwu64"], tmp_path)
    assert state["fingerprint"] == CONFIG.fingerprint(stage2_pairs, base_identity(first))
    assert state["fingerprint"] != CONFIG.fingerprint(stage2_pairs, base_identity(base_model_dir()))
    again = train_recipe(["toole_single", "hwu64"], CONFIG, tmp_path, pairs_for=pairs_for)
    assert [r.resumed_from for r in again.stages] == [r.total_steps for r in run.stages]  # nothing retrained


def test_a_run_without_stage_one_registries_trains_once_from_the_stock_model(pairs_for, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run = train_recipe(["hwu64"], CONFIG, tmp_path, pairs_for=pairs_for)
    assert run.finished and len(run.stages) == 1 and run.pairs_per_stage == [{"hwu64": 24}]
    assert not (tmp_path / "stage1").exists()


def test_folds_that_keep_every_stage_one_registry_share_one_stage_one(pairs_for, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    shared = first_stage_folder(tmp_path, ["toole_single", "hwu64"])
    assert shared == first_stage_folder(tmp_path, ["toole_single", "toole_multi", "snips"])
    assert shared != first_stage_folder(tmp_path, ["hwu64", "bfcl"])
    one = train_recipe(["toole_single", "hwu64"], CONFIG, tmp_path / "a", pairs_for=pairs_for, stage1_work=shared)
    two = train_recipe(["toole_single"], CONFIG, tmp_path / "b", pairs_for=pairs_for, stage1_work=shared)
    assert one.stages[0].resumed_from == 0
    assert two.stages[0].resumed_from == two.stages[0].total_steps  # found finished: not trained again
    assert set(FIRST_STAGE_SETS) >= {"toole_single", "bfcl", "apibench", "restbench_spotify"}


def test_an_interrupted_stage_one_stops_the_run_before_stage_two(pairs_for, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run = train_recipe(["toole_single", "hwu64"], CONFIG, tmp_path, pairs_for=pairs_for, max_steps=1)
    assert not run.finished and len(run.stages) == 1 and run.stages[0].steps == 1
    assert not (tmp_path / "stage2").exists()
