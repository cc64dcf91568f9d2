"""Choosing the dependency stage's setting by leaving one dev set out (docs/method.md section 10b).

Each dev set's sampled queries (<= 500, seed 0) are run once per preset up to the stage the
dependency step follows (fusion, rerank, reflection), for k=10 and for ``k="auto"``; every
setting of :class:`toolret.config.DependencyConfig` is then applied to those same states by
:func:`toolret.search.stages.finish_search`, so a setting costs milliseconds per query and
the figures are the engine's own. For each set in turn, the setting with the best mean of
(R@5 + NDCG@10 + TRACC)/3 over the other sets, among those that lose none of the three on any of
them against the stage switched off, is scored on the set left out.

Run: ``python -m toolret.eval.dependency_sweep ../shared/benchmarks --preset fast balanced``.
"""

from __future__ import annotations

import argparse
import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from toolret.config import DependencyConfig, RetrievalConfig
from toolret.eval.datasets import load_dataset, sample_queries
from toolret.eval.metrics import completeness_at_k, ndcg_at_k, recall_at_k, tracc
from toolret.search.stages import finish_search

__all__ = ["grid", "lodo_choice", "main", "sweep_dataset"]

DEV_SETS = ("toole_single", "toole_multi", "bfcl", "restbench_tmdb", "restbench_spotify", "apibench")
METRICS = ("r@5", "ndcg@10", "c@10", "tracc", "set_recall", "set_size")
OBJECTIVE = ("r@5", "ndcg@10", "tracc")
PLACEMENTS: tuple[Literal["before", "after"], ...] = ("before", "after")


def grid() -> list[DependencyConfig]:
    """The settings tried: off, then depth x min_score x max_added x placement x path_only."""
    settings = [DependencyConfig(enabled=False)]
    for depth, min_score, added, place, path_only in itertools.product(
        (1, 3, 5), (None, 0.0, 0.5), (1, 2, 3), PLACEMENTS, (False, True)
    ):
        settings.append(
            DependencyConfig(
                enabled=True, depth=depth, min_score=min_score, max_added=added, placement=place, path_only=path_only
            )
        )
    return settings


def label(setting: DependencyConfig) -> str:
    if not setting.enabled:
        return "off"
    scope = "/path" if setting.path_only else ""
    return f"d{setting.depth}/s{setting.min_score}/n{setting.max_added}/{setting.placement}{scope}"


def _run_to_finish(kb: Any, query: str, k: Any, config: RetrievalConfig) -> Any:
    search = kb.begin_search(query, k=k, config=config)
    search.run_stages()
    return search.state


def _finish(state: Any, config: RetrievalConfig) -> list[str]:
    state.config = config
    mark = len(state.trace)
    ids = finish_search(state).ids
    del state.trace[mark:]
    return ids


def sweep_dataset(folder: Path, preset: str, settings: Sequence[DependencyConfig], limit: int = 500) -> dict[str, Any]:
    """Every setting's mean metrics on one dev set (keys of :data:`METRICS`), by :func:`label`."""
    from toolret import ToolKnowledgeBase
    from toolret.eval.bench import CachedIndexing

    ds = load_dataset(folder)
    queries = sample_queries(ds.queries, limit)
    embedder = CachedIndexing(Path(".bench/dependency") / f"{ds.name}-embeddings.npz")
    base = RetrievalConfig.preset(preset)
    kb = ToolKnowledgeBase(None, config=base, embedder=embedder)
    embedder.indexing = True
    kb.add(ds.tool_docs())
    embedder.indexing = False
    embedder.cache.save()
    states = [(q, _run_to_finish(kb, q.query, 10, base), _run_to_finish(kb, q.query, "auto", base)) for q in queries]
    out: dict[str, Any] = {"n": len(queries)}
    for setting in settings:
        config = base.with_(dependencies=setting.model_dump())
        sums = dict.fromkeys(METRICS, 0.0)
        for q, ranked_state, auto_state in states:
            ranked = _finish(ranked_state, config)
            chosen = _finish(auto_state, config)
            sums["r@5"] += recall_at_k(q.relevant, ranked, 5)
            sums["ndcg@10"] += ndcg_at_k(q.relevant, ranked, 10)
            sums["c@10"] += completeness_at_k(q.relevant, ranked, 10)
            sums["tracc"] += tracc(q.relevant, chosen)
            sums["set_recall"] += len(set(q.relevant) & set(chosen)) / len(set(q.relevant))
            sums["set_size"] += len(chosen)
        out[label(setting)] = {m: round(v / len(queries), 4) for m, v in sums.items()}
    print(f"{ds.name} {preset}: {len(settings)} settings over {len(queries)} queries", flush=True)
    return out


def _objective(row: dict[str, float]) -> float:
    return sum(row[m] for m in OBJECTIVE) / len(OBJECTIVE)


def lodo_choice(results: dict[str, dict[str, Any]], eps: float = 1e-9) -> dict[str, Any]:
    """Per left-out set the setting chosen on the others and its figures; and the all-sets choice."""
    names = list(results)
    labels = [k for k in results[names[0]] if k != "n"]

    def choose(train: Sequence[str]) -> str:
        def loses(lab: str) -> bool:
            return any(results[s][lab][m] < results[s]["off"][m] - eps for s in train for m in OBJECTIVE)

        fair = [lab for lab in labels if not loses(lab)]
        return max(fair, key=lambda lab: (sum(_objective(results[s][lab]) for s in train), lab == "off"))

    folds = {held: choose([s for s in names if s != held]) for held in names}
    return {
        "folds": {held: {"setting": lab, **results[held][lab]} for held, lab in folds.items()},
        "all": choose(names),
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("benchmarks", type=Path)
    parser.add_argument("--preset", nargs="+", default=["fast", "balanced"])
    parser.add_argument("--sets", nargs="+", default=list(DEV_SETS))
    parser.add_argument("--limit", type=int, default=500)
    parser.add_argument("--json", type=Path, default=Path(".bench/dependency/sweep.json"))
    args = parser.parse_args(argv)
    settings = grid()
    report: dict[str, Any] = {}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    for preset in args.preset:
        results: dict[str, Any] = {}
        for name in args.sets:
            results[name] = sweep_dataset(args.benchmarks / name, preset, settings, args.limit)
            report[preset] = {"results": results}
            args.json.write_text(json.dumps(report, indent=1))  # each set as soon as it is done
        report[preset]["lodo"] = lodo_choice(results)
        print(json.dumps({preset: report[preset]["lodo"]}, indent=1), flush=True)
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
