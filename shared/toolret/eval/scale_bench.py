"""The scale benchmark (``make bench-scale``): retrieval quality, latency and memory vs registry size.

For each size M (default 1k, 10k, 100k) a fresh process builds an in-memory knowledge base
of M tools (:mod:`toolret.eval.scale`: the real benchmark tools plus synthetic variants, seed 0),
then searches the same sampled queries (ToolE single and BFCL, 200 each by default) with
each preset (one BLAS thread, see ``run_bench``). Measured per size:

* index seconds: ``ToolKnowledgeBase.add`` of the M tools (ChromaDB writes, BM25 indexes,
  snapshot), with embeddings served from the cache (embedding is a one-off, reported apart);
* RSS peak of that process (``ru_maxrss``), so sizes do not inherit each other's peak;
* per preset: Recall@1/5/10 (pooled over all queries, and per dataset) and search latency
  p50/p95 (:func:`toolret.eval.evaluate`, one timed search per query);
* the embedding floor: p50/p95 of embedding one query alone with the model, in the same
  process, so each size's latency can be read against what no search can go below.

Outputs in ``--out``: ``size-<M>.json`` per size, ``scale.json`` (all), ``scale.md`` (the
table) and ``scale.png``: Recall@k vs M for k = 1, 5, 10 and p50 latency vs M.

Usage::

    toolret bench-scale --datasets-root ../shared/benchmarks --sizes 1000,10000,100000 --out .bench/scale
"""

from __future__ import annotations

import json
import logging
import os
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolret.errors import MissingDependencyError, ToolRetError

__all__ = ["DEFAULT_DATASETS", "DEFAULT_SIZES", "first_drop", "plot_scale", "run_bench", "run_size", "scale_table"]

logger = logging.getLogger("toolret")

DEFAULT_SIZES = (1_000, 10_000, 30_000, 100_000)
DEFAULT_DATASETS = ("toole_single", "bfcl")
KS = (1, 5, 10)


def cache_file(model_name: str) -> str:
    """The embedding cache of one model (vectors of two models must never mix)."""
    slug = "".join(c if c.isalnum() or c in "-." else "-" for c in model_name.removeprefix("packaged:"))
    return f"embedding_cache-{slug}.npz"


def embedding_floor(model: Any, queries: Sequence[Any]) -> dict[str, float]:
    """p50/p95 ms of embedding one query alone with the model: what no search can go below."""
    import numpy as np

    model.embed(["warm up"])
    times = []
    for q in queries:
        start = time.perf_counter()
        model.embed([q.query])
        times.append(1000 * (time.perf_counter() - start))
    return {"p50": float(np.percentile(times, 50)), "p95": float(np.percentile(times, 95))}


def _setup(root: str | Path, datasets: Sequence[str], per_dataset: int) -> tuple[Any, dict[str, list[Any]], set[str]]:
    """The real pool (docs expanded as the knowledge base indexes them), sampled queries, core ids."""
    from toolret.eval.scale import expand_all, load_real, sampled_queries

    pool = load_real(root)
    pool.docs = expand_all(pool.docs)
    queries = {name: sampled_queries(pool, [name], per_dataset) for name in datasets}
    core = {r for qs in queries.values() for q in qs for r in q.relevant}
    core |= {d.id for d in pool.docs if d.id.startswith("toole/")}
    return pool, queries, core


def warm_cache(root: str | Path, out: str | Path, datasets: Sequence[str], per_dataset: int) -> dict[str, Any]:
    """Embed every real tool field once (cached), and measure the synthetic blend against the model."""
    from toolret.documents.tool_doc import INDEX_FIELDS
    from toolret.eval.scale import (
        ComposedEmbedder,
        SyntheticPlan,
        approximation_quality,
        expand_all,
    )
    from toolret.index.embedding import resolve_embedder

    pool, _queries, _core = _setup(root, datasets, per_dataset)
    model = resolve_embedder(None)
    embedder = ComposedEmbedder(model, Path(out) / cache_file(model.name))
    texts = [d.field_text(f) for d in pool.docs for f in INDEX_FIELDS]
    start = time.perf_counter()
    n = embedder.warm([t for t in texts if t])  # queries are not cached: search embeds them, timed
    seconds = time.perf_counter() - start
    embedder.save()
    variants = expand_all(SyntheticPlan(pool.docs).variants(2_000))
    embedder.compose_registry(variants, {d.id: d for d in pool.docs})
    quality = approximation_quality(embedder, variants, sample=200)
    print(
        f"embedding cache: {len(embedder)} texts ({n} embedded now in {seconds:.1f} s); synthetic blend vs "
        f"true embedding on {quality['n']} fields: mean cosine {quality['mean_cosine']:.3f}, "
        f"min {quality['min_cosine']:.3f}",
        flush=True,
    )
    return {"cache_texts": len(embedder), "embedded_now": n, "embed_seconds": seconds, "blend_quality": quality}


class _Preset:
    def __init__(self, kb: Any, preset: str) -> None:
        self.kb, self.name = kb, preset

    def search(self, query: str, k: int = 5) -> Any:
        return self.kb.search(query, k=k, config=self.name)


def run_size(
    root: str | Path,
    size: int,
    out: str | Path,
    *,
    datasets: Sequence[str] = DEFAULT_DATASETS,
    per_dataset: int = 200,
    presets: Sequence[str] = ("fast", "balanced"),
) -> dict[str, Any]:
    """Build a registry of ``size`` tools, evaluate every preset, write ``size-<M>.json``."""
    from toolret import ToolKnowledgeBase
    from toolret.eval import evaluate
    from toolret.eval.scale import ComposedEmbedder, build_registry, expand_all
    from toolret.index.embedding import resolve_embedder

    pool, by_dataset_queries, core = _setup(root, datasets, per_dataset)
    queries = [q for name in datasets for q in by_dataset_queries[name]]
    registry = expand_all(build_registry(pool, size, core))
    model = resolve_embedder(None)
    embedder = ComposedEmbedder(model, Path(out) / cache_file(model.name))
    start = time.perf_counter()
    composed = embedder.compose_registry(registry, {d.id: d for d in pool.docs})
    compose_s = time.perf_counter() - start
    kb = ToolKnowledgeBase(embedder=embedder, config="fast")
    start = time.perf_counter()
    kb.add(registry)
    index_s = time.perf_counter() - start
    embedder.save()
    embedder.frozen = True
    entry: dict[str, Any] = {
        "size": size,
        "n_real": sum(1 for d in registry if not d.metadata.get("synthetic")),
        "n_synthetic": sum(1 for d in registry if d.metadata.get("synthetic")),
        "composed_vectors": composed,
        "compose_seconds": compose_s,
        "index_seconds": index_s,
        "model_texts_at_index": embedder.model_texts,
        "n_queries": len(queries),
        "presets": {},
        "embedder": model.name,
    }
    dataset_of = {q.id: name for name in datasets for q in by_dataset_queries[name]}
    for preset in presets:
        report = evaluate(_Preset(kb, preset), queries, ks=KS, curve_k=0, method=preset)
        by_dataset: dict[str, dict[str, float]] = {}
        for name in datasets:
            scores = [s for s in report.per_query if dataset_of.get(s.id) == name]
            if scores:
                by_dataset[name] = {
                    f"recall@{k}": sum(s.metrics[f"recall@{k}"] for s in scores) / len(scores) for k in KS
                }
        entry["presets"][preset] = {
            "recall": {f"recall@{k}": report.metrics[f"recall@{k}"] for k in KS},
            "by_dataset": by_dataset,
            "latency_ms": report.latency_ms,
        }
        print(
            f"M={size}: {preset} R@5 {report.metrics['recall@5']:.3f} p50 {report.latency_ms['p50']:.1f} ms", flush=True
        )
    entry["embed_floor_ms"] = embedding_floor(model, queries)  # measured in the same run as the searches
    entry["rss_peak_mb"] = _peak_rss_mb()
    entry["ann"] = _ann_entry(kb, embedder, queries[::2])  # after the peak: it builds float32 references
    entry["load_average_1m_end"] = os.getloadavg()[0]  # other work on the machine inflates latencies
    entry["blas_threads"] = os.environ.get("OPENBLAS_NUM_THREADS", "default")
    path = Path(out) / f"size-{size}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(entry, indent=2) + "\n", encoding="utf-8")
    return entry


def _ann_entry(kb: Any, embedder: Any, queries: Sequence[Any]) -> dict[str, Any]:
    """Recall of the float16 dense index vs the float32 scan, its build time and memory (printed)."""
    import numpy as np

    from toolret.eval.scale_ann import ann_report

    snap = kb._writer.snapshot  # the benchmark reads its own knowledge base's snapshot

    def float32_rows(field: str) -> np.ndarray:  # the same vectors the index was given, unrounded
        texts = [snap.docs[i].field_text(field) for i in snap.rows[field].tolist()]
        return np.concatenate([embedder.embed(texts[s : s + 4096]) for s in range(0, len(texts), 4096)])

    qvecs = list(embedder.embed([q.query for q in queries])) if snap.ann else []
    report = ann_report(snap, qvecs, float32_rows)
    for field, r in report["fields"].items():
        print(
            f"  float16 {field}: {r['rows']} rows, recall@10 {r['recall_at_10']:.4f} (ids {r['id_recall_at_10']:.4f}), "
            f"recall@50 {r['recall_at_50']:.4f} (ids {r['id_recall_at_50']:.4f}), "
            f"full float16 scan {r['scan_recall_at_10']:.4f} / {r['scan_recall_at_50']:.4f}; "
            f"{r['search_ms']:.2f} ms a search ({r['scan_ms']:.2f} scanning every row), "
            f"build {r['build_seconds']:.1f} s, {r['mb']:.0f} MB (float32 {r['float32_mb']:.0f} MB)",
            flush=True,
        )
    print(f"  vectors {report['vectors_mb']:.0f} MB (all float32: {report['float32_mb']:.0f} MB)", flush=True)
    return report


def _peak_rss_mb() -> float:
    """This process's peak RSS. ``ru_maxrss`` is not it on Linux: after fork and exec it starts at
    the parent's RSS at fork time (the benchmark's parent holds the real pool and the embedding
    cache), which hid the smaller sizes' own peaks. ``VmHWM`` belongs to this process's memory map."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def first_drop(entries: Sequence[dict[str, Any]], preset: str, ratio: float = 0.9) -> int | None:
    """The smallest size whose Recall@5 is below ``ratio`` times that of the smallest size."""
    ordered = sorted(entries, key=lambda e: e["size"])
    base = ordered[0]["presets"][preset]["recall"]["recall@5"]
    for e in ordered[1:]:
        if e["presets"][preset]["recall"]["recall@5"] < ratio * base:
            return int(e["size"])
    return None


def scale_table(entries: Sequence[dict[str, Any]]) -> str:
    from toolret.eval.tables import format_table

    rows = []
    for e in sorted(entries, key=lambda x: x["size"]):
        for preset, p in e["presets"].items():
            r, lat = p["recall"], p["latency_ms"]
            floor = e.get("embed_floor_ms", {}).get("p50")
            rows.append(
                [
                    e["size"],
                    preset,
                    r["recall@1"],
                    r["recall@5"],
                    r["recall@10"],
                    lat["p50"],
                    lat["p95"],
                    floor,
                    e["index_seconds"],
                    e["rss_peak_mb"],
                ]
            )
    return format_table(
        ["tools", "preset", "R@1", "R@5", "R@10", "p50 ms", "p95 ms", "embed p50 ms", "index s", "RSS MB"], rows
    )


def plot_scale(entries: Sequence[dict[str, Any]], out_png: str | Path) -> Path:
    """Recall@1/5/10 vs registry size (left) and p50 latency vs size (right), one style per preset."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingDependencyError("matplotlib", extra="plot", purpose="scale plots") from None
    ordered = sorted(entries, key=lambda e: e["size"])
    sizes = [e["size"] for e in ordered]
    presets = list(ordered[0]["presets"])
    figure = Figure(figsize=(10, 4.2), dpi=110)
    FigureCanvasAgg(figure)
    left, right = figure.add_subplot(1, 2, 1), figure.add_subplot(1, 2, 2)
    styles = ["-", "--", ":", "-."]
    for i, preset in enumerate(presets):
        for k, color in zip(KS, ("tab:blue", "tab:orange", "tab:green")):
            values = [e["presets"][preset]["recall"][f"recall@{k}"] for e in ordered]
            left.plot(sizes, values, styles[i % 4], marker="o", color=color, label=f"{preset} R@{k}")
        right.plot(
            sizes,
            [e["presets"][preset]["latency_ms"]["p50"] for e in ordered],
            styles[i % 4],
            marker="o",
            color="black",
            label=f"{preset} p50",
        )
    if all("embed_floor_ms" in e for e in ordered):
        right.plot(
            sizes,
            [e["embed_floor_ms"]["p50"] for e in ordered],
            ":",
            marker="x",
            color="gray",
            label="query embedding p50 (floor)",
        )
    for axes in (left, right):
        axes.set_xscale("log")
        axes.set_xlabel("tools in the registry (M)")
        axes.grid(True, alpha=0.3)
        axes.legend(fontsize="small")
    left.set_ylabel("Recall@k")
    left.set_ylim(0.0, 1.0)
    left.set_title("Recall vs tool-M")
    right.set_ylabel("search latency p50 (ms)")
    right.set_ylim(bottom=0)
    right.set_title("Latency vs tool-M")
    figure.tight_layout()
    out = Path(out_png)
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out)
    return out


def run_bench(
    root: str | Path,
    out: str | Path,
    *,
    sizes: Sequence[int] = DEFAULT_SIZES,
    datasets: Sequence[str] = DEFAULT_DATASETS,
    per_dataset: int = 200,
    presets: Sequence[str] = ("fast", "balanced"),
) -> dict[str, Any]:
    """Warm the cache, run every size in its own process, write scale.json/.md/.png."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    prep = warm_cache(root, out, datasets, per_dataset)
    entries = []
    for size in sorted(sizes):
        cmd = [
            sys.executable,
            "-m",
            "toolret.eval.scale_bench",
            str(root),
            str(size),
            str(out),
            ",".join(datasets),
            str(per_dataset),
            ",".join(presets),
        ]
        start = time.perf_counter()
        # One BLAS thread: on two cores the query embedding and a second BLAS thread fight, and
        # spinning BLAS threads made a 10k-tool matrix-vector product 4x slower (18 vs 4 ms).
        env = {**os.environ, "TOKENIZERS_PARALLELISM": "false", "OPENBLAS_NUM_THREADS": "1"}
        done = subprocess.run(cmd, env=env, check=False)
        if done.returncode != 0:
            raise ToolRetError(f"the scale run for {size} tools failed (exit {done.returncode})")
        entries.append(json.loads((out / f"size-{size}.json").read_text(encoding="utf-8")))
        print(f"M={size}: done in {time.perf_counter() - start:.0f} s", flush=True)
    table = scale_table(entries)
    drops = {p: first_drop(entries, p) for p in presets} if len(entries) > 1 else {}
    png = plot_scale(entries, out / "scale.png")
    summary = {
        "datasets_root": str(root),
        "datasets": list(datasets),
        "queries_per_dataset": per_dataset,
        "prep": prep,
        "results": entries,
        "recall5_below_0.9_of_smallest_at": drops,
    }
    (out / "scale.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    smallest = min(sizes)
    drop_lines = "\n".join(
        f"- {p}: "
        + (
            f"Recall@5 first falls below 0.9 x its {smallest}-tool value at {d} tools"
            if d
            else f"Recall@5 stays at or above 0.9 x its {smallest}-tool value at every size"
        )
        for p, d in drops.items()
    )
    q = prep["blend_quality"]
    (out / "scale.md").write_text(
        "# toolret scale benchmark\n\n"
        f"Queries: {per_dataset} sampled (seed 0) from each of {', '.join(datasets)}. Registries: real benchmark "
        "tools plus synthetic variants (`toolret.eval.scale`). Synthetic field vectors composed from cached real "
        f"embeddings; on {q['n']} sampled fields their cosine to the true embedding is {q['mean_cosine']:.3f} "
        f"(min {q['min_cosine']:.3f}).\n\n```\n{table}\n```\n\n{drop_lines}\n\nPlot: `{png.name}`.\n",
        encoding="utf-8",
    )
    print(table)
    print(drop_lines)
    print(f"wrote {out / 'scale.json'}, {out / 'scale.md'} and {png}")
    return summary


if __name__ == "__main__":  # one size, in its own process (see run_bench)
    _root, _size, _out, _datasets, _per, _presets = sys.argv[1:7]
    run_size(_root, int(_size), _out, datasets=_datasets.split(","), per_dataset=int(_per), presets=_presets.split(","))
