"""The ``toolret`` command: index a registry, search it, evaluate and benchmark retrieval.

Each verb is a thin layer over the library (nothing here that a Python user could not
do with :class:`~toolret.ToolKnowledgeBase`, :mod:`toolret.eval` and the modules named)::

    toolret index tools.jsonl --kb tools.kb [--preset fast]
    toolret search --kb tools.kb "what's the weather in Paris?" [-k 5]
    toolret eval --dataset ../shared/benchmarks/bfcl --method bm25 --method mftr --name-level \\
                 [--k 1,5,10] [--limit 500] [--json report.json] [--plot recall.png]
    toolret bench --datasets-root ../shared/benchmarks [--limit 500] [--out .bench] [--lodo]
    toolret serve-mcp --server 'files=npx -y @modelcontextprotocol/server-filesystem .' \\
                      [--config mcp.json] [--kb tools.kb] [--transport stdio|streamable-http]
    toolret bench-scale --datasets-root ../shared/benchmarks --sizes 1000,10000,100000 [--out .bench/scale]

``eval --json OUT`` writes the report of the primary method — the last ``--method`` given
(``mftr`` by default) — in the documented shape
``{"dataset", "preset", "n_queries", "metrics", "latency_ms"}``, where ``preset`` is the
preset name for ``mftr`` and ``"bm25"`` or ``"cosine"`` for a baseline. How queries are searched and
scored is documented in :mod:`toolret.eval.runner`.

Errors toolret raises on purpose (a missing dataset, a bad tool, an unknown preset) print
one line on stderr and exit with status 2, never a traceback. The knowledge base and its
heavy dependencies are imported only by the verbs that need them, so ``eval --method bm25``
starts fast.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolret.errors import ConfigError, DatasetError, ToolRetError

__all__ = ["build_parser", "format_table", "main"]

logger = logging.getLogger("toolret")

METHODS = ("mftr", "bm25", "cosine")
#: Single-signal baselines (toolret.baseline): their label is the method name, not a preset.
BASELINES = ("bm25", "cosine")
DEFAULT_PRESET = "fast"
DEFAULT_BENCH_LIMIT = 500
#: Abbreviated column names for the per-field scores of ``toolret search``.
FIELD_ABBREVIATIONS = {"description": "desc", "parameters": "params", "response": "resp", "examples": "ex"}


# ---------------------------------------------------------------------------- formatting
def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain-text table: text left-aligned, numbers right-aligned (floats to 3 decimals).

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
    widths = [max([len(h)] + [len(r[i]) for r in text]) for i, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        parts = [v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric)]
        return "  ".join(parts).rstrip()

    out = [line(list(headers)), line(["-" * w for w in widths])]
    out.extend(line(r) for r in text)
    return "\n".join(out)


def _truncate(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _parse_ks(text: str) -> list[int]:
    from toolret.eval.runner import normalize_ks

    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ConfigError(f"--k expects comma-separated positive integers such as 1,5,10, got {text!r}") from None
    return normalize_ks(values)


def _dedupe(values: Sequence[str]) -> list[str]:
    """Keep the last occurrence of each value, in order (so 'the last given' stays last)."""
    seen: set[str] = set()
    kept: list[str] = []
    for value in reversed(values):
        if value not in seen:
            seen.add(value)
            kept.append(value)
    return kept[::-1]


# ---------------------------------------------------------------------------- retrievers
def _method_label(method: str, preset: str) -> str:
    return method if method in BASELINES else preset


class _CachedIndexing:
    """``toolret bench``'s embedder: tool texts from an on-disk cache while indexing (embedding a
    registry is a one-off, not what bench measures), every search through the model itself, so
    latency still includes embedding the query."""

    def __init__(self, cache_path: Path) -> None:
        from toolret.embedding import resolve_embedder
        from toolret.scale import ComposedEmbedder

        self.model = resolve_embedder(None)
        self.cache = ComposedEmbedder(self.model, cache_path=cache_path)
        self.name = self.model.name
        self.texts_embedded = 0
        self.indexing = False

    def embed(self, texts: Sequence[str]) -> Any:
        self.texts_embedded += len(texts)
        return self.cache.embed(texts) if self.indexing else self.model.embed(texts)


def _build_retriever(method: str, dataset: Any, preset: str, config: Any = None,
                     embedder: _CachedIndexing | None = None) -> tuple[Any, float]:
    """The retriever for ``method`` over the dataset's tools, and how long building it took."""
    start = time.perf_counter()
    if embedder is not None:
        embedder.indexing = True
    if method == "bm25":
        from toolret.baseline import BM25Baseline

        retriever: Any = BM25Baseline(dataset.tools)
    elif method == "cosine":
        from toolret.baseline import CosineBaseline

        retriever = CosineBaseline(dataset.tools, embedder=embedder)
    elif method == "mftr":
        from toolret import ToolKnowledgeBase

        retriever = ToolKnowledgeBase(None, config=config or preset, embedder=embedder)
        retriever.add(dataset.tool_docs(), progress=True)
    else:
        raise ConfigError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    if embedder is not None:
        embedder.indexing = False
        embedder.cache.save()
    seconds = time.perf_counter() - start
    print(f"{dataset.name}: {_method_label(method, preset)} indexed {len(dataset.tools)} tools in {seconds:.1f} s")
    return retriever, seconds


def _fit_split(dataset: Any) -> tuple[Any, list[Any]]:
    """The test part of the documented 80/20 split as the dataset, and the part to fit on."""
    from toolret.eval.datasets import split_queries

    fit, test = split_queries(dataset.queries)
    print(f"{dataset.name}: fit on {len(fit)} queries, report on the other {len(test)} (sha1(id) % 5 == 0)")
    return dataset.model_copy(update={"queries": test}), fit


def _fit(kb: Any, fit_queries: list[Any]) -> float:
    """Record the fit queries' (request, relevant tools) bundles in the knowledge base's memory."""
    start = time.perf_counter()
    kb.record_many([(q.query, q.relevant) for q in fit_queries])
    weights = kb.fit()
    seconds = time.perf_counter() - start
    print(f"recorded {len(fit_queries)} bundles and fitted weights on {weights.n_queries} of them "
          f"({weights.n_pairs} pairs, loss {weights.loss_before:.3f} -> {weights.loss_after:.3f}) in {seconds:.1f} s; "
          f"l2 {weights.l2 if weights.l2 is not None else 'none (hand-set formula kept)'}, held-out R@5 "
          f"{weights.validation_recall_default:.3f} hand-set -> {weights.validation_recall:.3f} on {weights.n_validation}")
    return seconds


class _PresetView:
    """A knowledge base searched with one preset, as the eval harness's retriever."""

    def __init__(self, kb: Any, preset: str) -> None:
        self.kb, self.preset, self.name = kb, preset, preset
        self.embedder = kb.embedder

    def search(self, query: str, k: int = 5) -> Any:
        return self.kb.search(query, k=k, config=self.preset)


def _release(retriever: Any) -> None:
    close = getattr(retriever, "close", None)
    if callable(close):
        close()


def _report_row(report: Any, method: str) -> list[Any]:
    ks = report.ks
    metrics = report.metrics
    row: list[Any] = [method + (" (by name)" if report.name_level else ""), report.n_queries]
    row += [metrics[f"recall@{k}"] for k in ks]
    row += [metrics[f"ndcg@{k}"] for k in ks]
    row += [metrics[f"completeness@{k}"] for k in ks]
    row += [metrics["tracc"], report.latency_ms["p50"], report.latency_ms["p95"], report.index_seconds]
    return row


def _report_headers(ks: Sequence[int]) -> list[str]:
    return (
        ["method", "n"]
        + [f"R@{k}" for k in ks]
        + [f"NDCG@{k}" for k in ks]
        + [f"C@{k}" for k in ks]
        + ["TRACC", "p50 ms", "p95 ms", "index s"]
    )


def _write_json(path: str | Path, payload: Any) -> None:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------- verbs
def _cmd_index(args: argparse.Namespace) -> int:
    from toolret import ToolKnowledgeBase
    from toolret.ingest import load_jsonl

    tools = load_jsonl(args.tools)
    start = time.perf_counter()
    kb = ToolKnowledgeBase(args.kb, config=args.preset)
    ids = kb.add(tools, progress=True)
    kb.save()
    seconds = time.perf_counter() - start
    print(f"indexed {len(ids)} tools from {args.tools} into {args.kb} in {seconds:.1f} s ({len(kb)} tools in total)")
    return 0


def _cmd_search(args: argparse.Namespace) -> int:
    from toolret import ToolKnowledgeBase

    kb = ToolKnowledgeBase.load(args.kb)
    result = kb.search(args.query, k=args.k, config=args.preset)
    fields: list[str] = []
    for tool in result.tools:
        fields.extend(f for f in tool.field_scores if f not in fields)
    fields.sort(key=lambda f: (list(FIELD_ABBREVIATIONS).index(f) if f in FIELD_ABBREVIATIONS else 99, f))
    headers = ["rank", "tool", "score"] + [FIELD_ABBREVIATIONS.get(f, f) for f in fields] + ["penalty"]
    rows = [
        [rank, _truncate(tool.id, 60), tool.score]
        + [tool.field_scores.get(f) for f in fields]
        + [tool.penalty]
        for rank, tool in enumerate(result.tools, start=1)
    ]
    print(f"query: {args.query}")
    print(format_table(headers, rows) if rows else "(no tools found)")
    if result.trace:
        steps = ", ".join(f"{s.stage} {s.path} {s.ms:.1f} ms" for s in result.trace)
        print(f"trace: {steps} (total {result.total_ms:.1f} ms)")
    return 0


def _fields_config(preset: str, fields: str | None) -> Any:
    """The preset searching only ``fields`` (comma-separated index fields), or None for all of them."""
    if not fields:
        return None
    from toolret import RetrievalConfig

    chosen = tuple(f.strip() for f in fields.split(",") if f.strip())
    return RetrievalConfig(**{**RetrievalConfig.preset(preset).model_dump(exclude={"learned"}), "fields": chosen})


def _cmd_eval(args: argparse.Namespace) -> int:
    from toolret.eval import evaluate, load_dataset
    from toolret.eval.runner import DEFAULT_CURVE_K

    ks = _parse_ks(args.k)
    dataset = load_dataset(args.dataset)
    fit_queries: list[Any] = []
    if args.fit_split:
        dataset, fit_queries = _fit_split(dataset)
    methods = _dedupe(args.method or ["mftr"])
    curve_k = DEFAULT_CURVE_K if args.plot else 0
    n = len(dataset.queries) if args.limit is None else min(args.limit, len(dataset.queries))
    print(f"dataset {dataset.name}: {len(dataset.tools)} tools, {n} of {len(dataset.queries)} queries")
    reports = []
    for method in methods:
        retriever, seconds = _build_retriever(method, dataset, args.preset, _fields_config(args.preset, args.fields))
        if method == "mftr" and fit_queries:
            seconds += _fit(retriever, fit_queries)
        try:
            report = evaluate(
                retriever,
                dataset,
                ks=ks,
                limit=args.limit,
                name_level=args.name_level,
                progress=True,
                method=_method_label(method, args.preset),
                curve_k=curve_k,
                auto_k=args.auto_k and method == "mftr",
            )
        finally:
            _release(retriever)
        reports.append(report.model_copy(update={"index_seconds": seconds}))
    rows = [_report_row(r, m if m in BASELINES else f"mftr ({args.preset})") for r, m in zip(reports, methods)]
    print(format_table(_report_headers(ks), rows))
    if args.json:
        _write_json(args.json, reports[-1].to_json_dict())
        print(f"wrote {methods[-1]} report to {args.json}")
    if args.plot:
        from toolret.eval.plots import plot_recall_curves

        plot_recall_curves(reports, args.plot)
        print(f"wrote recall curves to {args.plot}")
    return 0


def _embedding_floor_ms(embedder: Any, *, warmup: int = 5, calls: int = 50) -> float:
    """Median time of embedding one short query: the least any dense search pays."""
    for _ in range(warmup):
        embedder.embed(["some query"])
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        embedder.embed(["some query"])
        times.append((time.perf_counter() - start) * 1000.0)
    return statistics.median(times)


def _bench_fit(
    kb: Any, dataset: Any, presets: list[str], levels: list[bool], limit: int | None, seconds: float, auto_k: bool
) -> list[dict[str, Any]]:
    """Every preset on the test split, then balanced+fit there after fitting on the other 80%.

    The same knowledge base and the same test queries for every row, so the rows compare.
    """
    from toolret.eval import evaluate

    test, fit_queries = _fit_split(dataset)
    out: list[dict[str, Any]] = []

    def run(label: str, preset: str, extra_seconds: float) -> None:
        for name_level in levels:
            report = evaluate(_PresetView(kb, preset), test, ks=(1, 5, 10), limit=limit, name_level=name_level,
                              progress=True, method=label, curve_k=0, auto_k=auto_k)
            entry = report.to_json_dict()
            entry.update(level="name" if name_level else "id", index_seconds=seconds + extra_seconds, split="test")
            out.append(entry)

    for preset in presets:
        run(preset, preset, 0.0)
    fit_seconds = _fit(kb, fit_queries)
    run("balanced+fit", "balanced", fit_seconds)
    kb.clear_history()
    return out


def _bench_ablation(kb: Any, dataset: Any, name_level: bool, limit: int | None) -> list[list[Any]]:
    """One-out rows over the offline fields (toolret.eval.ablation) on the dataset's knowledge base."""
    from toolret import RetrievalConfig
    from toolret.eval.ablation import run_ablation

    rows = []
    for label, report in run_ablation(kb, dataset, base=RetrievalConfig.preset("fast"), limit=limit,
                                      name_level=name_level):
        m = report.metrics
        rows.append([dataset.name, label, "name" if name_level else "id", report.n_queries, m["recall@5"],
                     m["ndcg@10"], report.latency_ms["p50"]])
    return rows


def _cmd_bench(args: argparse.Namespace) -> int:
    from toolret.eval import evaluate, load_dataset

    root = Path(args.datasets_root)
    if not root.is_dir():
        raise DatasetError(f"{root}: datasets root not found (expected one folder per dataset)")
    folders = sorted(p for p in root.iterdir() if (p / "tools.jsonl").is_file())
    if not folders:
        raise DatasetError(f"{root}: no dataset folder with a tools.jsonl inside")
    limit = None if args.limit == 0 else args.limit
    presets = _dedupe([DEFAULT_PRESET] + (args.preset or []))
    ks = (1, 5, 10)
    floor_ms: float | None = None
    embedder = _CachedIndexing(Path(args.out) / "lodo" / "embeddings.npz")
    results: list[dict[str, Any]] = []
    ablations: list[list[Any]] = []
    for folder in folders:
        dataset = load_dataset(folder)
        # Ids with '#' mark doc variants of one function name (BFCL): score by name as well.
        levels = [False, True] if any("#" in tool_id for tool_id in dataset.tool_ids) else [False]
        # One knowledge base per dataset serves every preset (a preset only changes the search).
        for method, shared_presets in [("bm25", ["bm25"]), ("cosine", ["cosine"]), ("mftr", presets)]:
            retriever, seconds = _build_retriever(method, dataset, shared_presets[0], embedder=embedder)
            try:
                if floor_ms is None and hasattr(retriever, "embedder"):
                    floor_ms = _embedding_floor_ms(retriever.embedder)
                    print(f"query-embedding floor: {floor_ms:.2f} ms (median of 50 calls)")
                for preset in shared_presets:
                    view = retriever if method in BASELINES else _PresetView(retriever, preset)
                    for name_level in levels:
                        report = evaluate(
                            view, dataset, ks=ks, limit=limit, name_level=name_level,
                            progress=True, method=_method_label(method, preset), curve_k=0,
                            auto_k=args.auto_k and method == "mftr",
                        )
                        entry = report.to_json_dict()
                        entry.update(level="name" if name_level else "id", index_seconds=seconds, split="all")
                        results.append(entry)
                if method == "mftr" and args.ablation:
                    ablations.extend(_bench_ablation(retriever, dataset, levels[-1], limit))
                if method == "mftr" and args.fit:
                    results.extend(_bench_fit(retriever, dataset, presets, levels, limit, seconds, args.auto_k))
            finally:
                _release(retriever)

    headers = ["dataset", "split", "method", "level", "n", "R@5", "NDCG@10", "C@10", "TRACC", "p50 ms", "x floor",
               "index s"]
    rows = []
    for e in results:
        m, p50 = e["metrics"], e["latency_ms"]["p50"]
        times_floor = p50 / floor_ms if floor_ms and e["preset"] != "bm25" else None
        rows.append([e["dataset"], e["split"], e["preset"], e["level"], e["n_queries"], m["recall@5"], m["ndcg@10"],
                     m["completeness@10"], m["tracc"], p50, times_floor, e["index_seconds"]])
    table = format_table(headers, rows)
    print(table)
    ablation_md = ""
    if ablations:
        ablation_table = format_table(["dataset", "fields", "level", "n", "R@5", "NDCG@10", "p50 ms"], ablations)
        print(ablation_table)
        ablation_md = ("\n## Field ablation (fast preset, offline fields; '-f' = every field but f)\n\n"
                       f"```\n{ablation_table}\n```\n")

    lodo_md = ""
    lodo_summary: dict[str, Any] | None = None
    if args.lodo:
        from toolret.eval.lodo import run_lodo

        lodo_summary = run_lodo(str(root), args.out, limit=limit)
        lodo_md = ("\n## Leave one dataset out (fast's fusion chosen on the other sets; `toolret bench --lodo`)\n\n"
                   f"```\n{lodo_summary['table']}\n```\n\nWorst left-out set: {lodo_summary['worst']}.\n")

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    summary = {"datasets_root": str(root), "limit": limit, "presets": presets,
               "embedding_floor_ms": floor_ms, "results": results, "lodo": lodo_summary}
    _write_json(out / "bench.json", summary)
    floor_line = f"{floor_ms:.2f} ms" if floor_ms is not None else "not measured"
    markdown = (
        "# toolret bench\n\n"
        f"Datasets under `{root}`; {'all' if limit is None else f'up to {limit} (seed 0)'} queries each. "
        f"Query-embedding floor (median of 50 `embed` calls): {floor_line}; "
        "`x floor` = p50 latency / floor; `index s` with tool embeddings read from the bench cache. TRACC: "
        + ("of the k='auto' set for presets, of the top 10 for bm25 and cosine" if args.auto_k else "of the top 10")
        + ".\n\n"
        f"```\n{table}\n```\n"
        + ablation_md
        + lodo_md
    )
    (out / "bench.md").write_text(markdown, encoding="utf-8")
    print(f"wrote {out / 'bench.json'} and {out / 'bench.md'}")
    return 0


def _server_specs(args: argparse.Namespace) -> list[Any]:
    """Upstream MCP servers from ``--config FILE`` and ``--server NAME=COMMAND|URL``."""
    import shlex

    from toolret.mcp_source import MCPServerSpec

    specs: list[Any] = []
    if args.config:
        try:
            specs += MCPServerSpec.from_config(json.loads(Path(args.config).read_text(encoding="utf-8")))
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{args.config}: not JSON ({exc})") from None
    for item in args.server or []:
        name, sep, target = item.partition("=")
        target = target.strip()
        if not sep or not name.strip() or not target:
            raise ConfigError(f"--server expects NAME=COMMAND or NAME=URL, got {item!r}")
        try:
            if target.startswith(("http://", "https://")):
                specs.append(MCPServerSpec(name=name.strip(), url=target))
            else:
                command, *rest = shlex.split(target)
                specs.append(MCPServerSpec(name=name.strip(), command=command, args=rest))
        except ValueError as exc:
            raise ConfigError(f"--server {item!r}: {exc}") from None
    return specs


def _cmd_serve_mcp(args: argparse.Namespace) -> int:
    from toolret import ToolKnowledgeBase
    from toolret.mcp_proxy import build_proxy

    specs = _server_specs(args)
    if args.chroma:
        host, _, port = args.chroma.rpartition(":")
        if not host or not port.isdigit():
            raise ConfigError(f"--chroma expects HOST:PORT, got {args.chroma!r}")
        kb = ToolKnowledgeBase.connect(host, int(port), collection=args.collection, config=args.preset)
    elif args.kb:
        kb = ToolKnowledgeBase(args.kb, config=args.preset)
    else:
        kb = ToolKnowledgeBase(config=args.preset)
    if not specs and len(kb) == 0:
        raise ConfigError("nothing to serve: give upstream servers (--server, --config) or a --kb that holds tools")
    server = build_proxy(servers=specs, kb=kb)
    print(f"toolret: serving {len(specs)} MCP server(s) and {len(kb)} stored tools over {args.transport}",
          file=sys.stderr)
    if args.transport == "stdio":
        server.run()
    else:
        server.run("streamable-http", host=args.host, port=args.port)
    return 0


def _cmd_bench_scale(args: argparse.Namespace) -> int:
    from toolret.scale_bench import run_bench

    try:
        sizes = [int(part) for part in args.sizes.split(",") if part.strip()]
    except ValueError:
        raise ConfigError(f"--sizes expects comma-separated integers, got {args.sizes!r}") from None
    if not sizes or min(sizes) < 1:
        raise ConfigError("--sizes needs at least one positive size")
    run_bench(args.datasets_root, args.out, sizes=sizes, datasets=args.datasets.split(","),
              per_dataset=args.queries, presets=_dedupe(args.preset or ["fast", "balanced"]))
    return 0


# ---------------------------------------------------------------------------- parser
def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``toolret`` command (one sub-parser per verb)."""
    parser = argparse.ArgumentParser(prog="toolret", description="Tool retrieval for LLM agents.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details to stderr")
    verbs = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    index = verbs.add_parser("index", help="index a JSON-lines tool file into a knowledge base")
    index.add_argument("tools", help="tools.jsonl (benchmark records, OpenAI tool dicts or bare functions)")
    index.add_argument("--kb", required=True, help="knowledge base directory (created if missing)")
    index.add_argument("--preset", default=DEFAULT_PRESET, help="retrieval preset stored with it (default: fast)")
    index.set_defaults(run=_cmd_index)

    search = verbs.add_parser("search", help="search a knowledge base and explain the scores")
    search.add_argument("query", help="the request to find tools for")
    search.add_argument("--kb", required=True, help="knowledge base directory built by `toolret index`")
    search.add_argument("-k", type=int, default=5, help="number of tools (default: 5)")
    search.add_argument("--preset", default=None, help="override the knowledge base's preset")
    search.set_defaults(run=_cmd_search)

    ev = verbs.add_parser("eval", help="evaluate retrieval on a benchmark dataset folder")
    ev.add_argument("--dataset", required=True, help="folder with tools.jsonl and queries.jsonl")
    ev.add_argument("--preset", default=DEFAULT_PRESET, help="preset for method mftr (default: fast)")
    ev.add_argument("--method", action="append", choices=METHODS,
                    help="mftr (the knowledge base, default), bm25 or cosine (single-signal baselines); "
                         "repeat to compare")
    ev.add_argument("--k", default="1,5,10", help="cut-offs, comma-separated (default: 1,5,10)")
    ev.add_argument("--limit", type=int, default=None, help="evaluate a reproducible sample of N queries")
    ev.add_argument("--name-level", action="store_true", help="compare tools by name (id before '#'; BFCL)")
    ev.add_argument("--fit-split", action="store_true",
                    help="fit on 80%% of the queries (sha1 of the id), report on the other 20%%")
    ev.add_argument("--fields", default=None,
                    help="search only these index fields, comma-separated (ablation; default: all of "
                         "description,parameters,response,examples,profile,questions,topics)")
    ev.add_argument("--auto-k", action="store_true",
                    help="measure TRACC on the k='auto' set of each query (mftr only; other metrics unchanged)")
    ev.add_argument("--json", metavar="OUT", help="write the last method's report as JSON")
    ev.add_argument("--plot", metavar="OUT.png", help="draw Recall@1..20 of every method (needs matplotlib)")
    ev.set_defaults(run=_cmd_eval)

    bench = verbs.add_parser("bench", help="compare bm25 and presets on every dataset under a folder")
    bench.add_argument("--datasets-root", default="../shared/benchmarks", help="folder of dataset folders")
    bench.add_argument("--preset", action="append", help="preset to add to 'fast' (repeatable)")
    bench.add_argument("--limit", type=int, default=DEFAULT_BENCH_LIMIT,
                       help=f"queries per dataset, sampled with seed 0 (default: {DEFAULT_BENCH_LIMIT}; 0 = all)")
    bench.add_argument("--auto-k", action="store_true", help="TRACC of the presets measured with k='auto'")
    bench.add_argument("--ablation", action="store_true",
                       help="also run the one-out field ablation of the fast preset over the offline fields")
    bench.add_argument("--fit", action="store_true",
                       help="also compare the presets and balanced+fit on each dataset's 20%% test split")
    bench.add_argument("--lodo", action="store_true",
                       help="also choose the fusion's defaults leaving one dataset out in turn (signals cached "
                            "under OUT/lodo) and print the left-out table and the worst set")
    bench.add_argument("--out", default=".bench", help="folder for bench.json and bench.md (default: .bench)")
    bench.set_defaults(run=_cmd_bench)

    serve = verbs.add_parser("serve-mcp", help="an MCP server with search_tools and call_tool over other MCP servers")
    serve.add_argument("--server", action="append", metavar="NAME=COMMAND|URL",
                       help="an upstream MCP server: a command line (stdio) or an http(s) URL; repeatable")
    serve.add_argument("--config", metavar="FILE", help='MCP client configuration JSON ({"mcpServers": {...}})')
    serve.add_argument("--kb", help="persistent knowledge base directory (default: in memory)")
    serve.add_argument("--chroma", metavar="HOST:PORT", help="use a knowledge base on a ChromaDB server instead")
    serve.add_argument("--collection", default="toolret", help="knowledge base name on the ChromaDB server")
    serve.add_argument("--preset", default=None, help="retrieval preset for search_tools (default: fast)")
    serve.add_argument("--transport", choices=("stdio", "streamable-http"), default="stdio")
    serve.add_argument("--host", default="127.0.0.1", help="streamable-http address (default: 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8765, help="streamable-http port (default: 8765)")
    serve.set_defaults(run=_cmd_serve_mcp)

    scale = verbs.add_parser("bench-scale", help="recall, latency and memory vs registry size (1k..100k tools)")
    scale.add_argument("--datasets-root", default="../shared/benchmarks", help="folder of dataset folders")
    scale.add_argument("--sizes", default="1000,10000,100000", help="registry sizes (default: 1000,10000,100000)")
    scale.add_argument("--datasets", default="toole_single,bfcl", help="datasets whose queries are searched")
    scale.add_argument("--queries", type=int, default=200, help="queries sampled per dataset (seed 0; default 200)")
    scale.add_argument("--preset", action="append", help="preset to measure (repeatable; default fast and balanced)")
    scale.add_argument("--out", default=".bench/scale", help="output folder (also holds the embedding cache)")
    scale.set_defaults(run=_cmd_bench_scale)
    return parser


def _configure_logging(verbose: bool) -> None:
    """Show toolret's own log records on stderr; other libraries' loggers are left alone."""
    log = logging.getLogger("toolret")
    if not any(getattr(h, "_toolret_cli", False) for h in log.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("toolret: %(levelname)s: %(message)s"))
        handler._toolret_cli = True  # type: ignore[attr-defined]
        log.addHandler(handler)
    log.setLevel(logging.INFO if verbose else logging.WARNING)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``toolret`` command; returns the exit status (2 for usage and toolret errors)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, or a usage error argparse already printed
        return int(exc.code or 0) if not isinstance(exc.code, str) else 2
    _configure_logging(args.verbose)
    if getattr(args, "limit", None) is not None and args.limit < 0:
        print("toolret: error: --limit must be >= 0", file=sys.stderr)
        return 2
    try:
        return int(args.run(args))
    except ToolRetError as exc:
        print(f"toolret: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"toolret: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("toolret: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
