"""``toolret train-fusion``: refit the learned fusion's coefficients on the dev sets, with their fold table.

::

    toolret train-fusion --benchmarks ../shared/benchmarks --out .train/fusion   # what `make train` runs

Extracts every dev set's signals with the packaged embedder (500-request samples, seed 0; the
training split too where a set has one), fits on the train+eval registries
(:mod:`toolret.training.fusion_fit`), refits once per registry left out for the fold table, and
writes ``fusion.json`` (the coefficients, their card and the fold table) and ``fusion_folds.md``.
The shipped file is ``toolret/models/fusion.json``: copy the new one there to ship it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

from toolret.errors import DatasetError

__all__ = ["add_train_fusion_parser", "train_fusion"]


def add_train_fusion_parser(verbs: Any) -> None:
    """Register the ``train-fusion`` verb on the ``toolret`` command's sub-parsers."""
    p = verbs.add_parser("train-fusion", help="refit the learned fusion on the dev sets (with its fold table)")
    p.add_argument("--benchmarks", required=True, metavar="ROOT", help="dev-set folder (../shared/benchmarks)")
    p.add_argument("--out", required=True, help="output folder (fusion.json, fusion_folds.md, the signal cache)")
    p.add_argument("--cache", default=None, help="signal cache folder (default: OUT/signals)")
    p.add_argument("--limit", type=int, default=500, help="requests sampled per set (seed 0)")
    p.add_argument("--steps", type=int, default=None, help="optimiser steps (default: FitConfig's)")
    p.add_argument("--no-folds", action="store_true", help="fit only; skip the leave-one-registry-out table")
    p.set_defaults(run=_cmd_train_fusion)


def train_fusion(
    root: str | Path,
    out: str | Path,
    *,
    cache: str | Path | None = None,
    limit: int | None = 500,
    steps: int | None = None,
    folds: bool = True,
    sets: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    """Fit, check and write the coefficients; returns the card written into ``fusion.json``."""
    from dataclasses import replace

    from toolret.eval.datasets import has_training_split
    from toolret.eval.folds import DEV_SETS, EVAL_ONLY_SETS
    from toolret.eval.scale import ComposedEmbedder
    from toolret.eval.signals import load_or_extract
    from toolret.index.embedding import resolve_embedder
    from toolret.training.fusion_fit import FitConfig, fit_fusion, fold_table, format_fold_table, training_arrays

    root, out = Path(root), Path(out)
    cache = Path(cache) if cache else out / "signals"
    names = [s for s in (sets or DEV_SETS) if (root / s / "tools.jsonl").is_file()]
    if not names:
        raise DatasetError(f"{root}: none of the dev sets found")
    model = resolve_embedder(None)
    embedder = ComposedEmbedder(model, cache_path=cache / "embeddings.npz")
    test, train = {}, {}
    for name in names:
        sig = load_or_extract(root / name, cache, embedder, limit=limit, seed=0)
        test[name] = sig
        if name in EVAL_ONLY_SETS:
            continue
        split = "train" if has_training_split(root / name) else "test"
        fit_sig = (
            load_or_extract(root / name, cache, embedder, limit=limit, seed=0, split=split) if split == "train" else sig
        )
        train[f"{name}.train" if split == "train" else name] = training_arrays(fit_sig)
    embedder.save()  # the texts embedded for every set, once (the cache is ~100 MB)
    config = FitConfig() if steps is None else replace(FitConfig(), steps=steps)
    started = time.perf_counter()
    card: dict[str, Any] = {
        "fitted_on": sorted(train),
        "never_fitted_on": sorted(set(names) & set(EVAL_ONLY_SETS)),
        "sample": f"{limit} requests a set, seed 0; banking77, hwu64 and snips: their train_queries.jsonl",
        "embedder": getattr(model, "name", "model"),
        "fit": {"steps": config.steps, "learning_rate": config.learning_rate, "l2": config.l2, "loss": "listwise"},
    }
    fitted = fit_fusion(list(train.values()), config, card)
    card["fit_seconds"] = round(time.perf_counter() - started, 1)
    if folds:
        rows = fold_table(test, train, config, full=fitted)
        card["folds"] = rows
        (out / "fusion_folds.md").parent.mkdir(parents=True, exist_ok=True)
        (out / "fusion_folds.md").write_text(format_fold_table(rows) + "\n")
    fitted = fitted.model_copy(update={"card": card})
    out.mkdir(parents=True, exist_ok=True)
    fitted.save(out / "fusion.json")
    card["sha256"] = hashlib.sha256((out / "fusion.json").read_bytes()).hexdigest()
    return card


def _cmd_train_fusion(args: argparse.Namespace) -> int:
    card = train_fusion(
        args.benchmarks, args.out, cache=args.cache, limit=args.limit or None, steps=args.steps, folds=not args.no_folds
    )
    folds = Path(args.out) / "fusion_folds.md"
    if folds.is_file():
        print(folds.read_text())
    print(json.dumps({k: card[k] for k in ("fitted_on", "fit_seconds", "sha256")}), file=sys.stdout)
    print(f"wrote {Path(args.out) / 'fusion.json'}")
    return 0
