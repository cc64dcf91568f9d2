"""Stage ablation, left one dataset out: does each scoring and post-retrieval stage earn its place?

Every stage the presets run besides plain multi-field retrieval is switched off in turn, on one
knowledge base per dev set (a stage is a config switch, so nothing is re-indexed), and the
``balanced`` preset is scored with and without it: R@5, NDCG@10 and TRACC of the ``k="auto"`` set.

The verdict is left one dataset out (DESIGN §2b): for each dev set, the sets of the *other*
registries decide whether the stage stays (it stays when switching it off lowers their mean R@5 or
mean TRACC by more than :data:`NOISE`); the left-out set then shows what that decision costs or
gains. A stage no fold keeps is marked "remove"; one every fold keeps "keep"; otherwise "mixed"
(a stage that serves one kind of registry only, such as the dependency stage, is mixed: keep it
when its left-out mean gains and no set pays for it).
``toolret bench --ablation`` prints the table (:func:`stage_table`).

Example:
    >>> [label for label, _ in stage_configs(RetrievalConfig.preset("balanced"))][:3]
    ['balanced', '-penalty', '-name boost']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from toolret.config import RetrievalConfig
from toolret.eval.ablation import ConfigView
from toolret.eval.datasets import Dataset
from toolret.eval.runner import evaluate

__all__ = ["NOISE", "STAGES_OFF", "StageRow", "stage_configs", "stage_rows", "stage_table", "verdicts"]

#: A mean change of less than this is no gain: half a query in a thousand.
NOISE = 0.0005

#: Each stage and how to switch it off in a config. (Offline reflection was a row until the
#: ablation of 2026-11-26 removed it from ``balanced``: docs/decisions/2026-11-26-stage-ablation.md.)
STAGES_OFF: dict[str, Callable[[RetrievalConfig], RetrievalConfig]] = {
    "-penalty": lambda c: c.with_(penalty=c.penalty.model_copy(update={"enabled": False})),
    "-name boost": lambda c: c.with_(fusion={"name_match_boost": 0.0, "exact_name_boost": 0.0}),
    "-evidence weighting": lambda c: c.with_(fusion={"evidence_slope": 0.0}),
    "-hubness correction": lambda c: c.with_(fusion={"hubness_weight": 0.0}),
    "-planner": lambda c: c.with_(planner="none"),
    "-split gate": lambda c: c.with_(planning={"split_gate": None}),
    "-dependencies": lambda c: c.with_(dependencies=c.dependencies.model_copy(update={"enabled": False})),
}

#: (dataset, label) -> {"recall@5", "ndcg@10", "tracc"}
StageRow = dict[str, float]


def stage_configs(base: RetrievalConfig) -> list[tuple[str, RetrievalConfig]]:
    """(base's name, base) then one ("-stage", base with that stage off) per :data:`STAGES_OFF`."""
    return [(base.name, base)] + [(label, off(base)) for label, off in STAGES_OFF.items()]


def stage_rows(kb: Any, dataset: Dataset, *, limit: int | None, base: RetrievalConfig) -> dict[str, StageRow]:
    """Every row of :func:`stage_configs` scored on one dataset (same query sample for all)."""
    out = {}
    for label, cfg in stage_configs(base):
        report = evaluate(
            ConfigView(kb, cfg, label), dataset, ks=(1, 5, 10), limit=limit, method=label, curve_k=0, auto_k=True
        )
        out[label] = {
            "recall@5": report.metrics["recall@5"],
            "ndcg@10": report.metrics["ndcg@10"],
            "tracc": report.metrics.get("tracc", float("nan")),
        }
    return out


def verdicts(
    rows: Mapping[str, Mapping[str, StageRow]], folds: Mapping[str, Sequence[str]], base: str
) -> dict[str, tuple[int, str]]:
    """label -> (folds that keep the stage, "keep" / "remove" / "mixed"), each fold deciding on the
    datasets outside it. ``folds`` groups datasets that share a registry (they leave together)."""
    out = {}
    for label in STAGES_OFF:
        kept = 0
        for left in folds.values():
            train = [d for d in rows if d not in left]
            if not train:
                continue
            loss = {
                m: sum(rows[d][base][m] - rows[d][label][m] for d in train) / len(train) for m in ("recall@5", "tracc")
            }
            kept += int(loss["recall@5"] > NOISE or loss["tracc"] > NOISE)
        n = sum(1 for left in folds.values() if any(d not in left for d in rows))
        out[label] = (kept, "keep" if kept == n else "remove" if kept == 0 else "mixed")
    return out


def stage_table(rows: Mapping[str, Mapping[str, StageRow]], folds: Mapping[str, Sequence[str]], base: str) -> str:
    """The ablation as text: per dataset the change from switching each stage off, then the means,
    the worst set and the leave-one-out verdict."""
    sets = list(rows)
    lines = [
        f"{base} with one stage off: change in R@5 / TRACC(k=auto) per set (negative: the stage helps there)",
        "stage | " + " | ".join(sets) + " | mean | worst | folds keeping | verdict",
    ]
    lines.append(
        f"{base} (absolute) | "
        + " | ".join(f"{rows[d][base]['recall@5']:.3f} / {rows[d][base]['tracc']:.3f}" for d in sets)
        + " | | | |"
    )
    judged = verdicts(rows, folds, base)
    for label in STAGES_OFF:
        dr = [rows[d][label]["recall@5"] - rows[d][base]["recall@5"] for d in sets]
        dt = [rows[d][label]["tracc"] - rows[d][base]["tracc"] for d in sets]
        kept, verdict = judged[label]
        lines.append(
            f"{label} | "
            + " | ".join(f"{a:+.3f} / {b:+.3f}" for a, b in zip(dr, dt))
            + f" | {sum(dr) / len(dr):+.4f} / {sum(dt) / len(dt):+.4f} | {min(dr):+.3f} / {min(dt):+.3f}"
            + f" | {kept} of {len(folds)} | {verdict}"
        )
    return "\n".join(lines)
