"""Issue 42's follow-on fix to the sub-task merge, measured: `balanced` with and without it.

`budgeted_merge` used to let a sub-task whose best tool the whole request's list had already
picked add its second best in the first round, ahead of the next sub-task's best. The fix counts
that sub-task as served for the round. This script scores `balanced` (the planner's preset) both
ways on the same knowledge base, on the dev sets whose requests need several tools, R@1 / R@5 /
NDCG@10 over 500-query samples (seed 0).

Usage: .venv/bin/python experiments/merge_served.py [--sets toole_multi,restbench_tmdb]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import toolret.search.fusion as plan_fusion
from toolret import ToolKnowledgeBase
from toolret.eval.datasets import load_dataset
from toolret.eval.methods import PresetView
from toolret.eval.runner import evaluate
from toolret.search.fusion import budgeted_merge, subtask_budgets

SETS = "toole_multi,restbench_tmdb,restbench_spotify,nestful_nonexec,taubench,slack_web,mcp_catalog"


def merge_before(
    subtask_lists: Sequence[Sequence[str]], *, k: int, head: Sequence[str] = ()
) -> list[tuple[str, int | None]]:
    """The merge before the fix (round robin, a served list takes its second best at once)."""
    budgets = subtask_budgets(k, len(subtask_lists))
    chosen: list[tuple[str, int | None]] = []
    taken: set[str] = set()
    cursors = [0] * len(subtask_lists)
    used = [0] * len(subtask_lists)
    progress = True
    while progress and len(chosen) < k:
        progress = False
        for i, ranked in enumerate(subtask_lists):
            if used[i] >= budgets[i] or len(chosen) >= k:
                continue
            while cursors[i] < len(ranked) and ranked[cursors[i]] in taken:
                cursors[i] += 1
            if cursors[i] < len(ranked):
                chosen.append((ranked[cursors[i]], i))
                taken.add(ranked[cursors[i]])
                used[i] += 1
                progress = True
    for tool_id in head:
        if len(chosen) >= k:
            break
        if tool_id not in taken:
            chosen.append((tool_id, None))
            taken.add(tool_id)
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path("../shared/benchmarks"))
    parser.add_argument("--sets", default=SETS)
    args = parser.parse_args()
    for name in args.sets.split(","):
        ds = load_dataset(args.root / name).sample(500, seed=0)
        kb = ToolKnowledgeBase(None)
        kb.add(ds.tool_docs())
        cells = []
        for label, merge in (("before", merge_before), ("after", budgeted_merge)):
            plan_fusion.budgeted_merge = merge  # type: ignore[assignment]
            m = evaluate(PresetView(kb, "balanced"), ds, ks=(1, 5, 10), curve_k=0).metrics
            cells.append(f"{label} {m['recall@1']:.3f}/{m['recall@5']:.3f}/{m['ndcg@10']:.3f}")
        plan_fusion.budgeted_merge = budgeted_merge
        kb.close()
        print(f"{name:<18} " + "  ".join(cells), flush=True)


if __name__ == "__main__":
    main()
