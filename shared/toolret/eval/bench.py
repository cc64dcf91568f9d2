"""``toolret bench``: bm25 and the presets on every dev set, with fit and field ablations.

Benchmark code, kept out of the runtime path: the command line calls :func:`run_bench`.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolret.errors import DatasetError
from toolret.eval.methods import (
    BASELINES,
    DEFAULT_PRESET,
    PresetView,
    build_retriever,
    dedupe,
    fit,
    fit_split,
    method_label,
    release,
)
from toolret.eval.tables import format_table, write_json

__all__ = ["CachedIndexing", "run_bench"]


class CachedIndexing:
    """``toolret bench``'s embedder: tool texts from an on-disk cache while indexing (embedding a
    registry is a one-off, not what bench measures), every search through the model itself, so
    latency still includes embedding the query."""

    def __init__(self, cache_path: Path, model: str | None = None) -> None:
        from toolret.eval.scale import ComposedEmbedder
        from toolret.index.embedding import resolve_embedder

        self.model = resolve_embedder(model)
        self.cache = ComposedEmbedder(self.model, cache_path=cache_path)
        self.name = self.model.name
        self.texts_embedded = 0
        self.indexing = False

    def embed(self, texts: Sequence[str]) -> Any:
        self.texts_embedded += len(texts)
        return self.cache.embed(texts) if self.indexing else self.model.embed(texts)


def embedding_floor_ms(embedder: Any, queries: Sequence[str] = ("some query",), *, warmup: int = 3) -> float:
    """Median time of embedding one of ``queries`` alone: the least any dense search of them pays.

    The floor is measured on the dataset's own sampled queries (up to 100, each embedded once,
    in the same run as the searches), since a query's embedding time grows with its length:
    a two-word probe under-states it several times over on BFCL's long requests.
    """
    for _ in range(warmup):
        embedder.embed([queries[0]])
    times = []
    for text in queries[:100]:
        start = time.perf_counter()
        embedder.embed([text])
        times.append((time.perf_counter() - start) * 1000.0)
    return statistics.median(times)


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in name.removeprefix("packaged:"))[-60:]


def _short(name: str | None) -> str:
    """The embedder column: the packaged model's name without its prefix, a path's last part."""
    if not name:
        return "-"
    return Path(name.removeprefix("packaged:")).name


def bench_fit(
    kb: Any, dataset: Any, presets: list[str], levels: list[bool], limit: int | None, seconds: float, auto_k: bool
) -> list[dict[str, Any]]:
    """Every preset on the test split, then balanced+fit there after fitting on the other 80%.

    The same knowledge base and the same test queries for every row, so the rows compare.
    """
    from toolret.eval import evaluate

    test, fit_queries = fit_split(dataset)
    out: list[dict[str, Any]] = []

    def run(label: str, preset: str, extra_seconds: float) -> None:
        for name_level in levels:
            report = evaluate(
                PresetView(kb, preset),
                test,
                ks=(1, 5, 10),
                limit=limit,
                name_level=name_level,
                progress=True,
                method=label,
                curve_k=0,
                auto_k=auto_k,
            )
            entry = report.to_json_dict()
            entry.update(level="name" if name_level else "id", index_seconds=seconds + extra_seconds, split="test")
            entry["embedder"] = kb.embedder.name
            out.append(entry)

    for preset in presets:
        run(preset, preset, 0.0)
    fit_seconds = fit(kb, fit_queries)
    run("balanced+fit", "balanced", fit_seconds)
    kb.clear_history()
    return out


def bench_ablation(kb: Any, dataset: Any, name_level: bool, limit: int | None) -> list[list[Any]]:
    """One-out rows over the offline fields (toolret.eval.ablation) on the dataset's knowledge base."""
    from toolret import RetrievalConfig
    from toolret.eval.ablation import run_ablation

    rows = []
    for label, report in run_ablation(
        kb, dataset, base=RetrievalConfig.preset("fast"), limit=limit, name_level=name_level
    ):
        m = report.metrics
        rows.append(
            [
                dataset.name,
                label,
                "name" if name_level else "id",
                report.n_queries,
                m["recall@5"],
                m["ndcg@10"],
                report.latency_ms["p50"],
            ]
        )
    return rows


def bench_stages(kb: Any, dataset: Any, limit: int | None) -> dict[str, Any]:
    """balanced with each scoring and post-retrieval stage off (toolret.eval.stage_ablation)."""
    from toolret import RetrievalConfig
    from toolret.eval.stage_ablation import stage_rows

    return stage_rows(kb, dataset, limit=limit, base=RetrievalConfig.preset("balanced"))


def run_bench(args: argparse.Namespace) -> int:
    """``toolret bench``: bm25 and every preset on every dataset folder under ``args.datasets_root``."""
    from toolret.eval import evaluate, load_dataset

    root = Path(args.datasets_root)
    if not root.is_dir():
        raise DatasetError(f"{root}: datasets root not found (expected one folder per dataset)")
    folders = sorted(p for p in root.iterdir() if (p / "tools.jsonl").is_file())
    if not folders:
        raise DatasetError(f"{root}: no dataset folder with a tools.jsonl inside")
    limit = None if args.limit == 0 else args.limit
    presets = dedupe([DEFAULT_PRESET] + (args.preset or []))
    from toolret.eval.reference_fusions import REFERENCE_FUSIONS

    references = [] if getattr(args, "no_reference_fusions", False) else list(REFERENCE_FUSIONS)
    ks = (1, 5, 10)
    floor_ms: dict[str, float] = {}
    # The default embedder first (its cache is the one `--lodo` reads), then each one compared with it.
    embedders = [CachedIndexing(Path(args.out) / "lodo" / "embeddings.npz")] + [
        CachedIndexing(Path(args.out) / f"embeddings-{_slug(name)}.npz", name)
        for name in dedupe(getattr(args, "compare_embedder", None) or [])
    ]
    embedder = embedders[0]
    results: list[dict[str, Any]] = []
    ablations: list[list[Any]] = []
    stage_rows: dict[str, Any] = {}
    for folder in folders:
        dataset = load_dataset(folder)
        # Ids with '#' mark doc variants of one function name (BFCL): score by name as well.
        levels = [False, True] if any("#" in tool_id for tool_id in dataset.tool_ids) else [False]
        # One knowledge base per dataset and embedder serves every preset (a preset only changes the search).
        # The reference fusions (toolret.eval.reference_fusions) run with the default embedder only: the
        # two-sided rule compares each preset with them on the same knowledge base.
        runs = [("bm25", ["bm25"], embedder)] + [
            (method, shared, emb)
            for emb in embedders
            for method, shared in (("cosine", ["cosine"]), ("mftr", presets + (references if emb is embedder else [])))
        ]
        for method, shared_presets, embedder in runs:
            retriever, seconds = build_retriever(method, dataset, shared_presets[0], embedder=embedder)
            try:
                if dataset.name not in floor_ms and hasattr(retriever, "embedder"):
                    sampled = [q.query for q in dataset.sample(limit).queries]
                    floor_ms[dataset.name] = embedding_floor_ms(retriever.embedder, sampled)
                    print(f"{dataset.name}: query-embedding floor {floor_ms[dataset.name]:.2f} ms")
                for preset in shared_presets:
                    view = retriever if method in BASELINES else PresetView(retriever, preset)
                    for name_level in levels:
                        report = evaluate(
                            view,
                            dataset,
                            ks=ks,
                            limit=limit,
                            name_level=name_level,
                            progress=True,
                            method=method_label(method, preset),
                            curve_k=0,
                            auto_k=args.auto_k and method == "mftr",
                        )
                        entry = report.to_json_dict()
                        entry.update(level="name" if name_level else "id", index_seconds=seconds, split="all")
                        entry["embedder"] = None if method == "bm25" else embedder.name
                        # Per query (sample order), so two embedders' rows pair query by query for
                        # the model rule (toolret.training.model_rule); bench.md shows the means.
                        entry["per_query"] = {
                            m: [round(q.metrics[m], 4) for q in report.per_query] for m in ("recall@5", "ndcg@10")
                        }
                        results.append(entry)
                if embedder is not embedders[0]:
                    continue  # a compared embedder gets the main rows; ablations and fits stay the default's
                if method == "mftr" and args.ablation:
                    ablations.extend(bench_ablation(retriever, dataset, levels[-1], limit))
                    stage_rows[dataset.name] = bench_stages(retriever, dataset, limit)
                if method == "mftr" and args.fit:
                    results.extend(bench_fit(retriever, dataset, presets, levels, limit, seconds, args.auto_k))
            finally:
                release(retriever)
    if not getattr(args, "no_union", False):  # every dev registry in one knowledge base (toolret.eval.union)
        from toolret.eval.union import bench_union

        results.extend(bench_union(folders, presets + references, embedders[0], limit=limit, auto_k=args.auto_k))

    headers = [
        "dataset",
        "split",
        "method",
        "embedder",
        "level",
        "n",
        "R@1",
        "R@5",
        "NDCG@10",
        "C@10",
        "TRACC",
        "p50 ms",
        "x floor",
        "index s",
    ]
    rows = []
    for e in results:
        m, p50 = e["metrics"], e["latency_ms"]["p50"]
        floor = floor_ms.get(e["dataset"])
        times_floor = p50 / floor if floor and e["preset"] != "bm25" else None
        rows.append(
            [
                e["dataset"],
                e["split"],
                e["preset"],
                _short(e.get("embedder")),
                e["level"],
                e["n_queries"],
                m["recall@1"],
                m["recall@5"],
                m["ndcg@10"],
                m["completeness@10"],
                m["tracc"],
                p50,
                times_floor,
                e["index_seconds"],
            ]
        )
    table = format_table(headers, rows)
    print(table)
    from toolret.eval.union import guard_table

    guard = guard_table(results)  # the two-sided rule: single signals (R@1, R@5) and reference fusions (R@5 - .01)
    print(guard)
    ablation_md = ""
    if ablations:
        ablation_table = format_table(["dataset", "fields", "level", "n", "R@5", "NDCG@10", "p50 ms"], ablations)
        print(ablation_table)
        ablation_md = (
            "\n## Field ablation (fast preset, offline fields; '-f' = every field but f)\n\n"
            f"```\n{ablation_table}\n```\n"
        )
    if stage_rows:
        from toolret.eval.folds import registry_folds
        from toolret.eval.stage_ablation import stage_table

        stages = stage_table(stage_rows, registry_folds(stage_rows), "balanced")
        print(stages)
        ablation_md += (
            f"\n## Stage ablation (balanced, one stage off; verdict left one registry out)\n\n```\n{stages}\n```\n"
        )

    side_md = ""
    for compared in embedders[1:]:
        from toolret.eval.embedder_table import embedder_table, exposure, trained_registries

        seen: dict[str, str] = {}
        for folder in folders:
            labels = []
            for model in (compared, embedders[0]):
                trained = trained_registries(model.model)
                has_split = (folder / "train_queries.jsonl").is_file()
                labels.append(
                    "–" if trained is None else exposure(folder.name, has_train_split=has_split, trained_on=trained)
                )
            seen[folder.name] = " / ".join(labels)
        side = embedder_table(results, default=embedders[0].name, other=compared.name, presets=presets, seen=seen)
        print(side)
        side_md += (
            f"\n## {compared.name} / {embedders[0].name}, side by side (each cell: compared / default)\n\n{side}\n"
        )

    lodo_md = ""
    lodo_summary: dict[str, Any] | None = None
    if args.lodo:
        from toolret.eval.lodo_run import run_lodo

        lodo_summary = run_lodo(str(root), args.out, limit=limit)
        lodo_md = (
            "\n## Leave one dataset out (fast's fusion chosen on the other sets; `toolret bench --lodo`)\n\n"
            f"```\n{lodo_summary['table']}\n```\n\nWorst left-out set: {lodo_summary['worst']}.\n"
        )

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    summary = {
        "datasets_root": str(root),
        "limit": limit,
        "presets": presets,
        "embedding_floor_ms": floor_ms,
        "results": results,
        "lodo": lodo_summary,
        "stage_ablation": stage_rows,
    }
    write_json(out / "bench.json", summary)
    floor_line = ", ".join(f"{name} {ms:.2f} ms" for name, ms in floor_ms.items()) or "not measured"
    markdown = (
        "# toolret bench\n\n"
        f"Datasets under `{root}`; {'all' if limit is None else f'up to {limit} (seed 0)'} queries each. "
        "Query-embedding floor (median time of embedding one of the dataset's sampled queries alone, "
        f"up to 100 of them, in the same run): {floor_line}; "
        "`x floor` = p50 latency / floor; `index s` with tool embeddings read from the bench cache. TRACC: "
        + ("of the k='auto' set for presets, of the top 10 for bm25 and cosine" if args.auto_k else "of the top 10")
        + ".\n\n"
        f"```\n{table}\n```\n" + (f"\n```\n{guard}\n```\n" if guard else "") + side_md + ablation_md + lodo_md
    )
    (out / "bench.md").write_text(markdown, encoding="utf-8")
    print(f"wrote {out / 'bench.json'} and {out / 'bench.md'}")
    return 0
