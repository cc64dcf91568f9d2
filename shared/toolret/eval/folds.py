"""The dev sets, which ones a shipped model may train on, and which sets leave together.

Shared by model training (:mod:`toolret.training.benchmarks`), the stage ablation
(:mod:`toolret.eval.stage_ablation`) and the model check, so a fold means the same thing in
every table. Folds leave out registries, not files (DESIGN §2b): ToolE's two sets share one
registry and leave together, and the two RestBench sets leave together as one benchmark.

Example:
    >>> registry_folds(["toole_single", "bfcl", "toole_multi", "my_registry"])
    {'toole': ['toole_single', 'toole_multi'], 'bfcl': ['bfcl'], 'my_registry': ['my_registry']}
    >>> "conala_pyfunc" in TRAIN_SETS
    False
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "DEV_SETS",
    "EVAL_ONLY_SETS",
    "FOLDS",
    "NATURAL_SETS",
    "REGISTRY",
    "REGISTRY_WORDS_SETS",
    "TRAINABLE_FOLDS",
    "TRAIN_FOLDS",
    "TRAIN_SETS",
    "registry_folds",
]

#: Fold name -> the dev sets it leaves out together, for every dev set of ``../shared/benchmarks``.
FOLDS: dict[str, tuple[str, ...]] = {
    "toole": ("toole_single", "toole_multi"),
    "bfcl": ("bfcl",),
    "apibench": ("apibench",),
    "restbench": ("restbench_tmdb", "restbench_spotify"),
    "tldr_cli": ("tldr_cli",),
    "tooleyes_pkg": ("tooleyes_pkg",),
    "taubench": ("taubench",),
    "nestful_nonexec": ("nestful_nonexec",),
    "conala_pyfunc": ("conala_pyfunc",),
    "banking77": ("banking77",),
    "hwu64": ("hwu64",),
    "snips": ("snips",),
    "seal_dev": ("seal_dev",),
    "slack_web": ("slack_web",),
    "mcp_catalog": ("mcp_catalog",),
}
#: Every dev set, in fold order: what benches and fold tables cover.
DEV_SETS: tuple[str, ...] = tuple(s for sets in FOLDS.values() for s in sets)
#: Sets whose licence keeps them out of any shipped model's training data (FORMAT.md: eval-only).
EVAL_ONLY_SETS: tuple[str, ...] = ("conala_pyfunc", "seal_dev", "slack_web", "mcp_catalog")
#: Every fold a shipped model may train on (FORMAT.md's train+eval registries).
TRAINABLE_FOLDS: tuple[str, ...] = tuple(f for f, sets in FOLDS.items() if not set(sets) & set(EVAL_ONLY_SETS))
#: The folds the shipped embedder's recipe trains on (docs/models.md): every train+eval registry
#: since issue 42 (:mod:`toolret.training.recipe` gives the two stages).
TRAIN_FOLDS: tuple[str, ...] = TRAINABLE_FOLDS
#: The dev sets the shipped embedder trains on.
TRAIN_SETS: tuple[str, ...] = tuple(s for f in TRAIN_FOLDS for s in FOLDS[f])
#: Sets whose requests are in the user's own words (what people type), and sets whose requests
#: restate the registry's own documentation: the model rule and the bench report a mean per group.
NATURAL_SETS: tuple[str, ...] = (
    "banking77",
    "hwu64",
    "snips",
    "tldr_cli",
    "slack_web",
    "mcp_catalog",
    "conala_pyfunc",
    "taubench",
)
REGISTRY_WORDS_SETS: tuple[str, ...] = tuple(s for s in DEV_SETS if s not in NATURAL_SETS)
#: Dev set -> its tool registry (ToolE's two sets share one).
REGISTRY: dict[str, str] = {s: ("toole" if s.startswith("toole_") else s) for s in DEV_SETS}

assert not set(TRAIN_SETS) & set(EVAL_ONLY_SETS), "an eval-only set must never train a shipped model"
assert set(TRAIN_FOLDS) <= set(TRAINABLE_FOLDS)


def registry_folds(names: Iterable[str]) -> dict[str, list[str]]:
    """``names`` grouped by :data:`FOLDS`, in order of first appearance; a set :data:`FOLDS` does
    not know (a held-out registry) is a fold of its own."""
    fold_of = {s: f for f, sets in FOLDS.items() for s in sets}
    out: dict[str, list[str]] = {}
    for name in names:
        out.setdefault(fold_of.get(name, name), []).append(name)
    return out
