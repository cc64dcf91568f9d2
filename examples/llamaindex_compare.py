"""Stock LlamaIndex ``ObjectIndex`` vs toolret's ``ToolObjectIndex`` on benchmark tool registries.

Both indexes get the same LlamaIndex tools (each benchmark record as a ``FunctionTool`` named by
its id, with its description and argument schema) and the same embedding model — toolret's
packaged all-MiniLM-L6-v2, handed to stock LlamaIndex through ``ToolretEmbedding`` — so the
difference is the retrieval method alone: one embedded text per tool (stock) against toolret's
per-field hybrid BM25 + dense MFTR scoring. Queries go through each index's ``as_retriever``,
the object an agent calls, and are timed there (each query on every method in turn, so a
change in machine load affects all methods alike).

    python examples/llamaindex_compare.py --limit 300
    python examples/llamaindex_compare.py --datasets toole_single --limit 1000 --json out.json

Recall@k counts a query's relevant tool ids found in the top k; for bfcl, ``name R@k`` also
counts a variant of the same function name as a hit (see the benchmark's README).
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from llama_index.core.objects import ObjectIndex

from llamaindex_toolret import ToolObjectIndex, ToolretEmbedding, doc_to_tool
from toolret.eval.datasets import load_dataset, sample_queries
from toolret.eval.metrics import percentile, recall_at_k

ROOT = Path(__file__).resolve().parents[1].parent / "shared" / "benchmarks"


def measure(
    retrievers: dict[str, Callable[[str], list[Any]]], queries: list[Any], k: int, by_name: bool
) -> dict[str, dict[str, float]]:
    """Recall@k and latency per retriever, queries interleaved so load changes hit all alike."""
    for retrieve in retrievers.values():
        retrieve(queries[0].query)  # warm-up: first-call imports and caches are not query latency
    recalls: dict[str, list[float]] = {m: [] for m in retrievers}
    name_recalls: dict[str, list[float]] = {m: [] for m in retrievers}
    latencies: dict[str, list[float]] = {m: [] for m in retrievers}
    for q in queries:
        for method, retrieve in retrievers.items():
            start = time.perf_counter()
            tools = retrieve(q.query)
            latencies[method].append((time.perf_counter() - start) * 1000)
            ids = [t.metadata.name for t in tools]
            recalls[method].append(recall_at_k(q.relevant, ids, k))
            if by_name:
                names = list(dict.fromkeys(i.split("#")[0] for i in ids))
                name_recalls[method].append(recall_at_k({r.split("#")[0] for r in q.relevant}, names, k))
    out = {}
    for method in retrievers:
        row = {
            f"recall@{k}": statistics.fmean(recalls[method]),
            "p50_ms": percentile(latencies[method], 50),
            "p95_ms": percentile(latencies[method], 95),
        }
        if by_name:
            row[f"name_recall@{k}"] = statistics.fmean(name_recalls[method])
        out[method] = row
    return out


def compare(folder: Path, limit: int | None, k: int, presets: list[str]) -> list[dict[str, Any]]:
    ds = load_dataset(folder)
    queries = sample_queries(ds.queries, limit, seed=0)
    tools = [doc_to_tool(doc) for doc in ds.tool_docs()]

    start = time.perf_counter()
    stock = ObjectIndex.from_objects(tools, embed_model=ToolretEmbedding())
    index_s = {"ObjectIndex (stock, MiniLM)": time.perf_counter() - start}
    retrievers = {"ObjectIndex (stock, MiniLM)": stock.as_retriever(similarity_top_k=k).retrieve}

    start = time.perf_counter()
    ours = ToolObjectIndex.from_objects(tools)
    ours_s = time.perf_counter() - start
    for preset in presets:
        method = f"ToolObjectIndex ({preset})"
        retrievers[method] = ours.as_retriever(similarity_top_k=k, config=preset, keep_used=0).retrieve
        index_s[method] = ours_s

    results = measure(retrievers, queries, k, by_name=folder.name == "bfcl")
    return [
        {
            "dataset": folder.name,
            "n_tools": len(tools),
            "n_queries": len(queries),
            "method": method,
            "index_s": index_s[method],
            **row,
        }
        for method, row in results.items()
    ]


def print_table(rows: list[dict[str, Any]], k: int) -> None:
    head = (
        f"{'dataset':<13} {'tools':>5} {'queries':>7}  {'method':<29} {'R@' + str(k):>6} {'name R@' + str(k):>9} "
        f"{'p50 ms':>7} {'p95 ms':>7} {'index s':>8}"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        name_recall = r.get(f"name_recall@{k}")
        print(
            f"{r['dataset']:<13} {r['n_tools']:>5} {r['n_queries']:>7}  {r['method']:<29} {r[f'recall@{k}']:>6.3f} "
            f"{'' if name_recall is None else f'{name_recall:.3f}':>9} {r['p50_ms']:>7.1f} {r['p95_ms']:>7.1f} "
            f"{r['index_s']:>8.1f}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="benchmarks folder (default ../shared/benchmarks)")
    parser.add_argument("--datasets", default="toole_single,bfcl", help="comma-separated dataset folders")
    parser.add_argument("--limit", type=int, default=300, help="queries per dataset (seeded sample); 0 = all")
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--presets", default="fast,balanced", help="toolret presets to run (comma-separated)")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = parser.parse_args()
    logging.getLogger("toolret").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore")

    rows: list[dict[str, Any]] = []
    for name in args.datasets.split(","):
        rows.extend(compare(args.root / name.strip(), args.limit or None, args.k, args.presets.split(",")))
    print_table(rows, args.k)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
