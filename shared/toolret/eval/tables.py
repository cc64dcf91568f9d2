"""Plain-text tables and JSON reports of evaluation runs (``toolret eval`` / ``bench``, ``toolret search``)."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["display_width", "eval_json", "fit_width", "format_table", "report_headers", "report_row", "write_json"]


def display_width(text: str) -> int:
    """Columns ``text`` takes in a terminal: wide and full-width characters (CJK) take two,
    combining marks none. Tables are padded by this, not by ``len``, so tool names in any script
    line up.

    >>> display_width("get_weather"), display_width("天気を取得"), display_width("e\u0301")
    (11, 10, 1)
    """
    width = 0
    for char in text:
        if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def fit_width(text: str, width: int) -> str:
    """``text`` cut to at most ``width`` display columns, ending in "…" when cut.

    >>> fit_width("天気を取得する", 7)
    '天気を…'
    """
    if display_width(text) <= width:
        return text
    out, used = [], 0
    for char in text:
        w = display_width(char)
        if used + w > width - 1:
            break
        out.append(char)
        used += w
    return "".join(out) + "…"


def _pad(text: str, width: int, right: bool) -> str:
    fill = " " * max(0, width - display_width(text))
    return fill + text if right else text + fill


def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain-text table: text left-aligned, numbers right-aligned (floats to 3 decimals), padded
    by display width (:func:`display_width`).

    >>> print(format_table(["method", "R@5"], [["bm25", 0.4291]]))
    method    R@5
    ------  -----
    bm25    0.429
    """

    def cell(value: Any) -> str:
        if value is None:
            return "-"
        if isinstance(value, float):
            return f"{value:.3f}"
        return str(value)

    text = [[cell(v) for v in row] for row in rows]
    numeric = [
        all(isinstance(row[i], (int, float)) and not isinstance(row[i], bool) or row[i] is None for row in rows)
        for i in range(len(headers))
    ]
    widths = [max([display_width(h)] + [display_width(r[i]) for r in text]) for i, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        parts = [_pad(v, w, num) for v, w, num in zip(values, widths, numeric)]
        return "  ".join(parts).rstrip()

    out = [line(list(headers)), line(["-" * w for w in widths])]
    out.extend(line(r) for r in text)
    return "\n".join(out)


def report_row(report: Any, method: str) -> list[Any]:
    ks = report.ks
    metrics = report.metrics
    row: list[Any] = [method + (" (by name)" if report.name_level else ""), report.n_queries]
    row += [metrics[f"recall@{k}"] for k in ks]
    row += [metrics[f"ndcg@{k}"] for k in ks]
    row += [metrics[f"completeness@{k}"] for k in ks]
    row += [metrics["tracc"], report.latency_ms["p50"], report.latency_ms["p95"], report.index_seconds]
    return row


def report_headers(ks: Sequence[int]) -> list[str]:
    return (
        ["method", "n"]
        + [f"R@{k}" for k in ks]
        + [f"NDCG@{k}" for k in ks]
        + [f"C@{k}" for k in ks]
        + ["TRACC", "p50 ms", "p95 ms", "index s"]
    )


def write_json(path: str | Path, payload: Any) -> None:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def eval_json(reports: Sequence[Any], labels: Sequence[str]) -> dict[str, Any]:
    """``toolret eval --json``: the last method's report, as it always was, plus every method's.

    External scorers read the top level, so with one method the payload is exactly that
    method's report; with several, the top level stays the last method's report and a
    ``"methods"`` key maps each method's label to its report.
    """
    payload = dict(reports[-1].to_json_dict())
    if len(reports) > 1:
        payload["methods"] = {label: report.to_json_dict() for label, report in zip(labels, reports)}
    return payload
