"""The leave-one-registry-out table for a trained embedder: stock vs trained, per left-out set.

Each row is a dev set scored by a model that never saw its registry; the stock model's scores
come from the same code on the same 500-query samples (cached in ``stock.json`` beside the folds).
The rule for a default (:mod:`toolret.training.model_rule`): the left-out means of ΔR@5 and
ΔNDCG@10 gain on requests in the user's own words and do not fall on requests in the registry's
own words, and no registry loses significantly; :func:`format_lodo` states the verdict.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["bench_rows", "format_lodo", "format_rows", "lodo_rows", "stock_scores"]


def stock_scores(root: str | Path, sets: Sequence[str], cache: Path) -> dict[str, Any]:
    """The stock MiniLM's scores on ``sets``, computed once and cached in ``cache``.

    Named explicitly: ``None`` would be the default embedder, which since issue 34 is toolret's own
    model, so a fold table would compare fold models with the model trained on every registry.
    """
    from toolret.index.embedding import STOCK_EMBEDDER_NAME, resolve_embedder
    from toolret.training.benchmarks import evaluate_model

    known: dict[str, Any] = json.loads(cache.read_text()) if cache.is_file() else {}
    if known.get("_model") != STOCK_EMBEDDER_NAME:  # a cache of the default model's scores (before the fix)
        known = {"_model": STOCK_EMBEDDER_NAME}
    missing = [s for s in sets if s not in known]
    if missing:
        known.update(evaluate_model(root, missing, resolve_embedder(STOCK_EMBEDDER_NAME)))
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(known, indent=2))
    return {s: known[s] for s in sets}


def lodo_rows(root: str | Path, out: Path, records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per left-out set: ``{"set", "fold", "stock": {preset: scores}, "trained": {...}}``."""
    rows = []
    for record in records:
        stock = stock_scores(root, record["left_out"], out / "stock.json")
        for name in record["left_out"]:
            rows.append({"set": name, "fold": record["fold"], "stock": stock[name], "trained": record["scores"][name]})
    return rows


def bench_rows(summary: dict[str, Any], trained: str, stock: str, sets: Sequence[str]) -> list[dict[str, Any]]:
    """Fold-table rows from ``toolret bench --compare-embedder``'s ``bench.json`` (``summary``).

    For sets no model trained on, the bench's own rows of the two embedders are the check: same
    sampled queries, per-query scores kept. A set missing either embedder's rows is skipped.
    """
    from toolret.eval.folds import registry_folds

    fold_of = {s: f for f, names in registry_folds(sets).items() for s in names}
    by_key: dict[tuple[str, str, str], dict[str, Any]] = {}
    for e in summary["results"]:
        if e.get("split") == "all" and e.get("level") == "id" and "per_query" in e:
            by_key[(e["dataset"], e["preset"], e.get("embedder") or "")] = e
    rows = []
    for name in sets:
        scores: dict[str, dict[str, Any]] = {}
        for side, model in (("trained", trained), ("stock", stock)):
            entries = {p: by_key.get((name, p, model)) for p in ("fast", "balanced")}
            if any(e is None for e in entries.values()):
                break
            scores[side] = {
                p: {
                    "recall@5": e["metrics"]["recall@5"],
                    "ndcg@10": e["metrics"]["ndcg@10"],
                    "tracc": e["metrics"].get("tracc", float("nan")),
                    "per_query": e["per_query"],
                }
                for p, e in entries.items()
                if e is not None
            }
        else:
            rows.append({"set": name, "fold": fold_of[name], **scores})
    return rows


def _cell(scores: dict[str, float]) -> str:
    return f"{scores['recall@5']:.3f} / {scores['ndcg@10']:.3f} / {scores['tracc']:.3f}"


def format_rows(rows: Sequence[dict[str, Any]]) -> str:
    """Markdown: per left-out set, stock and trained R@5 / NDCG@10 / TRACC under fast and balanced,
    the ΔR@5s, each registry's 95 % interval, then the means and the rule's verdict."""
    from toolret.training.model_rule import check_rule

    verdict = check_rule(rows)
    interval = {(i.fold, i.preset): i for i in verdict.intervals}
    lines = [
        "| left-out set | fast stock | fast trained | balanced stock | balanced trained | ΔR@5 fast / balanced "
        "| registry ΔR@5 95% interval, fast |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        d = {p: row["trained"][p]["recall@5"] - row["stock"][p]["recall@5"] for p in ("fast", "balanced")}
        i = interval[(row["fold"], "fast")]
        lines.append(
            f"| {row['set']} | {_cell(row['stock']['fast'])} | {_cell(row['trained']['fast'])} | "
            f"{_cell(row['stock']['balanced'])} | {_cell(row['trained']['balanced'])} | "
            f"{d['fast']:+.3f} / {d['balanced']:+.3f} | {row['fold']}: [{i.low:+.3f}, {i.high:+.3f}] |"
        )
    lines.append("")
    from toolret.training.model_rule import GROUP_LABEL

    for preset, by_metric in verdict.means.items():
        worst = verdict.worst(preset)
        groups = "; ".join(
            f"{GROUP_LABEL[g]} ΔR@5 {m[preset]['recall@5']:+.4f}, ΔNDCG@10 {m[preset]['ndcg@10']:+.4f}"
            for g, m in verdict.group_means.items()
        )
        lines.append(
            f"{preset}: left-out mean ΔR@5 {by_metric['recall@5']:+.4f}, ΔNDCG@10 {by_metric['ndcg@10']:+.4f} "
            f"({groups}); worst registry {worst.fold} ΔR@5 {worst.mean:+.4f} [{worst.low:+.3f}, {worst.high:+.3f}]"
        )
    lines.append(
        "rule (user's-words means > 0; registry's-words means ≥ 0; no registry's ΔR@5 interval entirely "
        "below -0.02): " + ("met" if verdict.met else "NOT met: " + "; ".join(verdict.reasons))
    )
    return "\n".join(lines)


def format_lodo(root: str | Path, out: Path, records: Sequence[dict[str, Any]], *, tag: float = 1.0) -> str:
    """The fold table of ``records`` (:func:`format_rows`), written to ``out/lodo.md`` and ``lodo.json``."""
    rows = lodo_rows(root, out, records)
    text = format_rows(rows)
    suffix = "" if tag == 1 else f"-keep{tag:g}"
    (out / f"lodo{suffix}.md").write_text(text + "\n")
    (out / f"lodo{suffix}.json").write_text(json.dumps(rows, indent=2))
    return text
