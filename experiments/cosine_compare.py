"""Plain cosine of two embedders on every dev set, side by side (issue 42's quick check).

The check a candidate embedder passes before the fold table: R@1 and R@5 of plain cosine over
``name: description`` (:class:`toolret.eval.baseline.CosineBaseline`) on each dev set's 500-query
sample (seed 0, as ``toolret bench``), for the current default and a candidate, with the means of
the two kinds of request (:data:`toolret.eval.folds.NATURAL_SETS` and the registry's own words).
``toolret bench --compare-embedder`` prints the same cosine rows with the whole engine beside them;
this script is the minutes-long version for choosing a recipe.

Usage:
    .venv/bin/python experiments/cosine_compare.py --candidate .train/cand/onnx [--base packaged:toolret-embed-mini]
        [--sets banking77,slack_web] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from toolret.eval.baseline import CosineBaseline
from toolret.eval.datasets import load_dataset
from toolret.eval.embedder_table import exposure
from toolret.eval.folds import DEV_SETS, NATURAL_SETS, REGISTRY, TRAIN_SETS
from toolret.index.embedding import resolve_embedder


def cosine_recall(root: Path, name: str, embedder: object, limit: int) -> dict[str, float]:
    """R@1 and R@5 of plain cosine on one set's sample."""
    ds = load_dataset(root / name).sample(limit, seed=0)
    base = CosineBaseline(ds.tools, embedder=embedder)
    qvecs = np.vstack(
        [base.embedder.embed([q.query for q in ds.queries[i : i + 256]]) for i in range(0, len(ds.queries), 256)]
    )
    r1 = r5 = 0.0
    for q, v in zip(ds.queries, qvecs, strict=True):
        ids = base.search_vector(v, k=5).ids
        rel = set(q.relevant)
        r1 += len(rel & set(ids[:1])) / len(rel)
        r5 += len(rel & set(ids[:5])) / len(rel)
    n = len(ds.queries)
    return {"r1": r1 / n, "r5": r5 / n}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path("../shared/benchmarks"))
    parser.add_argument("--base", default="packaged:toolret-embed-mini")
    parser.add_argument("--candidate", required=True, action="append")
    parser.add_argument("--sets", default=",".join(DEV_SETS))
    parser.add_argument("--limit", type=int, default=500)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    models = [args.base, *args.candidate]
    embedders = [resolve_embedder(m) for m in models]
    rows: dict[str, list[dict[str, float]]] = {}
    print(f"{'set':<18} {'kind':<8} " + " ".join(f"{Path(m).name[-22:]:>22}" for m in models))
    for name in args.sets.split(","):
        rows[name] = [cosine_recall(args.root, name, e, args.limit) for e in embedders]
        kind = "natural" if name in NATURAL_SETS else "registry"
        seen = exposure(
            name,
            has_train_split=(args.root / name / "train_queries.jsonl").is_file(),
            trained_on={REGISTRY[s] for s in TRAIN_SETS},
        )
        cells = " ".join(f"{r['r1']:.3f}/{r['r5']:.3f}".rjust(22) for r in rows[name])
        deltas = " ".join(f"{r['r5'] - rows[name][0]['r5']:+.3f}" for r in rows[name][1:])
        print(f"{name:<18} {kind:<8} {cells}   dR@5 {deltas} {seen}", flush=True)
    for group, members in (("natural", NATURAL_SETS), ("registry", [s for s in rows if s not in NATURAL_SETS])):
        present = [s for s in members if s in rows]
        if present:
            means = [np.mean([rows[s][i]["r5"] for s in present]) for i in range(len(models))]
            print(f"mean R@5 {group:<9} " + " ".join(f"{m:.4f}" for m in means))
    if args.json:
        args.json.write_text(json.dumps({"models": models, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
