"""The leave-one-registry-out folds of the dev sets: which sets leave together.

Shared by model training (:mod:`toolret.training.benchmarks`) and the stage ablation
(:mod:`toolret.eval.stage_ablation`), so a fold means the same thing in every table.

Example:
    >>> registry_folds(["toole_single", "bfcl", "toole_multi", "my_registry"])
    {'toole': ['toole_single', 'toole_multi'], 'bfcl': ['bfcl'], 'my_registry': ['my_registry']}
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["DEV_SETS", "FOLDS", "REGISTRY", "registry_folds"]

#: Fold name -> the dev sets it leaves out together (ToolE's two sets share one registry; the two
#: RestBench sets leave together as one benchmark).
FOLDS: dict[str, tuple[str, ...]] = {
    "toole": ("toole_single", "toole_multi"),
    "bfcl": ("bfcl",),
    "apibench": ("apibench",),
    "restbench": ("restbench_tmdb", "restbench_spotify"),
}
DEV_SETS: tuple[str, ...] = tuple(s for sets in FOLDS.values() for s in sets)
#: Dev set -> its tool registry (ToolE's two sets share one).
REGISTRY: dict[str, str] = {s: ("toole" if s.startswith("toole") else s) for s in DEV_SETS}


def registry_folds(names: Iterable[str]) -> dict[str, list[str]]:
    """``names`` grouped by :data:`FOLDS`, in order of first appearance; a set :data:`FOLDS` does
    not know (a held-out registry) is a fold of its own."""
    fold_of = {s: f for f, sets in FOLDS.items() for s in sets}
    out: dict[str, list[str]] = {}
    for name in names:
        out.setdefault(fold_of.get(name, name), []).append(name)
    return out
