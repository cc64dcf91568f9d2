"""Two embedders side by side on every dev set: the table ``toolret bench --compare-embedder`` adds.

Each cell reads "stock / trained" (the compared embedder, then the default), for cosine and each
preset, so what the default embedder changes is read in one row per set; BM25 has no embedder and
one value. Rows come from ``bench.json``'s ``results`` (the id level of the whole sample).

Example:
    >>> rows = [
    ...     {"dataset": "a", "preset": p, "embedder": e, "split": "all", "level": "id",
    ...      "metrics": {"recall@1": r, "recall@5": r, "ndcg@10": r, "tracc": r}, "latency_ms": {"p50": 1.0}}
    ...     for p, e, r in [("bm25", None, 0.2), ("fast", "stock", 0.5), ("fast", "mini", 0.6)]
    ... ]
    >>> print(embedder_table(rows, default="mini", other="stock", presets=["fast"]).splitlines()[2])
    | a | .200 | – | .500 / .600 | .500 / .600 | .500 / .600 | .500 / .600 | 1.0 / 1.0 |
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["embedder_table"]

METRICS = ("recall@1", "recall@5", "ndcg@10", "tracc")


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
    results: Sequence[dict[str, Any]], *, default: str, other: str, presets: Sequence[str] = ("fast", "balanced")
) -> str:
    """Markdown: per set, BM25's R@5, cosine's R@1 and R@5, and each preset's R@1, R@5, NDCG@10,
    TRACC and p50 ms, each as "other / default"."""
    by = _pick(results)
    models = (other, default)
    head = ["set", "bm25 R@5", "cosine R@1 / R@5"]
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
        row = [name, _num(bm25["metrics"]["recall@5"]) if bm25 else "–", cos]
        for preset in presets:
            row += _pair(by, (name, preset), models)
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)
