"""``toolret train``: fine-tune the embedder on a knowledge base's logged pairs or on the dev sets.

Three uses, one verb::

    toolret train --kb tools.kb --out my-model [--pairs labelled.jsonl]   # your own data
    toolret train --benchmarks ../shared/benchmarks --out model            # what `make train` runs
    toolret train --benchmarks ../shared/benchmarks --lodo --out .train    # the leave-one-registry-out table

``--kb`` trains on what ``kb.record`` stored (the tools the agent actually used for a request),
plus any labelled lines ``{"query": "...", "tools": ["tool id", ...]}`` from ``--pairs``; the
documents are the knowledge base's own tools. The output is a model directory: index with it
(``toolret index tools.json --kb new.kb --embedder my-model``, or ``ToolKnowledgeBase(path,
embedder="my-model")``), compare with ``toolret eval``, then switch. Each run checkpoints and
resumes (``--max-steps`` stops early on purpose).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from toolret.errors import ConfigError, DatasetError

__all__ = ["add_train_parser"]


def add_train_parser(verbs: Any) -> None:
    """Register the ``train`` verb on the ``toolret`` command's sub-parsers."""
    p = verbs.add_parser("train", help="fine-tune the embedding model on logged or labelled pairs")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--kb", help="knowledge base whose recorded (request, tools used) pairs to train on")
    src.add_argument("--benchmarks", metavar="ROOT", help="dev-set folder (../shared/benchmarks) to train on")
    p.add_argument("--pairs", metavar="FILE", help='labelled JSON lines {"query": ..., "tools": [ids]} (with --kb)')
    p.add_argument("--out", required=True, help="output folder (the model directory, or the fold table with --lodo)")
    p.add_argument("--lodo", action="store_true", help="with --benchmarks: train and score one fold per registry")
    p.add_argument("--folds", default=None, help="with --lodo: only these folds, comma-separated")
    p.add_argument(
        "--model",
        default=None,
        help="with --lodo: the model trained on every registry, scored on the dev sets no fold trains on "
        "(default: the packaged toolret-embed-mini)",
    )
    p.add_argument(
        "--fusion",
        action="store_true",
        help="with --lodo: then re-choose the fusion defaults leaving one set out, each set's signals "
        "extracted with the fold model that never saw it",
    )
    p.add_argument("--epochs", type=float, default=None, help="passes over the data (default: the recipe's)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--all-fields",
        action="store_true",
        default=None,
        help="documents from every indexed field, not only the description",
    )
    p.add_argument(
        "--hard-negatives",
        type=int,
        default=None,
        metavar="N",
        help="add N hard negatives per pair, mined by searching each request with the engine",
    )
    p.add_argument(
        "--keep", type=float, default=None, help="share of the fine-tuned weights kept (rest: the base model's)"
    )
    p.add_argument(
        "--registry-floor",
        type=int,
        default=None,
        metavar="N",
        help="with --benchmarks: repeat a registry's pairs up to N when it has fewer (default: the recipe's)",
    )
    p.add_argument("--max-steps", type=int, default=None, help="stop after this many steps (resume later)")
    p.set_defaults(run=_cmd_train)


def _progress(step: int, total: int, loss: float) -> None:
    if step == 1 or step % 10 == 0 or step == total:
        print(f"step {step}/{total} loss {loss:.3f}", file=sys.stderr, flush=True)


def _config(args: argparse.Namespace) -> Any:
    from toolret.training.trainer import TrainConfig

    overrides: dict[str, Any] = {"seed": args.seed}
    if args.epochs is not None:
        overrides["epochs"] = args.epochs
    if args.keep is not None:
        overrides["keep"] = args.keep
    if args.hard_negatives is not None:
        overrides["hard_negatives"] = args.hard_negatives
    if args.all_fields:
        overrides["all_fields"] = True
    if getattr(args, "registry_floor", None) is not None:
        overrides["registry_floor"] = args.registry_floor
    return TrainConfig(**overrides)


def _labelled(path: str) -> list[tuple[str, list[str]]]:
    from toolret.eval.datasets import _read_jsonl

    if not Path(path).is_file():
        raise DatasetError(f"{path}: file not found (--pairs takes a JSON lines file)")
    bundles: list[tuple[str, list[str]]] = []
    for lineno, obj in _read_jsonl(Path(path)):
        if not isinstance(obj.get("query"), str) or not obj.get("tools"):
            raise DatasetError(f'{path}:{lineno}: expected {{"query": "...", "tools": ["tool id", ...]}}')
        bundles.append((obj["query"], [str(t) for t in obj["tools"]]))
    return bundles


def _cmd_train(args: argparse.Namespace) -> int:
    if args.kb is not None:
        return _train_kb(args)
    if args.lodo:
        return _train_lodo(args)
    return _train_benchmarks(args)


def _train_kb(args: argparse.Namespace) -> int:
    from toolret import RetrievalConfig, ToolKnowledgeBase
    from toolret.training.export import export_onnx_int8
    from toolret.training.pairs import pairs_from_bundles
    from toolret.training.trainer import blend_with_base, train

    kb = ToolKnowledgeBase.load(args.kb)
    try:
        tools = {d.id: d for d in kb.docs()}
        bundles = [(q, list(ids)) for q, ids in kb._memory.history.bundles]
        if args.pairs:
            bundles += _labelled(args.pairs)
        if not bundles:
            raise ConfigError(
                f"{args.kb} has no recorded pairs: record what the agent used with kb.record(query, tool_ids) "
                "or give labelled pairs with --pairs"
            )
        fields = RetrievalConfig.preset("fast").field_weights.as_dict() if _config(args).all_fields else None
        pairs = pairs_from_bundles("kb", tools, bundles, field_weights=fields, seed=args.seed)
    finally:
        kb.close()
    out = Path(args.out)
    config = _config(args)
    if config.hard_negatives:
        from toolret.training.negatives import mine_hard_negatives

        pairs = mine_hard_negatives(
            pairs, {"kb": tools}, per_pair=config.hard_negatives, cache=out / "training" / "negatives.json"
        )
    result = train(pairs, out / "training", config, max_steps=args.max_steps, on_step=_progress)
    if not result.finished:
        print(f"stopped at step {result.steps}; run the same command again to resume")
        return 0
    model_dir = Path(result.model_dir)
    if config.keep < 1:
        model_dir = blend_with_base(model_dir, config.keep, out / "training" / "blended")
    card = export_onnx_int8(model_dir, out, name=str(out.resolve()), check_texts=[p.document for p in pairs][:200])
    print(f"trained on {len(pairs)} pairs in {result.seconds:.0f} s; model directory {out}")
    print(f"int8 cosine to fp32: {card['int8_cosine_to_fp32']}; use it with --embedder {out}")
    return 0


def _train_benchmarks(args: argparse.Namespace) -> int:
    from toolret.training.shipped import build_shipped

    card = build_shipped(
        args.benchmarks,
        Path(args.out),
        _config(args),
        work=Path(args.out) / "training",
        max_steps=args.max_steps,
        on_step=_progress,
    )
    if card is None:
        print("stopped before the end of training; run the same command again to resume")
        return 0
    print(json.dumps(card, indent=2))
    return 0


def unseen_records(root: str, out: Path, model: str | None) -> list[dict[str, Any]]:
    """Fold-table records for the dev sets no training fold holds, scored with the full model.

    No model may train on the eval-only sets, so the full model itself is their left-out model;
    cached in ``out/unseen.json``. Every run of the table scores them, a run of chosen ``--folds`` too.
    """
    from toolret.eval.folds import FOLDS, TRAIN_FOLDS
    from toolret.index.embedding import SHIPPED_EMBEDDER_NAME, resolve_embedder
    from toolret.training.benchmarks import evaluate_model

    name = model or SHIPPED_EMBEDDER_NAME
    cache = out / "unseen.json"
    known: dict[str, Any] = json.loads(cache.read_text()) if cache.is_file() else {}
    known = known if known.get("model") == name else {"model": name, "scores": {}}
    records = []
    for fold, sets in FOLDS.items():
        if fold in TRAIN_FOLDS:
            continue
        missing = [s for s in sets if s not in known["scores"]]
        if missing:
            print(f"unseen {fold}: scoring {name}", file=sys.stderr, flush=True)
            known["scores"].update(evaluate_model(root, missing, resolve_embedder(name)))
            out.mkdir(parents=True, exist_ok=True)
            cache.write_text(json.dumps(known))
        records.append({"fold": fold, "left_out": list(sets), "scores": {s: known["scores"][s] for s in sets}})
    return records


def _train_lodo(args: argparse.Namespace) -> int:
    from toolret.training.benchmarks import FOLDS, TRAIN_FOLDS, run_fold
    from toolret.training.lodo_table import format_lodo

    folds = [f.strip() for f in args.folds.split(",")] if args.folds else list(TRAIN_FOLDS)
    unknown = [f for f in folds if f not in TRAIN_FOLDS]
    if unknown:
        raise ConfigError(f"unknown fold(s) {unknown}; choose from {', '.join(TRAIN_FOLDS)}")
    records = []
    for fold in folds:
        print(f"fold {fold}: training without {', '.join(FOLDS[fold])}", file=sys.stderr, flush=True)
        record = run_fold(args.benchmarks, fold, args.out, _config(args), max_steps=args.max_steps, on_step=_progress)
        if record is None:
            print(f"fold {fold} stopped before the end of training; run the same command again to resume")
            return 0
        records.append(record)
    records += unseen_records(args.benchmarks, Path(args.out), args.model)
    print(format_lodo(args.benchmarks, Path(args.out), records, tag=_config(args).keep))
    if args.fusion:
        from toolret.eval.lodo_run import run_lodo
        from toolret.training.benchmarks import EVAL_LIMIT, fold_model_for

        keep = _config(args).keep
        run_lodo(args.benchmarks, args.out, limit=EVAL_LIMIT, model_for=fold_model_for(args.out, keep))
    return 0
