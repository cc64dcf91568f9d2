"""The shipped embedder's recipe in two stages: the registries' own words, then every registry.

Stage 1 trains the stock MiniLM on the four registries whose requests restate their tools'
documentation (ToolE, BFCL, APIBench, RestBench: :data:`FIRST_STAGE_FOLDS`); it is the recipe of
the first toolret-embed-mini, unchanged. Stage 2 starts from stage 1's weights and trains on every
train+eval registry, the intent sets' training splits and tldr-pages included.

Why two stages rather than one mix (docs/decisions/2026-11-27-embedder-natural-requests.md):
mixed in one run, the 30k intent and shell requests take two thirds of the batches and the
small REST registries fall (RestBench Spotify R@5 .785 -> .715); repeating the small
registries to win their share back costs the natural requests (slack_web +.042 -> +.021). Stage 1
gives the registries' own words their full share, stage 2 adds what people type without
repeating anything.

A fold of the leave-one-registry-out table runs both stages without the left-out registry, so a
fold model never sees it at any stage (:func:`toolret.training.benchmarks.run_fold`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from toolret.eval.folds import FOLDS
from toolret.training.pairs import TrainingPair
from toolret.training.trainer import TrainConfig, TrainResult

__all__ = ["FIRST_STAGE_FOLDS", "FIRST_STAGE_SETS", "RecipeRun", "first_stage_folder", "train_recipe"]

#: The registries of stage 1: the first toolret-embed-mini's recipe.
FIRST_STAGE_FOLDS: tuple[str, ...] = ("toole", "bfcl", "apibench", "restbench")
FIRST_STAGE_SETS: tuple[str, ...] = tuple(s for f in FIRST_STAGE_FOLDS for s in FOLDS[f])


class RecipeRun(BaseModel):
    """The stages one run trained (one or two): results and pairs per registry; ``final`` is the last."""

    model_config = ConfigDict(frozen=True)

    stages: list[TrainResult]
    pairs_per_stage: list[dict[str, int]]
    #: Stage 2 ran to its end (an interrupted run stops in whichever stage it was).
    finished: bool

    @property
    def final(self) -> TrainResult:
        return self.stages[-1]


def train_recipe(
    sets: Sequence[str],
    config: TrainConfig,
    work: str | Path,
    *,
    pairs_for: Callable[[Sequence[str], Path], list[TrainingPair]],
    stage1_work: str | Path | None = None,
    max_steps: int | None = None,
    on_step: Callable[[int, int, float], None] | None = None,
) -> RecipeRun:
    """Stage 1 on ``sets`` ∩ :data:`FIRST_STAGE_SETS` into ``work/stage1``, stage 2 on ``sets`` from
    its weights into ``work/stage2``; ``pairs_for(sets, stage_folder)`` builds a stage's pairs.

    ``stage1_work`` (default ``work/stage1``) lets runs share stage 1: the folds that leave out a
    registry stage 1 never trains on all train the same stage 1, and a finished run's checkpoint
    matches a later run's fingerprint, so it is trained once. Each stage checkpoints on its own, so an interrupted run resumes in the stage it stopped in; ``max_steps`` bounds each
    stage of this call. With no stage-1 set in ``sets`` the run has one stage from the stock model.
    """
    from toolret.training.trainer import train

    work = Path(work)
    stages: list[TrainResult] = []
    counts: list[dict[str, int]] = []
    base: str | None = None
    first = [s for s in sets if s in FIRST_STAGE_SETS]
    if first:
        first_work = Path(stage1_work) if stage1_work is not None else work / "stage1"
        pairs = pairs_for(first, first_work)
        result = train(pairs, first_work, config, max_steps=max_steps, on_step=on_step)
        stages.append(result)
        counts.append(_counter(pairs))
        if not result.finished:
            return RecipeRun(stages=stages, pairs_per_stage=counts, finished=False)
        base = result.model_dir
    pairs = pairs_for(list(sets), work / "stage2")
    result = train(pairs, work / "stage2", config, base=base, max_steps=max_steps, on_step=on_step)
    stages.append(result)
    counts.append(_counter(pairs))
    return RecipeRun(stages=stages, pairs_per_stage=counts, finished=result.finished)


def first_stage_folder(out: str | Path, sets: Sequence[str]) -> Path:
    """Where the runs of a fold table keep the stage 1 trained on ``sets`` (its first-stage part).

    Named by the stage-1 registries it trains on, so every fold that leaves out a registry outside
    stage 1 (an intent set, tldr_cli...) finds the same folder.
    """
    kept = sorted({f for f in FIRST_STAGE_FOLDS if set(FOLDS[f]) & set(sets)})
    return Path(out) / ("stage1-" + "-".join(kept))


def _counter(pairs: Sequence[TrainingPair]) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in pairs:
        out[p.registry] = out.get(p.registry, 0) + 1
    return dict(sorted(out.items()))
