"""The leave-one-registry-out table for a trained embedder: stock vs trained, per left-out set.

Each row is a dev set scored by a model that never saw its registry; the stock model's scores
come from the same code on the same 500-query samples (cached in ``stock.json`` beside the folds).
The rule for a default (issue 26): no left-out set loses more than 0.01 R@5 against the stock
model under ``fast`` and the left-out mean gains; :func:`format_lodo` states the verdict.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["format_lodo", "lodo_rows", "stock_scores"]

#: Largest R@5 loss on any left-out set that the rule tolerates.
MAX_LOSS = 0.01


def stock_scores(root: str | Path, sets: Sequence[str], cache: Path) -> dict[str, Any]:
    """The stock model's scores on ``sets``, computed once and cached in ``cache``."""
    from toolret.training.benchmarks import evaluate_model

    known: dict[str, Any] = json.loads(cache.read_text()) if cache.is_file() else {}
    missing = [s for s in sets if s not in known]
    if missing:
        known.update(evaluate_model(root, missing, None))
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


def _cell(scores: dict[str, float]) -> str:
    return f"{scores['recall@5']:.3f} / {scores['ndcg@10']:.3f} / {scores['tracc']:.3f}"


def format_lodo(root: str | Path, out: Path, records: Sequence[dict[str, Any]], *, tag: float = 1.0) -> str:
    """Markdown table (R@5 / NDCG@10 / TRACC k=auto; stock -> trained; fast and balanced) and the verdict."""
    rows = lodo_rows(root, out, records)
    lines = [
        "| left-out set | fast stock | fast trained | balanced stock | balanced trained | ΔR@5 fast / balanced |",
        "|---|---|---|---|---|---|",
    ]
    deltas: dict[str, list[float]] = {"fast": [], "balanced": []}
    for row in rows:
        d = {p: row["trained"][p]["recall@5"] - row["stock"][p]["recall@5"] for p in deltas}
        for p in deltas:
            deltas[p].append(d[p])
        lines.append(
            f"| {row['set']} | {_cell(row['stock']['fast'])} | {_cell(row['trained']['fast'])} | "
            f"{_cell(row['stock']['balanced'])} | {_cell(row['trained']['balanced'])} | "
            f"{d['fast']:+.3f} / {d['balanced']:+.3f} |"
        )
    for preset, ds in deltas.items():
        if not ds:
            continue
        worst = min(range(len(ds)), key=ds.__getitem__)
        mean = sum(ds) / len(ds)
        ok = ds[worst] >= -MAX_LOSS and mean > 0
        lines.append(
            f"\n{preset}: left-out mean ΔR@5 {mean:+.4f}; worst set {rows[worst]['set']} {ds[worst]:+.4f}; "
            f"rule (no set below -{MAX_LOSS}, mean gains): {'met' if ok else 'NOT met'}"
        )
    text = "\n".join(lines)
    suffix = "" if tag == 1 else f"-keep{tag:g}"
    (out / f"lodo{suffix}.md").write_text(text + "\n")
    (out / f"lodo{suffix}.json").write_text(json.dumps(rows, indent=2))
    return text
