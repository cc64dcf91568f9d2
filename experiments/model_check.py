"""The fold table over the eleven dev sets for the shipped embedder (issue 34), and the rule's verdict.

Rows of the four training registries come from fold models (``experiments/gpu_eval.py``'s
``rows-recipe.json``: each fold model trained without that registry, scored with the whole engine
beside the stock model through the same path); rows of the five sets no training run saw come
from one ``toolret bench --compare-embedder packaged:all-MiniLM-L6-v2-onnx-int8`` run (the shipped
model itself is their left-out model). ``toolret train --lodo`` computes the same table on CPU.

Run: ``.venv/bin/python experiments/model_check.py --rows .gpu/results/rows-recipe.json --bench .bench/i34/bench.json``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from toolret.eval.folds import DEV_SETS, TRAIN_SETS
from toolret.index.embedding import SHIPPED_EMBEDDER_NAME, STOCK_EMBEDDER_NAME
from toolret.training.lodo_table import bench_rows, format_rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", required=True, help="fold rows of the training registries (gpu_eval.py)")
    ap.add_argument("--bench", required=True, help="bench.json of a run with --compare-embedder (stock)")
    ap.add_argument("--out", default=None, help="write the rows here (JSON)")
    args = ap.parse_args()
    rows = json.loads(Path(args.rows).read_text())
    unseen = [s for s in DEV_SETS if s not in TRAIN_SETS]
    summary = json.loads(Path(args.bench).read_text())
    rows += bench_rows(summary, SHIPPED_EMBEDDER_NAME, STOCK_EMBEDDER_NAME, unseen)
    missing = [s for s in DEV_SETS if s not in {r["set"] for r in rows}]
    print(format_rows(rows))
    if missing:
        print(f"\nmissing rows: {', '.join(missing)}")
    if args.out:
        Path(args.out).write_text(json.dumps(rows))


if __name__ == "__main__":
    main()
