"""Recall-vs-k curves: how far down the list each method finds the tools a query needs.

One line per evaluated method, Recall@1..20 from :attr:`EvalReport.recall_curve`. Drawn with
matplotlib's Agg canvas (no display, no pyplot global state), imported only here because
plotting is an optional extra: ``pip install 'toolret[plot]'``.

Example:
    >>> plot_recall_curves([bm25_report, fast_report], "recall.png")   # doctest: +SKIP
    PosixPath('recall.png')
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from toolret.errors import MissingDependencyError, ToolRetError
from toolret.eval.runner import EvalReport

__all__ = ["plot_recall_curves"]

logger = logging.getLogger("toolret")


def plot_recall_curves(reports: Sequence[EvalReport], out_png: str | Path, *, title: str | None = None) -> Path:
    """Draw Recall@k (k = 1..len(curve)) for every report into ``out_png`` and return its path.

    Lines are labelled by method; when the reports span several datasets (or both id and
    name level), the label says which. Raises :class:`ToolRetError` when a report has no
    curve (it was evaluated with ``curve_k=0``).
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingDependencyError("matplotlib", extra="plot", purpose="recall plots") from None

    if not reports:
        raise ToolRetError("no evaluation reports to plot")
    for report in reports:
        if not report.recall_curve:
            raise ToolRetError(
                f"report {report.preset!r} on {report.dataset!r} has no recall curve; evaluate with curve_k=20"
            )
    several_datasets = len({r.dataset for r in reports}) > 1
    mixed_levels = len({r.name_level for r in reports}) > 1

    figure = Figure(figsize=(6.4, 4.2), dpi=110)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot(1, 1, 1)
    for report in reports:
        label = report.preset
        if several_datasets:
            label = f"{report.dataset} · {label}"
        if mixed_levels and report.name_level:
            label += " (by name)"
        ks = list(range(1, len(report.recall_curve) + 1))
        axes.plot(ks, report.recall_curve, marker="o", markersize=3, linewidth=1.5, label=label)
    axes.set_xlabel("k")
    axes.set_ylabel("Recall@k")
    axes.set_ylim(0.0, 1.0)
    longest = max(len(r.recall_curve) for r in reports)
    axes.set_xlim(1, longest)
    axes.set_xticks([1] + list(range(5, longest + 1, 5)))
    axes.grid(True, alpha=0.3)
    axes.legend(loc="lower right", fontsize="small")
    if title is None:
        datasets = sorted({r.dataset for r in reports})
        title = "Recall@k — " + ", ".join(datasets)
    axes.set_title(title)
    figure.tight_layout()

    out = Path(out_png)
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out)
    logger.info("wrote recall curves to %s", out)
    return out
