"""Prepare a GPU run of the embedder recipes (issue 26): everything that needs toolret, done here.

The accelerator machine has torch and transformers but not toolret's dependencies, so this
script writes one self-contained bundle that ``experiments/gpu_train.py`` (torch only) reads:

* the training pairs of every registry (``benchmark_pairs``, the recipe's balance and cap), with
  the documents as the index renders them;
* **hard negatives mined by the engine itself**: ``fast``'s top 30 for each training request with
  the stock model, minus the relevant tools, tools sharing a relevant tool's name (bfcl's variants
  of one function) and tools whose document equals a relevant one's (issue 26, item 1);
* the batch plan of each fold (``plan_batches``, seed 0), so the GPU run trains on exactly the
  batches the CPU trainer would;
* the texts the engine embeds when it evaluates each dev set's 500-query sample with ``fast`` and
  ``balanced`` (recorded through the stock model), so fold models can embed them there and the
  whole pipeline can be scored here with those vectors (``experiments/gpu_eval.py``);
* the stock model's scores of that same evaluation, the baseline.

Run: ``PYTHONPATH=experiments .venv/bin/python experiments/gpu_prep.py --out .gpu``.

Not ported to issue 42's two-stage recipe (:mod:`toolret.training.recipe`): these bundles train
one stage over ``TRAIN_SETS``. A GPU loan for the recipe needs stage 1's batches and a stage-2
run from its weights; the shipped model and its folds were trained on the CPU instead.
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from toolret.eval.folds import FOLDS, REGISTRY, TRAIN_FOLDS, TRAIN_SETS
from toolret.index.embedding import CallableEmbedder, default_model_path, resolve_embedder
from toolret.training.batches import plan_batches
from toolret.training.benchmarks import DEFAULT_CAP, benchmark_pairs, evaluate_model, registry_tools
from toolret.training.negatives import mine_hard_negatives
from toolret.training.pairs import document_text


def record_eval_texts(root: Path, name: str) -> tuple[list[str], dict[str, Any]]:
    """The texts ``evaluate_model`` embeds for ``name`` (stock model), and its scores."""
    stock = resolve_embedder(None)
    seen: dict[str, None] = {}

    def embed(texts: list[str]) -> np.ndarray:
        for t in texts:
            seen.setdefault(t, None)
        return stock.embed(texts)

    recorder = CallableEmbedder(embed, name=stock.name)
    scores = evaluate_model(root, [name], recorder)
    return list(seen), scores[name]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--benchmarks", default="../shared/benchmarks")
    ap.add_argument("--out", default=".gpu")
    ap.add_argument("--no-mining", action="store_true", help="no hard negatives (the recipe uses none)")
    args = ap.parse_args()
    root, out = Path(args.benchmarks), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    pairs = benchmark_pairs(root, TRAIN_SETS, cap=DEFAULT_CAP, seed=0)
    tools = registry_tools(root, TRAIN_SETS)
    docs = {r: {t: document_text(d) for t, d in ts.items()} for r, ts in tools.items()}
    print(f"{len(pairs)} pairs over {len(tools)} registries", flush=True)
    # The product's mining (toolret.training.negatives): fast's top 30 with the stock model, false
    # negatives (relevant, same name, same document or description) removed, 8 kept per pair.
    raw: dict[str, Any] = {}
    if not args.no_mining:
        pairs = mine_hard_negatives(pairs, tools, per_pair=30, cache=out / "mined.json")
        raw = json.loads((out / "mined.json").read_text())

    index = {id(p): i for i, p in enumerate(pairs)}
    plans = {"all": [[index[id(p)] for p in b] for b in plan_batches(pairs, batch_size=32, seed=0)]}
    for fold in TRAIN_FOLDS:
        left = {REGISTRY[s] for s in FOLDS[fold]}
        kept = [p for p in pairs if p.registry not in left]
        plans[fold] = [[index[id(p)] for p in b] for b in plan_batches(kept, batch_size=32, seed=0)]
    bundle: dict[str, Any] = {
        "pairs": [
            {
                "registry": p.registry,
                "query": p.query,
                "tool": p.tool_id,
                "relevant": sorted(p.relevant),
                "negatives": [n.tool_id for n in p.negatives],
                # The engine's rank of each (0 = its first result), for variants that skip the top.
                "ranks": [raw[p.registry][p.query].index(n.tool_id) for n in p.negatives] if raw else [],
            }
            for p in pairs
        ],
        "docs": docs,
        "names": {r: {t: d.name for t, d in ts.items()} for r, ts in tools.items()},
        "plans": plans,
        "folds": {f: list(FOLDS[f]) for f in TRAIN_FOLDS},
    }
    texts_file = out / "eval_texts.json"
    if not texts_file.is_file():
        texts: dict[str, list[str]] = {}
        baseline: dict[str, Any] = {}
        for name in TRAIN_SETS:
            t0 = time.perf_counter()
            texts[name], baseline[name] = record_eval_texts(root, name)
            print(f"{name}: {len(texts[name])} texts, {baseline[name]}, {time.perf_counter() - t0:.0f} s", flush=True)
        texts_file.write_text(json.dumps(texts))
        (out / "baseline.json").write_text(json.dumps(baseline, indent=2))
    bundle["eval_texts"] = json.loads(texts_file.read_text())
    with gzip.open(out / "bundle.json.gz", "wt") as f:
        json.dump(bundle, f)
    print("model:", default_model_path())


if __name__ == "__main__":
    main()
