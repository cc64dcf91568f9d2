"""The dev sets as training data, and leave-one-registry-out folds for models (docs/models.md).

Folds leave out registries, not files (DESIGN §2b): ToolE's two sets share one registry and
leave together, and so do the two RestBench sets. For each fold a model is trained on the
other registries and the left-out sets are searched with the whole engine (``fast`` and
``balanced``, R@5, NDCG@10, TRACC of ``k="auto"``) beside the stock model. Each fold trains into
its own folder with checkpoints, so an interrupted table resumes where it stopped.

Only ``../shared/benchmarks`` data is read; nothing is downloaded.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from toolret.eval.folds import DEV_SETS, FOLDS, REGISTRY, TRAIN_FOLDS, TRAIN_SETS
from toolret.training.pairs import TrainingPair, balance, pairs_from_bundles
from toolret.training.trainer import TrainConfig

__all__ = [
    "DEV_SETS",
    "FOLDS",
    "REGISTRY",
    "TRAIN_FOLDS",
    "TRAIN_SETS",
    "benchmark_pairs",
    "evaluate_model",
    "fold_model_for",
    "held_out_texts",
    "run_fold",
    "training_pairs",
]

logger = logging.getLogger("toolret")

#: Pairs per registry at most (:func:`toolret.training.pairs.balance`).
DEFAULT_CAP = 2_500
#: Pairs per tool of a registry at most: a registry of seven intents (snips) holds 13,784 requests,
#: and its batches can hold at most seven pairs, so uncapped it would be a third of the steps and
#: teach one seven-way choice. 40 a tool leaves the 64- and 77-intent sets near the registry cap.
PAIRS_PER_TOOL = 40
#: The per-query metrics :func:`evaluate_model` keeps (the model rule's paired bootstrap reads them).
PER_QUERY_METRICS = ("recall@5", "ndcg@10")
#: Queries per left-out set in the fold table (a reproducible sample, seed 0, as `toolret bench`).
EVAL_LIMIT = 500


def benchmark_pairs(
    root: str | Path,
    sets: Sequence[str] = TRAIN_SETS,
    *,
    cap: int = DEFAULT_CAP,
    seed: int = 0,
    field_weights: dict[str, float] | None = None,
    floor: int = 0,
) -> list[TrainingPair]:
    """Balanced (request, tool) pairs from the dev sets named, read from ``root``.

    A set's training split (``train_queries.jsonl``) is read where it has one, so its test
    queries stay unseen. Multi-tool requests are kept first (there are few and they teach what
    single ones cannot); the cap, ``cap`` pairs a registry and :data:`PAIRS_PER_TOOL` a tool,
    then samples the rest of each registry. A registry left with fewer than ``floor`` pairs has
    them repeated, in order, up to ``floor`` (never past the per-tool cap: snips's seven intents
    stay 280 pairs, 40 batches of seven).
    """
    from toolret.eval.datasets import load_dataset

    by_registry: dict[str, list[TrainingPair]] = {}
    multi: dict[str, list[TrainingPair]] = {}
    tools_of: dict[str, set[str]] = {}
    for name in sets:
        ds = load_dataset(Path(root) / name, split="train")
        tools_of.setdefault(REGISTRY[name], set()).update(ds.tool_ids)
        tools = {d.id: d for d in ds.tool_docs()}
        bundles = [(q.query, q.relevant) for q in ds.queries]
        pairs = pairs_from_bundles(REGISTRY[name], tools, bundles, field_weights=field_weights, seed=seed)
        for p in pairs:
            target = multi if len(p.relevant) > 1 else by_registry
            target.setdefault(p.registry, []).append(p)
    out: list[TrainingPair] = []
    for registry in sorted(set(by_registry) | set(multi)):
        limit = min(cap, PAIRS_PER_TOOL * len(tools_of[registry]))
        kept = multi.get(registry, [])[:limit]
        rest = balance(by_registry.get(registry, []), limit - len(kept), seed) if limit > len(kept) else []
        out.extend(repeat_to(kept + rest, min(floor, limit)))
    return out


def repeat_to(pairs: list[TrainingPair], floor: int) -> list[TrainingPair]:
    """``pairs`` repeated whole, then cut, to ``floor`` pairs; as they are when already that many.

    Example:
        >>> from toolret.training.pairs import TrainingPair
        >>> p = [TrainingPair("r", f"q{i}", f"t{i}", f"t{i}", "d", frozenset({f"t{i}"})) for i in range(3)]
        >>> [x.query for x in repeat_to(p, 7)]
        ['q0', 'q1', 'q2', 'q0', 'q1', 'q2', 'q0']
    """
    if not pairs or len(pairs) >= floor:
        return pairs
    return (pairs * -(-floor // len(pairs)))[:floor]


def registry_tools(root: str | Path, sets: Sequence[str] = TRAIN_SETS) -> dict[str, dict[str, Any]]:
    """Registry -> {tool id: tool}: the tools a request of that registry is searched among."""
    from toolret.eval.datasets import load_dataset

    out: dict[str, dict[str, Any]] = {}
    for name in sets:
        for doc in load_dataset(Path(root) / name).tool_docs():
            out.setdefault(REGISTRY[name], {})[doc.id] = doc
    return out


def training_pairs(
    root: str | Path,
    sets: Sequence[str],
    config: TrainConfig,
    *,
    cap: int = DEFAULT_CAP,
    cache: str | Path | None = None,
) -> list[TrainingPair]:
    """The pairs ``config`` trains on: :func:`benchmark_pairs`, with mined hard negatives when it asks.

    Negatives are mined with the stock model over each pair's own registry only, so a fold never
    searches a left-out registry; ``cache`` (a JSON file) lets every fold reuse one mining.
    """
    pairs = benchmark_pairs(
        root, sets, cap=cap, seed=config.seed, field_weights=training_fields(config), floor=config.registry_floor
    )
    if config.hard_negatives == 0:
        return pairs
    from toolret.training.negatives import mine_hard_negatives

    return mine_hard_negatives(pairs, registry_tools(root, sets), per_pair=config.hard_negatives, cache=cache)


def training_fields(config: TrainConfig) -> dict[str, float] | None:
    """The field weights documents are drawn with: the default search's, when ``config.all_fields``."""
    if not config.all_fields:
        return None
    from toolret.config import RetrievalConfig

    return RetrievalConfig.preset("fast").field_weights.as_dict()


def held_out_texts(root: str | Path, sets: Sequence[str], n: int = 200) -> list[str]:
    """Real tool and request texts to check an export against (tools of the sets, then queries)."""
    from toolret.eval.datasets import load_dataset
    from toolret.training.pairs import document_text

    texts: list[str] = []
    for name in sets:
        ds = load_dataset(Path(root) / name)
        texts += [document_text(d) for d in ds.tool_docs()[: n // (2 * len(sets)) + 1]]
        texts += [q.query for q in ds.queries[: n // (2 * len(sets)) + 1]]
    return texts[:n]


def evaluate_model(
    root: str | Path,
    sets: Sequence[str],
    embedder: Any,
    *,
    presets: Sequence[str] = ("fast", "balanced"),
    limit: int = EVAL_LIMIT,
) -> dict[str, dict[str, dict[str, Any]]]:
    """``{set: {preset: {"recall@5", "ndcg@10", "tracc", "per_query"}}}`` of the whole engine with ``embedder``.

    Each set is indexed once; every preset searches the same knowledge base. ``per_query`` holds
    each sampled query's R@5 and NDCG@10 in sample order, so two models are compared query by
    query (:func:`toolret.training.model_rule.check_rule`).
    """
    from toolret import ToolKnowledgeBase
    from toolret.eval.datasets import load_dataset
    from toolret.eval.methods import PresetView
    from toolret.eval.runner import evaluate

    out: dict[str, dict[str, dict[str, Any]]] = {}
    for name in sets:
        ds = load_dataset(Path(root) / name).sample(limit, seed=0)
        kb = ToolKnowledgeBase(None, embedder=embedder)
        kb.add(ds.tool_docs())
        out[name] = {}
        for preset in presets:
            report = evaluate(PresetView(kb, preset), ds, ks=(5, 10), curve_k=0, auto_k=True)
            m = report.metrics
            out[name][preset] = {
                "recall@5": round(m["recall@5"], 4),
                "ndcg@10": round(m["ndcg@10"], 4),
                "tracc": round(m.get("tracc", float("nan")), 4),
                # Per query, in sample order, for the paired bootstrap of the model rule.
                "per_query": {
                    metric: [round(q.metrics[metric], 4) for q in report.per_query] for metric in PER_QUERY_METRICS
                },
            }
        kb.close()
    return out


def run_fold(
    root: str | Path,
    fold: str,
    out: str | Path,
    config: TrainConfig,
    *,
    cap: int = DEFAULT_CAP,
    max_steps: int | None = None,
    on_step: Callable[[int, int, float], None] | None = None,
) -> dict[str, Any] | None:
    """Train without ``fold``'s sets, export, evaluate the left-out sets; None while training is unfinished.

    The result is also written to ``out/<fold>/result.json``, which a later call returns as is.
    """
    from toolret.index.onnx_embedding import OnnxEmbedder
    from toolret.training.export import export_onnx_int8
    from toolret.training.recipe import first_stage_folder, train_recipe
    from toolret.training.trainer import blend_with_base

    folder = Path(out) / fold
    tag = "" if config.keep == 1 else f"-keep{config.keep:g}"
    done = folder / f"result{tag}.json"
    if done.is_file():
        return dict(json.loads(done.read_text()))
    left_out = FOLDS[fold]
    if fold not in TRAIN_FOLDS:
        from toolret.errors import ConfigError

        raise ConfigError(f"fold {fold!r} is not trained on; a fold model leaves out one of {', '.join(TRAIN_FOLDS)}")
    train_sets = [s for s in TRAIN_SETS if s not in left_out]

    def pairs_for(stage_sets: Sequence[str], _folder: Path) -> list[TrainingPair]:
        return training_pairs(root, stage_sets, config, cap=cap, cache=Path(out) / "negatives.json")

    run = train_recipe(
        train_sets,
        config,
        folder,
        pairs_for=pairs_for,
        stage1_work=first_stage_folder(out, train_sets),
        max_steps=max_steps,
        on_step=on_step,
    )
    if not run.finished:
        return None
    model_dir = Path(run.final.model_dir)
    if config.keep < 1:
        model_dir = blend_with_base(model_dir, config.keep, folder / f"model{tag}")
    card = export_onnx_int8(
        model_dir, folder / f"onnx{tag}", name=f"fold-{fold}{tag}", check_texts=held_out_texts(root, train_sets)
    )
    scores = evaluate_model(root, left_out, OnnxEmbedder(model_dir=folder / f"onnx{tag}"))
    record = {
        "fold": fold,
        "left_out": list(left_out),
        "keep": config.keep,
        "train": [r.model_dump() for r in run.stages],
        "export": card,
        "scores": scores,
    }
    done.write_text(json.dumps(record, indent=2))
    return record


def fold_model_for(out: str | Path, keep: float = 1.0) -> Callable[[str], str]:
    """``dev set name -> the model directory of the fold that left it out`` (for :func:`toolret.eval.lodo.run_lodo`)."""
    fold_of = {name: fold for fold, sets in FOLDS.items() for name in sets}

    def model_for(name: str) -> str:
        path = Path(out) / fold_of[name] / ("onnx" if keep == 1 else f"onnx-keep{keep:g}")
        if not (path / "model.onnx").is_file():
            from toolret.errors import ConfigError

            raise ConfigError(f"no fold model for {name!r} at {path}; run `toolret train --lodo --out {out}` first")
        return str(path)

    return model_for
