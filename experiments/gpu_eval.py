"""Score fold embedders trained by ``experiments/gpu_train.py`` with the whole engine, here.

Each fold model's vectors for the texts the engine embeds on its left-out sets come back from
the accelerator; a lookup embedder serves them, so ``evaluate_model`` runs the real ``fast`` and
``balanced`` pipelines (BM25, fields, fusion, k="auto") with the fold model's geometry. A text
the recording did not see (rare: a search path the stock run did not take) is embedded with the
stock model and counted. ``stock`` (the packaged model embedded the same way) is the baseline, so
precision differences of the transfer cancel out; baseline.json holds the int8 ONNX run too.

Run: ``PYTHONPATH=experiments .venv/bin/python experiments/gpu_eval.py --vectors DIR --variants recipe,hn1``.
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np

from toolret.eval.folds import FOLDS, TRAIN_FOLDS, TRAIN_SETS
from toolret.index.embedding import STOCK_EMBEDDER_NAME, CallableEmbedder, resolve_embedder
from toolret.training.benchmarks import evaluate_model
from toolret.training.lodo_table import format_rows


def lookup_embedder(texts: list[str], vectors: np.ndarray, name: str, misses: list[str]) -> Any:
    table = {t: vectors[i].astype(np.float32) for i, t in enumerate(texts)}
    stock = resolve_embedder(STOCK_EMBEDDER_NAME)  # the model the texts were recorded with

    def embed(batch: list[str]) -> np.ndarray:
        missing = [t for t in batch if t not in table]
        if missing:
            misses.extend(missing)
            for t, v in zip(missing, stock.embed(missing), strict=True):
                table[t] = v
        out = np.stack([table[t] for t in batch])
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    return CallableEmbedder(embed, name=name)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--benchmarks", default="../shared/benchmarks")
    ap.add_argument("--bundle", default=".gpu/bundle.json.gz")
    ap.add_argument("--vectors", required=True, help="folder of <variant>.npz (one array per fold)")
    ap.add_argument("--variants", required=True)
    ap.add_argument("--results", default=".gpu/results")
    args = ap.parse_args()
    with gzip.open(args.bundle, "rt") as f:
        eval_texts = json.load(f)["eval_texts"]
    results = Path(args.results)
    results.mkdir(parents=True, exist_ok=True)
    for variant in args.variants.split(","):
        done = results / f"{variant}.json"
        if done.is_file():
            continue
        arrays = np.load(Path(args.vectors) / f"{variant}.npz")
        scores: dict[str, Any] = {}
        for fold in TRAIN_FOLDS:
            sets = FOLDS[fold]
            if fold not in arrays:
                continue
            texts = [t for s in sets for t in eval_texts[s]]
            misses: list[str] = []
            vectors = arrays[fold].astype(np.float32) * arrays[f"{fold}_scale"]
            embedder = lookup_embedder(texts, vectors, f"gpu-{variant}-{fold}", misses)
            scores.update(evaluate_model(args.benchmarks, list(sets), embedder))
            scores[f"misses:{fold}"] = len(misses)
            print(variant, fold, {s: scores[s] for s in sets}, "misses", len(misses), flush=True)
        done.write_text(json.dumps(scores, indent=2))
    table(results, args.variants.split(","))
    for variant in args.variants.split(","):
        if variant != "stock" and (results / "stock.json").is_file():
            print(f"\n{variant} against stock, the model rule:\n" + format_rows(fold_rows(results, variant)))


def fold_rows(results: Path, variant: str) -> list[dict[str, Any]]:
    """Fold-table rows (``toolret.training.lodo_table``) of ``variant`` against the stock row."""
    stock = json.loads((results / "stock.json").read_text())
    trained = json.loads((results / f"{variant}.json").read_text())
    rows = [
        {"set": s, "fold": fold, "stock": stock[s], "trained": trained[s]}
        for fold in TRAIN_FOLDS
        for s in FOLDS[fold]
        if s in trained
    ]
    (results / f"rows-{variant}.json").write_text(json.dumps(rows))
    return rows


def table(results: Path, variants: list[str]) -> None:
    """R@5 per set and preset, change against the stock row, mean and worst."""
    stock = json.loads((results / "stock.json").read_text()) if (results / "stock.json").is_file() else None
    for preset in ("fast", "balanced"):
        for metric in ("recall@5", "ndcg@10", "tracc"):
            print(f"\n{preset} {metric}: " + " ".join(f"{s[:10]:>10}" for s in TRAIN_SETS) + "   mean    worst")
            for v in variants:
                f = results / f"{v}.json"
                if not f.is_file():
                    continue
                r = json.loads(f.read_text())
                if any(s not in r for s in TRAIN_SETS):
                    continue
                vals = [r[s][preset][metric] for s in TRAIN_SETS]
                if stock is None or v == "stock":
                    print(f"{v:>14}: " + " ".join(f"{x:10.4f}" for x in vals) + f" {np.mean(vals):8.4f}")
                    continue
                d = [x - stock[s][preset][metric] for x, s in zip(vals, TRAIN_SETS, strict=True)]
                print(f"{v:>14}: " + " ".join(f"{x:+10.4f}" for x in d) + f" {np.mean(d):+8.4f} {min(d):+8.4f}")


if __name__ == "__main__":
    main()
