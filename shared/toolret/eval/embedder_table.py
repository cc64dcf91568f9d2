"""Two embedders side by side on every dev set: the table ``toolret bench --compare-embedder`` adds.

Each cell reads "stock / trained" (the compared embedder, then the default), for cosine and each
preset, so what the default embedder changes is read in one row per set; BM25 has no embedder and
one value. Rows come from ``bench.json``'s ``results`` (the id level of the whole sample).

Each row also says how each model met the set (:func:`exposure`): "in-sample" when it trained on
the very requests scored, "test split" when it trained on the registry's training requests but
never on the scored ones, "unseen" when it never trained on the registry, "eval-only" for a set
no model may train on. A gain on an in-sample row is memory, not generalisation; the group means
below the table (:data:`toolret.eval.folds.NATURAL_SETS` and the registry's own words) say so too.

Example:
    >>> rows = [
    ...     {"dataset": "a", "preset": p, "embedder": e, "split": "all", "level": "id",
    ...      "metrics": {"recall@1": r, "recall@5": r, "ndcg@10": r, "tracc": r}, "latency_ms": {"p50": 1.0}}
    ...     for p, e, r in [("bm25", None, 0.2), ("fast", "stock", 0.5), ("fast", "mini", 0.6)]
    ... ]
    >>> print(embedder_table(rows, default="mini", other="stock", presets=["fast"]).splitlines()[2])
    | a | – | .200 | – | .500 / .600 | .500 / .600 | .500 / .600 | .500 / .600 | 1.0 / 1.0 |
    >>> exposure("banking77", has_train_split=True, trained_on={"banking77", "toole"})
    'test split'
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["embedder_table", "exposure", "trained_registries"]

METRICS = ("recall@1", "recall@5", "ndcg@10", "tracc")


def exposure(name: str, *, has_train_split: bool, trained_on: set[str] | frozenset[str]) -> str:
    """How a model trained on the registries ``trained_on`` met dev set ``name`` (module docstring)."""
    from toolret.eval.folds import EVAL_ONLY_SETS, REGISTRY

    if name in EVAL_ONLY_SETS:
        return "eval-only"
    if REGISTRY.get(name, name) not in trained_on:
        return "unseen"
    return "test split" if has_train_split else "in-sample"


def trained_registries(model: Any) -> frozenset[str] | None:
    """The registries a ``toolret train`` model trained on, from its card; None when it has no card.

    Reads ``toolret-model.json`` beside the model's weights (``pairs_per_registry``): the stock
    MiniLM and models of other origins have none, and their rows say nothing about exposure.
    """
    from toolret.index.onnx_embedding import MODEL_CARD_FILE

    folder = getattr(model, "model_dir", None)
    card = Path(folder) / MODEL_CARD_FILE if folder is not None else None
    if card is None or not card.is_file():
        return None
    return frozenset(json.loads(card.read_text()).get("pairs_per_registry") or {})


def _pick(results: Sequence[dict[str, Any]]) -> dict[tuple[str, str, str], dict[str, Any]]:
    out = {}
    for e in results:
        if e.get("split", "all") == "all" and e.get("level", "id") == "id":
            out[(e["dataset"], e["preset"], e.get("embedder") or "")] = e
    return out


def _num(value: float) -> str:
    return f"{value:.3f}".replace("0.", ".", 1) if value < 1 else f"{value:.3f}"


def _pair(by: dict[tuple[str, str, str], dict[str, Any]], key: tuple[str, str], models: Sequence[str]) -> list[str]:
    entries = [by.get((key[0], key[1], m)) for m in models]
    if any(e is None for e in entries):
        return ["–"] * (len(METRICS) + 1)
    cells = [" / ".join(_num(e["metrics"].get(m, float("nan"))) for e in entries if e) for m in METRICS]
    cells.append(" / ".join(f"{e['latency_ms']['p50']:.1f}" for e in entries if e))
    return cells


def embedder_table(
    results: Sequence[dict[str, Any]],
    *,
    default: str,
    other: str,
    presets: Sequence[str] = ("fast", "balanced"),
    seen: Mapping[str, str] | None = None,
) -> str:
    """Markdown: per set, how each model met it (``seen``: set -> "other / default" exposure), BM25's
    R@5, cosine's R@1 and R@5, and each preset's R@1, R@5, NDCG@10, TRACC and p50 ms, each as
    "other / default"; then cosine's mean R@1 and R@5 per kind of request."""
    by = _pick(results)
    models = (other, default)
    seen = seen or {}
    head = ["set", "trained on it", "bm25 R@5", "cosine R@1 / R@5"]
    for preset in presets:
        head += [f"{preset} R@1", f"{preset} R@5", f"{preset} NDCG@10", f"{preset} TRACC", f"{preset} p50 ms"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    compared = {name for name, _, model in by if model == other}  # not the union rows: the default embedder only
    for name in dict.fromkeys(e["dataset"] for e in results):
        if name not in compared:
            continue
        bm25 = by.get((name, "bm25", ""))
        cosine = [by.get((name, "cosine", m)) for m in models]
        cos = (
            " ; ".join(" / ".join(_num(c["metrics"][m]) for c in cosine if c) for m in ("recall@1", "recall@5"))
            if all(cosine)
            else "–"
        )
        row = [name, seen.get(name, "–"), _num(bm25["metrics"]["recall@5"]) if bm25 else "–", cos]
        for preset in presets:
            row += _pair(by, (name, preset), models)
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", *_group_means(by, models, [n for n in dict.fromkeys(e["dataset"] for e in results) if n in compared])]
    return "\n".join(lines)


def _group_means(by: dict[tuple[str, str, str], dict[str, Any]], models: Sequence[str], names: list[str]) -> list[str]:
    """One line per kind of request: plain cosine's mean R@1 and R@5, "other / default"."""
    from toolret.eval.folds import NATURAL_SETS

    out = []
    for label, group in (
        ("user's own words", [n for n in names if n in NATURAL_SETS]),
        ("registry's own words", [n for n in names if n not in NATURAL_SETS]),
    ):
        found = [[by.get((n, "cosine", m)) for m in models] for n in group]
        rows = [[e for e in r if e is not None] for r in found if all(e is not None for e in r)]
        if not rows:
            continue
        cells = [
            " / ".join(_num(sum(r[i]["metrics"][metric] for r in rows) / len(rows)) for i in range(len(models)))
            for metric in ("recall@1", "recall@5")
        ]
        out.append(f"cosine mean over {len(rows)} sets in the {label}: R@1 {cells[0]}, R@5 {cells[1]}")
    return out
