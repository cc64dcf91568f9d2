"""The union condition and the cosine guard of ``toolret bench`` (docs/method.md, section 4b).

An agent with many sources searches one knowledge base that holds all of them. The union
condition builds that case from the dev sets: every dev registry in one knowledge base (each tool
id prefixed by its registry, ``bfcl/get_weather``; ToolE's two sets share one registry and appear
once), searched with every dev set's own query sample. Each set's queries are reported on their
own (``union/<set>``) beside the per-set rows, so a set that only loses among other registries'
tools shows up, and all of them together (``union``).

The guard is a two-sided rule for every default: on every dev set and on the union, ``fast`` and
``balanced`` reach the better single signal (BM25, or plain cosine with the same embedder) at R@1
and R@5, and the better of the two reference fusions (:mod:`toolret.eval.reference_fusions`) at R@5
minus .01 (:func:`guard_rows` prints every margin and the worst).

Example:
    >>> union_id("toole_multi", "weather#1")
    'toole/weather#1'
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from toolret.eval.datasets import Dataset, EvalQuery, load_dataset
from toolret.eval.folds import REGISTRY

__all__ = [
    "FUSION_SLACK",
    "GUARD_HEADERS",
    "UNION",
    "bench_union",
    "guard_rows",
    "guard_table",
    "union_dataset",
    "union_id",
]

#: The dataset label of the union condition's rows (per set: ``union/<set>``).
UNION = "union"


def union_id(dataset: str, tool_id: str) -> str:
    """The id a dev set's tool has in the union: its registry, a slash, its own id."""
    return f"{REGISTRY.get(dataset, dataset)}/{tool_id}"


def union_dataset(
    folders: Iterable[str | Path], *, limit: int | None = 500, seed: int = 0
) -> tuple[Dataset, dict[str, str]]:
    """Every registry under ``folders`` in one dataset, with each set's sample of ``limit`` queries.

    Returns the dataset and, per query id, the dev set it comes from. A registry two sets share
    (ToolE) is added once. Query ids and relevant ids are prefixed like the tools.
    """
    tools: list[dict[str, Any]] = []
    queries: list[EvalQuery] = []
    source: dict[str, str] = {}
    seen: set[str] = set()
    for folder in folders:
        dataset = load_dataset(folder)
        registry = REGISTRY.get(dataset.name, dataset.name)
        if registry not in seen:
            seen.add(registry)
            tools.extend({**tool, "id": union_id(dataset.name, str(tool["id"]))} for tool in dataset.tools)
        for q in dataset.sample(limit, seed=seed).queries:
            qid = f"{dataset.name}/{q.id}"
            source[qid] = dataset.name
            relevant = [union_id(dataset.name, r) for r in q.relevant]
            queries.append(q.model_copy(update={"id": qid, "relevant": relevant}))
    return Dataset(name=UNION, tools=tools, queries=queries), source


def bench_union(
    folders: Sequence[str | Path],
    presets: Sequence[str],
    embedder: Any,
    *,
    limit: int | None,
    auto_k: bool,
) -> list[dict[str, Any]]:
    """bm25, cosine and every preset over the union, one report per dev set and one for all.

    Entries have the shape of ``toolret bench``'s results (``dataset`` is ``union/<set>`` or
    ``union``); name-level rows are added for sets whose ids mark doc variants (BFCL).
    """
    from toolret.eval import evaluate
    from toolret.eval.methods import BASELINES, PresetView, build_retriever, method_label, release

    union, source = union_dataset(folders, limit=limit)
    by_set: dict[str, list[EvalQuery]] = {}
    for q in union.queries:
        by_set.setdefault(source[q.id], []).append(q)
    parts = [(f"{UNION}/{name}", qs) for name, qs in by_set.items()] + [(UNION, union.queries)]
    results: list[dict[str, Any]] = []
    for method, labels in (("bm25", ["bm25"]), ("cosine", ["cosine"]), ("mftr", list(presets))):
        retriever, seconds = build_retriever(method, union, labels[0], embedder=embedder)
        try:
            for preset in labels:
                view = retriever if method in BASELINES else PresetView(retriever, preset)
                for label, qs in parts:
                    levels = [False, True] if any("#" in r for q in qs for r in q.relevant) else [False]
                    for name_level in levels:
                        report = evaluate(
                            view,
                            Dataset(name=label, tools=[], queries=qs),
                            ks=(1, 5, 10),
                            limit=None,
                            name_level=name_level,
                            progress=True,
                            method=method_label(method, preset),
                            curve_k=0,
                            auto_k=auto_k and method == "mftr",
                        )
                        entry = report.to_json_dict()
                        entry.update(level="name" if name_level else "id", index_seconds=seconds, split="all")
                        entry["embedder"] = None if method == "bm25" else getattr(embedder, "name", None)
                        results.append(entry)
        finally:
            release(retriever)
    return results


#: The better reference fusion's R@5 may be missed by this much (issue 43's rule, DESIGN §2b).
FUSION_SLACK = 0.01
#: guard_rows' columns after dataset, embedder and preset.
GUARD_HEADERS = ("R@1", "R@5", "R@1 - best single", "R@5 - best single", "R@5 - (best fusion - .01)")


def guard_rows(results: Sequence[dict[str, Any]], presets: Sequence[str] = ("fast", "balanced")) -> list[list[Any]]:
    """Per dataset and embedder (id level, whole-set split), each preset's margins under the two-sided rule:
    over the better single signal (bm25 or cosine with the same embedder) at R@1 and at R@5, and over the
    better reference fusion's R@5 less .01 (:mod:`toolret.eval.reference_fusions`; blank without
    their rows); negative = the rule is broken."""
    from toolret.eval.reference_fusions import REFERENCE_FUSIONS

    table: dict[tuple[str, str], dict[str, dict[str, float]]] = {}
    lexical: dict[str, dict[str, float]] = {}
    for e in results:
        if e.get("level", "id") == "id" and e.get("split", "all") == "all":
            if e["preset"] == "bm25":
                lexical[e["dataset"]] = e["metrics"]
            else:
                table.setdefault((e["dataset"], e.get("embedder") or ""), {})[e["preset"]] = e["metrics"]
    rows: list[list[Any]] = []
    for (dataset, embedder), by in table.items():
        cos, bm25 = by.get("cosine"), lexical.get(dataset)
        if cos is None:
            continue
        single1 = max(cos["recall@1"], bm25["recall@1"] if bm25 else 0.0)
        single5 = max(cos["recall@5"], bm25["recall@5"] if bm25 else 0.0)
        refs = [by[r]["recall@5"] for r in REFERENCE_FUSIONS if r in by]
        for preset in presets:
            m = by.get(preset)
            if m is None:
                continue
            rows.append(
                [
                    dataset,
                    embedder.removeprefix("packaged:") or "-",
                    preset,
                    m["recall@1"],
                    m["recall@5"],
                    m["recall@1"] - single1,
                    m["recall@5"] - single5,
                    m["recall@5"] - (max(refs) - FUSION_SLACK) if refs else None,
                ]
            )
    return rows


def guard_table(results: Sequence[dict[str, Any]], presets: Sequence[str] = ("fast", "balanced")) -> str:
    """:func:`guard_rows` as text, with the worst margin named under it."""
    from toolret.eval.tables import format_table

    rows = guard_rows(results, presets)
    if not rows:
        return ""
    headers = ["dataset", "embedder", "preset", *GUARD_HEADERS]
    worst = min(((min(v for v in r[5:] if v is not None), r[0], f"{r[2]}, {r[1]}") for r in rows), key=lambda t: t[0])
    return (
        "Rule: each preset against the better single signal (R@1, R@5) and the better reference fusion (R@5 - .01)\n"
        + format_table(headers, rows)
        + f"\nworst margin: {worst[0]:+.3f} ({worst[2]} on {worst[1]})"
    )
